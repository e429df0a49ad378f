"""Router whose routes accept an optional trailing slash, for POST too (SPEC §2)."""

from rest_framework.routers import SimpleRouter


class ApiRouter(SimpleRouter):
    """``SimpleRouter`` with ``trailing_slash="/?"``."""

    def __init__(self):
        super().__init__(trailing_slash="/?")
