"""Error patterns and their change history (SPEC §3.1)."""

import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from patterns.matching import (
    MAX_SET_PROGRAM_SIZE,
    REGEX_PREFIX,
    SCOPE_ANYWHERE,
    SCOPE_ERROR,
    PatternRefused,
    validate_pattern,
)


class Category(models.TextChoices):
    """What kind of failure a pattern describes (SPEC §3.1)."""

    RATE_LIMIT = "rate_limit", _("Rate limit")
    QUOTA = "quota", _("Quota or billing")
    AUTH = "auth", _("Authentication")
    OVERLOADED = "overloaded", _("Overloaded")
    SERVER_ERROR = "server_error", _("Server error")
    TIMEOUT = "timeout", _("Timeout")
    NETWORK = "network", _("Network")
    CONTEXT_LENGTH = "context_length", _("Context length")
    MODEL_NOT_FOUND = "model_not_found", _("Model not found")
    CONTENT_FILTER = "content_filter", _("Content filter")
    INCOMPLETE = "incomplete", _("Incomplete")
    OTHER = "other", _("Other")

    @classmethod
    def label_of(cls, value: str) -> str:
        """The translated label of the slug ``value``; an unknown slug comes back as is."""
        return cls(value).label if value in cls.values else value


class Scope(models.TextChoices):
    """Where a pattern matches (SPEC §3.1, §3.3)."""

    ERROR = SCOPE_ERROR, _("only where the reply is an error")
    ANYWHERE = SCOPE_ANYWHERE, _("anywhere in the scanned text")


#: Categories whose failures are worth retrying later by default (SPEC §3.1, §4.4).
RETRYABLE_CATEGORIES = frozenset(
    {Category.RATE_LIMIT, Category.OVERLOADED, Category.SERVER_ERROR, Category.TIMEOUT, Category.NETWORK}
)


#: A sentence ends at . ! ? followed by a space or the end, so quoted replies
#: such as ("Rate limit exceeded.", …) stay inside it, or at 。！？ (no space in CJK).
_FIRST_SENTENCE = re.compile(r"(.+?(?:[.!?](?=\s|$)|[。！？]))", re.DOTALL)


#: The sentences of ``patterns.matching.REFUSALS``, marked for translation.
PATTERN_REFUSALS = {
    "empty": _("The pattern is empty; give a substring or regex:<expression>."),
    "empty_regex": _("The regular expression after regex: is empty."),
    "too_costly": _("The regular expression is too costly to run (re2 says: %(detail)s); simplify it."),
    "invalid_regex": _(
        "The regular expression does not compile (re2 says: %(detail)s). "
        "Backreferences and lookarounds are not supported."
    ),
    "too_many_instructions": _(
        "The regular expression is too costly to run (%(size)d instructions, at most %(limit)d); "
        "simplify it or use fewer repetitions."
    ),
    "matches_empty": _("The regular expression matches empty text, so it would flag every reply."),
    "matches_ordinary": _("The pattern matches the ordinary answer “%(answer)s”, so it would flag good replies."),
}

#: The refusal of a change that would make the enabled set too costly (SPEC §3.1, §3.3).
SET_TOO_COSTLY = _(
    "With this change the enabled patterns together would be too costly to compile "
    "(%(size)s instructions, at most %(limit)s); disable or simplify some regex: patterns."
)
SET_TOO_COSTLY_LIMIT = MAX_SET_PROGRAM_SIZE


def validate_pattern_text(value: str) -> None:
    """The one validator of a pattern's text (SPEC §3.1), used by the model,
    and so by forms, the admin, the API and draft trials alike. Raises
    ``ValidationError`` (code: the rule, see ``patterns.matching.REFUSALS``)."""
    try:
        validate_pattern(value)
    except PatternRefused as refused:
        raise ValidationError(PATTERN_REFUSALS[refused.code], code=refused.code, params=refused.params) from None


