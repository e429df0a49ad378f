"""Benchmarks run by ``make bench`` (``python -m tests.bench.run``); speed targets live here, not in tests."""
