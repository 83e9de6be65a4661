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
    # A command that queues work on the embedded broker says so on stderr: it is not where
    # workers started with CELERY_BROKER_URL listen (demo and runserver keep quiet).
    from config.celery import note_fallback

    note_fallback(sys.argv[1] if len(sys.argv) > 1 else "", sys.stderr)
    # A refused setting or a database that does not answer is said in a line, naming it.
    from config.commandline import run

    sys.exit(run(sys.argv, sys.stderr))


if __name__ == "__main__":
    main()
