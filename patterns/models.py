"""Error patterns and their change history (SPEC §3.1)."""

import re

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from patterns.detection import REGEX_PREFIX


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


#: Categories whose failures are worth retrying later by default (SPEC §3.1, §4.4).
RETRYABLE_CATEGORIES = frozenset(
    {Category.RATE_LIMIT, Category.OVERLOADED, Category.SERVER_ERROR, Category.TIMEOUT, Category.NETWORK}
)


#: A sentence ends at . ! ? followed by a space or the end, so quoted replies
#: such as ("Rate limit exceeded.", …) stay inside it, or at 。！？ (no space in CJK).
_FIRST_SENTENCE = re.compile(r"(.+?(?:[.!?](?=\s|$)|[。！？]))", re.DOTALL)


class HermesErrorPattern(models.Model):
    """One rule that recognises a failed LLM call passed through as text.

    ``pattern`` is a case-insensitive substring, or a regular expression when it
    starts with ``regex:`` (SPEC §3.1). Built-ins carry a stable ``key``; their
    name and pattern are read-only and they cannot be deleted (SPEC §3.2).
    """

    key = models.SlugField(max_length=64, unique=True, null=True, blank=True, editable=False)
    name = models.CharField(_("name"), max_length=100, unique=True)
    pattern = models.CharField(_("pattern"), max_length=500)
    enabled = models.BooleanField(_("enabled"), default=True)
    is_built_in = models.BooleanField(_("built-in"), default=False, editable=False)
    description = models.TextField(_("description"), blank=True, default="")
    category = models.CharField(_("category"), max_length=32, choices=Category.choices, default=Category.OTHER)
    retryable = models.BooleanField(_("retryable"), default=False)
    priority = models.IntegerField(_("priority"), default=100)
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

    class Meta:
        verbose_name = _("pattern set version")
        verbose_name_plural = _("pattern set versions")

    def __str__(self):
        return str(self.version)
