"""python manage.py resume_run RUN [--reason WHY] [--by WHO]"""

from __future__ import annotations

from dashboard.management.steering import SteerCommand


class Command(SteerCommand):
    help = "Resume an interrupted run from its journal."
    action = "resume"
