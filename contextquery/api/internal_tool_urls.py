"""``/internal/tools/…`` (mounted by ``project.urls``): the tool gateway's three
endpoints, POST only, with an optional trailing slash (SPEC §2, §7.2)."""

from django.urls import re_path

from contextquery.api import internal_tool_views

app_name = "internal_tools"
urlpatterns = [
    re_path(r"^list/?$", internal_tool_views.ToolListView.as_view(), name="list"),
    re_path(r"^call/?$", internal_tool_views.ToolCallView.as_view(), name="call"),
    re_path(r"^status/?$", internal_tool_views.ToolStatusView.as_view(), name="status"),
]
