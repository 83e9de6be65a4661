"""The streams a run owns, by name: its journal and the sub-streams built from its id.

A run writes to streams of two sorts. Its own: `run-<id>` (the journal), `control-<id>` (stop,
resume, leases of the driver), `lease-<id>`, `breakers-<id>`, `traces-<id>` (pushes of its
trace), the fan-out specialists'
`worker-<id>-<sub>-<worker>` with their leases `lease-worker-<id>-...`, the specialist slots'
`lease-slots-<id>-<n>`, its sagas' `saga-<name>-<id>`, and the leases a harness takes for
its agents on the run's resources, named `<id>:<what>` (a parallel writer's fix or file:
`lease-<id>:fix:T1`, teams/repo_fix/parallel.py). And shared ones, whose names say
nothing of the run: facts (`subject-...`), claims, conflicts, intents, effects and the holds on a
total (`reserved-...`), inboxes. Who
builds a sub-stream's name builds it here, so that `owners` can tell whose a stream is: import
lets a file write only to the streams of the runs it introduces.
"""

from __future__ import annotations

import re

# A run's id: a URL path segment, a file name part (its workspace) and a stream name part, so no
# slash, colon, space or control character; 64 characters is the store's column. Runs started
# here are `r-` and 12 hex digits; an imported journal's, and one given on the command line,
# may be any such id.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# The one segment the API's /api/runs/<id> cannot name a run by: /api/runs/compare is the
# comparison of two runs, and a run imported as `compare` could never be read there. Refused
# for a new run only (an import, --run-id): a run a store already holds under it is still
# named by it everywhere else (a filter, a search, a fork's parent).
RESERVED = frozenset({"compare"})
RUN_ID_RULE = (
    "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit, without '..'"
)
NEW_RUN_ID_RULE = f"{RUN_ID_RULE}, and not 'compare' (the API's /api/runs/compare)"


def is_run_id(value: str) -> bool:
    return RUN_ID.fullmatch(value) is not None and ".." not in value


def is_new_run_id(value: str) -> bool:
    """Whether a run may be made (imported, flown) under `value`."""
    return is_run_id(value) and value not in RESERVED


# <prefix><run id>, exactly
OWN = ("run-", "control-", "lease-", "breakers-", "traces-")
# <prefix><run id>-<more>: the run's id is some dash-separated beginning of the rest
NESTED = ("worker-", "lease-worker-", "lease-slots-")
# saga-<name>-<run id>, the name one lowercase word
SAGA = re.compile(r"saga-[a-z]+-(?P<run>.+)")
# lease-<run id>:<what>: a lease on one of the run's own resources (a run id holds no colon)
RESOURCE_LEASE = re.compile(r"lease-(?P<run>[^:]+):.+")


def journal(run_id: str) -> str:
    return f"run-{run_id}"


def control(run_id: str) -> str:
    """Where people's stop and resume, and the driver's failed steps, are recorded."""
    return f"control-{run_id}"


def driver_lease(run_id: str) -> str:
    """The driver's lease: its version is the epoch a step's appends are fenced by."""
    return f"lease-{run_id}"


def traces(run_id: str) -> str:
    """What became of the run's trace: pushes to a collector, and their outcomes."""
    return f"traces-{run_id}"


def imported(run_id: str) -> str:
    """Where this server notes that it imported the run (JournalImported): no file may write
    there, so it is none of the run's own streams an import may fill."""
    return f"import-{run_id}"


def breakers(run_id: str) -> str:
    return f"breakers-{run_id}"


def worker(run_id: str, sub_id: str, worker_id: str) -> str:
    """A fan-out specialist's own stream (its lease is `lease-` + this)."""
    return f"worker-{run_id}-{sub_id}-{worker_id}"


def slot(run_id: str, n: int) -> str:
    """The resource name of a specialist slot (its lease stream is `lease-` + this)."""
    return f"slots-{run_id}-{n}"


def saga_id(name: str, run_id: str) -> str:
    """A saga's id (its stream is `saga-` + this); `name` is one lowercase word."""
    return f"{name}-{run_id}"


def resource(run_id: str, *what: str) -> str:
    """A resource of the run's own that a harness leases for its agents (its lease stream is
    `lease-` + this): `<run>:fix:T1`. Named after the run, so that no other run's lease is
    ever taken, renewed or released for it; a fork renames it with the run (`resource_renamed`)."""
    return ":".join((run_id, *what))


def resource_renamed(name: str, old: str, new: str) -> str:
    """The same resource of run `new` where it was run `old`'s (unchanged when it was not):
    one of its own (`<old>:fix:T1`), or the run itself (its driver's lease)."""
    if name == old:
        return new
    return new + name[len(old) :] if name.startswith(old + ":") else name


def owners(stream: str) -> list[str]:
    """Every run id whose own stream this could be, by the names above (maybe none).

    Nested names are ambiguous (`worker-r-a-b-S1-w` is run `r-a`'s or run `r-a-b`'s), so all
    readings are given: a caller keeping runs apart must look at each.
    """
    # (a colon is in no run id: `lease-r-a:fix:T1` is no run `r-a:fix:T1`'s driver lease)
    found = [
        stream[len(p) :]
        for p in OWN
        if stream.startswith(p) and len(stream) > len(p) and ":" not in stream[len(p) :]
    ]
    if match := RESOURCE_LEASE.fullmatch(stream):
        found.append(match["run"])
    for prefix in NESTED:
        if stream.startswith(prefix):
            parts = stream[len(prefix) :].split("-")
            found += ["-".join(parts[:i]) for i in range(1, len(parts))]
    if match := SAGA.fullmatch(stream):
        found.append(match["run"])
    return [run for run in dict.fromkeys(found) if run]


def owned_by(stream: str, run_id: str) -> bool:
    return run_id in owners(stream)


def renamed(stream: str, old: str, new: str) -> str:
    """The same stream of run `new` where it was run `old`'s (unchanged when it was not)."""
    if not owned_by(stream, old):
        return stream
    for prefix in OWN:
        if stream == prefix + old:
            return prefix + new
    if stream.startswith(f"lease-{old}:"):
        return "lease-" + resource_renamed(stream.removeprefix("lease-"), old, new)
    for prefix in NESTED:
        if stream.startswith(prefix + old + "-"):
            return prefix + new + stream[len(prefix + old) :]
    return stream.removesuffix(old) + new  # a saga: saga-<name>-<old>
