"""Application services: what the pages, the API, the commands and the workers ask of Minutes.

    runs.py         start a run, interrupt it, resume it, read its status
    letters.py      a person's decision on a dead letter (retry or discard)
    review.py       a reviewer's decision on a parked claim conflict
    commit_targets.py  the registry of commit targets a decision writes to (each app
                    registers its own)
    intents.py      superseding an intent
    steps.py        drive one step of a run (on a worker), revive the runs nobody drives
    specialists.py  run one specialist of a fan-out run (on a worker)
    control.py      who drives a run (its lease and heartbeat), what people asked of it, stalls
    effects.py      settle side effects left in flight
    beat.py         a beat round skipped in one line while the database does not answer
    local_model.py  the local llama.cpp server: is it up (the web asks), start it (the demo
                    command and a worker started with MINUTES_LOCAL_MODEL_START do)
    local_chat.py   the chat format that server runs with: llama-cpp-python's, shown what the
                    tools answered (run as a process only: it needs llama_cpp)
    queue.py        the one way a service enqueues work: a task by name, once the transaction
                    commits
    asked.py        a query value that cannot be taken (BadQuery: why, per field)

Each refusal is a typed error (dashboard/errors.py maps each to a status code).

May import: django, runtime, teams, journal_store, desk and config. Never tasks (the tasks
import the services; work is enqueued by name through queue.py) and never dashboard.
"""
