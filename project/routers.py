"""Router whose routes accept an optional trailing slash, for POST too (SPEC §2)."""

from rest_framework.routers import SimpleRouter


class ApiRouter(SimpleRouter):
    """``SimpleRouter`` with ``trailing_slash="/?"``."""

    def __init__(self):
        super().__init__()
        # DRF 3.15+ treats the constructor argument as a boolean ("/" or ""),
        # so the optional slash must be set after it.
        self.trailing_slash = "/?"
