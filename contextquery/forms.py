"""Forms of the tool pages and the admin (SPEC §7.3)."""

from django import forms
from django.utils.translation import gettext_lazy as _

from contextquery import tool_gateway
from contextquery.models import ToolApproval, ToolBinding, ToolKind


class ToolBindingForm(forms.ModelForm):
    """Create or edit a tool binding. The input schema is JSON text checked as a
    JSON Schema; the endpoint's host must be in ``HERMES_TOOL_ALLOWED_HOSTS``.
    Approval left on "default" is ``required`` for a write, ``none`` for a read."""

    approval = forms.ChoiceField(
        label=_("Approval"),
        required=False,
        choices=[("", _("Default: required for a write, none for a read")), *ToolApproval.choices],
    )

    class Meta:
        model = ToolBinding
        fields = list(tool_gateway.EDITABLE_FIELDS)
        field_classes = {"input_schema": forms.JSONField}
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "input_schema": forms.Textarea(attrs={"rows": 10, "spellcheck": "false", "class": "code"}),
            "endpoint": forms.URLInput(attrs={"spellcheck": "false", "placeholder": "https://orders.internal/lookup"}),
            "secret_ref": forms.TextInput(attrs={"spellcheck": "false", "placeholder": "SHOP_API"}),
        }
        help_texts = {
            "name": _("The tool name the agent sees: lowercase letters, digits and underscores."),
            "description": _("What the tool does, for the agent's LLM."),
            "input_schema": _('A JSON Schema of the arguments object, e.g. {"type": "object", "properties": …}.'),
            "endpoint": _(
                "The gateway POSTs the arguments as JSON here; its host must be in HERMES_TOOL_ALLOWED_HOSTS."
            ),
            "secret_ref": _(
                "Optional: the name of a secret sent as Authorization: Bearer; the server reads its value from "
                "HERMES_TOOL_SECRET_<NAME>. The value is never stored or shown."
            ),
            "timeout_seconds": _("1 to 20 seconds."),
        }

    def clean_endpoint(self):
        endpoint = self.cleaned_data["endpoint"]
        refusal = tool_gateway.endpoint_refusal(endpoint)
        if refusal:
            raise forms.ValidationError(refusal, code="host_not_allowed")
        return endpoint

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("approval"):
            cleaned["approval"] = ToolApproval.REQUIRED if cleaned.get("kind") == ToolKind.WRITE else ToolApproval.NONE
        return cleaned

    def values(self) -> dict:
        """The cleaned fields the rule module takes (changed ones only when editing)."""
        names = self.changed_data if self.instance.pk else list(tool_gateway.EDITABLE_FIELDS)
        return {name: self.cleaned_data[name] for name in names if name in self.cleaned_data}


class ToolCallRejectForm(forms.Form):
    """Reject a pending call: the note tells the agent why."""

    note = forms.CharField(
        label=_("Why (the agent reads this)"),
        max_length=tool_gateway.NOTE_MAX_CHARS,
        widget=forms.Textarea(attrs={"rows": 2}),
    )
