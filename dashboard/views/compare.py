"""The comparison page: two runs side by side, and the first point where they part."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from dashboard import present
from dashboard.access import HtmxHttpRequest
from journal_store import projection
from journal_store.models import RunSummary
from runtime.compare import Comparison, Step
from services import baseline as baselines
from services import compare

ID_MAX = 64  # a run id's column


@login_required
@require_safe
def compare_page(request: HtmxHttpRequest) -> HttpResponse:
    """`?a=…&b=…`, or `?run=…&run=…` as the runs list's ticked rows send them."""
    ticked = request.GET.getlist("run")
    a = request.GET.get("a", ticked[0] if ticked else "").strip()
    b = request.GET.get("b", ticked[1] if len(ticked) > 1 else "").strip()
    if a and not b:
        # A fork compares with its parent by default: the parent as A, the fork as B; a team run
        # with its newest single-agent baseline, and a baseline with its team run, likewise.
        parent = RunSummary.objects.filter(run_id=a).values_list("parent_id", flat=True).first()
        # A fork imported on its own names a parent this store does not hold: paired with
        # it, the page refused a run the person never named. It opens on the form instead.
        if parent and RunSummary.objects.filter(run_id=parent).exists():
            a, b = parent, a
        elif team_run := baselines.team_run_of(a):
            a, b = team_run, a
        elif found := baselines.baselines_of(a):
            b = found[-1]
    context: dict[str, object] = {"a": a, "b": b, "errors": []}
    if request.GET.get("from") == "list" and not ticked:
        context["errors"] = [
            "No run was ticked: tick two runs in the list to compare them, or name them here."
        ]
        return render(request, "dashboard/compare.html", context, status=400)
    known = len(a) <= ID_MAX and RunSummary.objects.filter(run_id=a).exists()
    if not b and not ticked and (not a or known):
        # The run page's "Compare with…": the form, A filled in, B to choose. It answered 400
        # with "Run B: choose a run to compare." as if the person had got something wrong.
        return render(request, "dashboard/compare.html", context)
    if not b and len(ticked) == 1 and known and a == ticked[0]:
        # One ordinary run ticked in the list (a fork, a team run or a baseline found its
        # counterpart above): the form with it as A, asking for B, where it was a 400 with
        # "Run B: choose a run to compare." for a tick that is half of what is asked.
        context["ask_b"] = (
            f"One run was ticked, {a}: it is run A. Choose run B to compare it with (its id "
            "here, or tick two runs in the list)."
        )
        return render(request, "dashboard/compare.html", context)
    errors: list[str] = []
    projection.catch_up(wait=False)
    for field, run_id in (("A", a), ("B", b)):
        if not run_id:
            errors.append(f"Run {field}: choose a run to compare.")
        elif len(run_id) > ID_MAX:
            errors.append(f"Run {field}: a run id has at most {ID_MAX} characters.")
        elif not RunSummary.objects.filter(run_id=run_id).exists():
            errors.append(f"Run {field}: there is no run {run_id}.")
    if len(ticked) > 2:
        errors.append(f"Tick two runs to compare, not {len(ticked)}.")
    if errors:
        context["errors"] = errors
        return render(request, "dashboard/compare.html", context, status=400)
    try:
        result = compare.runs(a, b)
    except compare.TooLong as exc:
        context["errors"] = [str(exc)]
        return render(request, "dashboard/compare.html", context, status=409)  # as the API
    context.update(shown(result, a, b))
    return render(request, "dashboard/compare.html", context)


def shown(c: Comparison, a: str, b: str) -> dict[str, object]:
    """The comparison laid out for the template: one entry per side, figures as text."""
    summaries = {r.run_id: r for r in RunSummary.objects.filter(run_id__in=(a, b))}
    parted = c.divergence
    return {
        "c": c,
        # Nothing can part from itself: "No divergence" alone read as two runs alike.
        "same_run": a == b,
        "sides": [
            {"name": name, "run": summaries[run_id], "outcome": c.outcome[key]}
            for name, key, run_id in (("A", "a", a), ("B", "b", b))
        ],
        "parted": None
        if parted is None
        else [
            ("A", parted.a, a, fields(parted.a)),
            ("B", parted.b, b, fields(parted.b)),
        ],
        "bill": [{**r, "change": f"{r['delta']['tokens']:+d}"} for r in c.bill],
        "calls": [
            {
                "agent": r["agent"],
                "a": r["a"],
                "b": r["b"],
                "a_median": seconds(r["a"]["median_s"]),
                "b_median": seconds(r["b"]["median_s"]),
            }
            for r in c.calls
        ],
        "threads": [("A", c.threads.get("a", [])), ("B", c.threads.get("b", []))],
    }


def fields(step: Step | None) -> list[tuple[str, str]]:
    """A step's content as (name, text) to show: a text as it reads (a file, an answer), any
    other value as JSON."""
    if step is None:
        return []
    content = step.content if isinstance(step.content, dict) else {"value": step.content}
    return [
        (name, value if isinstance(value, str) else present.pretty(value))
        for name, value in content.items()
    ]


def seconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"
