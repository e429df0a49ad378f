"""``manage.py create_api_token USERNAME``: print a new API token for a user (SPEC §2)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from knox.models import AuthToken


class Command(BaseCommand):
    help = "Create a new API token for USERNAME and print it alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}; create it first (manage.py createsuperuser).")
        _, token = AuthToken.objects.create(user=user)
        self.stdout.write(f"API token for {username} (shown once; send it as 'Authorization: Token <token>'):")
        self.stdout.write(token)
