"""Recorded errors replay by a registry of types, not by their names: a registered type comes
back as itself, so `except` and `isinstance` catch it on replay as they did live."""

from __future__ import annotations

import pytest

from runtime import errors
from runtime.events import ErrorInfo, ModelFailed
from runtime.journal import MemoryJournal
from runtime.model import ModelClient, ModelError
from runtime.session import Session
from runtime.tools import ToolFailure, ToolTimeout


@errors.replayable
class QuotaSpent(ModelError):
    """A model error a team might define (registered like a team's own)."""


def test_a_registered_type_is_rebuilt_as_itself_with_the_recorded_message():
    exc = errors.rebuild(ErrorInfo(type="ToolTimeout", message="read_file gave no answer"))
    assert type(exc) is ToolTimeout and isinstance(exc, ToolFailure)
    assert str(exc) == "read_file gave no answer"


def test_an_unregistered_name_keeps_its_name_and_message_but_makes_no_class_of_it():
    info = ErrorInfo(type="OrderMoved2000", message="moved")
    exc = errors.rebuild(info)
    assert type(exc) is errors.ReplayedError
    assert errors.describe(exc) == info


def test_a_name_cannot_be_registered_twice_for_two_types():
    impostor = type("QuotaSpent", (Exception,), {})  # same name, another type
    with pytest.raises(ValueError, match="'QuotaSpent' is taken by"):
        errors.replayable(impostor)
    assert errors.registered("QuotaSpent") is QuotaSpent


def test_a_replayed_model_failure_is_caught_by_its_own_class():
    journal = MemoryJournal()
    failed = ModelFailed(run_id="r-x", error=ErrorInfo(type="QuotaSpent", message="no more"))
    journal.append("run-r-x", [failed], 0)
    session = Session(journal, "r-x", replay=True)
    with pytest.raises(QuotaSpent, match="no more"):
        session.ask(ModelClient(), [], [])


def test_a_replayed_model_failure_of_an_unknown_type_is_still_a_model_error():
    journal = MemoryJournal()
    failed = ModelFailed(run_id="r-x", error=ErrorInfo(type="VendorGone", message="503"))
    journal.append("run-r-x", [failed], 0)
    session = Session(journal, "r-x", replay=True)
    with pytest.raises(ModelError) as caught:
        session.ask(ModelClient(), [], [])
    assert errors.describe(caught.value) == ErrorInfo(type="VendorGone", message="503")


def test_a_recorded_error_is_recognised_by_its_registered_class():
    assert errors.recorded_as(ErrorInfo(type="QuotaSpent", message=""), ModelError)
    assert not errors.recorded_as(ErrorInfo(type="QuotaSpent", message=""), ToolFailure)
    assert not errors.recorded_as(ErrorInfo(type="Nobody", message=""), Exception)