class HermesErrorPattern(models.Model):
    """One rule that recognises a failed LLM call passed through as text.

    ``pattern`` is a case-insensitive substring, or a regular expression when it
    starts with ``regex:`` (SPEC §3.1). Built-ins carry a stable ``key``; their
    name and pattern are read-only and they cannot be deleted (SPEC §3.2).
    """

    key = models.SlugField(max_length=64, unique=True, null=True, blank=True, editable=False)
    name = models.CharField(_("name"), max_length=100, unique=True)
    pattern = models.CharField(_("pattern"), max_length=500, validators=[validate_pattern_text])
    enabled = models.BooleanField(_("enabled"), default=True)
    is_built_in = models.BooleanField(_("built-in"), default=False, editable=False)
    description = models.TextField(_("description"), blank=True, default="")
    category = models.CharField(_("category"), max_length=32, choices=Category.choices, default=Category.OTHER)
    retryable = models.BooleanField(_("retryable"), default=False)
    priority = models.IntegerField(_("priority"), default=100)
    scope = models.CharField(
        _("scope"),
        max_length=16,
        choices=Scope.choices,
        default=Scope.ERROR,
        help_text=_(
            "error: the pattern counts only where the reply is an error (it starts as one, is one provider "
            "sentence, or ends with an error block); anywhere: wherever its text occurs."
        ),
    )
    hit_count = models.PositiveBigIntegerField(_("hits"), default=0, editable=False)
    last_hit_at = models.DateTimeField(_("last hit"), null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["priority", "id"]
        verbose_name = _("error pattern")
        verbose_name_plural = _("error patterns")
        indexes = [models.Index(fields=["enabled", "priority", "id"], name="pattern_enabled_order")]

    def __str__(self):
        return self.name

    @property
    def is_regex(self) -> bool:
        """True when ``pattern`` is a ``regex:`` expression rather than a substring."""
        return self.pattern.startswith(REGEX_PREFIX)

    @property
    def description_summary(self) -> str:
        """The description's first sentence (the whole description when no
        sentence ends), for the list, where many built-ins share one regex opening."""
        match = _FIRST_SENTENCE.match(self.description.strip())
        return match.group(1) if match else self.description.strip()


class PatternChange(models.Model):
    """One change to a pattern: who, when, what, before and after (SPEC §3.1).

    Kept when the pattern is deleted (``pattern`` becomes null; ``pattern_ref``
    and ``pattern_name`` remember it). Hit counting writes no row.
    """

    class Action(models.TextChoices):
        CREATE = "create", _("created")
        UPDATE = "update", _("updated")
        DELETE = "delete", _("deleted")
        ENABLE = "enable", _("enabled")
        DISABLE = "disable", _("disabled")
        COPY = "copy", _("copied")
        RESET = "reset", _("reset to defaults")
        SEED = "seed", _("installed")

    pattern = models.ForeignKey(
        HermesErrorPattern, null=True, blank=True, on_delete=models.SET_NULL, related_name="changes"
    )
    pattern_ref = models.BigIntegerField(_("pattern id"))
    pattern_name = models.CharField(_("pattern name"), max_length=100)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor_label = models.CharField(_("by"), max_length=150, blank=True, default="")
    via = models.CharField(_("via"), max_length=16, blank=True, default="")  # api, page, admin, command, migration
    action = models.CharField(_("action"), max_length=16, choices=Action.choices)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(_("when"), auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("pattern change")
        verbose_name_plural = _("pattern changes")
        indexes = [models.Index(fields=["pattern_ref", "-created_at"], name="patternchange_ref")]

    def __str__(self):
        return f"{self.pattern_name}: {self.action}"


class PatternSetVersion(models.Model):
    """One row whose ``version`` changes whenever the pattern set changes (SPEC §3.3).

    Every worker process compares it with the version its compiled matcher was
    built from, once per detection, so a change is seen everywhere at once even
    with the per-process local-memory cache. A bump writes a fresh random value
    rather than ``version + 1``: a rolled-back bump must never let a later,
    different change reuse a number some process has already compiled.
    """

    version = models.BigIntegerField(default=0)
    #: The last version whose enabled set compiled, and that set's rules (plain
    #: dicts), so a worker that cannot compile the current set keeps detecting
    #: with it, a new worker too (SPEC §3.3).
    compiled_version = models.BigIntegerField(null=True, blank=True)
    compiled_rules = models.JSONField(null=True, blank=True)
    #: Why the current version did not compile ("" when it did).
    compile_error = models.TextField(blank=True, default="")

    class Meta:
        verbose_name = _("pattern set version")
        verbose_name_plural = _("pattern set versions")

    def __str__(self):
        return str(self.version)


class JudgedReply(models.Model):
    """One agent reply as it was judged when its visit completed (SPEC §1, §3.5).

    ``contextquery`` feeds a row at every completion that carries a reply
    (:func:`patterns.marks.reply_judged`), so this app never reads run
    tables and purging runs keeps what is here. The newest rows are the
    sample draft patterns are tried on (:mod:`patterns.trials`); a row ops
    marked (a false positive of a pattern) is kept for good, as evidence the
    counts and training read.

    ``subject`` is the visit's uuid, ``subject_url`` its page and ``label``
    how it is named there ("run 8c1f… · node B #2"). ``text`` is the reply,
    or for a long one its first and last :data:`REPLY_KEEP_CHARS` characters
    joined (detection reads only windows at both ends); ``length`` is the
    whole reply's length in characters. ``decided_by`` says what failed it:
    ``pattern``, ``agent`` (its own signal, SPEC §4.4 step 1–2), ``engine``
    (reported FAILED or an error envelope), ``blank`` (an empty reply), or
    ``""`` when it passed.
    """

    #: Characters kept from each end of a long reply.
    REPLY_KEEP_CHARS = 10_000

    class Mark(models.TextChoices):
        NONE = "", _("not marked")
        FALSE_POSITIVE = "false_positive", _("false positive")
        MISSED_FAILURE = "missed_failure", _("missed failure")

    class DecidedBy(models.TextChoices):
        PASSED = "", _("passed")
        PATTERN = "pattern", _("error pattern")
        AGENT = "agent", _("agent's own signal")
        ENGINE = "engine", _("engine's report")
        BLANK = "blank", _("empty reply")
        MODEL = "model", _("detection model")

    subject = models.UUIDField(_("visit uuid"), unique=True)
    subject_url = models.CharField(_("page"), max_length=500, blank=True, default="")
    label = models.CharField(_("visit"), max_length=300, blank=True, default="")
    text = models.TextField(_("reply"))
    length = models.PositiveIntegerField(_("length (characters)"))
    failed = models.BooleanField(_("failed"))
    decided_by = models.CharField(_("decided by"), max_length=16, choices=DecidedBy.choices, blank=True, default="")
    pattern = models.ForeignKey(
        HermesErrorPattern, null=True, blank=True, on_delete=models.SET_NULL, related_name="judged_replies"
    )
    pattern_name = models.CharField(_("pattern name"), max_length=100, blank=True, default="")
    category = models.CharField(_("category"), max_length=32, blank=True, default="")
    model_score = models.FloatField(_("model score"), null=True, blank=True)
    judged_at = models.DateTimeField(_("judged"), db_index=True)
    mark = models.CharField(_("mark"), max_length=16, choices=Mark.choices, blank=True, default="")
    mark_note = models.TextField(_("note"), blank=True, default="")
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    marked_at = models.DateTimeField(_("marked"), null=True, blank=True)

    class Meta:
        ordering = ["-judged_at", "-id"]
        verbose_name = _("judged reply")
        verbose_name_plural = _("judged replies")
        indexes = [models.Index(fields=["pattern", "mark"], name="judgedreply_pattern_mark")]

    def __str__(self):
        return self.label or str(self.subject)

    @property
    def failed_by_pattern(self) -> bool:
        """True when the reply FAILED and a pattern matched it: the pattern
        decided (SPEC §4.4 step 5) or agreed with the agent's own signal
        (step 1). Either way ops may mark the pattern's verdict as wrong."""
        return self.failed and bool(self.pattern_id or self.pattern_name)

    @property
    def failed_by_model(self) -> bool:
        """True when the detection model failed the reply (SPEC §3.3a): ops may mark it as wrong."""
        return self.failed and self.decided_by == self.DecidedBy.MODEL

    @property
    def failed_otherwise(self) -> bool:
        """True when something other than the patterns failed the reply (the
        agent's signal, the engine's report, an empty reply): a draft pattern
        cannot change its verdict."""
        return self.failed and self.decided_by != self.DecidedBy.PATTERN


class DetectorModel(models.Model):
    """One trained detection model, stored as plain weights (SPEC §3.3a).

    ``weights`` is the JSON of :func:`patterns.training.weights_export` (never
    a pickle); ``threshold`` the probability at or above which a reply no
    pattern matched is FAILED; ``version`` a label (``default-…`` for the
    shipped weights, ``trained-…`` for ``manage.py train_detector``). Every
    worker uses the newest row (highest id); a new row takes effect at the next
    detection, like a pattern change.
    """

    version = models.CharField(_("version"), max_length=100)
    weights = models.JSONField(_("weights"))
    threshold = models.FloatField(_("threshold"))
    note = models.TextField(_("note"), blank=True, default="")
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        verbose_name = _("detection model")
        verbose_name_plural = _("detection models")

    def __str__(self):
        return self.version
