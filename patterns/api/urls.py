"""API routes of the patterns app, mounted under ``/api/`` (SPEC §3.4)."""

from patterns.api.views import PatternViewSet
from project.routers import ApiRouter

router = ApiRouter()
router.register("hermes-error-patterns", PatternViewSet, basename="hermes-error-pattern")

urlpatterns = router.urls
