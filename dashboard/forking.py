"""The fork form: what a person may change when forking a run at one of its events."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from dashboard import actions
from dashboard.forms import Form, draw_token, sent_again_key, sent_from_field
from runtime import flat, fork, fork_checks
from services import forks
from services.runs import ModelUnavailable, RunError

BACKEND_CHOICES = [
    ("", "as it was"),
    ("scripted", "Scripted"),
    ("endpoint", "OpenAI-compatible endpoint"),
    ("local", "Local model"),
]


# The fork's changes as the service names them, and the box of this form each is typed in.
CHANGED_IN = {"models": "backend", "message": "message", "tool_result": "tool_result"}


def choice(backend: str, name: str | None) -> str:
    """An agent's new backend as the fork reads it: `endpoint:NAME` when a name is given."""
    return f"{backend}:{name}" if name else backend


class ForkForm(Form):
    """`agents` are the run's agents (the choices for a backend change and for a message)."""

    at = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    agent = forms.ChoiceField(required=False, label="Agent", help_text="Whose backend to change.")
    backend = forms.ChoiceField(
        choices=BACKEND_CHOICES, required=False, label="Its backend from here"
    )
    model_name = forms.RegexField(
        regex=r"^[!-~]+$",
        required=False,
        max_length=200,
        label="Model name",
        help_text="On the endpoint only: the model this agent asks for (empty: the host's).",
        error_messages={"invalid": "a model name has no spaces or control characters"},
    )
    to = forms.ChoiceField(required=False, label="Message for")
    message = forms.CharField(
        required=False,
        max_length=fork_checks.MESSAGE_MAX,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Read by the agent as new mail at its next turn.",
    )
    tool_result = forms.CharField(
        required=False,
        max_length=fork_checks.RESULT_MAX,
        widget=forms.Textarea(attrs={"rows": 4}),
        label="Replace the tool result (JSON)",
        help_text="Only when forking at a tool result; empty keeps it.",
    )
    max_turns = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=actions.TURNS_MAX,
        label="Turn cap",
        help_text="Each agent's, counted from its next turn; empty keeps the run's.",
    )
    allowance = forms.IntegerField(
        required=False,
        # The new-run form's bounds: a fork may not ask for what a new run may not.
        min_value=1,
        max_value=actions.ALLOWANCE_MAX,
        label="Allowance",
        help_text="The run's tokens from here on; each agent keeps its share of it.",
    )

    # Drawn anew with each form, as the new-run form's: the same form posted twice alike (a
    # double click, a browser's "send again") lands on the fork the first post made (the
    # key(), services/keys.py), where it made two.
    sent_from = sent_from_field(
        "open the fork page again (Fork, on the run's timeline) and fork from there"
    )

    def __init__(self, *args: Any, agents: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["sent_from"] = draw_token()
        choices = [("", "none"), *((a, a) for a in agents)]
        self.fields["agent"].choices = choices  # type: ignore[attr-defined]
        self.fields["to"].choices = choices  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        # A box already refused (an agent or backend not offered) says so once, and the
        # pairing is not then blamed on its partner as well.
        if not (self.has_error("agent") or self.has_error("backend")):
            if bool(data.get("agent")) != bool(data.get("backend")):
                missing = "backend" if data.get("agent") else "agent"
                self.add_error(missing, "choose an agent and its backend together")
            elif data.get("model_name") and data.get("backend") != "endpoint":
                self.add_error("model_name", "a model name is for the OpenAI-compatible endpoint")
        if data.get("message", "").strip() and not data.get("to") and not self.has_error("to"):
            self.add_error("to", "choose who the message is for")
        elif (
            data.get("to") and not data.get("message", "").strip() and not self.has_error("message")
        ):
            # Forked with nobody told anything is not what choosing a recipient asked for.
            self.add_error(
                "message", f"write the message for {data['to']}, or leave 'Message for' at none"
            )
        # The command line's and the API's check of the text an agent is given (runtime's one):
        # a control character typed as JSON's escape ("\u001b", "\u0000") passed the box's.
        if data.get("message", "").strip() and (
            why := fork_checks.message_refusal(data["message"])
        ):
            self.add_error("message", why)
        if data.get("tool_result", "").strip():
            try:
                data["result_value"] = json.loads(data["tool_result"])
            except json.JSONDecodeError as exc:
                self.add_error("tool_result", f"not JSON: {exc.msg} (line {exc.lineno})")
            except RecursionError:
                # json's decoder recurses once a level: ten thousand "[" were a 500.
                self.add_error("tool_result", "nested too deeply for JSON to read")
            except ValueError:
                self.add_error("tool_result", f"not JSON we can read: {flat.NUMBER_TOO_LONG}")
            else:
                if why := fork_checks.result_refusal(data["result_value"]):
                    self.add_error("tool_result", why)
        return data

    def refused(self, exc: RunError) -> None:
        """Show the service's refusal of the fork under the box it is about (in the form's
        words, not the API's field names), or above the form when it is about the whole."""
        if isinstance(exc, ModelUnavailable):  # the local model, which only a backend asks for
            self.add_error("backend", str(exc))
        elif isinstance(exc, forks.ForkRefused) and exc.field in CHANGED_IN:
            self.add_error(CHANGED_IN[exc.field], exc.why)
        else:
            self.add_error(None, str(exc))

    def key(self) -> str:
        """The idempotency key of this post: its hidden token and the choices sent."""
        data = self.cleaned_data
        return sent_again_key(
            data.get("sent_from", ""), {k: v for k, v in data.items() if k != "sent_from"}
        )

    def changes(self) -> fork.Changes:
        data = self.cleaned_data
        return fork.Changes(
            models={data["agent"]: choice(data["backend"], data.get("model_name"))}
            if data.get("agent")
            else {},
            message=(data["to"], data["message"]) if data.get("message", "").strip() else None,
            tool_result=data.get("result_value"),
            replace_result="result_value" in data,
            max_turns=data.get("max_turns"),
            allowance=data.get("allowance"),
        )
