"""The review queues: dead letters (retry or discard) and claim conflicts (choose, or reject
both). Every decision is a journalled human decision; a second decision on the same item gets
a clear "already decided" (409) and writes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.contrib import messages as djmessages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from django_htmx.http import reswap, retarget

from dashboard import actions, asked, errors, queries, queue_pages
from dashboard.access import HtmxHttpRequest, can_decide, require_decide, role_of
from dashboard.asked import BadQuery
from dashboard.forms import NONE_TICKED, DecisionForm, LettersForm, ResolveForm
from dashboard.tell import tell
from dashboard.views import polls
from dashboard.waiting import with_counts
from journal_store import projection, queues
from journal_store.models import Conflict, DeadLetter, RunSummary
from services import conflict_errors, letters, metrics, review

PAGE = 25
# How a refusal on this page names rejecting every claim: by its button, not the API's choice.
WORDS = conflict_errors.Words("choosing “reject both”", "“reject both”")


def queue_page(
    request: HtmxHttpRequest,
    queue: queues.Queue,
    template: str,
    shown: Callable[[Sequence[Any]], None] | None = None,
    refused: dict[str, Any] | None = None,
) -> HttpResponse:
    """A review queue's page: its items, newest first, open or decided (or all); `shown` adds what
    the items' cards need beyond their rows, for the page's items at once. A status or a run it
    cannot take: 400, naming it, and no items. `refused`: a decision on several that could not be
    taken, drawn with what was typed and ticked, answered 400."""
    # Every value it cannot take, the page's place with the filters: a bad page was named
    # only once the filters had been mended.
    problems: dict[str, str] = {}
    try:
        # One run's items (what its page links to): past a page of newer ones, the queue's
        # first page would not hold them.
        status, run, runs, words = asked.queue_filter(queue, request.GET, queue_pages.LABELS)
    except BadQuery as exc:
        problems |= exc.problems
    try:
        place = queue_pages.place_of(queue, request.GET)
    except BadQuery as exc:
        problems |= exc.problems
    if problems:
        # The choices' links keep what could be taken (the run, the metrics' filter), so
        # that mending the one refused value keeps the rest.
        good = {
            name: str(request.GET.get(name, "")).strip()
            for name in ("run", "q", *metrics.TEXT_FIELDS, *metrics.DATE_FIELDS)
            if name not in problems
        }
        context: dict[str, Any] = {
            "here": reverse(queue.name),
            "problems": problems,
            "labels": queue_pages.LABELS,
            "lead": "Nothing is listed: these filters cannot be used.",
            "status": "" if "status" in problems else str(request.GET.get("status") or ""),
            "run": good.get("run", ""),
            "kept": urlencode({k: v for k, v in good.items() if v}),
            # The search box holds the words as typed, refused or not, to be mended there (as
            # the search page's does); its form keeps the rest that could be taken.
            "words": asked.typed(request.GET, ("q",))["q"],
            "kept_fields": {k: v for k, v in good.items() if v and k != "q"},
        }
        return render(request, template, context, status=400)
    items = queries.queue_items(queue, status, run, runs, words=words)
    page = queue_pages.page(items, place, PAGE)
    if shown is not None:
        shown(page.items)
    kept = asked.queue_kept(run, words, runs)
    oldest = oldest_of(queue, page, run, runs, words) if status == queues.OPEN else None
    open_here = [item for item in page.items if item.status == queues.OPEN]
    decides = can_decide(request.user)
    context = {
        # The queue's own address for its links: a refused decision on several is answered
        # with this page from another path, where "?status=..." would have led elsewhere.
        "here": reverse(queue.name),
        "oldest": oldest,
        "noun": polls.NOUNS[queue.name],
        # What a decision on several at once may take: the open items this page lists. It is
        # offered to who may decide, when there are several.
        "open_here": open_here,
        "several": decides and len(open_here) > 1,
        "newer": polls.newer_poll(queue, status, page, kept),
        "page": page,
        "status": status,
        "run": run,
        "runs_said": runs.said(),
        "runs_query": urlencode(runs.params()),
        "kept": urlencode(kept),  # what the status and page links keep besides the status
        # The search box: the words, and what its form keeps besides (the status, the runs).
        "words": words,
        "kept_fields": {k: v for k, v in kept.items() if k != "q"},
        "can_decide": decides,
        "refused": refused or {},
        # A run named that this store does not hold: said, where the page said only that it
        # had no items (a mistyped id looked like a run with nothing to decide).
        "no_such_run": bool(run)
        and not page.items
        and not RunSummary.objects.filter(run_id=run).exists(),
    }
    return render(request, template, context, status=400 if refused else 200)


def oldest_of(
    queue: queues.Queue, page: queue_pages.Page, run: str, runs: metrics.MetricsFilter, words: str
) -> dict[str, Any] | None:
    """The open item that has waited longest, of those the filters choose, and the query of
    the page of the open items that holds it (None: this one). A reviewer working through the
    queue sees how long the oldest has waited, where the newest come first. Not for one item
    alone, whose card says as much."""
    rows = queries.queue_rows(queue, run, runs, words)
    if len(rows.filter(status=queues.OPEN)[:2]) < 2:
        return None
    # One run's: read by its items' index, where the order's index walked every open item
    # opened before the run's (queues.oldest_open_of).
    oldest = queues.oldest_open_of(rows, [run]) if run else queues.oldest_open(queue, rows)
    if oldest is None:
        return None
    if oldest in page.items:
        return {"item": oldest, "query": None}
    # Oldest by its time, not by its position: it may be on an older page or a newer one.
    # The page that holds it goes on before the open item opened next after it in the
    # journal (a seek in the status's index): it is that page's first. None opened after
    # it: the newest open items' page, the first.
    after = rows.filter(status=queues.OPEN, position__gt=oldest.position).order_by("position")
    following = after.values_list("position", flat=True).first()
    place = {} if following is None else {"before": following}
    query = urlencode({"status": queues.OPEN} | asked.queue_kept(run, words, runs) | place)
    where = "another"
    if page.items:
        where = "an older" if oldest.position < page.items[-1].position else "a newer"
    return {"item": oldest, "query": query, "where": where}


def with_open(
    request: HtmxHttpRequest, response: HttpResponse, queue: queues.Queue
) -> HttpResponse:
    """A decision's card, with what else of its page depends on which items are open drawn
    again out of band: they went on naming the item just decided (the oldest open one, the
    decision on several and its count) until the reviewer next loaded the page."""
    response.content += oldest_again(request, queue).encode()
    if queue.name == "dead_letters":
        response.content += several_again(request).encode()
    return response


def oldest_again(request: HtmxHttpRequest, queue: queues.Queue) -> str:
    """The queue's line naming its oldest open item, drawn as the page would be now, under
    the filters and at the place of the address htmx says the page is at. Nothing where
    that is no page of this queue's open items: only those have the line."""
    where = urlsplit(request.htmx.current_url_abs_path or "")
    if where.path not in [reverse(name) for name in PAGES[queue.name]]:
        return ""
    params = QueryDict(where.query)
    try:
        status, run, runs, words = asked.queue_filter(queue, params)
        place = queue_pages.place_of(queue, params)
    except BadQuery:
        return ""  # the page listed nothing, and has no line
    if status != queues.OPEN:
        return ""
    # The rows as queries.queue_items has them, without its catch-up: the decision's was
    # the last.
    items = queries.queue_rows(queue, run, runs, words).filter(status=queues.OPEN)
    page = queue_pages.page(items.order_by("-position"), place, PAGE)
    context = {
        "oldest": oldest_of(queue, page, run, runs, words),
        "noun": polls.NOUNS[queue.name],
        "here": reverse(queue.name),
        "oob": True,
    }
    return render_to_string("dashboard/_oldest_open.html", context, request)


