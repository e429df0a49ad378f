"""The tool gateway (SPEC §7): business tools an agent calls through Hermes Ops.

One plain module holds every rule, and the API, the pages, the admin, the
internal endpoints, the commands and the tests call it:

* **bindings** — :func:`binding_create`, :func:`binding_update`,
  :func:`binding_delete`, :func:`binding_toggle`, :func:`bindings_set_enabled`,
  each leaving a :class:`ToolBindingChange` history row (like patterns,
  SPEC §3.1). The endpoint's host must be allowed by
  ``HERMES_TOOL_ALLOWED_HOSTS`` (:func:`endpoint_refusal`).
* **a visit's tools** — :func:`visit_tools_check` (registration, §7.1) and
  :func:`visit_tools_listing` (``/internal/tools/list``).
* **calls** — :func:`toolcall_request` validates the arguments against the
  binding's JSON Schema, then executes at once (approval ``none``) or stores
  the call as PENDING_APPROVAL; :func:`toolcall_approve` claims a pending call
  (PENDING_APPROVAL → EXECUTING) by one conditional UPDATE and executes it, so
  two approvals execute it once; :func:`toolcall_reject` ends it unexecuted.
* **expiry** — :func:`toolcalls_expire` turns pending calls EXPIRED (never
  executed) after ``HERMES_TOOL_APPROVAL_TTL_SECONDS`` or once their visit or
  run has ended; it runs whenever calls are read or decided, and from
  ``manage.py expire_tool_calls``.
* **execution** — server side, with ``requests``: the secret from
  ``HERMES_TOOL_SECRET_<NAME>`` as ``Authorization: Bearer …``; the endpoint's
  host resolved once, checked, and the request sent to that address (no second
  lookup); no redirects followed; ``timeoutSeconds`` as a hard deadline; an
  answer over 1 MiB, a 3xx/4xx/5xx, a timeout or a refused connection is a
  FAILED call with its reason.

The secret's value is never stored, logged or answered: only its name
(``secretRef``) is, and a business answer that echoes it is stored with the
secret replaced.

Errors raised (mapped by ``project.api.exception_handler``): ``Invalid``
(422, ``errors`` keyed by the API's camelCase field names), ``NotFound`` (404),
``Conflict`` (409), ``Forbidden`` (403), ``LimitReached`` (429).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

import jsonschema
import referencing.exceptions
import requests
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from requests.adapters import HTTPAdapter
from urllib3 import exceptions as urllib3_errors
from urllib3.exceptions import ReadTimeoutError
from urllib3.util import Timeout

from contextquery.client.wire import STATUS_TOOL_NAME
from contextquery.models import (
    SECRET_ENV_PREFIX,
    TOOL_NAME_RE,
    RunStatus,
    ToolApproval,
    ToolBinding,
    ToolBindingChange,
    ToolCall,
    ToolCallStatus,
    ToolKind,
    Visit,
    VisitStatus,
    input_schema_validator,
)
from contextquery.truncation import fit_json
from project.api import camel_case
from project.errors import Conflict, Forbidden, Invalid, LimitReached, NotFound
from project.hostlist import HostRule, ip_literal, parse_host_list

logger = logging.getLogger("hermes_ops.contextquery.tool_gateway")

#: A business answer larger than this (bytes) makes the call FAILED (SPEC §7.1).
MAX_RESULT_BYTES = 1024 * 1024
#: Connecting never waits longer than this, whatever the binding's timeout.
MAX_CONNECT_SECONDS = 5.0
#: A call still EXECUTING this long after it started was cut off (its worker
#: died): the sweep fails it. Far above the longest timeout (20 s).
EXECUTION_GRACE = timedelta(seconds=120)
#: ``/internal/tools/status`` answers about one call at most this often.
STATUS_READ_INTERVAL = timedelta(seconds=1)
#: What stands for the secret wherever a business answer echoed it.
SECRET_MASK = "[secret withheld]"
#: The fields a person may edit; a history row snapshots exactly these.
EDITABLE_FIELDS = (
    "name",
    "description",
    "input_schema",
    "kind",
    "approval",
    "endpoint",
    "secret_ref",
    "timeout_seconds",
    "enabled",
)
VIA = ("api", "page", "admin", "command")
#: The longest note a decision keeps (characters).
NOTE_MAX_CHARS = 2000
#: The longest idempotency key (characters).
IDEMPOTENCY_KEY_MAX_CHARS = 200

Action = ToolBindingChange.Action
_FINAL_STATUSES = (ToolCallStatus.SUCCEEDED, ToolCallStatus.FAILED, ToolCallStatus.REJECTED, ToolCallStatus.EXPIRED)


def api_field(name: str) -> str:
    """The API's name of a binding's model field (``input_schema`` → ``inputSchema``)."""
    return camel_case(name)


def approval_ttl() -> timedelta:
    """How long a call waits for a person before it expires (``HERMES_TOOL_APPROVAL_TTL_SECONDS``)."""
    return timedelta(seconds=settings.HERMES_TOOL_APPROVAL_TTL_SECONDS)


def allowed_host_rules() -> list[HostRule]:
    """``HERMES_TOOL_ALLOWED_HOSTS`` parsed (read on each call, so tests and ops' changes apply at once)."""
    return parse_host_list(settings.HERMES_TOOL_ALLOWED_HOSTS)


# --------------------------------------------------------------------------- secrets


def secret_value(secret_ref: str) -> str | None:
    """The value of ``HERMES_TOOL_SECRET_<secret_ref>``, or None when unset or blank. Never log it."""
    if not secret_ref:
        return None
    value = os.environ.get(SECRET_ENV_PREFIX + secret_ref, "").strip()
    return value or None


def secret_is_set(secret_ref: str) -> bool:
    """Whether the secret named ``secret_ref`` has a value on this server (pages show this, never the value)."""
    return secret_value(secret_ref) is not None


def _withhold(value, secret: str | None):
    """``value`` (JSON) with every occurrence of ``secret`` in its strings and keys replaced by :data:`SECRET_MASK`."""
    if not secret:
        return value
    if isinstance(value, str):
        return value.replace(secret, SECRET_MASK)
    if isinstance(value, list):
        return [_withhold(item, secret) for item in value]
    if isinstance(value, dict):
        return {_withhold(key, secret): _withhold(item, secret) for key, item in value.items()}
    return value


# --------------------------------------------------------------------------- hosts


@dataclass(frozen=True)
class Target:
    """Where one call goes: the endpoint's ``scheme``, ``host`` (as written),
    ``port``, the ``address`` it resolved to, and the ``url`` that names that
    address (the request's ``Host`` header and TLS name stay ``host``)."""

    scheme: str
    host: str
    port: int
    address: str
    url: str

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


class _CallFailed(Exception):
    """A call that cannot reach or use the business service; ``str()`` is the stored reason."""


def _endpoint_parts(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an http(s) URL (host lower-cased, IPv6 without brackets); ``ValueError`` if none."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http(s) URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = ip_literal(parts.hostname)
    host = str(address) if address is not None else parts.hostname.lower().rstrip(".")
    return parts.scheme, host, port


def _rule_matches(rule: HostRule, host: str, port: int) -> bool:
    return rule.host == host and (rule.port is None or rule.port == port)


def resolve_host(host: str, port: int) -> str:
    """The one address ``host`` resolves to for a TCP connection (the first the resolver gives).

    Raises ``OSError`` when it does not resolve. The gateway calls this once
    per check and connects to the address it returns, so a second lookup can
    never point the request elsewhere.
    """
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not infos:
        raise OSError(f"{host} has no address")
    return str(ip_literal(infos[0][4][0]))


def _address_allowed(rules: list[HostRule], host: str, port: int, address: str) -> bool:
    """An endpoint is allowed when its host as written (a name or an address) is an
    entry, or when the address it resolved to is an address entry; ports must match
    when the entry names one."""
    if any(_rule_matches(rule, host, port) for rule in rules):
        return True
    return any(rule.is_address and _rule_matches(rule, address, port) for rule in rules)


def endpoint_refusal(url: str) -> str | None:
    """Why ``url`` may not be a binding's endpoint (SPEC §7.1), or None when it may.

    Its host must be allowed by ``HERMES_TOOL_ALLOWED_HOSTS``: listed as
    written, or resolving to a listed address. Checked on every save; each
    call checks again (:func:`endpoint_target`).
    """
    try:
        _scheme, host, port = _endpoint_parts(url)
    except ValueError:
        return _("Enter an http:// or https:// URL.")
    rules = allowed_host_rules()
    if not rules:
        return _(
            "HERMES_TOOL_ALLOWED_HOSTS is empty on this server, so no endpoint is reachable until ops allow hosts."
        )
    if any(_rule_matches(rule, host, port) for rule in rules):
        return None
    if not any(rule.is_address for rule in rules) or ip_literal(host) is not None:
        return _not_allowed(host, port, rules)
    try:
        address = resolve_host(host, port)
    except OSError:
        return _("The host %(host)s could not be resolved, and it is not in HERMES_TOOL_ALLOWED_HOSTS.") % {
            "host": host
        }
    if _address_allowed(rules, host, port, address):
        return None
    return _not_allowed(f"{host} ({address})", port, rules)


def _not_allowed(host: str, port: int, rules: list[HostRule]) -> str:
    return _("%(host)s port %(port)d is not in HERMES_TOOL_ALLOWED_HOSTS (%(allowed)s).") % {
        "host": host,
        "port": port,
        "allowed": ", ".join(str(rule) for rule in rules),
    }


def endpoint_target(url: str) -> Target:
    """Check ``url`` for one call and say where to send it (SPEC §7.1).

    The host is resolved once; the call goes to that address, which must be
    allowed (as :func:`endpoint_refusal` says) at this moment. Raises
    :class:`_CallFailed` with the reason otherwise.
    """
    try:
        scheme, host, port = _endpoint_parts(url)
    except ValueError:
        raise _CallFailed("The binding's endpoint is not an http(s) URL.") from None
    rules = allowed_host_rules()
    try:
        address = resolve_host(host, port)
    except OSError:
        raise _CallFailed(f"The host {host} of the binding's endpoint could not be resolved.") from None
    if not _address_allowed(rules, host, port, address):
        raise _CallFailed(
            f"The endpoint's host {host} port {port} resolves to {address}, which HERMES_TOOL_ALLOWED_HOSTS "
            "does not allow; the call was not sent."
        )
    parts = urlsplit(url)
    netloc = f"[{address}]" if ":" in address else address
    pinned = urlunsplit((scheme, f"{netloc}:{port}", parts.path or "/", parts.query, ""))
    return Target(scheme=scheme, host=host, port=port, address=address, url=pinned)


class _PinnedHostAdapter(HTTPAdapter):
    """Sends HTTPS to an address while TLS still names the endpoint's host (SNI and
    certificate check), so the address checked is the address used."""

    def __init__(self, server_hostname: str):
        self._server_hostname = server_hostname
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args, **kwargs):
        kwargs["server_hostname"] = self._server_hostname
        kwargs["assert_hostname"] = self._server_hostname
        super().init_poolmanager(*args, **kwargs)


# --------------------------------------------------------------------------- bindings


def binding_snapshot(target: ToolBinding) -> dict:
    """The editable fields of ``target`` as a JSON-ready dict (history before/after)."""
    return {field: getattr(target, field) for field in EDITABLE_FIELDS}


def _label(actor, actor_label: str | None) -> str:
    if actor_label:
        return actor_label[:150]
    if actor is not None and getattr(actor, "pk", None):
        return actor.get_username()[:150]
    return ""


def _record(*, target: ToolBinding, action: str, before, after, actor, actor_label, via, keep_link=True):
    if via not in VIA:
        raise ValueError(f"via must be one of {', '.join(VIA)}, not {via!r}")
    return ToolBindingChange.objects.create(
        binding=target if keep_link else None,
        binding_ref=target.pk,
        binding_name=target.name,
        actor=actor if actor is not None and getattr(actor, "pk", None) else None,
        actor_label=_label(actor, actor_label),
        via=via,
        action=action,
        before=before,
        after=after,
    )


def lone_surrogate_path(value, path: str = "") -> str | None:
    """The path of the first string (or key) in JSON ``value`` holding a lone surrogate,
    which no database stores, else None."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return where
        elif isinstance(item, dict):
            for key, child in item.items():
                inner = f"{where}.{key}" if where else str(key)
                stack.append((key, where))
                stack.append((child, inner))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))
    return None


def _check_values(values: dict) -> None:
    unknown = sorted(set(values) - set(EDITABLE_FIELDS))
    if unknown:
        raise Invalid.field(
            api_field(unknown[0]),
            _("This field cannot be set; the editable fields are: %(fields)s.")
            % {"fields": ", ".join(api_field(f) for f in EDITABLE_FIELDS)},
        )
    for field, value in values.items():
        if lone_surrogate_path(value) is not None:
            raise Invalid.field(api_field(field), _("Contains a lone surrogate character, which cannot be stored."))


def _validate(candidate: ToolBinding) -> None:
    """The model's rules (name, schema checked as a JSON Schema, URL, secret name,
    timeout) and the host allow-list; raise ``Invalid`` keyed by API field names."""
    errors: dict[str, list[str]] = {}
    try:
        candidate.full_clean(validate_unique=True)
    except ValidationError as refused:
        errors = Invalid.from_django(refused, names=api_field).errors
    if "endpoint" not in errors and candidate.endpoint:
        refusal = endpoint_refusal(candidate.endpoint)
        if refusal:
            errors["endpoint"] = [refusal]
    if errors:
        first_field, first = next(iter(errors.items()))
        message = first[0] if first_field == "nonFieldErrors" else f"{first_field}: {first[0]}"
        raise Invalid(message, errors=errors)


def _save(candidate: ToolBinding) -> None:
    """Save; a name taken by a concurrent request is a 422 on the name, never a 500."""
    try:
        with transaction.atomic():
            candidate.save()
    except IntegrityError:
        raise Invalid.field("name", _("A tool binding with this name already exists.")) from None


def binding_create(*, values: dict, actor=None, actor_label: str | None = None, via: str) -> ToolBinding:
    """Create a binding from ``values`` (editable fields by model name) (SPEC §7.1).

    ``approval`` not given: ``required`` for a write, ``none`` for a read.
    Returns the stored binding. Raises ``Invalid`` for a bad name (pattern,
    reserved, taken), a schema that is not a JSON Schema of an object, an
    endpoint that is not http(s) or whose host is not allowed, a bad secret
    name or timeout, or an unknown field.
    """
    _check_values(values)
    values = dict(values)
    if values.get("approval") in (None, ""):
        values["approval"] = ToolApproval.REQUIRED if values.get("kind") == ToolKind.WRITE else ToolApproval.NONE
    candidate = ToolBinding(**values)
    _validate(candidate)
    with transaction.atomic():
        _save(candidate)
        _record(
            target=candidate,
            action=Action.CREATE,
            before=None,
            after=binding_snapshot(candidate),
            actor=actor,
            actor_label=actor_label,
            via=via,
        )
    logger.info("tool binding %s created via %s", candidate.name, via)
    return candidate


def binding_update(
    *, target: ToolBinding, values: dict, actor=None, actor_label: str | None = None, via: str
) -> ToolBinding:
    """Change the fields in ``values`` of ``target``; the others keep their value.

    Returns the stored binding (no history row when nothing differs). Raises
    ``Invalid`` as :func:`binding_create` does. Calls already made keep the
    tool name they were made with.
    """
    _check_values(values)
    with transaction.atomic():
        current = ToolBinding.objects.select_for_update().get(pk=target.pk)
        before = binding_snapshot(current)
        for field, value in values.items():
            setattr(current, field, value)
        if binding_snapshot(current) == before:
            return current
        _validate(current)
        _save(current)
        _record(
            target=current,
            action=Action.UPDATE,
            before=before,
            after=binding_snapshot(current),
            actor=actor,
            actor_label=actor_label,
            via=via,
        )
    return current


def binding_delete(*, target: ToolBinding, actor=None, actor_label: str | None = None, via: str) -> None:
    """Delete a binding; its history and its calls stay (calls keep the tool's name)."""
    with transaction.atomic():
        _record(
            target=target,
            action=Action.DELETE,
            before=binding_snapshot(target),
            after=None,
            actor=actor,
            actor_label=actor_label,
            via=via,
            keep_link=False,
        )
        target.delete()


def _set_enabled(current: ToolBinding, enabled: bool, *, actor, actor_label, via) -> None:
    before = binding_snapshot(current)
    current.enabled = enabled
    current.save(update_fields=["enabled", "updated_at"])
    _record(
        target=current,
        action=Action.ENABLE if enabled else Action.DISABLE,
        before=before,
        after=binding_snapshot(current),
        actor=actor,
        actor_label=actor_label,
        via=via,
    )


def binding_toggle(*, target: ToolBinding, actor=None, actor_label: str | None = None, via: str) -> ToolBinding:
    """Flip ``enabled`` and return the stored binding. A disabled binding is offered
    to no visit, and its pending calls fail when approved."""
    with transaction.atomic():
        current = ToolBinding.objects.select_for_update().get(pk=target.pk)
        _set_enabled(current, not current.enabled, actor=actor, actor_label=actor_label, via=via)
    return current


def bindings_set_enabled(*, targets, enabled: bool, actor=None, actor_label: str | None = None, via: str) -> int:
    """Enable or disable every binding of ``targets``, one history row per binding
    whose state changes (admin bulk actions). Returns how many changed."""
    ids = [t.pk for t in targets]
    changed = 0
    with transaction.atomic():
        for current in ToolBinding.objects.select_for_update().filter(pk__in=ids).order_by("pk"):
            if current.enabled != enabled:
                _set_enabled(current, enabled, actor=actor, actor_label=actor_label, via=via)
                changed += 1
    return changed


# --------------------------------------------------------------------------- a visit's tools


def visit_tools_check(*, names) -> list[str]:
    """The tool names an engine gave a node at registration, checked (SPEC §7.1).

    Returns the distinct names, sorted (the visit stores them so, and a retry
    compares them as a set). Raises ``Invalid`` on ``tools`` naming every name
    that is not an enabled binding: none is dropped silently.
    """
    wanted = sorted(set(names))
    bad_format = [name for name in wanted if not TOOL_NAME_RE.fullmatch(name)]
    known = set(
        ToolBinding.objects.filter(name__in=[n for n in wanted if n not in bad_format], enabled=True).values_list(
            "name", flat=True
        )
    )
    missing = [name for name in wanted if name not in known]
    if missing:
        raise Invalid.field(
            "tools",
            _("Not an enabled tool binding: %(names)s.") % {"names": ", ".join(repr(n) for n in missing)},
        )
    return wanted


def _visit_tool_names(visit_id: int) -> list[str]:
    names = Visit.objects.filter(pk=visit_id).values_list("tools", flat=True).first()
    return list(names or [])


def visit_tools_listing(*, visit_id: int) -> list[dict]:
    """The visit's tools as the agent sees them (``/internal/tools/list``, SPEC §7.2):
    ``[{name, description, inputSchema, kind, approval}]`` by name; a binding
    disabled or deleted since registration is left out."""
    names = _visit_tool_names(visit_id)
    if not names:
        return []
    return [
        {
            "name": binding.name,
            "description": binding.description,
            "inputSchema": binding.input_schema,
            "kind": binding.kind,
            "approval": binding.approval,
        }
        for binding in ToolBinding.objects.filter(name__in=names, enabled=True).order_by("name")
    ]


# --------------------------------------------------------------------------- budget


def toolcall_budget_take(*, visit_id: int) -> bool:
    """Count one ``/internal/tools/call`` against the visit's ``MAX_TOOL_CALLS_PER_VISIT``
    (one conditional UPDATE, so no race lets one more through). False when spent."""
    limit = settings.HERMES_CONTEXT_QUERY["MAX_TOOL_CALLS_PER_VISIT"]
    return bool(
        Visit.objects.filter(pk=visit_id, tool_call_count__lt=limit).update(tool_call_count=F("tool_call_count") + 1)
    )


def toolcall_budget_refuse() -> LimitReached:
    """The 429 for a spent tool-call budget (no Retry-After: waiting does not help)."""
    limit = settings.HERMES_CONTEXT_QUERY["MAX_TOOL_CALLS_PER_VISIT"]
    return LimitReached(f"This visit has used its {limit} business tool calls; no more are made.")


# --------------------------------------------------------------------------- expiry


def toolcalls_expire(*, now: datetime | None = None, visit_id: int | None = None) -> int:
    """Apply expiry (SPEC §7.3); returns how many calls it ended.

    A PENDING_APPROVAL call becomes EXPIRED, never executed, once it has
    waited ``HERMES_TOOL_APPROVAL_TTL_SECONDS`` or its visit or run has ended.
    A call still EXECUTING :data:`EXECUTION_GRACE` after it started (its
    worker died mid-call) becomes FAILED. ``visit_id`` limits the sweep to one
    visit. One SELECT when nothing is due; every UPDATE repeats the status
    condition on the row itself, so a call an approver claimed meanwhile is
    never overwritten.
    """
    now = now or timezone.now()
    calls = ToolCall.objects.all() if visit_id is None else ToolCall.objects.filter(visit_id=visit_id)
    open_calls = calls.filter(status__in=(ToolCallStatus.PENDING_APPROVAL, ToolCallStatus.EXECUTING)).values_list(
        "pk", "status", "requested_at", "started_at", "visit__status", "visit__run__status"
    )
    timed_out, orphaned, cut_off = [], [], []
    for pk, status, requested_at, started_at, visit_status, run_status in open_calls:
        if status == ToolCallStatus.EXECUTING:
            if started_at is not None and started_at <= now - EXECUTION_GRACE:
                cut_off.append(pk)
        elif requested_at <= now - approval_ttl():
            timed_out.append(pk)
        elif visit_status != VisitStatus.RUNNING or run_status != RunStatus.RUNNING:
            orphaned.append(pk)
    ended = 0
    for ids, status, new_status, reason in (
        (timed_out, ToolCallStatus.PENDING_APPROVAL, ToolCallStatus.EXPIRED, _EXPIRED_TTL),
        (orphaned, ToolCallStatus.PENDING_APPROVAL, ToolCallStatus.EXPIRED, _EXPIRED_ENDED),
        (cut_off, ToolCallStatus.EXECUTING, ToolCallStatus.FAILED, _CUT_OFF),
    ):
        if ids:
            ended += ToolCall.objects.filter(pk__in=ids, status=status).update(
                status=new_status, finished_at=now, error=reason
            )
    return ended


_EXPIRED_TTL = "Nobody approved the call in time; it was never executed."
_EXPIRED_ENDED = "Its visit or run ended before anyone approved the call; it was never executed."
_CUT_OFF = "The execution was cut off (the server stopped while calling); its outcome is unknown."


def toolcalls_for_visit(*, visit_id: int) -> list[ToolCall]:
    """The visit's calls, oldest first, expiry applied (one query when none waits or runs)."""
    calls = list(ToolCall.objects.filter(visit_id=visit_id).order_by("requested_at", "id"))
    open_statuses = (ToolCallStatus.PENDING_APPROVAL, ToolCallStatus.EXECUTING)
    if any(call.status in open_statuses for call in calls) and toolcalls_expire(visit_id=visit_id):
        calls = list(ToolCall.objects.filter(visit_id=visit_id).order_by("requested_at", "id"))
    return calls


def toolcall_expires_at(call: ToolCall) -> datetime | None:
    """When a pending call expires by time; None for a call that no longer waits."""
    if call.status != ToolCallStatus.PENDING_APPROVAL:
        return None
    return call.requested_at + approval_ttl()


# --------------------------------------------------------------------------- calls


def _arguments_errors(binding: ToolBinding, arguments) -> dict[str, list[str]]:
    """The validator's messages for ``arguments`` against the binding's schema, by path
    (``arguments``, ``arguments.orderId``, ``arguments.items[0]``)."""
    validator = input_schema_validator(binding.input_schema)(
        binding.input_schema, format_checker=jsonschema.FormatChecker()
    )
    errors: dict[str, list[str]] = {}
    try:
        found = sorted(validator.iter_errors(arguments), key=lambda e: [str(p) for p in e.absolute_path])
    except referencing.exceptions.Unresolvable as error:
        ref = getattr(error, "ref", "a schema")
        return {"arguments": [f"The tool's input schema refers to {ref}, which cannot be resolved; ops must fix it."]}
    for error in found:
        path = "arguments" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        errors.setdefault(path, []).append(error.message)
    return errors


def _available_binding(visit_id: int, name: str) -> ToolBinding:
    if name not in _visit_tool_names(visit_id):
        raise NotFound(f"The tool '{name}' is not available to this node.")
    binding = ToolBinding.objects.filter(name=name, enabled=True).first()
    if binding is None:
        raise NotFound(f"The tool '{name}' is not available to this node: its binding is disabled or was deleted.")
    return binding


def _repeat(existing: ToolCall, name: str, arguments) -> ToolCall:
    if existing.tool_name != name or existing.arguments != arguments:
        raise Conflict(
            f"idempotencyKey '{existing.idempotency_key}' was already used for call {existing.pk} "
            f"({existing.tool_name}) with other arguments."
        )
    toolcalls_expire(visit_id=existing.visit_id)
    existing.refresh_from_db()
    return existing


def toolcall_request(*, visit_id: int, name: str, arguments, idempotency_key: str | None = None) -> ToolCall:
    """One call of tool ``name`` by the visit's agent (``/internal/tools/call``, SPEC §7.2).

    The tool must be among the visit's and enabled (``NotFound``, 404);
    ``arguments`` must satisfy the binding's JSON Schema (``Invalid``, 422 with
    the validator's messages). A repeat of ``idempotency_key`` with the same
    tool and arguments returns the same call; with others it is ``Conflict``
    (409). Approval ``none``: executed now and returned SUCCEEDED or FAILED.
    Approval ``required``: stored PENDING_APPROVAL and returned at once.
    """
    binding = _available_binding(visit_id, name)
    where = lone_surrogate_path(arguments, "arguments")
    if where is not None:
        raise Invalid.field(where, "Contains a lone surrogate character, which cannot be stored.")
    errors = _arguments_errors(binding, arguments)
    if errors:
        first_field, first = next(iter(errors.items()))
        raise Invalid(f"{first_field}: {first[0]}", errors=errors)
    key = idempotency_key or ""
    if key:
        existing = ToolCall.objects.filter(visit_id=visit_id, idempotency_key=key).first()
        if existing is not None:
            return _repeat(existing, name, arguments)
    now = timezone.now()
    waits = binding.approval == ToolApproval.REQUIRED
    try:
        with transaction.atomic():
            call = ToolCall.objects.create(
                visit_id=visit_id,
                binding=binding,
                tool_name=binding.name,
                kind=binding.kind,
                arguments=arguments,
                idempotency_key=key,
                status=ToolCallStatus.PENDING_APPROVAL if waits else ToolCallStatus.EXECUTING,
                requested_at=now,
                started_at=None if waits else now,
            )
    except IntegrityError:
        existing = ToolCall.objects.filter(visit_id=visit_id, idempotency_key=key).first() if key else None
        if existing is None:
            raise
        return _repeat(existing, name, arguments)
    if waits:
        logger.info("tool call %s (%s) waits for approval", call.pk, call.tool_name)
        return call
    return _execute(call, binding)


def toolcall_for_visit(*, visit_id: int, call_id: int) -> ToolCall:
    """The call ``call_id`` of the visit, expiry applied; a call of another visit is ``NotFound`` (404)."""
    toolcalls_expire(visit_id=visit_id)
    call = ToolCall.objects.filter(pk=call_id, visit_id=visit_id).first()
    if call is None:
        raise NotFound(f"This visit made no tool call {call_id}.")
    return call


def toolcall_status_read(*, call: ToolCall, now: datetime | None = None) -> None:
    """Allow one status answer about ``call`` per second (SPEC §7.2), across processes:
    a conditional UPDATE of ``status_read_at``. Raises ``LimitReached`` (429,
    Retry-After 1) when the last answer was less than a second ago."""
    now = now or timezone.now()
    allowed = ToolCall.objects.filter(
        Q(status_read_at__isnull=True) | Q(status_read_at__lte=now - STATUS_READ_INTERVAL), pk=call.pk
    ).update(status_read_at=now)
    if not allowed:
        raise LimitReached(f"Call {call.pk} was asked about less than a second ago; ask again later.", retry_after=1)


def _agent_message(call: ToolCall) -> str:
    """One sentence for the agent about where ``call`` stands."""
    status = call.status
    if status == ToolCallStatus.PENDING_APPROVAL:
        return (
            f"The call {call.pk} of {call.tool_name} waits for a person's approval; "
            f"ask {STATUS_TOOL_NAME} about it later."
        )
    if status == ToolCallStatus.EXECUTING:
        return f"The call {call.pk} of {call.tool_name} is being executed; ask again in a moment."
    if status == ToolCallStatus.SUCCEEDED:
        return f"The call {call.pk} of {call.tool_name} succeeded (HTTP {call.http_status})."
    if status == ToolCallStatus.FAILED:
        return f"The call {call.pk} of {call.tool_name} failed: {call.error}"
    if status == ToolCallStatus.REJECTED:
        note = f": {call.note}" if call.note else "."
        return f"The call {call.pk} of {call.tool_name} was rejected by a person and never executed{note}"
    return f"The call {call.pk} of {call.tool_name} expired and was never executed: {call.error}"


def toolcall_answer(*, call: ToolCall, max_bytes: int) -> dict:
    """The call as the agent reads it (``/internal/tools/call`` and ``/status``):
    ``{callId, tool, status, result, httpStatus, error, note, message, truncated,
    originalBytes}``, ``result`` cut to ``max_bytes`` like an output (SPEC §4.5)."""
    fitted = fit_json(call.result, max_bytes)
    return {
        "callId": call.pk,
        "tool": call.tool_name,
        "status": call.status,
        "result": fitted.value,
        "httpStatus": call.http_status,
        "error": call.error or None,
        "note": call.note or None,
        "message": _agent_message(call),
        "truncated": fitted.truncated,
        "originalBytes": fitted.original_bytes,
    }


def toolcall_get(*, call_id) -> ToolCall:
    """The call ``call_id`` with its visit and run, expiry applied; ``NotFound`` otherwise."""
    toolcalls_expire()
    call = toolcall_list().filter(pk=call_id).first() if str(call_id).isdigit() else None
    if call is None:
        raise NotFound(_("No tool call with id %(id)s.") % {"id": call_id})
    return call


def toolcall_list() -> QuerySet:
    """Every call, newest first, with visit, run and decider loaded (apply :func:`toolcalls_expire` first)."""
    return ToolCall.objects.select_related("visit", "visit__run", "decided_by", "binding").order_by(
        "-requested_at", "-id"
    )


def toolcall_can_decide(user) -> bool:
    """Approving and rejecting needs ``contextquery.approve_toolcall`` (SPEC §7.3)."""
    return bool(user and user.is_authenticated and user.has_perm("contextquery.approve_toolcall"))


def _refuse_decision(call: ToolCall, verb: str) -> Conflict:
    call.refresh_from_db()
    if call.status == ToolCallStatus.EXPIRED:
        return Conflict(
            _("Call %(id)s expired before it was decided (%(reason)s); it cannot be %(verb)s.")
            % {"id": call.pk, "reason": call.error.rstrip("."), "verb": verb}
        )
    return Conflict(
        _("Call %(id)s is %(status)s, not waiting for approval; it cannot be %(verb)s.")
        % {"id": call.pk, "status": call.status, "verb": verb}
    )


def _check_decider(user) -> None:
    if not toolcall_can_decide(user):
        raise Forbidden(_("Deciding tool calls needs the contextquery.approve_toolcall permission."))


def toolcall_approve(*, call: ToolCall, user, note: str = "") -> ToolCall:
    """Approve a pending call and execute it now (SPEC §7.3). Returns the call as it ended.

    The call is claimed by one conditional UPDATE (PENDING_APPROVAL →
    EXECUTING, still within its TTL), so two approvals at once execute it once:
    the second is ``Conflict`` (409), as is approving an expired, rejected or
    finished call. Raises ``Forbidden`` (403) without ``approve_toolcall``.
    """
    _check_decider(user)
    note = (note or "")[:NOTE_MAX_CHARS]
    toolcalls_expire(visit_id=call.visit_id)
    now = timezone.now()
    claimed = ToolCall.objects.filter(
        pk=call.pk, status=ToolCallStatus.PENDING_APPROVAL, requested_at__gt=now - approval_ttl()
    ).update(
        status=ToolCallStatus.EXECUTING,
        decided_by=user,
        decided_by_label=_label(user, None),
        decided_at=now,
        note=note,
        started_at=now,
    )
    if not claimed:
        raise _refuse_decision(call, _("approved"))
    # The visit may have ended between the sweep and the claim: still never executed.
    live = Visit.objects.filter(pk=call.visit_id, status=VisitStatus.RUNNING, run__status=RunStatus.RUNNING).exists()
    if not live:
        ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.EXECUTING).update(
            status=ToolCallStatus.EXPIRED,
            finished_at=timezone.now(),
            error=_EXPIRED_ENDED,
            decided_by=None,
            decided_by_label="",
            decided_at=None,
            started_at=None,
        )
        raise _refuse_decision(call, _("approved"))
    call.refresh_from_db()
    logger.info("tool call %s (%s) approved by %s", call.pk, call.tool_name, call.decided_by_label)
    binding = ToolBinding.objects.filter(pk=call.binding_id).first() if call.binding_id else None
    return _execute(call, binding)


