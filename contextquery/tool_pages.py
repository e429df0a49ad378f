"""The tool pages under /tools/ (SPEC §7.3): staff only, plain HTML forms with
CSRF, no JavaScript needed. Every change goes through :mod:`contextquery.tool_gateway`.

* ``/tools/``: the bindings with an enabled switch, edit and delete;
  ``/tools/new/``, ``/tools/<id>/`` (with its history and last calls),
  ``/tools/<id>/edit/``, ``/tools/<id>/delete/``, ``/tools/<id>/toggle/``;
* ``/tools/approvals/`` (``approve_toolcall``): the calls waiting for a person,
  each with Approve and Reject (with a note).
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from contextquery import tool_gateway
from contextquery.filters import ToolBindingFilter
from contextquery.forms import ToolBindingForm, ToolCallRejectForm
from contextquery.models import ToolBinding, ToolBindingChange, ToolCall, ToolCallStatus, ToolKind
from project.errors import Conflict, Forbidden, Invalid, NotFound
from project.pages import staff_page

PAGE_SIZE = 100
#: Calls shown on a binding's page and under "Recently decided".
RECENT_CALLS = 20

staff_required = staff_page(gettext_lazy("The tool pages are for staff users."))


def _who(request) -> dict:
    return {"actor": request.user, "via": "page"}


def _back(request, default: str):
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
        return redirect(target)
    return redirect(default)


def _apply_errors(form, error: Invalid | Conflict) -> None:
    """Put a rule's refusal on the form: per field when it names one (API names are camelCase)."""
    by_api_name = {tool_gateway.api_field(name): name for name in form.fields}
    if error.errors:
        for field, texts in error.errors.items():
            for text in texts:
                form.add_error(by_api_name.get(field), text)
    else:
        form.add_error(None, error.message)


def pretty(value) -> str:
    """JSON indented for a <pre>."""
    return json.dumps(value, indent=2, ensure_ascii=False)


def history_rows(changes) -> list[dict]:
    """History rows: each change with the fields it touched as ``(label, before, after)``."""
    labels = {name: ToolBinding._meta.get_field(name).verbose_name for name in tool_gateway.EDITABLE_FIELDS}

    def shown(value):
        return pretty(value) if isinstance(value, (dict, list)) else value

    rows = []
    for change in changes:
        before, after = change.before or {}, change.after or {}
        fields = [
            (labels.get(name, name), shown(before.get(name)), shown(after.get(name)))
            for name in tool_gateway.EDITABLE_FIELDS
            if (name in before or name in after) and before.get(name) != after.get(name)
        ]
        rows.append({"change": change, "fields": fields, "show_before": bool(before) and bool(after)})
    return rows


@staff_required
@require_http_methods(["GET"])
def tool_list(request):
    """The bindings, filtered, with the number of calls waiting for approval."""
    bindings = ToolBindingFilter(request.GET or None, queryset=ToolBinding.objects.order_by("name"))
    found = bindings.qs if not bindings.is_bound or bindings.is_valid() else ToolBinding.objects.none()
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    tool_gateway.toolcalls_expire()
    rows = [{"binding": b, "secret_set": tool_gateway.secret_is_set(b.secret_ref)} for b in page]
    return render(
        request,
        "contextquery/tool_list.html",
        {
            "filter": bindings,
            "page_obj": page,
            "rows": rows,
            "query": query.urlencode(),
            "kinds": ToolKind.choices,
            "pending": ToolCall.objects.filter(status=ToolCallStatus.PENDING_APPROVAL).count(),
            "allowed_hosts": ", ".join(str(rule) for rule in tool_gateway.allowed_host_rules()),
            "can_decide": tool_gateway.toolcall_can_decide(request.user),
        },
    )


@staff_required
@require_http_methods(["GET"])
def tool_detail(request, pk):
    """One binding with its history and its last calls."""
    binding = get_object_or_404(ToolBinding, pk=pk)
    tool_gateway.toolcalls_expire()
    history = ToolBindingChange.objects.filter(binding_ref=binding.pk).order_by("-created_at", "-id")
    calls = ToolCall.objects.filter(binding=binding).select_related("visit", "visit__run")[:RECENT_CALLS]
    return render(
        request,
        "contextquery/tool_detail.html",
        {
            "binding": binding,
            "schema": pretty(binding.input_schema),
            "secret_set": tool_gateway.secret_is_set(binding.secret_ref),
            "history": history_rows(history),
            "calls": calls,
        },
    )


def _save_form(request, form, save):
    if form.is_valid():
        try:
            saved = save(form.values())
        except (Invalid, Conflict) as error:
            _apply_errors(form, error)
        else:
            messages.success(request, _("Saved “%(name)s”.") % {"name": saved.name})
            return redirect("tools:detail", pk=saved.pk)
    return None


