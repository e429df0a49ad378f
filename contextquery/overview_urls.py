"""The pages mounted at the site's root (SPEC §8): the overview, the visits
across runs its numbers link to, and the Prometheus scrape."""

from django.urls import path, re_path

from contextquery import overview_views, views

app_name = "overview"
urlpatterns = [
    path("", overview_views.overview_page, name="overview"),
    path("visits/", views.visit_list, name="visits"),
    re_path(r"^metrics/?$", overview_views.metrics_scrape, name="metrics"),
]
