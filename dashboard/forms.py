"""Forms: what people submit, validated on the server with errors that say what to fix."""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

from django import forms
from django.conf import settings
from django.core.validators import ProhibitNullCharactersValidator
from django.forms.boundfield import BoundField
from django.urls import reverse

from dashboard import actions
from runtime import baseline, flight, written
from runtime.terminal import BIDI
from runtime.unseen import unseen_reason
from services import letters, local_model
from services.asked import shown as quoted
from teams import TEAMS, default_scenario

BACKENDS = [
    ("scripted", "Scripted: the scenario's script, synthetic token counts, no model called"),
    ("endpoint", "OpenAI-compatible endpoint"),
    ("local", "Local model on this machine (when its server is running)"),
]


# The settings the form shows beside the scenario, each prefilled with the scenario's own.
PRESETS = ("allowance", "max_turns", "max_seconds")
# The new-run form's boxes its redraw for another team, scenario or backend draws again: all
# but the two typed freely, which the page keeps as they stand (hx-preserve).
REDRAWN = "#new-run [name]:not([name=task]):not([name=order])"


def presets(team: str, scenario: str) -> dict[str, Any]:
    """The scenario's own allowance, turn cap and ceiling (its settings over the team's), as
    a run started with none of them given would have them."""
    try:
        config = flight.plan(team, scenario, "r-000000000000")
    except flight.FlightError:
        return {}
    return {name: getattr(config, name) for name in PRESETS}


def described(team: str) -> list[tuple[str, str]]:
    """The team's scenarios as the form offers them: each with its one-line description (the
    scenario's own, as the command line's help shows it)."""
    return [(name, f"{name}: {s.description}") for name, s in TEAMS[team].scenarios.items()]


def refused_options(team: str) -> dict[str, str]:
    """The form's options that `team` has no use for, each with the refusal a run of it asking
    for one gets: the form shows the chosen team's options only, and refuses the rest."""
    refused: dict[str, str] = {}
    if why := baseline.team_refusal(team):
        refused["baseline"] = why
    for name in ("reflect", "votes"):
        if name not in TEAMS[team].settings.model_fields:
            refused[name] = f"team {team} {flight.refusal(name)}"
    if team != "support-desk":
        refused["order"] = "only the support-desk team works on orders"
    return refused


def sent_from_field(again: str) -> forms.RegexField:
    """A form's hidden token, drawn anew with each form (draw_token): a post of the form is
    keyed by it and the choices sent (sent_again_key), so that the same form posted twice
    alike makes one run. `again` says how to get a form with a good one."""
    return forms.RegexField(
        regex=r"^[0-9a-f]{32}$",
        widget=forms.HiddenInput,
        required=False,
        error_messages={
            "invalid": "This form's hidden sent_from field was changed (it is 32 hex digits "
            f"drawn with the form): {again}."
        },
    )


def draw_token() -> str:
    """A new form's sent_from."""
    return uuid.uuid4().hex


def sent_again_key(sent_from: str, choice: dict[str, Any]) -> str:
    """The idempotency key of a post of the form drawn as `sent_from` with these choices:
    posted twice alike, the second lands on the run the first made; changed (back, another
    choice, send), it makes another run. "" for a form drawn without one (no key: each post
    makes a run, as before)."""
    if not sent_from:
        return ""
    chosen = json.dumps(choice, sort_keys=True, default=str).encode()
    return f"{sent_from}-{hashlib.sha256(chosen).hexdigest()[:32]}"


class BidiNoted(BoundField):
    """A box whose text holds a right-to-left override or its kin says so under it. The page
    names such characters where it shows text (dashboard/bidi.py), but not in a box, whose
    text is sent back as it stands: a browser's box shows the text in the order they make
    (a task from a link, "/runs/new?task=...", may read otherwise than it is written)."""

    def __init__(self, form: forms.BaseForm, field: forms.Field, name: str) -> None:
        super().__init__(form, field, name)
        value = self.value()
        held = sorted(set(re.findall(f"[{BIDI}]", value))) if isinstance(value, str) else []
        if held and not self.is_hidden:
            names = ", ".join(f"U+{ord(c):04X}" for c in held)
            said = (
                f"This text holds {names}: characters that change the order text is shown "
                "in, so the box may show it in another order than it is written. It is sent "
                "as it is written."
            )
            self.help_text = f"{self.help_text} {said}" if self.help_text else said


