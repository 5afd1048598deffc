#!/usr/bin/env python
"""Django's command-line utility for Graphloom."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    from django.core.management import execute_from_command_line

    from system.embedded_postgres import EmbeddedPostgresError

    try:
        execute_from_command_line(sys.argv)
    except EmbeddedPostgresError as exc:
        # One clear message instead of a traceback: what failed and what to do about it.
        sys.stderr.write(f"Error: {exc}\n")
        sys.exit(1)


if __name__ == "__main__":
    main()