def toolcall_reject(*, call: ToolCall, user, note: str) -> ToolCall:
    """Reject a pending call with a ``note`` for the agent (SPEC §7.3); it is never executed.

    Raises ``Invalid`` (422) for a blank note, ``Conflict`` (409) for a call
    that does not wait any more, ``Forbidden`` (403) without ``approve_toolcall``.
    """
    _check_decider(user)
    note = (note or "").strip()
    if not note:
        raise Invalid.field("note", _("Say why the call is rejected; the agent reads the note."))
    if len(note) > NOTE_MAX_CHARS:
        raise Invalid.field("note", _("At most %(limit)d characters.") % {"limit": NOTE_MAX_CHARS})
    toolcalls_expire(visit_id=call.visit_id)
    now = timezone.now()
    done = ToolCall.objects.filter(
        pk=call.pk, status=ToolCallStatus.PENDING_APPROVAL, requested_at__gt=now - approval_ttl()
    ).update(
        status=ToolCallStatus.REJECTED,
        decided_by=user,
        decided_by_label=_label(user, None),
        decided_at=now,
        note=note,
        finished_at=now,
    )
    if not done:
        raise _refuse_decision(call, _("rejected"))
    call.refresh_from_db()
    logger.info("tool call %s (%s) rejected by %s", call.pk, call.tool_name, call.decided_by_label)
    return call


