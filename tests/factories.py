"""factory_boy factories shared by the suite."""

import factory
from django.contrib.auth import get_user_model


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "pass-word-123")

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):  # noqa: N805
        if create:
            obj.save()


class PatternFactory(factory.django.DjangoModelFactory):
    """A custom error pattern (a plain substring)."""

    class Meta:
        model = "patterns.HermesErrorPattern"

    name = factory.Sequence(lambda n: f"Custom pattern {n}")
    pattern = factory.Sequence(lambda n: f"custom failure marker {n}")
    description = "A pattern made for a test."
    category = "other"
    retryable = False
    priority = 100
    enabled = True


class BuiltInPatternFactory(PatternFactory):
    """A built-in pattern with a stable key (not one of the shipped ones)."""

    name = factory.Sequence(lambda n: f"Built-in pattern {n}")
    key = factory.Sequence(lambda n: f"test-built-in-{n}")
    is_built_in = True
    category = "rate_limit"
    retryable = True
