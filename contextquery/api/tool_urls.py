"""Tool-gateway API routes under ``/api/`` (SPEC §7.3); every path takes an optional trailing slash."""

from contextquery.api.tool_views import ToolBindingViewSet, ToolCallViewSet
from project.routers import ApiRouter

router = ApiRouter()
router.register("tool-bindings", ToolBindingViewSet, basename="tool-binding")
router.register("tool-calls", ToolCallViewSet, basename="tool-call")

urlpatterns = router.urls
