"""Forms of the pattern pages and the admin (SPEC §3.5)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from patterns.changes import BUILT_IN_READ_ONLY, EDITABLE_FIELDS
from patterns.models import HermesErrorPattern

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
            "pattern": forms.TextInput(attrs={"spellcheck": "false", "autocomplete": "off"}),
            "description": forms.Textarea(attrs={"rows": 3}),
        }
        help_texts = {
            "pattern": _("A case-insensitive substring, or regex:<expression> (re2 syntax, case-insensitive)."),
            "priority": _("Lower is tried first."),
            "retryable": _("May the engine retry the node later (yes for a rate limit, no for a bad key)?"),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Leading or trailing spaces can be part of a substring pattern. The
        # admin leaves out a built-in's read-only fields, so check for them.
        if "pattern" in self.fields:
            self.fields["pattern"].strip = False
        if self.instance.pk and self.instance.is_built_in:
            for name in BUILT_IN_READ_ONLY:
                if name not in self.fields:
                    continue
                self.fields[name].disabled = True
                self.fields[name].help_text = _("Read-only on a built-in pattern; copy it to make an editable one.")

    def trial_pattern(self) -> str | None:
        """The pattern text for "Try against recorded replies", or None when it
        is missing or refused (the error is then on the pattern field). A trial
        needs only the pattern, so the other fields' errors are dropped: an
        empty name must not block trying a draft."""
        errors = self.errors
        for name in [name for name in errors if name != "pattern"]:
            del errors[name]
        return None if "pattern" in errors else self.cleaned_data["pattern"]


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
