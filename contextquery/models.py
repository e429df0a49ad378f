"""Runs, visits, logs, context tokens and the read audit (SPEC §4.1)."""

import re
import secrets
import uuid

import jsonschema
import referencing.exceptions
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, URLValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from contextquery.client.wire import CALL_STATUSES, RESERVED_TOOL_NAMES
from patterns.models import Category


def generate_run_id() -> str:
    """An 8-character run id for runs the engine sent without one (SPEC §4.1)."""
    return secrets.token_hex(4)


class RunMode(models.TextChoices):
    DAG = "DAG", "DAG"
    AGENTIC = "AGENTIC", "AGENTIC"


class RunStatus(models.TextChoices):
    RUNNING = "RUNNING", _("Running")
    SUCCESS = "SUCCESS", _("Success")
    FAILED = "FAILED", _("Failed")
    CANCELLED = "CANCELLED", _("Cancelled")


class VisitStatus(models.TextChoices):
    RUNNING = "RUNNING", _("Running")
    SUCCESS = "SUCCESS", _("Success")
    FAILED = "FAILED", _("Failed")
    SKIPPED = "SKIPPED", _("Skipped")
    CANCELLED = "CANCELLED", _("Cancelled")


#: Visit statuses that count as "ended" for parent derivation (SPEC §4.2).
ENDED_VISIT_STATUSES = frozenset({VisitStatus.SUCCESS, VisitStatus.FAILED, VisitStatus.SKIPPED})


class LogType(models.TextChoices):
    THINKING = "THINKING", _("Thinking")
    TOOL_CALL = "TOOL_CALL", _("Tool call")
    TOOL_RESULT = "TOOL_RESULT", _("Tool result")
    TODO_UPDATE = "TODO_UPDATE", _("Todo update")
    TEXT = "TEXT", _("Text")
    STATUS = "STATUS", _("Status")
    ERROR = "ERROR", _("Error")


class RunAction(models.TextChoices):
    """What a completion tells the engine to do with the run (SPEC §4.4)."""

    ABORT = "abort", _("abort")
    CONTINUE = "continue", _("continue")


