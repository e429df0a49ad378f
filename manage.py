#!/usr/bin/env python
"""Django's command-line utility for Hermes Ops."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    from django.core.management import execute_from_command_line

    from project.startup import settings_load_or_exit

    settings_load_or_exit(exit_status=2)  # "Configuration error: …" and status 2, not a traceback
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