def several_again(request: HtmxHttpRequest) -> str:
    """What the decision on several takes as every open letter on the page, less those
    decided since: the letters it listed, which the card's form posted with its decision
    (`listed`), and that are open still. Nothing where the page had no such form. Letters
    opened since the page was drawn are not among them: the reviewer has not seen them."""
    listed = request.POST.getlist("listed")[: letters.AT_ONCE]
    if not listed:
        return ""
    still = DeadLetter.objects.filter(status=queues.OPEN).only("letter_id").in_bulk(listed)
    open_here = [still[i] for i in dict.fromkeys(listed) if i in still]  # in the page's order
    context = {"open_here": open_here, "several": len(open_here) > 1, "oob": True}
    return render_to_string("dashboard/_several_listed.html", context, request)


# The paths a queue's page is drawn at: its own, and (a decision on several refused) the
# decision's, whose query is the page's.
PAGES = {"dead_letters": ("dead_letters", "decide_letters"), "conflicts": ("conflicts",)}
QUEUES = {"dead_letters": "the dead letters", "conflicts": "the conflicts"}


def back_to(request: HtmxHttpRequest, queue: str) -> str:
    """The page of the queue named `queue` a decision's form was on: the queue's own path
    with the query the form's address carries (the page's filters and its place), so
    never another host's or another page's address."""
    return reverse(queue) + (f"?{request.GET.urlencode()}" if request.GET else "")


