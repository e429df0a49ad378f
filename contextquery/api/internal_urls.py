"""``/internal/context/…`` (mounted by ``project.urls``): the three context
queries, POST only, with an optional trailing slash (SPEC §2, §4.5)."""

from django.urls import re_path

from contextquery.api import internal_views

app_name = "internal_context"
urlpatterns = [
    re_path(r"^path/?$", internal_views.PathQueryView.as_view(), name="path"),
    re_path(r"^output/?$", internal_views.OutputQueryView.as_view(), name="output"),
    re_path(r"^meta/?$", internal_views.MetaQueryView.as_view(), name="meta"),
]
