"""What a deployment chooses about its traces: the project they land in, and their content.

The runtime reads no settings: config/settings.py reads MINUTES_OTLP_* and the callers (the
dashboard, the workers, the command line) pass a TraceOptions in.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PROJECT = "minutes"
DEFAULT_CONTENT_CHARS = 4_000


@dataclass(frozen=True)
class TraceOptions:
    """How a run is exported.

    project        the resource's `service.name` and `openinference.project.name`: where a
                   consumer files the run's spans (a project in Phoenix, a service in Jaeger)
    content        whether prompts, answers, tool arguments and results, agents' tasks and
                   results, and the reasons people give go into the trace (False for
                   deployments that must not ship them)
    content_chars  the most characters of any one of them; longer ones are cut, and say so
    """

    project: str = DEFAULT_PROJECT
    content: bool = True
    content_chars: int = DEFAULT_CONTENT_CHARS

    def __post_init__(self) -> None:
        if not self.project.strip():
            raise ValueError("the trace's project name is blank")
        if self.content_chars < 1:
            raise ValueError(f"content_chars must be at least 1, not {self.content_chars}")
