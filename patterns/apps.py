from django.apps import AppConfig
from django.db.models.signals import post_delete, post_migrate, post_save
from django.utils.translation import gettext_lazy as _


class PatternsConfig(AppConfig):
    """Error patterns: model, detection engine, API, admin and pages (SPEC §3)."""

    name = "patterns"
    verbose_name = _("Error patterns")

    def ready(self):
        from patterns.detection import on_pattern_saved_or_deleted
        from patterns.detector import default_model_load_after_migrate
        from patterns.models import HermesErrorPattern
        from patterns.seeding import seed_builtins_after_migrate

        # Built-ins whose key is missing appear on every migrate, upgrades included (SPEC §3.2).
        post_migrate.connect(seed_builtins_after_migrate, sender=self, dispatch_uid="patterns.seed_builtins")
        # The shipped detection model is loaded when none is stored (SPEC §3.3a).
        post_migrate.connect(default_model_load_after_migrate, sender=self, dispatch_uid="patterns.detector_default")
        # Any saved or deleted pattern bumps the set version in the same transaction (SPEC §3.3).
        post_save.connect(on_pattern_saved_or_deleted, sender=HermesErrorPattern, dispatch_uid="patterns.changed.save")
        post_delete.connect(
            on_pattern_saved_or_deleted, sender=HermesErrorPattern, dispatch_uid="patterns.changed.delete"
        )
