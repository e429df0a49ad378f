"""Helpers shared by the HTML pages of every app."""

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.shortcuts import render


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


def login_locked_out(request, response=None, credentials=None):
    """The page django-axes answers (429) when a user is locked out from an address
    after ``HERMES_OPS_LOGIN_FAILURE_LIMIT`` wrong passwords, in the site's layout."""
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return render(request, "registration/locked_out.html", {"cooloff_minutes": minutes}, status=429)
