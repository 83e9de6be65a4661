from __future__ import annotations

from urllib.parse import quote, unquote

from django.urls import URLPattern, URLResolver, path, register_converter

from dashboard.views import (
    compare,
    fork,
    metrics,
    new_run,
    polls,
    review,
    run_list,
    runs,
    search,
    tags,
    transfer,
)


class Segment:
    """An id as one path segment, whatever characters it holds.

    Ids are checked where they enter (runs started here are `r-` and hex; imported ones are
    held to journal_store/admission.py), but a page must not break for everybody when an odd
    one is in the store anyway: `str` cannot reverse an id with a slash (every runs list would
    raise NoReverseMatch). Quoted here, such an id is a link like any other.
    """

    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return unquote(value)

    def to_url(self, value: str) -> str:
        return quote(value, safe="")


register_converter(Segment, "id")

urlpatterns: list[URLPattern | URLResolver] = [
    path("", run_list.run_list, name="runs"),
    path("runs/new", new_run.new_run, name="new_run"),
    path("runs/newer", polls.newer_runs, name="newer_runs"),
    path("runs/compare", compare.compare_page, name="compare"),
    path("search", search.search_page, name="search"),
    path("metrics", metrics.metrics_page, name="metrics"),
    path("runs/<id:run_id>/", runs.run_detail, name="run"),
    path("runs/<id:run_id>/row", runs.run_row, name="run_row"),
    path("runs/<id:run_id>/header", runs.run_header, name="run_header"),
    path("runs/<id:run_id>/tabs/<str:tab>", runs.run_tab, name="run_tab"),
    path("runs/<id:run_id>/tail", runs.timeline_tail, name="timeline_tail"),
    path("runs/<id:run_id>/interrupt", runs.interrupt, name="interrupt"),
    path("runs/<id:run_id>/resume", runs.resume, name="resume"),
    path("runs/<id:run_id>/export.jsonl", runs.export, name="export"),
    path("runs/<id:run_id>/trace.otlp.json", runs.export_otlp, name="export_otlp"),
    path("runs/<id:run_id>/trace.otlp.pb", runs.export_otlp_protobuf, name="export_otlp_pb"),
    path("runs/<id:run_id>/trace/push", runs.push_trace, name="push_trace"),
    path("runs/<id:run_id>/replay", runs.check_replay, name="check_replay"),
    path("runs/<id:run_id>/fork", fork.fork_page, name="fork"),
    path("runs/<id:run_id>/tags", tags.tag_run, name="tag_run"),
    path("review/dead-letters", review.dead_letters, name="dead_letters"),
    path("review/dead-letters/decide", review.decide_letters, name="decide_letters"),
    path("review/dead-letters/newer", polls.dead_letters_newer, name="dead_letters_newer"),
    path(
        "review/dead-letters/<id:letter_id>/<str:decision>",
        review.decide_letter,
        name="decide_letter",
    ),
    path("review/conflicts", review.conflicts, name="conflicts"),
    path("review/conflicts/newer", polls.conflicts_newer, name="conflicts_newer"),
    path(
        "review/conflicts/<id:conflict_id>/resolve",
        review.resolve_conflict,
        name="resolve_conflict",
    ),
    path("import", transfer.import_view, name="import"),
]
