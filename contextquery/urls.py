"""The run inspection pages, mounted at /runs/ (SPEC §4.6)."""

from django.urls import path

from contextquery import views

app_name = "contextquery"
urlpatterns = [
    path("", views.run_list, name="list"),
    # No run URL has a number as its second segment, so this never shadows a run.
    path("matched/<int:pattern_pk>/", views.pattern_matched_visits, name="pattern-visits"),
    path("<str:run_id>/", views.run_detail, name="run"),
    path("<str:run_id>/live.json", views.run_live, name="run-live"),
    path("<str:run_id>/visits/<str:visit_uuid>/", views.visit_detail, name="visit"),
    path("<str:run_id>/visits/<str:visit_uuid>/output.json", views.visit_output_raw, name="visit-output"),
    path("<str:run_id>/visits/<str:visit_uuid>/live.json", views.visit_live, name="visit-live"),
    path(
        "<str:run_id>/visits/<str:visit_uuid>/false-positive/", views.visit_false_positive, name="visit-false-positive"
    ),
    path(
        "<str:run_id>/visits/<str:visit_uuid>/missed-failure/", views.visit_missed_failure, name="visit-missed-failure"
    ),
]