@staff_required
@require_http_methods(["GET", "POST"])
def tool_create(request):
    """The "New tool" form."""
    form = ToolBindingForm(request.POST or None)
    if request.method == "POST":
        done = _save_form(request, form, lambda values: tool_gateway.binding_create(values=values, **_who(request)))
        if done:
            return done
    return render(request, "contextquery/tool_form.html", {"form": form, "binding": None})


@staff_required
@require_http_methods(["GET", "POST"])
def tool_edit(request, pk):
    """The edit form."""
    binding = get_object_or_404(ToolBinding, pk=pk)
    form = ToolBindingForm(request.POST or None, instance=ToolBinding.objects.get(pk=pk))
    if request.method == "POST":
        done = _save_form(
            request,
            form,
            lambda values: tool_gateway.binding_update(target=binding, values=values, **_who(request)),
        )
        if done:
            return done
    return render(request, "contextquery/tool_form.html", {"form": form, "binding": binding})


@staff_required
@require_http_methods(["GET", "POST"])
def tool_delete(request, pk):
    """Ask, then delete a binding (its calls and history stay)."""
    binding = get_object_or_404(ToolBinding, pk=pk)
    if request.method == "POST":
        tool_gateway.binding_delete(target=binding, **_who(request))
        messages.success(request, _("Deleted “%(name)s”.") % {"name": binding.name})
        return redirect("tools:list")
    return render(request, "contextquery/tool_confirm_delete.html", {"binding": binding})


@staff_required
@require_POST
def tool_toggle(request, pk):
    """The enabled switch: flip and go back."""
    binding = tool_gateway.binding_toggle(target=get_object_or_404(ToolBinding, pk=pk), **_who(request))
    if binding.enabled:
        messages.success(request, _("Enabled “%(name)s”.") % {"name": binding.name})
    else:
        messages.success(request, _("Disabled “%(name)s”.") % {"name": binding.name})
    return _back(request, reverse("tools:list"))


# --------------------------------------------------------------------------- approvals


def approver_required(view):
    """Staff with ``contextquery.approve_toolcall`` (SPEC §7.3); other staff get 403."""

    @staff_required
    def wrapper(request, *args, **kwargs):
        if not tool_gateway.toolcall_can_decide(request.user):
            raise PermissionDenied(_("Deciding tool calls needs the contextquery.approve_toolcall permission."))
        return view(request, *args, **kwargs)

    wrapper.__name__ = view.__name__
    wrapper.__doc__ = view.__doc__
    return wrapper


@approver_required
@require_http_methods(["GET"])
def approvals(request):
    """The calls waiting for a person, oldest first, and the last decisions."""
    tool_gateway.toolcalls_expire()
    calls = tool_gateway.toolcall_list()
    pending = list(calls.filter(status=ToolCallStatus.PENDING_APPROVAL).order_by("requested_at", "id"))
    decided = list(calls.exclude(decided_at=None).order_by("-decided_at", "-id")[:RECENT_CALLS])
    rows = [
        {
            "call": call,
            "arguments": pretty(call.arguments),
            "expires_at": tool_gateway.toolcall_expires_at(call),
            "form": ToolCallRejectForm(prefix=f"call-{call.pk}"),
        }
        for call in pending
    ]
    return render(request, "contextquery/tool_approvals.html", {"rows": rows, "decided": decided})


def _decide(request, pk, decide):
    try:
        call = tool_gateway.toolcall_get(call_id=pk)
        decided = decide(call)
    except (Conflict, Invalid, NotFound, Forbidden) as error:
        if isinstance(error, Forbidden):
            raise PermissionDenied(error.message) from None
        texts = [text for group in (error.errors or {}).values() for text in group] or [error.message]
        for text in texts:
            messages.error(request, text)
    else:
        if decided.status == ToolCallStatus.REJECTED:
            messages.success(
                request, _("Call %(id)s (%(tool)s) rejected.") % {"id": decided.pk, "tool": decided.tool_name}
            )
        elif decided.status == ToolCallStatus.SUCCEEDED:
            messages.success(
                request,
                _("Call %(id)s (%(tool)s) approved and executed: HTTP %(status)s.")
                % {"id": decided.pk, "tool": decided.tool_name, "status": decided.http_status},
            )
        else:
            messages.error(
                request,
                _("Call %(id)s (%(tool)s) approved, but it failed: %(error)s")
                % {"id": decided.pk, "tool": decided.tool_name, "error": decided.error},
            )
    return redirect("tools:approvals")


@approver_required
@require_POST
def approval_approve(request, pk):
    """Approve: the call is executed now, once."""
    return _decide(request, pk, lambda call: tool_gateway.toolcall_approve(call=call, user=request.user))


@approver_required
@require_POST
def approval_reject(request, pk):
    """Reject with a note: the call is never executed."""
    form = ToolCallRejectForm(request.POST, prefix=f"call-{pk}")
    note = form.cleaned_data["note"] if form.is_valid() else request.POST.get(f"call-{pk}-note", "")
    return _decide(request, pk, lambda call: tool_gateway.toolcall_reject(call=call, user=request.user, note=note))
