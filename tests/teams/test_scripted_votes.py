"""A vote of scripted samples is refused when the scenario scripts another number of them.

Asked for more samples than its script holds, a scripted reviewer (or support agent) ran out
mid-run and the run ended dead-lettered or escalated, saying only "the script has N responses
and all were used"; asked for fewer, the desk's support agent answered a sample where an action
was due and the run claimed a refund it never made. Now the run is refused when it is planned,
before anything is recorded, saying which scenario scripts that many.
"""

from __future__ import annotations

import pytest

from runtime import flight

RUN = "r-000000000001"


@pytest.mark.parametrize(
    ("team", "scenario", "votes", "says"),
    [
        ("repo-fix", "first-flight", 3, "scenario 'vote' scripts 3"),
        ("repo-fix", "vote", 5, "scripts 3 samples of the reviewer's verdict"),
        ("repo-fix", "vote", 1, "scenario 'first-flight' scripts 1"),
        ("support-desk", "double-refund", 3, "scenario 'refund-vote' scripts 3"),
        ("support-desk", "refund-vote", 1, "scripts 3 samples of the refund decision"),
    ],
)
def test_scripted_votes_other_than_the_scenarios_are_refused(team, scenario, votes, says):
    with pytest.raises(flight.FlightError) as refused:
        flight.plan(team, scenario, RUN, votes=votes)
    assert f"votes {votes}: scenario {scenario!r}" in str(refused.value)
    assert says in str(refused.value)
    assert "give the" in str(refused.value) and "a model" in str(refused.value)


def test_the_scenarios_own_votes_and_a_deciding_agent_on_a_model_are_taken():
    assert flight.plan("repo-fix", "vote", RUN).settings.votes == 3
    assert flight.plan("repo-fix", "first-flight", RUN, votes=1).settings.votes == 1
    assert flight.plan("support-desk", "refund-vote", RUN, votes=3).settings.votes == 3
    on_a_model = flight.plan(
        "repo-fix", "first-flight", RUN, votes=3, models={"reviewer": "endpoint"}
    )
    assert on_a_model.settings.votes == 3
    desk = flight.plan(
        "support-desk", "double-refund", RUN, votes=5, models={"support-agent": "endpoint"}
    )
    assert desk.settings.votes == 5
