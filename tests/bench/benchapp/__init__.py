"""The benchmarks' own Django app (development only, never installed by
``project.settings``): the floor views and ``manage.py gen_load_data``.
``tests.bench.settings`` adds it for the bench servers."""