def message(
    request: HtmxHttpRequest, text: str, back: str, level: str = "error", status: int = 200
) -> HttpResponse:
    """The sentence into the form's page; without scripts, on a page linking back to the
    queue named `back`, as the form's page had it."""
    response = tell(request, text, level, status, back_to(request, back), QUEUES[back])
    if request.htmx and level == "error":
        # Into the form's own error slot: the form stays, with what was typed, to try again.
        response = reswap(retarget(response, "find .form-error"), "innerHTML")
    return response


def refused(form: DecisionForm, asks: dict[str, str]) -> str:
    """Why a decision's form was refused, field by field: for a field left blank, what `asks`
    asks of it in the form's own words (no choice made, a blank reason), so that a reason of
    spaces is not answered as if nothing had been chosen either; else the field's own error (a
    reason too long...), after the field's label on the page (dashboard/forms.py), where it
    said "reason: ..." of the box labelled "Why"."""
    return "; ".join(
        asks[name]
        if name in asks and all(e.code == "required" for e in found)
        else f"{label_of(form, name)}{' '.join(m for e in found for m in e.messages)}"
        for name, found in form.errors.as_data().items()
    )


def label_of(form: DecisionForm, name: str) -> str:
    """What a refusal of the field `name` starts with: its label and a colon; nothing for
    the form's own refusals, which no field holds."""
    field = form.fields.get(name)
    return f"{field.label or name}: " if field is not None else ""


@login_required
@require_safe
def dead_letters(request: HtmxHttpRequest) -> HttpResponse:
    return queue_page(request, queues.DEAD_LETTERS, "dashboard/dead_letters.html")


@login_required
@require_POST
def decide_letter(request: HtmxHttpRequest, letter_id: str, decision: str) -> HttpResponse:
    if decision not in letters.DECISIONS:
        raise Http404("a dead letter is retried or discarded")
    require_decide(request.user)
    form = DecisionForm(request.POST)
    form.fields["reason"].label = f"Why {decision}"  # as the card labels each form's box
    if not form.is_valid():
        ask = {"reason": "say why: the reason is recorded in the audit trail"}
        return message(request, refused(form, ask), "dead_letters", status=400)
    try:
        letters.decide_letter(
            letter_id, decision, request.user.get_username(), form.cleaned_data["reason"]
        )
    except letters.LetterError as exc:
        return message(request, str(exc), "dead_letters", status=errors.status_for(exc))
    text = f"{decision} recorded for {letter_id}"
    if not request.htmx:
        # Said on the queue's page, under the filters it had: the bare queue said nothing
        # and dropped the reviewer's search, run and page.
        djmessages.success(request, text)
        return redirect(back_to(request, "dead_letters"))
    # The card again, decided, in place of the open one: its status, who decided and why.
    projection.catch_up()
    context = {
        "item": DeadLetter.objects.get(letter_id=letter_id),
        "n": uuid.uuid4().hex[:8],  # its ids: a letter id's ':' would not do in a selector
        "message": text,
        "can_decide": True,
    }
    response = with_counts(request, render(request, "dashboard/_letter_card.html", context))
    response = with_open(request, response, queues.DEAD_LETTERS)
    return reswap(retarget(response, "closest section"), "outerHTML")


