"""``manage.py create_engine_client NAME``: a user for a workflow engine (SPEC §4.3).

The user gets ``contextquery.record_run`` and ``contextquery.view_workflowrun``
and no usable password; its API token is printed alone on the last line.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.translation import gettext as _
from knox.models import AuthToken

ENGINE_PERMISSIONS = ("record_run", "view_workflowrun")


def engine_client_create(*, name: str):
    """Create the engine-client user ``name`` with the recording permissions.

    Returns ``(user, token)``; raises CommandError when the name is taken.
    """
    users = get_user_model()
    if users.objects.filter(username=name).exists():
        raise CommandError(
            _(
                "A user named %(name)r exists already; pick another name, or use create_api_token %(name)s "
                "for another token of that user."
            )
            % {"name": name}
        )
    with transaction.atomic():
        user = users(username=name)
        user.set_unusable_password()
        user.full_clean(exclude=["password"])
        user.save()
        user.user_permissions.add(
            *Permission.objects.filter(content_type__app_label="contextquery", codename__in=ENGINE_PERMISSIONS)
        )
        _instance, token = AuthToken.objects.create(user=user)
    return user, token


class Command(BaseCommand):
    help = "Create a workflow-engine client user that may record and read runs, and print its API token last."

    def add_arguments(self, parser):
        parser.add_argument("name", help="The user name of the engine client.")

    def handle(self, *args, name, **options):
        from django.core.exceptions import ValidationError

        try:
            user, token = engine_client_create(name=name)
        except ValidationError as exc:
            raise CommandError(
                _("%(name)r is not a valid user name: %(why)s") % {"name": name, "why": "; ".join(exc.messages)}
            ) from None
        self.stdout.write(
            _(
                "Engine client %(name)s created with %(perms)s. Its API token (shown once; send it as "
                "'Authorization: Token <token>'):"
            )
            % {"name": user.username, "perms": ", ".join(ENGINE_PERMISSIONS)}
        )
        self.stdout.write(token)
