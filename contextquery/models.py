"""Runs, visits, logs, context tokens and the read audit (SPEC §4.1)."""

import secrets
import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

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
    query_count = models.PositiveIntegerField(_("context queries"), default=0, editable=False)
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
