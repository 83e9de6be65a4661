#!/usr/bin/env python
"""Django's command-line utility for Minutes."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # manage.py is the developer's entry point: on a fresh clone `python manage.py migrate`
    # (and `demo`) work with no settings at all. Servers start elsewhere (gunicorn on
    # config.wsgi, `celery -A config`), where debug stays off unless MINUTES_DEBUG=1; a
    # deployment that runs its commands here sets MINUTES_DEBUG=0 (docker-compose.yml does).
    os.environ.setdefault("MINUTES_DEBUG", "1")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
