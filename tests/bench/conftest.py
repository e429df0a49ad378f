"""Fixtures of the bench tooling tests: the context-query fixtures, registered once here."""

from tests.contextquery.context_fixtures import ask, clock, engine, flyback, issue, make_run
