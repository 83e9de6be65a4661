"""python manage.py interrupt_run RUN [--reason WHY] [--by WHO]"""

from __future__ import annotations

from dashboard.management.steering import SteerCommand


class Command(SteerCommand):
    help = "Stop a run at its next turn boundary (resume it with resume_run)."
    action = "interrupt"
