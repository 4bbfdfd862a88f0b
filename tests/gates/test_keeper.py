"""The gatekeeper: device control off, allow, confirm/reject/expire, re-checks on confirm, persistence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from custom_components.agentic_hems.gates.keeper import Gatekeeper, NotPending, Settings
from custom_components.agentic_hems.gates.models import GrantRefusal, GridGrant, NormalizedCommand, PolicyAction
from custom_components.agentic_hems.gates.tables import DEFAULT_POLICY, PolicyRule
from custom_components.agentic_hems.gates.view import StateInfo

from .fakes import NOW, FakeView, RecordingActuator, house, reader

GARAGE_OPEN = {"intent": "open", "device_alias": "garage door"}
KETTLE_ON = {"intent": "turn_on", "device_alias": "kettle"}
OPEN_GARAGE = "Open the garage door"  # the request the orchestrator's command is bound to (Policy)


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def setup(allow: bool = True, **kw: Any) -> tuple[Gatekeeper, FakeView, RecordingActuator, Clock]:
    clock = Clock()
    view = house()
    keeper = Gatekeeper(Settings(allow_control=allow, **kw), clock)
    keeper.read_request = reader(view)
    return keeper, view, RecordingActuator(view, clock=clock), clock


def touch(view: FakeView, entity_id: str, at: datetime) -> None:
    """The device reports its state again at ``at`` (last_reported moves, the state does not)."""
    old = view.states[entity_id]
    view.states[entity_id] = StateInfo(entity_id=entity_id, state=old.state, attributes=old.attributes,
                                       last_updated=old.last_updated, last_reported=at)


async def test_control_off_ends_as_dry_run_without_a_call() -> None:
    keeper, view, actuator, _ = setup(allow=False)
    record = await keeper.evaluate(view, actuator, source_agent="test", candidate=KETTLE_ON)
    assert record["outcome"] == "dry_run"
    assert record["gate_results"][-1] == {"gate": "execution", "passed": True,
                                          "reason": "not executed: device control is off", "evidence": {"dry_run": True}}
    assert actuator.calls == [] and len(keeper.ledger) == 0


async def test_dry_run_asked_with_control_on() -> None:
    keeper, view, actuator, _ = setup()
    record = await keeper.evaluate(view, actuator, source_agent="test", candidate=KETTLE_ON, dry_run=True)
    assert record["outcome"] == "dry_run" and actuator.calls == []


async def test_allow_executes_once_per_key() -> None:
    keeper, view, actuator, _ = setup()
    start = NOW + timedelta(minutes=15)
    first = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=KETTLE_ON, slot_start=start)
    assert first["outcome"] == "executed" and view.states["switch.kettle"].state == "on"
    assert [g["gate"] for g in first["gate_results"]] == [
        "input_guard", "schema", "device_resolved", "capability", "freshness", "policy", "dry_run", "execution"]
    assert first["execution_result"]["state_after"] == "on"
    assert [h["outcome"] for h in first["history"]] == ["requested", "executed"]
    again = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=KETTLE_ON, slot_start=start)
    assert again["outcome"] == "blocked" and again["failed_gate"] == "dry_run"
    assert actuator.calls == [("switch", "turn_on", "switch.kettle", {})]


async def test_phantom_success_is_failed() -> None:
    keeper, view, actuator, _ = setup()
    actuator.phantom = {"switch.kettle"}
    record = await keeper.evaluate(view, actuator, source_agent="test", candidate=KETTLE_ON)
    assert record["outcome"] == "failed" and record["failed_gate"] == "execution"
    assert record["execution_result"]["error"] == "phantom success"


async def test_confirm_then_execute_keeps_trace_id() -> None:
    keeper, view, actuator, clock = setup()
    pending = await keeper.evaluate(view, actuator, source_agent="orchestrator", raw_input=OPEN_GARAGE, candidate=GARAGE_OPEN, user_id="u1")
    assert pending["outcome"] == "pending_confirmation" and actuator.calls == []
    trace_id = pending["trace_id"]
    assert keeper.pending[trace_id].expires_at == NOW + timedelta(minutes=10)
    clock.now = NOW + timedelta(minutes=2)
    touch(view, "cover.garage_door", clock.now - timedelta(seconds=1))  # fresh for risk 4 (5 s)
    done = await keeper.confirm(trace_id, "admin", view, actuator)
    assert done["trace_id"] == trace_id and done["outcome"] == "executed"
    assert done["execution_result"]["confirmed_by"] == "admin"
    assert [h["outcome"] for h in done["history"]] == ["requested", "pending_confirmation", "confirmed", "executed"]
    assert done["history"][0]["user_id"] == "u1"
    assert done["history"][2]["user_id"] == "admin"
    assert actuator.calls == [("cover", "open_cover", "cover.garage_door", {})]
    with pytest.raises(NotPending):
        await keeper.confirm(trace_id, "admin", view, actuator)


async def test_confirm_rechecks_freshness_and_keeps_a_stale_command_pending() -> None:
    keeper, view, actuator, clock = setup()
    pending = await keeper.evaluate(view, actuator, source_agent="orchestrator", raw_input=OPEN_GARAGE, candidate=GARAGE_OPEN)
    clock.now = NOW + timedelta(minutes=2)  # the garage door's state is now 2 min old: stale for risk 4
    attempt = await keeper.confirm(pending["trace_id"], "admin", view, actuator)
    assert attempt["outcome"] == "pending_confirmation" and actuator.calls == []
    assert attempt["history"][-1]["reason"].startswith("not confirmed: stale: refresh and retry (age 121.0 s")
    assert attempt["history"][-1]["user_id"] == "admin" and pending["trace_id"] in keeper.pending
    touch(view, "cover.garage_door", clock.now)  # the door reports
    done = await keeper.confirm(pending["trace_id"], "admin", view, actuator)
    assert done["outcome"] == "executed" and len(actuator.calls) == 1
    assert [h["outcome"] for h in done["history"]] == [
        "requested", "pending_confirmation", "pending_confirmation", "confirmed", "executed"]


async def test_confirm_when_policy_now_denies_is_cancelled() -> None:
    keeper, view, actuator, clock = setup()
    pending = await keeper.evaluate(view, actuator, source_agent="orchestrator", raw_input=OPEN_GARAGE, candidate=GARAGE_OPEN)
    keeper.settings.rules = (PolicyRule("open", "cover", 0, 5, PolicyAction.DENY, "user"), *keeper.settings.rules)
    done = await keeper.confirm(pending["trace_id"], "admin", view, actuator)
    assert done["outcome"] == "cancelled" and actuator.calls == [] and keeper.pending == {}
    assert done["gate_results"][-1]["reason"] == "cancelled on confirmation: the policy gate blocks it now"


async def test_confirm_with_control_switched_off_is_cancelled() -> None:
    keeper, view, actuator, clock = setup()
    pending = await keeper.evaluate(view, actuator, source_agent="orchestrator", raw_input=OPEN_GARAGE, candidate=GARAGE_OPEN)
    keeper.settings.allow_control = False
    done = await keeper.confirm(pending["trace_id"], "admin", view, actuator)
    assert done["outcome"] == "cancelled" and actuator.calls == []


async def test_expire_and_reject() -> None:
    keeper, view, actuator, clock = setup()
    first = await keeper.evaluate(view, actuator, source_agent="a", candidate=GARAGE_OPEN)
    clock.now = NOW + timedelta(minutes=5)
    touch(view, "cover.garage_door", clock.now)
    second = await keeper.evaluate(view, actuator, source_agent="b", candidate=GARAGE_OPEN)
    assert keeper.next_expiry() == NOW + timedelta(minutes=10)
    clock.now = NOW + timedelta(minutes=10)
    expired = keeper.expire()
    assert [r["trace_id"] for r in expired] == [first["trace_id"]]
    assert expired[0]["outcome"] == "expired" and expired[0]["failed_gate"] == "execution"
    rejected = keeper.reject(second["trace_id"], "admin")
    assert rejected["outcome"] == "rejected"
    assert rejected["history"][-1] == {"outcome": "rejected", "at": clock.now.isoformat(), "user_id": "admin"}
    assert keeper.pending == {} and actuator.calls == []
    with pytest.raises(NotPending):
        keeper.reject(first["trace_id"], "admin")


async def test_confirm_after_expiry_is_expired() -> None:
    keeper, view, actuator, clock = setup()
    pending = await keeper.evaluate(view, actuator, source_agent="a", candidate=GARAGE_OPEN)
    clock.now = NOW + timedelta(minutes=11)
    done = await keeper.confirm(pending["trace_id"], "admin", view, actuator)
    assert done["outcome"] == "expired" and actuator.calls == []


async def test_state_round_trips() -> None:
    keeper, view, actuator, clock = setup()
    await keeper.evaluate(view, actuator, source_agent="s", candidate=KETTLE_ON)
    pending = await keeper.evaluate(view, actuator, source_agent="a", candidate=GARAGE_OPEN)
    restored = Gatekeeper(Settings(), clock)
    assert restored.load(keeper.as_dict()) == []
    assert restored.settings.allow_control is True
    assert restored.ledger.as_dict() == keeper.ledger.as_dict() and len(restored.ledger) == 1
    assert restored.pending[pending["trace_id"]] == keeper.pending[pending["trace_id"]]
    broken = keeper.as_dict() | {"pending": [{"trace_id": "x"}]}
    assert Gatekeeper(Settings(), clock).load(broken) == ["pending confirmation: 'source_agent'"]


async def test_concurrent_duplicates_execute_once() -> None:
    import asyncio

    keeper, view, actuator, _ = setup()
    start = NOW + timedelta(minutes=15)
    records = await asyncio.gather(*(
        keeper.evaluate(view, actuator, source_agent="scheduler", candidate=KETTLE_ON, slot_start=start)
        for _ in range(3)
    ))
    assert sorted(r["outcome"] for r in records) == ["blocked", "blocked", "executed"]
    assert {r["failed_gate"] for r in records} == {None, "dry_run"}
    assert actuator.calls == [("switch", "turn_on", "switch.kettle", {})]


async def test_a_failed_call_may_be_retried() -> None:
    keeper, view, actuator, _ = setup()
    actuator.failing = {"switch.kettle"}
    start = NOW + timedelta(minutes=15)
    first = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=KETTLE_ON, slot_start=start)
    assert first["outcome"] == "failed" and len(keeper.ledger) == 0
    actuator.failing = set()
    again = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=KETTLE_ON, slot_start=start)
    assert again["outcome"] == "executed" and len(actuator.calls) == 2


async def test_pending_confirmations_are_capped_per_requester_and_in_total() -> None:
    keeper, view, actuator, _ = setup()
    mine = [await keeper.evaluate(view, actuator, source_agent=f"agent{i}", candidate=GARAGE_OPEN, user_id="kid")
            for i in range(6)]  # six different agents: no command repeats another
    assert [r["outcome"] for r in mine] == ["pending_confirmation"] * 5 + ["blocked"]
    refused = mine[-1]
    assert refused["failed_gate"] == "execution" and refused["trace_id"] not in keeper.pending
    assert refused["gate_results"][-1]["evidence"] == {"pending_limit": "per_user", "maximum": 5, "requested_by": "kid"}
    assert refused["gate_results"][-1]["reason"].startswith("refused: this requester has 5 commands awaiting")
    others = [await keeper.evaluate(view, actuator, source_agent=f"agent{i}", candidate=GARAGE_OPEN,
                                    user_id=f"user{i // 5}") for i in range(16)]  # 5 + 15 = 20 pending, then the 21st
    assert [r["outcome"] for r in others] == ["pending_confirmation"] * 15 + ["blocked"]
    assert others[-1]["gate_results"][-1]["evidence"]["pending_limit"] == "total"
    assert len(keeper.pending) == 20


async def test_a_repeat_joins_the_pending_command() -> None:
    keeper, view, actuator, _ = setup()
    start = NOW + timedelta(minutes=15)
    first = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=GARAGE_OPEN, slot_start=start)
    again = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=GARAGE_OPEN, slot_start=start)
    assert first["outcome"] == again["outcome"] == "pending_confirmation"
    assert again["trace_id"] == first["trace_id"] and list(keeper.pending) == [first["trace_id"]]


async def test_a_requesters_repeat_without_a_slot_joins_and_another_requesters_does_not() -> None:
    """A model repeating one command (each call its own trace, so its own idempotency key) fills no cap."""
    keeper, view, actuator, _ = setup()
    repeats = [await keeper.evaluate(view, actuator, source_agent="hermes", candidate=GARAGE_OPEN, user_id="kid")
               for _ in range(7)]
    assert {r["trace_id"] for r in repeats} == {repeats[0]["trace_id"]} and list(keeper.pending) == [
        repeats[0]["trace_id"]]
    other = await keeper.evaluate(view, actuator, source_agent="hermes", candidate=GARAGE_OPEN, user_id="mum")
    assert other["outcome"] == "pending_confirmation" and other["trace_id"] != repeats[0]["trace_id"]
    assert len(keeper.pending) == 2


# Grid setpoints under a confirm rule: refused before any pending confirmation without an approved grant; with one,
# the approval is the confirmation.

SETPOINT = "number.boiler_setpoint"
SET_50 = {"intent": "set_value", "device_alias": SETPOINT, "params": {"value": 50}}
CONFIRM_SET_VALUE = PolicyRule("set_value", "number", 0, 5, PolicyAction.CONFIRM, "user")


@dataclass
class Authority:
    """A grid toolkit stand-in: ``number.boiler_setpoint`` is reserved; request ``auth_ok`` is approved for 50."""

    def reserved(self) -> frozenset[str]:
        return frozenset({SETPOINT})

    def scheduled(self) -> frozenset[str]:
        return frozenset()

    def check_grant(self, grant: GridGrant, command: NormalizedCommand, now: datetime) -> GrantRefusal | None:
        if grant.request_id != "auth_ok":
            return GrantRefusal(reason=f"authorization request {grant.request_id} is pending, not approved")
        value = command.data.get("value")
        return None if value == 50 else GrantRefusal(reason=f"value {value} is not the approved 50")


def grid_setup(*rules: PolicyRule) -> tuple[Gatekeeper, FakeView, RecordingActuator, Clock]:
    keeper, view, actuator, clock = setup(rules=(*rules, *DEFAULT_POLICY))
    keeper.setpoints = Authority()
    return keeper, view, actuator, clock


@pytest.mark.parametrize(
    ("source", "grant", "reason"),
    [
        ("hermes", None, f"blocked by policy: {SETPOINT} is a grid setpoint: only an approved authorization request "
                         "sets it (request_authorization, then approve_authorization)"),
        ("grid", None, "blocked by policy: a grid command without an approved authorization request"),
        ("grid", GridGrant(request_id="auth_wait", slot_start=NOW),
         "blocked by policy: authorization request auth_wait is pending, not approved"),
    ],
)
async def test_a_grid_setpoint_without_an_approved_grant_never_waits_for_confirmation(
    source: str, grant: GridGrant | None, reason: str
) -> None:
    keeper, view, actuator, _ = grid_setup(CONFIRM_SET_VALUE)
    record = await keeper.evaluate(view, actuator, source_agent=source, candidate=SET_50, user_id="u1", grant=grant)
    assert (record["outcome"], record["failed_gate"]) == ("blocked", "policy")
    assert record["gate_results"][-1]["reason"] == reason
    assert record["gate_results"][-1]["evidence"]["override_available"] is False
    assert keeper.pending == {} and actuator.calls == [] and view.states[SETPOINT].state == "55"


async def test_an_approved_grant_is_the_confirmation_of_a_confirm_rule() -> None:
    keeper, view, actuator, _ = grid_setup(CONFIRM_SET_VALUE)
    grant = GridGrant(request_id="auth_ok", slot_start=NOW)
    record = await keeper.evaluate(view, actuator, source_agent="grid", candidate=SET_50, grant=grant)
    assert record["outcome"] == "executed" and keeper.pending == {}
    policy_evidence = record["gate_results"][5]["evidence"]
    assert policy_evidence["rule"] == CONFIRM_SET_VALUE.as_dict() and policy_evidence["action"] == "allow"
    assert policy_evidence["confirmed_by_grant"] == {"request_id": "auth_ok", "slot_start": NOW.isoformat()}
    assert record["command"]["policy_action"] == "allow"
    assert actuator.calls == [("number", "set_value", SETPOINT, {"value": 50})] and view.states[SETPOINT].state == "50"
    deny = PolicyRule("set_value", "number", 0, 5, PolicyAction.DENY, "user")
    keeper, view, actuator, _ = grid_setup(deny)  # a deny rule still denies the approved command
    record = await keeper.evaluate(view, actuator, source_agent="grid", candidate=SET_50, grant=grant)
    assert (record["outcome"], record["failed_gate"]) == ("blocked", "policy") and actuator.calls == []


async def test_a_pending_command_on_an_entity_that_became_a_grid_setpoint_cannot_be_confirmed() -> None:
    """No bypass: a command that waited before the entity was mapped as a grid setpoint is cancelled on confirm."""
    keeper, view, actuator, _ = setup(rules=(CONFIRM_SET_VALUE, *DEFAULT_POLICY))
    pending = await keeper.evaluate(view, actuator, source_agent="hermes", candidate=SET_50, user_id="u1")
    assert pending["outcome"] == "pending_confirmation"
    keeper.setpoints = Authority()
    done = await keeper.confirm(pending["trace_id"], "admin", view, actuator)
    assert done["outcome"] == "cancelled" and actuator.calls == [] and keeper.pending == {}
    assert done["gate_results"][-2]["reason"].startswith(f"blocked by policy: {SETPOINT} is a grid setpoint")


async def test_a_scheduled_command_for_a_later_slot_supersedes_the_pending_one() -> None:
    """The plan asks to open the garage door in the 12:15 slot (pending confirmation), then again in the 13:45 slot:
    the 12:15 command can no longer be confirmed (cancelled, superseded, nothing runs); the 13:45 one waits. Another
    source's pending command and one without a slot are left alone."""
    keeper, view, actuator, clock = setup(confirm_ttl=timedelta(hours=2))
    early, late = NOW + timedelta(minutes=15), NOW + timedelta(minutes=105)
    old = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=GARAGE_OPEN, slot_start=early)
    other = await keeper.evaluate(view, actuator, source_agent="other", candidate=GARAGE_OPEN, slot_start=early)
    unslotted = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=GARAGE_OPEN)
    clock.now = late
    touch(view, "cover.garage_door", late)
    new = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=GARAGE_OPEN, slot_start=late)
    assert [r["outcome"] for r in (old, other, unslotted, new)] == ["pending_confirmation"] * 4
    assert keeper.next_expiry() == late
    restored = Gatekeeper(Settings(), clock)  # the mark survives a restart
    assert restored.load(keeper.as_dict()) == [] and restored.pending[old["trace_id"]].superseded_by == new["trace_id"]
    done = await keeper.confirm(old["trace_id"], "admin", view, actuator)
    assert done["outcome"] == "cancelled" and actuator.calls == []
    assert done["gate_results"][-1]["reason"] == (
        f"superseded by {new['trace_id']}, the plan's command for a later slot")
    assert set(keeper.pending) == {other["trace_id"], unslotted["trace_id"], new["trace_id"]}
    closed = restored.expire()
    assert [(r["trace_id"], r["outcome"]) for r in closed] == [(old["trace_id"], "cancelled")]
