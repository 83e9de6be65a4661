"""The timeline says in one line what the critic decided about a draft and what replaced it."""

from __future__ import annotations

from dashboard import present

DRAFT, REVISION = (
    "3ceb2f6e42212a8ba158833c0aaf3ab28002ec66",
    "9a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
)


def test_a_critique_says_where_the_draft_went_and_why():
    said = {"commit": DRAFT, "verdict": "revise", "reasons": "guard on line.strip()"}
    assert present.summary("DraftCritiqued", said) == (
        "the critic sent draft 3ceb2f6e back for one revision: guard on line.strip()"
    )
    passed = {**said, "verdict": "pass", "reasons": "minimal and tested"}
    assert present.summary("DraftCritiqued", passed).startswith(
        "the critic sent draft 3ceb2f6e on to review"
    )


def test_a_revision_says_which_draft_it_replaces():
    line = present.summary("DraftRevised", {"draft": DRAFT, "commit": REVISION})
    assert line == "revised draft 3ceb2f6e as 9a1b2c3d; the revision goes to review"


def test_a_revision_that_changed_nothing_says_it_was_not_sent_to_review():
    line = present.summary("DraftRevised", {"draft": DRAFT, "commit": DRAFT})
    assert line == "the coder left draft 3ceb2f6e as it was: not sent to review"
