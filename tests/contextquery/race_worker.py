"""A worker process for the race tests (``test_internal_concurrency.py``).

``python -m tests.contextquery.race_worker <start_at> <count> <method> <path> <header> <value> [json body]``

Sets Django up against the database named by the environment (``DATABASE_URL``
or ``SQLITE_PATH``), waits until ``start_at`` (a ``time.time()`` value, so all
workers fire together), sends ``count`` requests through Django's full request
stack, and prints the status codes as one JSON list.
"""

import json
import os
import sys
import time


def main(argv: list[str]) -> None:
    start_at, count, method, path, header, value = float(argv[0]), int(argv[1]), argv[2], argv[3], argv[4], argv[5]
    body = argv[6] if len(argv) > 6 else "{}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    import django

    django.setup()
    from django.db import connection
    from django.test import Client

    client = Client()
    connection.ensure_connection()
    client.get("/healthz")  # warm up imports and the connection before the start line
    time.sleep(max(0.0, start_at - time.time()))
    statuses = []
    for _ in range(count):
        response = client.generic(method, path, body, content_type="application/json", **{header: value})
        statuses.append(response.status_code)
    print(json.dumps(statuses))


if __name__ == "__main__":
    main(sys.argv[1:])
