"""Template filters shared by the pages of every app."""

from datetime import timedelta

from django import template
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

register = template.Library()


@register.filter
def duration_short(value: timedelta | float | None) -> str:
    """A duration as ops read it: ``850 ms``, ``4.2 s``, ``3 min 05 s``, ``2 h 07 min``
    (a timedelta or seconds; "" for None)."""
    if value is None:
        return ""
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds < 1:
        return _("%(ms)d ms") % {"ms": round(seconds * 1000)}
    if seconds < 60:
        return _("%(s).1f s") % {"s": seconds}
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return _("%(min)d min %(s)02d s") % {"min": minutes, "s": rest}
    hours, minutes = divmod(minutes, 60)
    return _("%(h)d h %(min)02d min") % {"h": hours, "min": minutes}


# How a pattern or tool binding change was made (``PatternChange.via``, ``ToolBindingChange.via``).
VIA_LABELS = {
    "api": gettext_lazy("API"),
    "page": gettext_lazy("web page"),
    "admin": gettext_lazy("admin"),
    "command": gettext_lazy("command"),
    "migration": gettext_lazy("migration"),
}


@register.filter
def via_label(value: str) -> str:
    """The translated name of a change's ``via`` (``"page"`` → ``web page``);
    an unknown value is shown as stored."""
    return VIA_LABELS.get(value, value)