class WorkflowRun(models.Model):
    """One execution of a workflow, with its canvas graph (SPEC §4.1).

    ``graph`` is ``{nodes: [{id, type, name, failStrategy}], edges: [{source, target}]}``.
    ``visit_counter`` is the last sortOrder handed out; it is advanced under a
    row lock so sortOrder is strictly increasing and never reused.
    """

    run_id = models.CharField(_("run id"), max_length=64, unique=True, default=generate_run_id)
    workflow_id = models.CharField(_("workflow id"), max_length=200, blank=True, default="")
    workflow_name = models.CharField(_("workflow name"), max_length=200, blank=True, default="")
    mode = models.CharField(_("mode"), max_length=8, choices=RunMode.choices, default=RunMode.DAG)
    status = models.CharField(_("status"), max_length=10, choices=RunStatus.choices, default=RunStatus.RUNNING)
    graph = models.JSONField(_("graph"), default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    started_at = models.DateTimeField(_("started"), db_index=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    visit_counter = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["-started_at", "-id"]
        verbose_name = _("workflow run")
        verbose_name_plural = _("workflow runs")
        permissions = [
            ("record_run", "Can record runs (engine client)"),
            ("read_all_runs", "Can read every run, not only its own"),
        ]
        indexes = [
            models.Index(fields=["status", "-started_at"], name="run_status_started"),
            models.Index(fields=["workflow_id", "-started_at"], name="run_workflow_started"),
        ]

    def __str__(self):
        return self.run_id

    def get_absolute_url(self):
        """The run page (also the admin's "View on site")."""
        return reverse("contextquery:run", args=[self.run_id])


class Visit(models.Model):
    """One visit of a node in a run: a snapshot of its input, output and verdict.

    ``parent_uuids`` lists the visits whose completion led here (SPEC §4.2),
    as UUID strings of the same run; ``[]`` marks a root. ``output`` is the
    envelope ``{status, message, data}``. The server assigns ``sort_order`` and
    ``iter_seq`` (SPEC §4.1).
    """

    visit_uuid = models.UUIDField(_("visit uuid"), unique=True, default=uuid.uuid4)
    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="visits")
    node_id = models.CharField(_("node id"), max_length=200)
    node_type = models.CharField(_("node type"), max_length=100, blank=True, default="")
    node_name = models.CharField(_("node name"), max_length=200, blank=True, default="")
    iter_seq = models.PositiveIntegerField(_("iterSeq"))
    sort_order = models.PositiveIntegerField(_("sort order"))
    parent_uuids = models.JSONField(_("parents"), default=list, blank=True)
    # Set at registration and never changed (parents never change): the hop
    # kind (edge | backtrack | jump) of each parent link, in parent_uuids'
    # order, and the ancestor set as bits (bit n ⇔ the run's visit with
    # sortOrder n), so a context query's scope is one lookup (issue 14).
    hop_kinds = models.JSONField(default=list, blank=True, editable=False)
    ancestry = models.BinaryField(default=b"", blank=True, editable=False)
    status = models.CharField(_("status"), max_length=10, choices=VisitStatus.choices, default=VisitStatus.RUNNING)
    input = models.JSONField(_("input"), null=True, blank=True)
    output = models.JSONField(_("output"), null=True, blank=True)
    final_text = models.TextField(_("final text"), null=True, blank=True)
    failure_reason = models.TextField(_("failure reason"), blank=True, default="")
    failure_category = models.CharField(
        _("failure category"), max_length=32, choices=Category.choices, blank=True, default=""
    )
    retryable = models.BooleanField(_("retryable"), null=True, blank=True)
    run_action = models.CharField(_("run action"), max_length=10, choices=RunAction.choices, blank=True, default="")
    matched_pattern = models.ForeignKey(
        "patterns.HermesErrorPattern", null=True, blank=True, on_delete=models.SET_NULL, related_name="visits"
    )
    matched_pattern_key = models.CharField(max_length=64, blank=True, default="")
    matched_pattern_name = models.CharField(max_length=100, blank=True, default="")
    matched_pattern_text = models.CharField(max_length=500, blank=True, default="")
    # What the engine sent, kept to answer retries (SPEC §4.3): an equal repeat
    # gets the stored result, a different one 409.
    registration = models.JSONField(default=dict, blank=True, editable=False)
    completion = models.JSONField(null=True, blank=True, editable=False)
    log_counter = models.PositiveIntegerField(default=0, editable=False)
    log_count = models.PositiveIntegerField(_("logs"), default=0, editable=False)
    # What the meta query answers, kept as logs arrive (``recording.logs_append``):
    # {"thinking": [messages], "toolCalls": [...], "todoList": list | null}.
    # Null for a visit recorded before it was kept: read from its logs then.
    meta_content = models.JSONField(null=True, blank=True, editable=False)
    query_count = models.PositiveIntegerField(_("context queries"), default=0, editable=False)
    # The business tools the engine gave the node (SPEC §7.1): binding names, sorted.
    tools = models.JSONField(_("tools"), default=list, blank=True, editable=False)
    tool_call_count = models.PositiveIntegerField(_("tool calls"), default=0, editable=False)
    started_at = models.DateTimeField(_("started"))
    ended_at = models.DateTimeField(_("ended"), null=True, blank=True)
    # The last sign of life (SPEC §8): registration, a log, a heartbeat, a
    # context or tool query, completion. Written at most every
    # ``liveness.SEEN_EVERY`` (10 s) by ``liveness.visit_seen``.
    last_seen_at = models.DateTimeField(_("last sign of life"), default=timezone.now)

    class Meta:
        ordering = ["run", "sort_order"]
        verbose_name = _("visit")
        verbose_name_plural = _("visits")
        constraints = [
            models.UniqueConstraint(fields=["run", "sort_order"], name="visit_unique_sort_order"),
            models.UniqueConstraint(fields=["run", "node_id", "iter_seq"], name="visit_unique_iter_seq"),
        ]
        indexes = [
            models.Index(fields=["matched_pattern", "-ended_at"], name="visit_pattern_ended"),
            models.Index(fields=["-ended_at"], name="visit_ended"),
            # A run's latest sign of life, and "any sign since the cutoff?" for stale runs.
            models.Index(fields=["run", "last_seen_at"], name="visit_run_seen"),
        ]

    def __str__(self):
        return f"{self.node_id}#{self.iter_seq} ({self.visit_uuid})"

    def get_absolute_url(self):
        """The visit page (also the admin's "View on site")."""
        return reverse("contextquery:visit", args=[self.run.run_id, self.visit_uuid])

    @property
    def failure_category_label(self) -> str:
        """The translated label of ``failure_category`` ("Rate limit" for ``rate_limit``), "" when none."""
        return Category.label_of(self.failure_category)


class VisitLog(models.Model):
    """One log entry of a visit (SPEC §4.1). ``detail`` holds text or JSON.

    By type: THINKING — ``message`` is the thought; TOOL_CALL — ``message`` the
    tool name, ``detail`` its arguments; TOOL_RESULT — ``message`` the tool name,
    ``detail`` the result; TODO_UPDATE — ``detail`` the whole ``[{text, status}]``.
    """

    visit = models.ForeignKey(Visit, on_delete=models.CASCADE, related_name="logs")
    seq = models.PositiveIntegerField(_("seq"))
    type = models.CharField(_("type"), max_length=16, choices=LogType.choices)
    timestamp = models.DateTimeField(_("timestamp"))
    message = models.TextField(_("message"), blank=True, default="")
    detail = models.JSONField(_("detail"), null=True, blank=True)

    class Meta:
        ordering = ["visit", "seq"]
        verbose_name = _("visit log")
        verbose_name_plural = _("visit logs")
        constraints = [models.UniqueConstraint(fields=["visit", "seq"], name="visitlog_unique_seq")]

    def __str__(self):
        return f"{self.type} #{self.seq}"


class ContextToken(models.Model):
    """A context token, stored only as its SHA-256 hex digest (SPEC §4.1, §4.5)."""

    token_hash = models.CharField(max_length=64, unique=True)
    run = models.ForeignKey(WorkflowRun, on_delete=models.CASCADE, related_name="tokens")
    visit = models.ForeignKey(Visit, on_delete=models.CASCADE, related_name="tokens")
    issued_at = models.DateTimeField(_("issued"))
    expires_at = models.DateTimeField(_("expires"))
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        ordering = ["-issued_at", "-id"]
        verbose_name = _("context token")
        verbose_name_plural = _("context tokens")
        indexes = [
            models.Index(fields=["visit", "expires_at"], name="token_visit_expiry"),
            models.Index(fields=["expires_at"], name="token_expiry"),
        ]

    #: How much of the hash pages and the admin show.
    HASH_PREFIX_CHARS = 8

    def __str__(self):
        return f"{self.hash_prefix}…"

    @property
    def hash_prefix(self) -> str:
        """The first characters of the stored hash: enough to tell tokens apart, never the token."""
        return self.token_hash[: self.HASH_PREFIX_CHARS]

    def state(self, now=None) -> str:
        """``revoked`` | ``expired`` | ``live`` at ``now`` (default: now)."""
        if self.revoked_at is not None:
            return "revoked"
        return "expired" if self.expires_at <= (now or timezone.now()) else "live"


class ContextRead(models.Model):
    """Audit row: one context query made by a visit's LLM (SPEC §4.1, §4.5).

    Belongs to the visit, so purging tokens keeps it.
    """

    visit = models.ForeignKey(Visit, on_delete=models.CASCADE, related_name="reads")
    endpoint = models.CharField(_("endpoint"), max_length=16)
    node_id = models.CharField(_("node id"), max_length=200, blank=True, default="")
    target_visit_uuid = models.CharField(_("visit asked"), max_length=64, blank=True, default="")
    field = models.CharField(_("field"), max_length=500, blank=True, default="")
    kind = models.CharField(_("kind"), max_length=16, blank=True, default="")
    iter_seq = models.IntegerField(_("iterSeq"), null=True, blank=True)
    status_code = models.PositiveSmallIntegerField(_("HTTP status"))
    bytes_returned = models.PositiveIntegerField(_("bytes"), default=0)
    duration_ms = models.FloatField(_("duration (ms)"), default=0)
    created_at = models.DateTimeField(_("time"), db_index=True)

    class Meta:
        ordering = ["visit", "created_at", "id"]
        verbose_name = _("context read")
        verbose_name_plural = _("context reads")

    def __str__(self):
        return f"{self.endpoint} {self.status_code}"


class MetricTally(models.Model):
    """What purges deleted, kept so the ``/metrics`` counters never go down (SPEC §8).

    The counters are read from the database (rows stored + rows purged): one
    row per metric sample, ``name`` the sample's name and ``labels`` its
    label pairs as canonical JSON (``[["status", "FAILED"], …]``). Only
    purges write here (``contextquery.tallies``), never the hot paths.
    """

    name = models.CharField(max_length=100)
    labels = models.CharField(max_length=300, default="[]")
    value = models.FloatField(default=0)

    class Meta:
        verbose_name = _("metric tally")
        verbose_name_plural = _("metric tallies")
        constraints = [models.UniqueConstraint(fields=["name", "labels"], name="metrictally_unique_sample")]

    def __str__(self):
        return f"{self.name}{self.labels} = {self.value}"


# --------------------------------------------------------------------------- tool gateway (SPEC §7)

#: A binding's name: the tool name the LLM sees (SPEC §7.1).
TOOL_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
#: A secret's name; its value is read from ``HERMES_TOOL_SECRET_<NAME>``.
SECRET_REF_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
#: The environment variable of a secret is this prefix and the secret's name.
SECRET_ENV_PREFIX = "HERMES_TOOL_SECRET_"
#: Bounds of a binding's timeout, in seconds: always under gunicorn's worker timeout (30 s).
MIN_TOOL_TIMEOUT_SECONDS, MAX_TOOL_TIMEOUT_SECONDS = 1, 20


def validate_tool_name(value: str) -> None:
    """A binding's name: ``^[a-z][a-z0-9_]{0,63}$``, and none of the MCP server's own tools."""
    if not TOOL_NAME_RE.fullmatch(value or ""):
        raise ValidationError(
            _("Use 1 to 64 lowercase letters, digits and underscores, starting with a letter (e.g. order_lookup)."),
            code="bad_name",
        )
    if value in RESERVED_TOOL_NAMES:
        raise ValidationError(
            _("“%(name)s” is a tool of the MCP server itself; choose another name.") % {"name": value},
            code="reserved",
        )


def validate_secret_ref(value: str) -> None:
    """A secret's name: ``^[A-Z][A-Z0-9_]{0,63}$`` (its value comes from ``HERMES_TOOL_SECRET_<NAME>``)."""
    if value and not SECRET_REF_RE.fullmatch(value):
        raise ValidationError(
            _("Use 1 to 64 capital letters, digits and underscores, starting with a letter (e.g. SHOP_API)."),
            code="bad_secret_name",
        )


def input_schema_validator(schema: dict):
    """The validator class ``schema`` declares (``$schema``), JSON Schema 2020-12 when it names none."""
    return jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)


