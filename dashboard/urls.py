from __future__ import annotations

from django.urls import URLPattern, URLResolver, path

from dashboard.views import review, runs, transfer

urlpatterns: list[URLPattern | URLResolver] = [
    path("", runs.run_list, name="runs"),
    path("runs/new", runs.new_run, name="new_run"),
    path("runs/<str:run_id>/", runs.run_detail, name="run"),
    path("runs/<str:run_id>/row", runs.run_row, name="run_row"),
    path("runs/<str:run_id>/header", runs.run_header, name="run_header"),
    path("runs/<str:run_id>/tabs/<str:tab>", runs.run_tab, name="run_tab"),
    path("runs/<str:run_id>/tail", runs.timeline_tail, name="timeline_tail"),
    path("runs/<str:run_id>/interrupt", runs.interrupt, name="interrupt"),
    path("runs/<str:run_id>/resume", runs.resume, name="resume"),
    path("runs/<str:run_id>/export.jsonl", runs.export, name="export"),
    path("runs/<str:run_id>/trace.otlp.json", runs.export_otlp, name="export_otlp"),
    path("runs/<str:run_id>/replay", runs.check_replay, name="check_replay"),
    path("review/dead-letters", review.dead_letters, name="dead_letters"),
    path(
        "review/dead-letters/<str:letter_id>/<str:decision>",
        review.decide_letter,
        name="decide_letter",
    ),
    path("review/conflicts", review.conflicts, name="conflicts"),
    path(
        "review/conflicts/<str:conflict_id>/resolve",
        review.resolve_conflict,
        name="resolve_conflict",
    ),
    path("import", transfer.import_view, name="import"),
]
