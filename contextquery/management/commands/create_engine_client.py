"""``manage.py create_engine_client NAME [--read-all]``: a user for a workflow engine (SPEC §4.3).

The user gets ``contextquery.record_run`` (it records runs and reads its own)
and, with ``--read-all``, ``contextquery.read_all_runs``; no usable password.
Its API token is printed alone on the last line.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.translation import gettext as _
from knox.models import AuthToken

ENGINE_PERMISSIONS = ("record_run",)
READ_ALL_PERMISSION = "read_all_runs"


def engine_client_create(*, name: str, read_all: bool = False):
    """Create the engine-client user ``name`` with the recording permission (and,
    with ``read_all``, the permission to read every run).

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
        codenames = (*ENGINE_PERMISSIONS, READ_ALL_PERMISSION) if read_all else ENGINE_PERMISSIONS
        user.user_permissions.add(
            *Permission.objects.filter(content_type__app_label="contextquery", codename__in=codenames)
        )
        _instance, token = AuthToken.objects.create(user=user)
    return user, token


class Command(BaseCommand):
    help = "Create a workflow-engine client user that records runs and reads its own, and print its API token last."

    def add_arguments(self, parser):
        parser.add_argument("name", help="The user name of the engine client.")
        parser.add_argument("--read-all", action="store_true", help="Let it read every run, not only its own.")

    def handle(self, *args, name, read_all=False, **options):
        try:
            user, token = engine_client_create(name=name, read_all=read_all)
        except ValidationError as exc:
            raise CommandError(
                _("%(name)r is not a valid user name: %(why)s") % {"name": name, "why": "; ".join(exc.messages)}
            ) from None
        self.stdout.write(
            _(
                "Engine client %(name)s created with %(perms)s. Its API token (shown once; send it as "
                "'Authorization: Token <token>'):"
            )
            % {
                "name": user.username,
                "perms": ", ".join(p.codename for p in user.user_permissions.order_by("codename")),
            }
        )
        self.stdout.write(token)