def validate_input_schema(value) -> None:
    """A binding's ``inputSchema``: a JSON Schema (checked as a schema by ``jsonschema``) of an object."""
    if not isinstance(value, dict):
        # Not code "invalid": JSONField would put its own "Value must be valid JSON." in its place.
        raise ValidationError(_('Must be a JSON Schema object, e.g. {"type": "object"}.'), code="not_a_schema")
    if not isinstance(value.get("$schema", ""), str):
        raise ValidationError(_("$schema must name a JSON Schema dialect (a URL)."), code="bad_dialect")
    try:
        validator = input_schema_validator(value)
        validator.check_schema(value)
        # A $ref the validator cannot resolve (e.g. a remote one: nothing is fetched) is refused now, not at a call.
        list(validator(value).iter_errors({}))
    except jsonschema.SchemaError as error:
        raise ValidationError(
            _("Not a valid JSON Schema: %(detail)s") % {"detail": error.message}, code="invalid_schema"
        ) from None
    except referencing.exceptions.Unresolvable as error:
        raise ValidationError(
            _("The schema refers to %(ref)s, which cannot be resolved; keep every $ref inside the schema.")
            % {"ref": getattr(error, "ref", "a schema")},
            code="unresolvable",
        ) from None
    if value.get("type") != "object":
        raise ValidationError(
            _('The schema must describe an object ("type": "object"): tool arguments are named.'),
            code="not_object",
        )


