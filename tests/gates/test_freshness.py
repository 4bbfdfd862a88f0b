"""Gate 5, Freshness: the state's age against the TTL of the command's risk."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, freshness, schema
from custom_components.agentic_hems.gates.freshness import check, ttl_for
from custom_components.agentic_hems.gates.view import EntityInfo, StateInfo

from .fakes import NOW, FakeView, context, house, through


def test_ttl_by_risk() -> None:
    assert [ttl_for(r).total_seconds() for r in range(6)] == [300, 300, 30, 30, 5, 5]


def run(alias: str, intent: str, view: FakeView) -> Any:
    ctx = through(context({"intent": intent, "device_alias": alias}, view), schema.evaluate, device_resolved.evaluate,
                  capability.evaluate)
    return freshness.evaluate(ctx), ctx


@pytest.mark.parametrize(
    ("alias", "intent", "age_s", "passed"),
    [
        ("ceiling", "turn_on", 299, True),  # risk 0: 5 min
        ("ceiling", "turn_on", 301, False),
        ("kettle", "turn_on", 300, True),  # risk 1, exactly the TTL
        ("front door", "lock", 4.9, True),  # risk 4: 5 s
        ("front door", "lock", 5.1, False),
        ("garage door", "open", 6, False),  # garage cover: risk 4
    ],
)
def test_age_against_ttl(alias: str, intent: str, age_s: float, passed: bool) -> None:
    view = house()
    entity_id = {"ceiling": "light.living_main", "kettle": "switch.kettle", "front door": "lock.front_door",
                 "garage door": "cover.garage_door"}[alias]
    view.add(view.entities[entity_id], "on", age=timedelta(seconds=age_s))
    result, _ = run(alias, intent, view)
    assert result.passed is passed
    assert result.evidence["age_s"] == pytest.approx(age_s)
    if not passed:
        assert result.reason.startswith("stale: refresh and retry")


def test_evidence_fields() -> None:
    result, ctx = run("front door", "lock", house())
    assert result.passed
    assert result.evidence["ttl_s"] == 5.0 and result.evidence["risk_level"] == 4
    assert result.evidence["last_reported"] == NOW - timedelta(seconds=1)
    assert ctx.state is not None and ctx.state.state == "locked"


@pytest.mark.parametrize("state", ["unavailable", "unknown"])
def test_unusable_states_fail(state: str) -> None:
    view = house()
    view.add(view.entities["switch.kettle"], state)
    result, _ = run("kettle", "turn_on", view)
    assert not result.passed and result.reason == f"state is {state}"


def test_last_reported_preferred_over_last_updated() -> None:
    old = NOW - timedelta(hours=1)
    state = StateInfo(entity_id="lock.x", state="locked", last_updated=old, last_reported=NOW - timedelta(seconds=2))
    assert check(state, 4, NOW)[0]
    assert not check(StateInfo(entity_id="lock.x", state="locked", last_updated=old), 4, NOW)[0]


def test_missing_state_fails() -> None:
    assert check(None, 0, NOW) == (False, "no state", {"risk_level": 0, "ttl_s": 300.0, "refreshed_at": None})


def test_after_a_refresh_last_reported_must_be_newer() -> None:
    refreshed = NOW - timedelta(seconds=1)
    state = StateInfo(entity_id="sensor.x", state="1", last_updated=NOW - timedelta(seconds=2))
    passed, reason, _ = check(state, 0, NOW, refreshed_at=refreshed)
    assert not passed and reason.startswith("not reported since the refresh")
    assert check(StateInfo(entity_id="sensor.x", state="1", last_updated=NOW), 0, NOW, refreshed_at=refreshed)[0]
    same_instant = StateInfo(entity_id="sensor.x", state="1", last_updated=refreshed)
    assert check(same_instant, 0, NOW, refreshed_at=refreshed)[0]


def test_future_stamp_counts_as_age_zero() -> None:
    state = StateInfo(entity_id="lock.x", state="locked", last_updated=NOW + timedelta(seconds=3))
    passed, _, evidence = check(state, 5, NOW)
    assert passed and evidence["age_s"] == 0.0


def test_polls_flag_in_evidence() -> None:
    view = house()
    view.add(EntityInfo(entity_id="switch.plug", name="Plug", polls=True))
    result, _ = run("plug", "turn_on", view)
    assert result.evidence["polls"] is True


@pytest.mark.parametrize(("entity_id", "passed"), [("input_boolean.dishwasher", True), ("switch.dishwasher", False)])
def test_helpers_are_never_stale(entity_id: str, passed: bool) -> None:
    old = NOW - timedelta(hours=3)
    state = StateInfo(entity_id=entity_id, state="on", last_updated=old, last_reported=old)
    ok, reason, evidence = check(state, 1, NOW)
    assert ok is passed
    assert evidence.get("helper", False) is passed
    assert reason == ("fresh: a helper's state is held by HA itself" if passed else
                      "stale: refresh and retry (age 10800.0 s > 300 s)")
    assert not check(StateInfo(entity_id=entity_id, state="unavailable", last_updated=NOW), 1, NOW)[0]


@pytest.mark.parametrize(
    ("risk", "pushes", "age_s", "passed"),
    [
        (2, True, 10800, True),  # a thermostat that reports on change: 3 h unchanged is current
        (3, True, 10800, True),
        (2, False, 31, False),  # unknown update mode: the TTL holds
        (4, True, 6, False),  # a lock must have reported within 5 s, push or not
        (4, True, 4, True),
        (5, True, 5.5, False),
    ],
)
def test_push_entities_up_to_risk_3_are_current_while_usable(
    risk: int, pushes: bool, age_s: float, passed: bool
) -> None:
    stamp = NOW - timedelta(seconds=age_s)
    state = StateInfo(entity_id="climate.x", state="heat", last_updated=stamp, last_reported=stamp)
    ok, reason, evidence = check(state, risk, NOW, pushes=pushes)
    assert ok is passed and evidence["age_s"] == pytest.approx(age_s)
    assert evidence.get("push", False) is (pushes and risk <= 3)
    if evidence.get("push"):
        assert reason == f"current: the device pushes every change (last one {age_s:.1f} s ago)"
    elif not passed:
        assert reason.startswith("stale: refresh and retry")
    unusable = StateInfo(entity_id="climate.x", state="unavailable", last_updated=NOW, last_reported=NOW)
    assert check(unusable, risk, NOW, pushes=pushes)[1] == "state is unavailable"


def test_the_gate_reads_pushes_from_the_entity() -> None:
    view = house()
    view.add(EntityInfo(entity_id="switch.plug", name="Plug", pushes=True), age=timedelta(hours=5))
    result, _ = run("plug", "turn_on", view)
    assert result.passed and result.evidence["push"] is True and result.evidence["polls"] is False
    view.add(EntityInfo(entity_id="switch.plug", name="Plug"), age=timedelta(hours=5))
    assert not run("plug", "turn_on", view)[0].passed