class Form(forms.Form):
    """A form sent back with errors puts the cursor in its first wrong field (in the fields'
    order), so that a person on the keyboard or a screen reader lands on what to mend rather
    than at the top of the page. A box holding text that is shown in another order than it is
    written says so (BidiNoted)."""

    bound_field_class = BidiNoted

    def full_clean(self) -> None:
        super().full_clean()
        wrong = next((name for name in self.fields if name in self.errors), None)
        if wrong is not None and not self.fields[wrong].widget.is_hidden:
            self.fields[wrong].widget.attrs["autofocus"] = True


class TeamField(forms.ChoiceField):
    """The team of a new run, refused as the API refuses it (actions.team_refusal), where
    the form said Django's "Select a valid choice. nope is not one of the available
    choices." and "This field is required."."""

    def validate(self, value: Any) -> None:
        if why := actions.team_refusal(str(value or "")):
            raise forms.ValidationError(why, code="invalid_choice")
        super().validate(value)


class NewRunForm(Form):
    team = TeamField(choices=[(t, t) for t in sorted(TEAMS)], initial="repo-fix")
    scenario = forms.ChoiceField(
        choices=[(team.name, [(s, s) for s in sorted(team.scenarios)]) for team in TEAMS.values()],
        initial=default_scenario("repo-fix"),
        help_text="What the scripted agents say. The outcome is the harness's to decide.",
    )
    # Its length is refused with its other refusals (NewRun.task_refusals, in clean()): a
    # max_length here refused it first, in Django's words, and kept the task from clean(),
    # which then could not say that the scripted backend takes none. The box still stops
    # typing at the limit (maxlength).
    task = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "maxlength": actions.TASK_MAX}),
        required=False,
        help_text="Leave empty for the scenario's own task.",
    )
    model = forms.ChoiceField(choices=BACKENDS, initial="scripted", label="Model backend")
    allowance = forms.IntegerField(
        min_value=1,
        max_value=actions.ALLOWANCE_MAX,
        required=False,
        help_text="Tokens for the whole run; empty: the scenario's own.",
    )
    max_turns = forms.IntegerField(
        min_value=1,
        max_value=actions.TURNS_MAX,
        required=False,
        label="Turn cap",
        help_text="Model calls per agent run; empty: the scenario's own.",
    )
    max_seconds = forms.FloatField(
        min_value=1,
        max_value=actions.SECONDS_MAX,
        required=False,
        label="Wall-clock ceiling (seconds)",
        help_text="Seconds from the run's start; at the first turn past them it ends, halted. "
        "Empty: the scenario's own, if it has one.",
    )
    order = forms.RegexField(
        regex=actions.ORDER,
        strip=True,  # a RegexField keeps spaces unless told: a pasted id often ends in one
        required=False,
        label="Order (support desk)",
        help_text="The order the ticket is about; empty: a fresh order for this run. Runs on "
        "the same order see each other's changes.",
        error_messages={"invalid": actions.ORDER_REFUSAL},
    )
    baseline = forms.BooleanField(
        required=False,
        label="Also fly the single-agent baseline",
        help_text="The solo coder on the same task, template and model, linked to this run, "
        "to compare outcome, tokens, calls and time.",
    )
    reflect = forms.BooleanField(
        required=False,
        label="Reflect before review (repo-fix)",
        help_text="A critic reads the coder's first draft; a 'revise' gets one revision, and "
        "the reviewer sees only the revision. Billed on its own line (<task>:reflect).",
    )
    votes = forms.TypedChoiceField(
        choices=[("", "the scenario's own"), ("1", "1: no vote"), ("3", "3"), ("5", "5")],
        coerce=int,
        empty_value=None,
        required=False,
        label="Votes on the critical decision",
        help_text="Independent samples and their majority, the minority kept as evidence: "
        "repo-fix's review, support-desk's refund. The extra samples are billed on "
        "<task>:vote. Scripted agents vote only as many times as their scenario scripts.",
    )
    # Which scenario's settings the boxes were prefilled with ("team/scenario"): a box still
    # holding that scenario's preset is the scenario's own, not a choice, whichever scenario
    # is sent (a person who changed the scenario without the page re-rendering keeps its own).
    presets_of = forms.CharField(widget=forms.HiddenInput, required=False)
    # Drawn anew with each form: a second post of the same form with the same choices (a
    # double click, a browser's "send again") lands on the run the first began (the view's
    # idempotency key, services/keys.py), where it began another.
    sent_from = sent_from_field("open New run again and start the run from there")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        source = self.data if self.is_bound else self.initial
        asked_team = source.get("team") or "repo-fix"
        team = asked_team if asked_team in TEAMS else "repo-fix"
        scenario = source.get("scenario") or TEAMS[team].default_scenario
        scenario = scenario if scenario in TEAMS[team].scenarios else TEAMS[team].default_scenario
        # A team the address asks for (a link) that is not here is said, in the words a post
        # of it gets, where the form was drawn for repo-fix as if it had been asked. (A
        # scenario of the team before is not: the form drawn again for a new team is asked
        # with it, and offers the new team's own.)
        self.problems: dict[str, str] = {}
        if not self.is_bound and (why := actions.team_refusal(str(asked_team))):
            self.problems["team"] = f"{why}; the form is drawn for {team}"
        # Every scenario stays a valid choice (clean() says which team has which); the widget
        # offers the chosen team's, each with its description.
        self.fields["scenario"].widget.choices = described(team)
        self.fields["scenario"].help_text = TEAMS[team].scenarios[scenario].description
        # Drawn hidden (the template's `not-offered`), so that with scripts on the form offers
        # what the team takes; with them off it cannot be drawn again for another team, so a
        # stylesheet in <noscript> shows them all, and clean() refuses what the team refuses.
        self.not_offered = set(refused_options(team))
        if not self.is_bound:
            self.initial = {**presets(team, scenario), **self.initial}
            self.initial.update(team=team, scenario=scenario, presets_of=f"{team}/{scenario}")
            self.initial["sent_from"] = draw_token()
            # A value kept from the team chosen before would be sent unseen, and refused.
            for name in self.not_offered:
                self.initial.pop(name, None)
        if not settings.MODEL_BASE_URL:
            # Offered still (a person may be looking for it), but said before it is chosen.
            model = self.fields["model"]
            assert isinstance(model, forms.ChoiceField)
            model.choices = [
                (key, f"{label} (none configured here: MINUTES_MODEL_BASE_URL)")
                if key == "endpoint"
                else (key, label)
                for key, label in BACKENDS
            ]
        # A NUL is refused with the task's other refusals (NewRun.task_refusals, naming where
        # it is), where Django's own "Null characters are not allowed." came first and kept
        # the task from clean(): the scripted backend's refusal was then not said.
        task = self.fields["task"]
        task.validators = [
            v for v in task.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ]
        self.scripted = (source.get("model") or "scripted") == "scripted"
        if self.scripted:
            self.fields["task"].help_text = actions.SCRIPTED_TASK
        for name in ("task", "order"):
            # What a person types freely is theirs: the form drawn again for another team,
            # scenario or model keeps the box as it stands (hx-preserve, by its id), where the
            # words typed while the new form was on its way were lost. The server draws them
            # as it got them, and no choice changes them. Not a box the new team does not
            # take (the order, for another team than the desk): kept, it would be sent unseen
            # and refused; it is drawn empty, as the initial values above are.
            if name not in self.not_offered:
                self.fields[name].widget.attrs["hx-preserve"] = True
        for name in ("team", "scenario", "model"):
            # Changing one re-renders the form for it (htmx): its scenarios, their settings.
            self.fields[name].widget.attrs.update(
                {
                    "hx-get": reverse("new_run"),
                    "hx-trigger": "change",
                    "hx-target": "#new-run",
                    "hx-select": "#new-run",
                    "hx-swap": "outerHTML",
                    # The choices only: not what is typed freely, which the page keeps as it
                    # stands (hx-preserve, above) and which made the address as long as a
                    # task (gunicorn refuses a request line past 4,094 bytes: a task of 700
                    # letters not in ASCII left the form drawn for the team before), nor the
                    # CSRF token, which has no place in an address and the servers' logs.
                    "hx-include": f"{REDRAWN}:not([name=csrfmiddlewaretoken])",
                    # What the redraw draws again (the scenario's own allowance, turn cap and
                    # ceiling, the other choices), and the button, wait for it: an allowance
                    # typed while it was on its way was lost when it landed, and the run
                    # started with the scenario's own. htmx takes the values first.
                    "hx-disabled-elt": f"{REDRAWN}:not([type=hidden]), #new-run button",
                }
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        team, scenario = data.get("team"), data.get("scenario")
        if team and scenario and scenario not in TEAMS[team].scenarios:
            known = ", ".join(sorted(TEAMS[team].scenarios))
            self.add_error("scenario", f"team {team} has no scenario {scenario}; it has: {known}")
        shown_for = (data.get("presets_of") or "").split("/", 1)
        if len(shown_for) == 2 and shown_for[0] in TEAMS:
            shown = presets(*shown_for)
            for name in PRESETS:
                if name in shown and data.get(name) == shown[name]:
                    data[name] = None  # untouched: the scenario's own
        refused = refused_options(team) if team in TEAMS else {}
        for name, refusal in refused.items():
            if data.get(name):
                self.add_error(name, refusal)
        asked = actions.NewRun(
            team=team or "",
            scenario=scenario,
            task=data.get("task") or None,
            model=data.get("model") or "scripted",
            order=data.get("order") or None,
        )
        for name, said in asked.refusals().items():
            if name not in self.errors:
                for why in said:
                    self.add_error(name, why)
        if data.get("model") == "local" and (unavailable := local_model.unavailable()):
            self.add_error("model", unavailable)
        return data


def seen_reason(text: str) -> None:
    """A decision's reason shows something and holds no control character but tabs and line
    breaks (runtime/unseen.py, runtime/written.py)."""
    if why := unseen_reason(text) or written.unwritten_reason(text):
        raise forms.ValidationError(why, code="unseen")


# The decision forms' labels are their templates' (_letter_card.html, _conflict_card.html,
# dead_letters.html): a refusal names a field by its label (views/review.refused), where it
# said "reason: ..." of the box labelled "Why". The API names its body's fields.
class DecisionForm(Form):
    reason = forms.CharField(
        label="Why",  # a letter's card says which decision: "Why retry" (views/review.py)
        max_length=actions.REASON_MAX,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Recorded in the audit trail with your name.",
        validators=[seen_reason],
    )


class ResolveForm(DecisionForm):
    # As the page asks: the decision, then why (and so its refusals name them in that order).
    field_order = ["choice", "reason"]

    choice = forms.CharField(
        label="Decision", max_length=64, help_text="The claim to commit, or none to reject both."
    )
    # Given to the form when it is shown: the ruling's idempotency key (a double-click posts
    # the same ruling twice, and it is applied once). Hidden, it has no label of its own.
    ruling_id = forms.RegexField(
        regex=r"^[A-Za-z0-9_-]{1,64}$",
        required=False,
        widget=forms.HiddenInput,
        label="The form's hidden ruling_id",
        error_messages={
            "invalid": "it was changed (it is drawn with the form: 1 to 64 letters, digits, "
            "'-' or '_'); load the conflicts again and decide there"
        },
    )


class LetterIdsField(forms.Field):
    """Dead letters' ids, as many boxes of one name send them: each checked for the shape of
    a letter's id, an id given twice kept once, and at most letters.AT_ONCE of them."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value: Any) -> list[str]:
        return list(dict.fromkeys(str(v).strip() for v in value or () if str(v).strip()))

    def validate(self, value: list[str]) -> None:
        super().validate(value)
        if len(value) > letters.AT_ONCE:
            raise forms.ValidationError(
                f"at most {letters.AT_ONCE} letters at once; {len(value)} were chosen"
            )
        if bad := [v for v in value if not re.fullmatch(letters.LETTER_ID, v)]:
            raise forms.ValidationError(f"{quoted(bad[0])} is not a dead letter's id")


# What the decision on several says when no letter was chosen (a box left blank).
NONE_TICKED = "tick the letters to decide, or choose every letter on this page"


class LettersForm(DecisionForm):
    """One decision, with one reason, on several dead letters: those ticked (`letter`), or
    every open letter the page listed (`every`, with the page's `listed`)."""

    # Sent by the button pressed; the letters by the boxes ticked on the cards below the form,
    # or (`every`) by the hidden fields listing the page's open letters.
    decision = forms.ChoiceField(
        choices=[(d, d) for d in letters.DECISIONS],
        label="Retry the chosen or Discard the chosen",
    )
    letter = LetterIdsField(required=False, label="The letters ticked")
    every = forms.BooleanField(required=False, label="every open letter on this page")
    listed = LetterIdsField(required=False, label="every open letter on this page")

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        chosen = data.get("listed") if data.get("every") else data.get("letter")
        if not chosen and not {"letter", "listed"} & set(self.errors):
            # Asked as of a box left blank (views/review.refused): nothing was chosen.
            self.add_error(
                "letter",
                forms.ValidationError(NONE_TICKED, code="required"),
            )
        data["chosen"] = chosen or []
        return data


class ImportForm(Form):
    journal = forms.FileField(help_text="A JSONL journal: ours, or the reference runtime's.")
    allow_torn = forms.BooleanField(
        required=False,
        label="Import the rest if the last line is torn",
        help_text="A journal whose writer was killed mid-line ends in half a line: the rest is "
        "imported and the torn line reported.",
    )

    def clean_journal(self) -> Any:
        upload = self.cleaned_data["journal"]
        limit = settings.IMPORT_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                f"the file is {upload.size:,} bytes; the limit is {limit:,} bytes"
            )
        return upload
