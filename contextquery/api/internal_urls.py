"""``/internal/context/…`` (mounted by ``project.urls``): the three context
queries, POST only, with an optional trailing slash (SPEC §2, §4.5)."""

from django.conf import settings
from django.urls import re_path

from contextquery.api import internal_views

app_name = "internal_context"
urlpatterns = [
    re_path(r"^path/?$", internal_views.PathQueryView.as_view(), name="path"),
    re_path(r"^output/?$", internal_views.OutputQueryView.as_view(), name="output"),
    re_path(r"^meta/?$", internal_views.MetaQueryView.as_view(), name="meta"),
]
if settings.HERMES_OPS_BENCH_FLOOR:  # benchmark floors only (contextquery.api.bench_views)
    from contextquery.api import bench_views

    urlpatterns += [
        re_path(r"^_floor/?$", bench_views.FloorQueryView.as_view(), name="floor"),
        re_path(r"^_plain/?$", bench_views.plain_view, name="plain"),
    ]
