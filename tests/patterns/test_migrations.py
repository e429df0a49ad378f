"""Migration 0004 (SPEC §3.1): patterns stored before ``scope`` match as before."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


def test_patterns_stored_before_scope_existed_migrate_as_anywhere():
    executor = MigrationExecutor(connection)
    executor.migrate([("patterns", "0003_judged_reply")])
    old_apps = executor.loader.project_state([("patterns", "0003_judged_reply")]).apps
    old = old_apps.get_model("patterns", "HermesErrorPattern").objects.create(name="Old custom", pattern="old marker")
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    from patterns.models import HermesErrorPattern

    assert HermesErrorPattern.objects.get(pk=old.pk).scope == "anywhere"
    assert HermesErrorPattern._meta.get_field("scope").default == "error"