# --------------------------------------------------------------------------- execution


@dataclass(frozen=True)
class Outcome:
    """What one execution produced: the final ``status``, the business answer
    (``result``, JSON), its ``http_status`` and the ``error`` reason."""

    status: str
    result: object = None
    http_status: int | None = None
    error: str = ""


def _storable(value):
    """A decoded business answer made storable in every database: NUL characters and
    lone surrogates (legal in JSON escapes, refused by PostgreSQL) become U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    return value


def _decode(raw: bytes, secret: str | None):
    """The business answer as JSON (text when it is not JSON, None when empty), secret withheld."""
    if not raw.strip():
        return None
    text = raw.decode("utf-8", errors="replace")
    if secret:
        text = text.replace(secret, SECRET_MASK)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        value = text
    return _storable(_withhold(value, secret))


def _socket_of(response: requests.Response):
    """The socket a streamed response reads from, when urllib3 exposes it (to keep a hard deadline)."""
    connection = getattr(response.raw, "_connection", None)
    return getattr(connection, "sock", None)


def _read_capped(response: requests.Response, *, deadline: float, timeout: float) -> bytes:
    """The body, at most :data:`MAX_RESULT_BYTES`, read before ``deadline`` (``time.monotonic``).

    Reads whatever has arrived (``read1``), never waiting to fill a chunk, and
    narrows the socket's timeout to the time left before each read: a service
    that drips its answer byte by byte is cut off at the deadline too.
    """
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > MAX_RESULT_BYTES:
        raise _CallFailed(f"The business service answered {int(declared)} bytes, more than the 1 MiB allowed.")
    late = f"The business service did not finish its answer within {timeout:g} seconds."
    chunks, size = [], 0
    sock = _socket_of(response)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _CallFailed(late)
        if sock is not None:
            try:
                sock.settimeout(remaining)
            except OSError:
                pass
        try:
            chunk = response.raw.read1(65536, decode_content=True)
        except ReadTimeoutError:
            raise _CallFailed(late) from None
        except urllib3_errors.HTTPError:
            raise _CallFailed("The business service broke the connection while answering.") from None
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_RESULT_BYTES:
            raise _CallFailed("The business service answered more than the 1 MiB allowed.")
        chunks.append(chunk)
    return b"".join(chunks)


def _perform(binding: ToolBinding | None, call: ToolCall) -> Outcome:
    """Send ``call`` to the binding's endpoint and turn the answer into an :class:`Outcome`."""
    if binding is None:
        return Outcome(ToolCallStatus.FAILED, error="The tool binding was deleted; the call was not sent.")
    if not binding.enabled:
        return Outcome(ToolCallStatus.FAILED, error="The tool binding is disabled; the call was not sent.")
    secret = secret_value(binding.secret_ref)
    if binding.secret_ref and secret is None:
        return Outcome(
            ToolCallStatus.FAILED,
            error=f"The secret {binding.secret_ref} ({binding.secret_env_name}) is not set on the server; "
            "the call was not sent.",
        )
    timeout = float(binding.timeout_seconds)
    try:
        target = endpoint_target(binding.endpoint)
        headers = {
            "Host": target.host_header,
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "hermes-ops-tool-gateway",
            "Idempotency-Key": f"hermes-ops-call-{call.pk}",
        }
        if secret:
            headers["Authorization"] = f"Bearer {secret}"
        body = json.dumps(call.arguments, ensure_ascii=False).encode("utf-8")
        deadline = time.monotonic() + timeout
        with requests.Session() as session:
            session.trust_env = False  # proxy variables must never route a call (and its secret) elsewhere
            session.mount("https://", _PinnedHostAdapter(target.host))
            session.mount("http://", HTTPAdapter(max_retries=0))
            try:
                with session.post(
                    target.url,
                    data=body,
                    headers=headers,
                    timeout=Timeout(connect=min(MAX_CONNECT_SECONDS, timeout), read=timeout, total=timeout),
                    allow_redirects=False,
                    stream=True,
                ) as response:
                    status = response.status_code
                    if 300 <= status < 400:
                        return Outcome(
                            ToolCallStatus.FAILED,
                            http_status=status,
                            error=f"The business service answered HTTP {status}, a redirect, which is not followed.",
                        )
                    raw = _read_capped(response, deadline=deadline, timeout=timeout)
            except requests.Timeout:
                raise _CallFailed(f"The business service did not answer within {timeout:g} seconds.") from None
            except requests.ConnectionError as exc:
                # A read that times out while the body streams surfaces as a ConnectionError.
                if exc.args and isinstance(exc.args[0], ReadTimeoutError):
                    raise _CallFailed(f"The business service did not answer within {timeout:g} seconds.") from None
                raise _CallFailed(
                    f"The business service at {target.host_header} could not be reached (connection refused or reset)."
                ) from None
            except requests.RequestException as exc:
                raise _CallFailed(f"The request to the business service failed ({type(exc).__name__}).") from None
    except _CallFailed as failed:
        return Outcome(ToolCallStatus.FAILED, error=str(failed))
    result = _decode(raw, secret)
    if 200 <= status < 300:
        return Outcome(ToolCallStatus.SUCCEEDED, result=result, http_status=status)
    return Outcome(
        ToolCallStatus.FAILED,
        result=result,
        http_status=status,
        error=f"The business service answered HTTP {status}.",
    )


def _execute(call: ToolCall, binding: ToolBinding | None) -> ToolCall:
    """Execute a call this process claimed (status EXECUTING) and store how it ended.

    Never raises for the business service's faults: they end the call FAILED
    with their reason. Runs outside any transaction, so no lock is held while
    the business service answers.
    """
    started = time.monotonic()
    outcome = _perform(binding, call)
    duration_ms = round((time.monotonic() - started) * 1000, 3)
    ToolCall.objects.filter(pk=call.pk, status=ToolCallStatus.EXECUTING).update(
        status=outcome.status,
        result=outcome.result,
        http_status=outcome.http_status,
        error=outcome.error,
        finished_at=timezone.now(),
        duration_ms=duration_ms,
    )
    call.refresh_from_db()
    logger.info(
        "tool call %s (%s) %s in %.0f ms%s",
        call.pk,
        call.tool_name,
        call.status,
        duration_ms,
        f" (HTTP {call.http_status})" if call.http_status else "",
    )
    return call


def toolcall_is_final(call: ToolCall) -> bool:
    """Whether ``call`` has ended (succeeded, failed, rejected or expired)."""
    return call.status in _FINAL_STATUSES
