"""Seed a hardening test database and print its credentials as one JSON line.

``python -m tests.hardening.seed`` with the server's environment
(``DATABASE_URL`` or ``SQLITE_PATH``) creates a superuser, a staff user, a
plain user (password ``PASSWORD``) and two engine clients, each with a knox
API token, and prints
``{"superToken", "staffToken", "userToken", "engineToken", "otherEngineToken"}``. The tokens are
made through the same commands and models operators use.
"""

import json
import os

#: The password of every seeded user (hard-super, hard-staff, hard-user), for page logins.
PASSWORD = "hardening-password-1"


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from knox.models import AuthToken

    from contextquery.management.commands.create_engine_client import engine_client_create

    users = get_user_model()
    out = {}
    for key, fields in (
        ("superToken", {"username": "hard-super", "is_staff": True, "is_superuser": True}),
        ("staffToken", {"username": "hard-staff", "is_staff": True}),
        ("userToken", {"username": "hard-user"}),
    ):
        user, _ = users.objects.get_or_create(**fields)
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
        out[key] = AuthToken.objects.create(user=user)[1]
    for key, name in (("engineToken", "hard-engine"), ("otherEngineToken", "hard-engine-2")):
        engine = users.objects.filter(username=name).first()
        out[key] = AuthToken.objects.create(user=engine)[1] if engine else engine_client_create(name=name)[1]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
