"""The admin's title, and API tokens (knox) listed, issued and revoked without ever
showing their digest (issue 13).

knox keys a token by its digest, which would otherwise appear in every admin
link and checkbox. Here the list has no links and no checkboxes: each row
carries a Revoke button addressed by a handle derived from the digest
(:func:`token_handle`). A new token is shown once, in the message after it
is saved; afterwards only its first 4 characters, user, creation and expiry.
"""

import hashlib

from django import forms
from django.contrib import admin, messages
from django.http import Http404
from django.middleware.csrf import get_token
from django.shortcuts import redirect
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST
from knox.models import AuthToken, get_digest_token
from knox.settings import CONSTANTS

from project.models import ApiToken

admin.site.site_header = _("Hermes Ops administration")
admin.site.site_title = _("Hermes Ops admin")
admin.site.index_title = _("Administration")

if admin.site.is_registered(AuthToken):
    admin.site.unregister(AuthToken)


def token_handle(token: AuthToken) -> str:
    """A name for a token in admin URLs: a hash of its digest (neither the token nor the digest)."""
    return hashlib.sha256(f"admin-handle:{token.digest}".encode()).hexdigest()[:24]


class ApiTokenCreateForm(forms.ModelForm):
    """Choose the user and an optional expiry; the token is made on save."""

    class Meta:
        model = ApiToken
        fields = ["user", "expiry"]

    def save(self, commit=True):
        token = super().save(commit=False)
        token.digest, self.token = get_digest_token()
        token.token_key = self.token[: CONSTANTS.TOKEN_KEY_LENGTH]
        if commit:
            token.save()
        return token


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["key", "user_shown", "created_shown", "expiry_shown", "revoke"]
    list_display_links = None
    list_select_related = ["user"]
    search_fields = ["user__username"]
    raw_id_fields = ["user"]
    ordering = ["-created"]
    actions = None
    form = ApiTokenCreateForm

    @admin.display(description=_("token"))
    def key(self, token):
        return token.masked_key

    # knox's fields have no verbose names: named here so the list speaks the page's language.
    @admin.display(description=_("user"), ordering="user__username")
    def user_shown(self, token):
        return token.user

    @admin.display(description=_("created"), ordering="created")
    def created_shown(self, token):
        return token.created

    @admin.display(description=_("expires"), ordering="expiry")
    def expiry_shown(self, token):
        return token.expiry or "—"

    @admin.display(description=_("revoke"))
    def revoke(self, token):
        url = reverse("admin:project_apitoken_revoke", args=[token_handle(token)])
        return format_html(
            '<form method="post" action="{}"><input type="hidden" name="csrfmiddlewaretoken" value="{}">'
            '<button type="submit" class="button">{}</button></form>',
            url,
            self._csrf,
            _("Revoke"),
        )

    def changelist_view(self, request, extra_context=None):
        self._csrf = get_token(request)
        return super().changelist_view(request, extra_context)

    def has_change_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        # The list only: a change page would be addressed by the digest.
        return obj is None and super().has_view_permission(request, obj)

    def get_urls(self):
        revoke = self.admin_site.admin_view(require_POST(self.revoke_view))
        return [path("revoke/<str:handle>/", revoke, name="project_apitoken_revoke"), *super().get_urls()]

    def revoke_view(self, request, handle):
        if not self.has_delete_permission(request):
            raise Http404
        token = next((t for t in ApiToken.objects.all() if token_handle(t) == handle), None)
        if token is None:
            raise Http404
        owner = token.user.get_username()
        token.delete()
        self.message_user(request, _("Revoked an API token of %(user)s.") % {"user": owner}, messages.SUCCESS)
        return redirect("admin:project_apitoken_changelist")

    def response_add(self, request, obj, post_url_continue=None):
        return redirect("admin:project_apitoken_changelist")

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        self.message_user(
            request,
            _("The new API token of %(user)s (shown this once; send it as 'Authorization: Token <token>'): %(token)s")
            % {"user": obj.user.get_username(), "token": form.token},
            messages.SUCCESS,
        )
