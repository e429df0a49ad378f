"""The pattern pages, mounted at /patterns/ (SPEC §3.5)."""

from django.urls import path

from patterns import views

app_name = "patterns"
urlpatterns = [
    path("", views.pattern_list, name="list"),
    path("new/", views.pattern_create, name="new"),
    path("try/", views.pattern_try, name="try"),
    path("reset/", views.patterns_reset, name="reset"),
    path("<int:pk>/", views.pattern_detail, name="detail"),
    path("<int:pk>/edit/", views.pattern_edit, name="edit"),
    path("<int:pk>/delete/", views.pattern_delete, name="delete"),
    path("<int:pk>/toggle/", views.pattern_toggle, name="toggle"),
    path("<int:pk>/copy/", views.pattern_copy, name="copy"),
    path("trial/", views.pattern_trial, name="trial"),
    path("<int:pk>/trial/", views.pattern_trial, name="trial-edit"),
]
