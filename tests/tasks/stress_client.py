"""A person steering runs from their own process: start, interrupt, resume, as fast as it can.

Run as `python -m tests.tasks.stress_client RUNS OUT` with the test database and broker in the
environment; writes one line per run id it started to OUT and one per operation that failed.
"""

from __future__ import annotations

import os
import sys


def main(count: int, out: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from services import runs

    with open(out, "a") as log:
        for _ in range(count):
            run_id = runs.start_run("repo-fix", "first-flight", by="stress")
            log.write(f"run {run_id}\n")
            log.flush()
            for verb in ("interrupt", "resume", "interrupt", "resume"):
                try:
                    getattr(runs, verb)(run_id, "stress", f"stress {verb}")
                except runs.RunError:
                    pass  # it finished first: the race a person loses too
                except Exception as exc:  # any other failure is what the test looks for
                    log.write(f"error {run_id} {verb} {type(exc).__name__}: {exc}\n")
                    log.flush()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