@login_required
@require_POST
def decide_letters(request: HtmxHttpRequest) -> HttpResponse:
    """One decision, with one reason, on the letters ticked on the queue's page (or every open
    one it listed): each decided on its own, as if alone, and the page drawn again, under the
    filters it had, with what became of each. A letter decided meanwhile is named, not
    decided twice; the others go through. Nothing is decided when the form is refused."""
    require_decide(request.user)
    form = LettersForm(request.POST)
    if not form.is_valid():
        # The page again, under its filters, with why beside the form and what was typed and
        # ticked kept: a reason typed before noticing no box was ticked is not lost.
        ask = {
            "reason": "say why: the reason is recorded in each letter's audit trail",
            "letter": NONE_TICKED,
        }
        again = {
            "why": refused(form, ask),
            "reason": request.POST.get("reason", "")[: actions.REASON_MAX],
            "ticked": request.POST.getlist("letter")[: letters.AT_ONCE],
            "every": bool(request.POST.get("every")),
        }
        return queue_page(request, queues.DEAD_LETTERS, "dashboard/dead_letters.html", None, again)
    data = form.cleaned_data
    found = letters.decide_letters(
        data["chosen"], data["decision"], request.user.get_username(), data["reason"]
    )
    level = djmessages.WARNING if found.refused else djmessages.SUCCESS
    djmessages.add_message(request, level, outcome(found, data["decision"]))
    return redirect(back_to(request, "dead_letters"))


def outcome(found: letters.Decided, decision: str) -> str:
    """What a decision on several letters did: how many were decided, naming the first few,
    and each refusal with its reason."""
    done = "retried" if decision == "retry" else "discarded"
    said = []
    if found.decided:
        n = len(found.decided)
        said.append(f"{n} dead letter{pluralize(n)} {done}: {first_few(found.decided)}")
    if found.refused:
        n = len(found.refused)
        said.append(f"{n} not: {first_few(list(found.refused.values()), '; ')}")
    return ". ".join(said) + "."


def first_few(items: list[str], sep: str = ", ", few: int = 5) -> str:
    more = f"{sep}and {len(items) - few} more" if len(items) > few else ""
    return sep.join(items[:few]) + more


@login_required
@require_safe
def conflicts(request: HtmxHttpRequest) -> HttpResponse:
    return queue_page(request, queues.CONFLICTS, "dashboard/conflicts.html", with_current)


def with_current(items: Sequence[Conflict]) -> None:
    """Each conflict's fact's value and version now, beside the claims (None: nothing holds it
    here), and the id of the ruling its form would post (posted twice, it is applied once);
    its claims with their runs, each settled since by another conflict's ruling marked, and
    the choices left: review.cards_of, read for the page's conflicts at once."""
    for item, card in zip(items, review.cards_of(items), strict=True):
        item.current = card.current  # type: ignore[attr-defined]
        item.claims, item.choices = card.claims, card.choices  # type: ignore[attr-defined]
        item.ruling_id = f"rl-{uuid.uuid4().hex[:24]}"  # type: ignore[attr-defined]


# What a conflict's form asks of each box left blank, in its labels' words (a claim to
# commit, "reject both", Why): the reason is stripped, so one of spaces is blank too.
RESOLVE_ASKS = {
    "choice": "choose a decision: a claim to commit, or reject both",
    "reason": "say why: the Why box is blank",
}


@login_required
@require_POST
def resolve_conflict(request: HtmxHttpRequest, conflict_id: str) -> HttpResponse:
    require_decide(request.user)
    form = ResolveForm(request.POST)
    if not form.is_valid():
        why = refused(form, RESOLVE_ASKS)
        return message(request, why, "conflicts", status=400)
    data = form.cleaned_data
    try:
        review.resolve(
            conflict_id,
            data["choice"],
            request.user.get_username(),
            data["reason"],
            ruling_id=data["ruling_id"] or None,
            role=role_of(request.user),
        )
    except conflict_errors.ConflictError as exc:
        return message(request, exc.said(WORDS), "conflicts", status=errors.status_for(exc))
    text = f"resolution recorded for {conflict_id}"
    if not request.htmx:
        djmessages.success(request, text)  # on the queue's page, under its filters, as a letter's
        return redirect(back_to(request, "conflicts"))
    # The card again, decided, in place of the one the form was in: its status, the chosen
    # claim marked, who decided and why, without reloading the queue.
    projection.catch_up()
    item = Conflict.objects.get(conflict_id=conflict_id)
    with_current([item])
    context = {"item": item, "n": conflict_id, "message": text, "can_decide": True}
    response = with_counts(request, render(request, "dashboard/_conflict_card.html", context))
    response = with_open(request, response, queues.CONFLICTS)
    return reswap(retarget(response, "closest section"), "outerHTML")
