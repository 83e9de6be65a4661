"""Forms: what people submit, validated on the server with errors that say what to fix."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings

from runtime import baseline
from services import local_model
from teams import TEAMS, default_scenario

BACKENDS = [
    ("scripted", "Scripted (no tokens spent)"),
    ("endpoint", "OpenAI-compatible endpoint"),
    ("local", "Local model on this machine (when its server is running)"),
]


class NewRunForm(forms.Form):
    team = forms.ChoiceField(choices=[(t, t) for t in sorted(TEAMS)], initial="repo-fix")
    scenario = forms.ChoiceField(
        choices=[(team.name, [(s, s) for s in sorted(team.scenarios)]) for team in TEAMS.values()],
        initial=default_scenario("repo-fix"),
        help_text="What the scripted agents say. The outcome is the harness's to decide.",
    )
    task = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=2_000,
        help_text="Leave empty for the scenario's own task.",
    )
    model = forms.ChoiceField(choices=BACKENDS, initial="scripted", label="Model backend")
    allowance = forms.IntegerField(
        min_value=1, max_value=10_000_000, initial=5_000, help_text="Tokens for the whole run."
    )
    max_turns = forms.IntegerField(
        min_value=1,
        max_value=5_000,
        initial=12,
        label="Turn cap",
        help_text="Model calls per agent run.",
    )
    max_seconds = forms.FloatField(
        min_value=1, max_value=86_400, required=False, label="Wall-clock ceiling (seconds)"
    )
    order = forms.RegexField(
        regex=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$",
        required=False,
        label="Order (support desk)",
        help_text="The order the ticket is about; empty: a fresh order for this run. Runs on "
        "the same order see each other's changes.",
        error_messages={"invalid": "letters, digits, '.', '_' and '-' only, at most 40"},
    )
    baseline = forms.BooleanField(
        required=False,
        label="Also fly the single-agent baseline",
        help_text="The solo coder on the same task, template and model, linked to this run, "
        "to compare outcome, tokens, calls and time.",
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        team, scenario = data.get("team"), data.get("scenario")
        if team and scenario and scenario not in TEAMS[team].scenarios:
            known = ", ".join(sorted(TEAMS[team].scenarios))
            self.add_error("scenario", f"team {team} has no scenario {scenario}; it has: {known}")
        if data.get("baseline") and team and (why := baseline.team_refusal(team)):
            self.add_error("baseline", why)
        if data.get("order") and team != "support-desk":
            self.add_error("order", "only the support-desk team works on orders")
        if data.get("model") == "local" and (why := local_model.unavailable()):
            self.add_error("model", why)
        if data.get("model") == "endpoint" and not settings.MODEL_BASE_URL:
            self.add_error(
                "model",
                "no OpenAI-compatible endpoint is configured: set MINUTES_MODEL_BASE_URL and "
                "MINUTES_MODEL where the workers run, or use the scripted backend",
            )
        return data


class DecisionForm(forms.Form):
    reason = forms.CharField(
        max_length=2_000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Recorded in the audit trail with your name.",
    )


class ResolveForm(DecisionForm):
    choice = forms.CharField(
        max_length=64, help_text="The claim to commit, or none to reject both."
    )


class ImportForm(forms.Form):
    journal = forms.FileField(help_text="A JSONL journal: ours, or the reference runtime's.")

    def clean_journal(self) -> Any:
        upload = self.cleaned_data["journal"]
        limit = settings.IMPORT_MAX_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                f"the file is {upload.size:,} bytes; the limit is {limit:,} bytes"
            )
        return upload
