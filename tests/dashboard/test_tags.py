"""Tags on runs: put on and taken off from the API, journalled with who did it, filtering the
runs list; a bad tag is refused by name and nothing is written."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunTag, StoredEvent
from runtime.events import RunTagged
from runtime.journal import append_next
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def post(client, run_id, **body):
    return client.post(f"/api/runs/{run_id}/tags", body, content_type="application/json")


def test_tags_are_journalled_and_filter_the_list(as_owner, owner):
    tagged, other = run_of("premature-done"), run_of("first-flight")
    response = post(as_owner, tagged, add=["Regression", "parser"])
    assert response.status_code == 200
    assert response.json() == {"tags": ["parser", "regression"], "unchanged": []}
    [event] = [
        r.event for r in DjangoJournal().read(f"control-{tagged}") if isinstance(r.event, RunTagged)
    ]
    assert (event.by, event.added, event.removed) == ("owner", ["regression", "parser"], [])
    listed = as_owner.get("/api/runs?tag=parser").json()
    assert [r["run_id"] for r in listed["items"]] == [tagged]
    assert other not in as_owner.get("/?tag=parser").content.decode()
    assert post(as_owner, tagged, remove=["parser"]).json()["tags"] == ["regression"]
    assert as_owner.get("/api/runs?tag=parser").json()["items"] == []
    # Adding what is there, removing what is not: nothing to journal.
    before = StoredEvent.objects.count()
    assert post(as_owner, tagged, add=["regression"], remove=["nope"]).json() == {
        "tags": ["regression"],
        "unchanged": ["already tagged regression", "not tagged nope"],
    }
    assert StoredEvent.objects.count() == before
    # The read model is rebuilt from the journal alone.
    projection.rebuild(["tags"])
    assert list(RunTag.objects.values_list("run_id", "tag")) == [(tagged, "regression")]
    assert as_owner.get(f"/api/runs/{tagged}/tags").json() == {"tags": ["regression"]}


@pytest.mark.parametrize(
    ("body", "fields", "says"),
    [
        ({"add": ["no spaces"]}, ["add"], "'no spaces' is not a tag (up to 32 letters"),
        ({"add": ["<script>"]}, ["add"], "is not a tag"),
        ({"add": ["x" * 33]}, ["add"], "is not a tag"),
        ({"remove": ["a b"]}, ["remove"], "'a b' is not a tag"),
        # Quoted as sent, as the page and the runs list's filter quote it (it said 'bad tag!').
        ({"add": ["Bad Tag!"]}, ["add"], "'Bad Tag!' is not a tag"),
        ({"add": ["a"], "remove": ["a"]}, ["add", "remove"], "'a' is in both"),
        ({"add": [f"t{i}" for i in range(21)]}, ["add"], ""),
        ({"add": "not-a-list"}, ["add"], ""),
    ],
)
def test_a_bad_tag_is_a_422_naming_its_field_and_nothing_is_written(
    as_owner, owner, body, fields, says
):
    """A tag that is none was a 400 with only a `detail` string, where every other value a
    body cannot take is a 422 naming its field (docs/api.md)."""
    run_id = run_of("premature-done")
    before = (StoredEvent.objects.count(), RunTag.objects.count())
    response = as_owner.post(f"/api/runs/{run_id}/tags", body, content_type="application/json")
    assert response.status_code == 422, response.content
    problems = response.json()["detail"]
    assert [p["loc"] for p in problems] == [["body", field] for field in fields]
    assert all(says in p["msg"] for p in problems)
    assert (StoredEvent.objects.count(), RunTag.objects.count()) == before


def test_no_tags_on_a_run_that_is_not_there(as_owner):
    assert post(as_owner, "r-nope", add=["x"]).status_code == 404


def test_each_tag_on_the_run_page_has_a_button_that_takes_it_off(as_owner, owner):
    run_id = run_of("premature-done")
    post(as_owner, run_id, add=["nightly", "parser"])
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    for tag in ("nightly", "parser"):
        assert (
            f'<button type="submit" name="remove" value="{tag}" class="untag" '
            f'aria-label="remove tag {tag}"'
        ) in page
    response = as_owner.post(f"/runs/{run_id}/tags", {"remove": "nightly"})
    assert response.status_code == 302 and response["Location"] == f"/runs/{run_id}/"
    assert list(RunTag.objects.values_list("tag", flat=True)) == ["parser"]
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "remove tag nightly" not in page and "#nightly" not in page
    assert 'aria-label="remove tag parser"' in page


@pytest.mark.parametrize(
    ("form", "says"),
    [
        (
            {"add": "x y"},
            "Tag &#x27;x y&#x27; was not added: a tag is up to 32 letters, digits",
        ),
        ({"remove": "Not A Tag!"}, "Tag &#x27;Not A Tag!&#x27; was not removed: a tag is"),
        ({"add": "same", "remove": "same"}, "Tag &#x27;same&#x27; was not added or removed"),
    ],
)
def test_a_refused_tag_reads_as_a_sentence_on_the_page(as_owner, owner, form, says):
    run_id = run_of("premature-done")
    page = as_owner.post(f"/runs/{run_id}/tags", form, follow=True).content.decode()
    assert says in page
    assert "add:" not in page and "remove:" not in page  # the API's field names stay in the API
    assert not RunTag.objects.exists()


def test_too_many_tags_on_the_page_names_the_one_typed(as_owner, owner):
    run_id = run_of("premature-done")
    post(as_owner, run_id, add=[f"t{i}" for i in range(20)])
    page = as_owner.post(f"/runs/{run_id}/tags", {"add": "one-more"}, follow=True)
    assert (
        "Tag &#x27;one-more&#x27; was not added: a run has at most 20 tags (this would have 21)."
        in page.content.decode()
    )
    assert RunTag.objects.count() == 20


def test_any_signed_in_person_may_tag_any_run_and_is_named_for_it(as_outsider, owner, client):
    """Tags are the team's shared notes on runs, as the runs are the team's to read: a run's
    tags are not its starter's alone (dashboard/access.py). Each change is journalled with
    who made it; nobody signed out changes anything."""
    run_id = run_of("premature-done")  # started by the owner
    assert post(as_outsider, run_id, add=["look-here"]).json()["tags"] == ["look-here"]
    assert post(as_outsider, run_id, remove=["look-here"]).json()["tags"] == []
    by = [
        (r.event.by, r.event.added, r.event.removed)
        for r in DjangoJournal().read(f"control-{run_id}")
        if isinstance(r.event, RunTagged)
    ]
    assert by == [("outsider", ["look-here"], []), ("outsider", [], ["look-here"])]
    before = StoredEvent.objects.count()
    assert post(client, run_id, add=["anonymous"]).status_code == 401
    page = client.post(f"/runs/{run_id}/tags", {"add": "anonymous"})
    assert page.status_code == 302 and "/login" in page["Location"]
    assert StoredEvent.objects.count() == before


class ThenMeanwhile:
    """A journal that runs the next of `pending` right before each append: another person's
    tags landing between a tagging's read of the run's tags and its write (as in
    tests/coordination/test_facts_and_claims.py, there after a read)."""

    pending: list = []

    def __init__(self, journal: DjangoJournal) -> None:
        self.journal = journal

    def append(self, *args, **kwargs):
        if self.pending:
            self.pending.pop()()
        return self.journal.append(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self.journal, name)


def theirs(run_id: str, added: list[str]) -> None:
    """Another person's tags, written as their tagging writes them (not through the wrapper)."""
    event = RunTagged(run_id=run_id, by="reviewer", added=added, removed=[])
    append_next(DjangoJournal(), f"control-{run_id}", [event])


