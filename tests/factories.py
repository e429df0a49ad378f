"""factory_boy factories shared by the suite."""

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "pass-word-123")

    @factory.post_generation
    def _save(obj, create, extracted, **kwargs):
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
    # Tests written before scope (SPEC §3.3) match wherever the text occurs.
    scope = "anywhere"


class BuiltInPatternFactory(PatternFactory):
    """A built-in pattern with a stable key (not one of the shipped ones)."""

    name = factory.Sequence(lambda n: f"Built-in pattern {n}")
    key = factory.Sequence(lambda n: f"test-built-in-{n}")
    is_built_in = True
    category = "rate_limit"
    retryable = True


class JudgedReplyFactory(factory.django.DjangoModelFactory):
    """A reply judged at a visit's completion (SPEC §1), as ``contextquery`` feeds it."""

    class Meta:
        model = "patterns.JudgedReply"

    subject = factory.Faker("uuid4", cast_to=None)
    subject_url = factory.LazyAttribute(lambda o: f"/runs/demo/visits/{o.subject}/")
    label = factory.Sequence(lambda n: f"run demo · node N{n} #1")
    text = "All three sources agree; the report is ready."
    length = factory.LazyAttribute(lambda o: len(o.text))
    failed = False
    decided_by = ""
    judged_at = factory.LazyFunction(timezone.now)
