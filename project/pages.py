"""Helpers shared by the HTML pages of every app."""

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied


def staff_page(message: str):
    """Decorator factory for staff-only pages: anonymous → the login page with
    ``?next=``; a logged-in non-staff user → 403 with ``message``."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not request.user.is_staff:
                raise PermissionDenied(message)
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