def test_two_people_adding_15_tags_at_once_leave_the_run_within_20(as_owner, owner, monkeypatch):
    """Each read the run's tags (none), found 15 within 20, and appended at whatever version
    came next: both answered 200, and the run held 30. Now the second write is at the version
    it read, finds the other's 15 when it reads again, and is refused."""
    from services import tags

    run_id = run_of("premature-done")
    others, ours = [f"a{i}" for i in range(15)], [f"b{i}" for i in range(15)]
    monkeypatch.setattr(tags, "DjangoJournal", lambda: ThenMeanwhile(DjangoJournal()))
    ThenMeanwhile.pending[:] = [lambda: theirs(run_id, others)]
    answer = post(as_owner, run_id, add=ours)
    assert ThenMeanwhile.pending == []  # the other's tags did land meanwhile
    assert answer.status_code == 422, answer.content
    [problem] = answer.json()["detail"]
    assert problem["loc"] == ["body", "add"]
    assert problem["msg"] == "a run has at most 20 tags (this would have 30)"
    assert as_owner.get(f"/api/runs/{run_id}/tags").json() == {"tags": sorted(others)}


def test_a_change_that_landed_meanwhile_within_20_is_kept_beside_this_one(
    as_owner, owner, monkeypatch
):
    """Read again after the other's write, the change still fits: both are on the run."""
    from services import tags

    run_id = run_of("premature-done")
    monkeypatch.setattr(tags, "DjangoJournal", lambda: ThenMeanwhile(DjangoJournal()))
    ThenMeanwhile.pending[:] = [lambda: theirs(run_id, ["theirs"])]
    answer = post(as_owner, run_id, add=["ours", "theirs"])
    assert answer.json() == {"tags": ["ours", "theirs"], "unchanged": ["already tagged theirs"]}
    added = [
        r.event.added
        for r in DjangoJournal().read(f"control-{run_id}")
        if isinstance(r.event, RunTagged)
    ]
    assert added == [["theirs"], ["ours"]]


def test_tags_that_change_before_every_write_are_a_409_and_nothing_of_this_is_written(
    as_owner, owner, monkeypatch
):
    from services import tags

    run_id = run_of("premature-done")
    monkeypatch.setattr(tags, "DjangoJournal", lambda: ThenMeanwhile(DjangoJournal()))
    ThenMeanwhile.pending[:] = [
        (lambda n=n: theirs(run_id, [f"t{n}"])) for n in range(tags.ATTEMPTS)
    ]
    answer = post(as_owner, run_id, add=["ours"])
    assert answer.status_code == 409
    assert answer.json()["detail"] == (
        f"run {run_id}'s tags changed at every one of 5 tries; try again"
    )
    assert "ours" not in as_owner.get(f"/api/runs/{run_id}/tags").json()["tags"]
