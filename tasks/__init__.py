"""Celery tasks, and nothing else: each a thin `@shared_task` that takes ids and calls a service.

    runs.py     tasks.runs.advance (one step of a run), tasks.runs.reconcile (the beat's
                revival of stalled runs)
    fanout.py   tasks.fanout.specialist (one specialist of a fan-out run)
    effects.py  tasks.effects.reconcile_effects (the beat's settling of effects in flight)
    indexes.py  tasks.indexes.tidy (the beat's merging of the search indexes' segments)

A task's name is its module path and function, given with `name=` because queued messages
and the beat schedule carry it: moving a task must keep its name. Retries are Celery's only
for the named transient errors a service declares (`services.steps.TRANSIENT`).

May import: celery, the standard library, and `services` (nothing else: what a task does is a
service's). Nothing imports tasks but Celery itself (config/celery.py's `imports`); services
enqueue work by task name through `services.queue`. tests/test_layering.py holds all this.
"""
