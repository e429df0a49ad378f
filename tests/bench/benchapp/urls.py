"""The bench servers' root URLs: the product's, plus the two floors (SPEC §4.5 bench, issue 7)."""

from django.urls import re_path

from project.urls import urlpatterns as product_urlpatterns
from tests.bench.benchapp import views

urlpatterns = [
    re_path(r"^internal/context/_floor/?$", views.FloorQueryView.as_view(), name="bench-floor"),
    re_path(r"^internal/context/_plain/?$", views.plain_view, name="bench-plain"),
    *product_urlpatterns,
]
