"""Forms of the pattern pages and the admin (SPEC §3.5)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from patterns.changes import BUILT_IN_READ_ONLY, EDITABLE_FIELDS, refuse_costly_set
from patterns.models import HermesErrorPattern
from project.errors import Invalid

#: Longest reply the "Try a reply" box accepts (characters).
TRY_MAX_CHARS = 100_000


class PatternForm(forms.ModelForm):
    """Create or edit a pattern. A ``regex:`` that does not compile, or is too
    costly, is an error on the pattern field; a built-in's name and pattern are
    shown but cannot be changed."""

    class Meta:
        model = HermesErrorPattern
        fields = list(EDITABLE_FIELDS)
        widgets = {
            # The whole text shows, with its limit (SPEC §3.5); no maxlength: over-long
            # text is refused with a message, never cut by the browser.
            "pattern": forms.Textarea(attrs={"rows": 7, "spellcheck": "false", "autocomplete": "off", "wrap": "soft"}),
            "description": forms.Textarea(attrs={"rows": 3}),
        }
        help_texts = {
            "priority": _("Lower is tried first."),
            "retryable": _("May the engine retry the node later (yes for a rate limit, no for a bad key)?"),
            "scope": _(
                "error: only where the reply is an error (it starts as one, is one provider sentence, or ends "
                "with an error block), so prose that mentions the phrase is not flagged; anywhere: wherever "
                "the text occurs."
            ),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Leading or trailing spaces can be part of a substring pattern. The
        # admin leaves out a built-in's read-only fields, so check for them.
        if "pattern" in self.fields:
            field = self.fields["pattern"]
            field.strip = False
            field.widget.attrs.pop("maxlength", None)
            limit = HermesErrorPattern._meta.get_field("pattern").max_length
            field.help_text = _(
                "A case-insensitive substring, or regex:<expression> (re2 syntax, case-insensitive). "
                "At most %(limit)d characters."
            ) % {"limit": limit}
            field.widget.attrs["data-limit"] = str(limit)
        if self.instance.pk and self.instance.is_built_in:
            for name in BUILT_IN_READ_ONLY:
                if name not in self.fields:
                    continue
                self.fields[name].disabled = True
                self.fields[name].help_text = _("Read-only on a built-in pattern; copy it to make an editable one.")

    def _post_clean(self):
        """The model's rules, then the whole enabled set's cost (SPEC §3.1, §3.3):
        a change that would make it too costly to compile is an error on the pattern."""
        super()._post_clean()
        if self.errors:
            return
        try:
            refuse_costly_set(self.instance)
        except Invalid as refused:
            for field, texts in (refused.errors or {"pattern": [refused.message]}).items():
                for text in texts:
                    self.add_error(field if field in self.fields else None, text)

    def trial_pattern(self) -> str | None:
        """The pattern text for "Try against recorded replies", or None when it
        is missing or refused (the error is then on the pattern field). A trial
        needs only the pattern, so the other fields' errors are dropped: an
        empty name must not block trying a draft."""
        errors = self.errors
        for name in [name for name in errors if name != "pattern"]:
            del errors[name]
        return None if "pattern" in errors else self.cleaned_data["pattern"]

    def trial_scope(self) -> str | None:
        """The scope chosen in the form for a trial, or None when missing."""
        return self.cleaned_data.get("scope") or None


class TryReplyForm(forms.Form):
    """The "Try a reply" box: paste an agent reply, see which pattern matches."""

    text = forms.CharField(
        label=_("Reply"),
        # An empty reply is a verdict too (FAILED, SPEC §4.4 step 6), not a form error.
        required=False,
        max_length=TRY_MAX_CHARS,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 5, "placeholder": _("Paste an agent reply here")}),
    )