def default_input_schema() -> dict:
    return {"type": "object", "properties": {}, "additionalProperties": False}


class ToolKind(models.TextChoices):
    READ = "read", _("read")
    WRITE = "write", _("write")


class ToolApproval(models.TextChoices):
    NONE = "none", _("none")
    REQUIRED = "required", _("required")


class ToolBinding(models.Model):
    """A business tool an agent may call through the gateway (SPEC §7.1).

    The gateway POSTs the validated arguments as JSON to ``endpoint``, with
    ``Authorization: Bearer <HERMES_TOOL_SECRET_<secret_ref>>`` when
    ``secret_ref`` is set. Only the secret's name is stored, never its value.
    """

    name = models.CharField(_("name"), max_length=64, unique=True, validators=[validate_tool_name])
    description = models.TextField(_("description"), blank=True, default="")
    input_schema = models.JSONField(_("input schema"), default=default_input_schema, validators=[validate_input_schema])
    kind = models.CharField(_("kind"), max_length=8, choices=ToolKind.choices, default=ToolKind.READ)
    approval = models.CharField(_("approval"), max_length=10, choices=ToolApproval.choices, default=ToolApproval.NONE)
    endpoint = models.CharField(_("endpoint"), max_length=500, validators=[URLValidator(schemes=["http", "https"])])
    secret_ref = models.CharField(
        _("secret name"), max_length=64, blank=True, default="", validators=[validate_secret_ref]
    )
    timeout_seconds = models.PositiveSmallIntegerField(
        _("timeout (seconds)"),
        default=10,
        validators=[MinValueValidator(MIN_TOOL_TIMEOUT_SECONDS), MaxValueValidator(MAX_TOOL_TIMEOUT_SECONDS)],
    )
    enabled = models.BooleanField(_("enabled"), default=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("tool binding")
        verbose_name_plural = _("tool bindings")

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("tools:detail", args=[self.pk])

    @property
    def secret_env_name(self) -> str:
        """The environment variable the secret is read from ("" without a secret)."""
        return SECRET_ENV_PREFIX + self.secret_ref if self.secret_ref else ""


class ToolBindingChange(models.Model):
    """One change to a tool binding: who, when, what, before and after (SPEC §7.1, like §3.1).

    Kept when the binding is deleted (``binding`` becomes null; ``binding_ref``
    and ``binding_name`` remember it).
    """

    class Action(models.TextChoices):
        CREATE = "create", _("created")
        UPDATE = "update", _("updated")
        DELETE = "delete", _("deleted")
        ENABLE = "enable", _("enabled")
        DISABLE = "disable", _("disabled")

    binding = models.ForeignKey(ToolBinding, null=True, blank=True, on_delete=models.SET_NULL, related_name="changes")
    binding_ref = models.BigIntegerField(_("binding id"))
    binding_name = models.CharField(_("binding name"), max_length=64)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor_label = models.CharField(_("by"), max_length=150, blank=True, default="")
    via = models.CharField(_("via"), max_length=16, blank=True, default="")
    action = models.CharField(_("action"), max_length=16, choices=Action.choices)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(_("when"), auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("tool binding change")
        verbose_name_plural = _("tool binding changes")
        indexes = [models.Index(fields=["binding_ref", "-created_at"], name="toolbindingchange_ref")]

    def __str__(self):
        return f"{self.binding_name}: {self.action}"


class ToolCallStatus(models.TextChoices):
    PENDING_APPROVAL = CALL_STATUSES[0], _("Waiting for approval")
    EXECUTING = CALL_STATUSES[1], _("Executing")
    SUCCEEDED = CALL_STATUSES[2], _("Succeeded")
    FAILED = CALL_STATUSES[3], _("Failed")
    REJECTED = CALL_STATUSES[4], _("Rejected")
    EXPIRED = CALL_STATUSES[5], _("Expired")


class ToolCall(models.Model):
    """One call of a business tool by a visit's agent (SPEC §7.1, §7.3).

    ``tool_name`` and ``kind`` are copied from the binding, so the call stays
    readable when the binding is deleted. A call is claimed for execution by
    one conditional update (PENDING_APPROVAL → EXECUTING), so it runs once.
    """

    visit = models.ForeignKey(Visit, on_delete=models.CASCADE, related_name="tool_calls")
    binding = models.ForeignKey(ToolBinding, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls")
    tool_name = models.CharField(_("tool"), max_length=64)
    kind = models.CharField(_("kind"), max_length=8, choices=ToolKind.choices)
    arguments = models.JSONField(_("arguments"), default=dict, blank=True)
    idempotency_key = models.CharField(_("idempotency key"), max_length=200, blank=True, default="")
    status = models.CharField(_("status"), max_length=20, choices=ToolCallStatus.choices)
    result = models.JSONField(_("result"), null=True, blank=True)
    http_status = models.PositiveSmallIntegerField(_("HTTP status"), null=True, blank=True)
    error = models.TextField(_("error"), blank=True, default="")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by_label = models.CharField(_("decided by"), max_length=150, blank=True, default="")
    decided_at = models.DateTimeField(_("decided"), null=True, blank=True)
    note = models.TextField(_("note"), blank=True, default="")
    requested_at = models.DateTimeField(_("requested"))
    started_at = models.DateTimeField(_("execution started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    duration_ms = models.FloatField(_("duration (ms)"), null=True, blank=True)
    # The last /internal/tools/status answer about this call (at most one a second).
    status_read_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-requested_at", "-id"]
        verbose_name = _("tool call")
        verbose_name_plural = _("tool calls")
        permissions = [("approve_toolcall", "Can approve or reject tool calls")]
        constraints = [
            models.UniqueConstraint(
                fields=["visit", "idempotency_key"],
                condition=~Q(idempotency_key=""),
                name="toolcall_unique_idempotency_key",
            )
        ]
        indexes = [models.Index(fields=["status", "requested_at"], name="toolcall_status_requested")]

    def __str__(self):
        return f"#{self.pk} {self.tool_name} ({self.status})"
