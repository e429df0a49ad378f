"""The tool pages, mounted at /tools/ (SPEC §7.3)."""

from django.urls import path

from contextquery import tool_pages

app_name = "tools"
urlpatterns = [
    path("", tool_pages.tool_list, name="list"),
    path("new/", tool_pages.tool_create, name="new"),
    path("approvals/", tool_pages.approvals, name="approvals"),
    path("approvals/<int:pk>/approve/", tool_pages.approval_approve, name="approve"),
    path("approvals/<int:pk>/reject/", tool_pages.approval_reject, name="reject"),
    path("<int:pk>/", tool_pages.tool_detail, name="detail"),
    path("<int:pk>/edit/", tool_pages.tool_edit, name="edit"),
    path("<int:pk>/delete/", tool_pages.tool_delete, name="delete"),
    path("<int:pk>/toggle/", tool_pages.tool_toggle, name="toggle"),
]
