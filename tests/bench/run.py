"""``python -m tests.bench.run [--scale] [NAME ...]``: run the benchmark modules and print their tables.

Each module in ``MODULES`` has ``run(*, scale: bool) -> str`` returning a
printable report. Add a module by appending its dotted name to ``MODULES``.
``--scale`` asks modules for their larger runs (``make bench-scale``).
"""

import argparse
import importlib
import os
import sys
import time

MODULES = [
    "tests.bench.bench_detection",
    "tests.bench.bench_detection_model",
    "tests.bench.bench_paths",
    "tests.bench.bench_context",
    "tests.bench.bench_scale",
    "tests.bench.bench_ingest",
]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", action="store_true", help="larger runs")
    parser.add_argument("names", nargs="*", help="only these modules (short names, e.g. bench_detection)")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    import django

    django.setup()
    for dotted in MODULES:
        if args.names and dotted.rsplit(".", 1)[-1] not in args.names:
            continue
        started = time.perf_counter()
        print(f"== {dotted}")
        print(importlib.import_module(dotted).run(scale=args.scale))
        print(f"({time.perf_counter() - started:.1f} s)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
