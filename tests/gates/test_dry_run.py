"""Gate 7, DryRun: the execution plan, its idempotency key and the 24 h ledger."""

from __future__ import annotations

from datetime import timedelta
import hashlib
import json
from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, dry_run, freshness, policy, schema
from custom_components.agentic_hems.gates.dry_run import IdempotencyLedger, idempotency_key
from custom_components.agentic_hems.gates.models import GateContext, GateResult
from custom_components.agentic_hems.gates.tables import expected_state

from .fakes import NOW, FakeView, context, house, through

SLOT = NOW + timedelta(minutes=30)


def prepared(candidate: dict[str, Any], view: FakeView | None = None, **kw: Any) -> GateContext:
    return through(context(candidate, view, **kw), schema.evaluate, device_resolved.evaluate, capability.evaluate,
                   freshness.evaluate, policy.evaluate)


def gate(candidate: dict[str, Any], view: FakeView | None = None, **kw: Any) -> tuple[GateResult, GateContext]:
    ctx = prepared(candidate, view, **kw)
    return dry_run.evaluate(ctx), ctx


def sha(*parts: str) -> str:
    """The key computed independently of the module."""
    return hashlib.sha256(json.dumps(list(parts), sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_plan_contents_for_a_thermostat() -> None:
    result, ctx = gate({"intent": "set_temperature", "device_alias": "thermostat", "params": {"temperature": 21.5}})
    assert result.passed and result.reason == "plan: climate.set_temperature on climate.living"
    assert ctx.plan is not None
    assert ctx.plan.as_dict() == {
        "domain": "climate", "service": "set_temperature", "target": {"entity_id": "climate.living"},
        "data": {"temperature": 21.5}, "expected_state": {"attributes": {"temperature": 21.5}},
        "idempotency_key": sha("test", "climate.living", "climate.set_temperature", '{"temperature":21.5}', "t1"),
        "slot_start": None,
    }
    assert result.evidence == {"plan": ctx.plan.as_dict(), "state": "heat", "service_registered": True,
                               "duplicate": False, "executed_at": None}
    json.dumps(result.evidence)


def test_appliance_start_plans_turn_on_anchored_on_the_slot() -> None:
    result, ctx = gate({"intent": "start", "device_alias": "dishwasher"}, slot_start=SLOT)
    assert result.passed and ctx.plan is not None
    assert (ctx.plan.domain, ctx.plan.service, dict(ctx.plan.target)) == ("switch", "turn_on",
                                                                         {"entity_id": "switch.dishwasher"})
    assert ctx.plan.expected_state == {"states": ["on"]} and ctx.plan.slot_start == SLOT
    assert ctx.plan.idempotency_key == sha("test", "switch.dishwasher", "switch.turn_on", "{}", SLOT.isoformat())


def test_key_is_deterministic_and_sensitive_to_each_part() -> None:
    data = {"b": 2, "a": [1, "x"]}
    key = idempotency_key("orchestrator", "light.x", "light.turn_on", data, "t1")
    assert key == idempotency_key("orchestrator", "light.x", "light.turn_on", {"a": [1, "x"], "b": 2}, "t1")
    assert key == sha("orchestrator", "light.x", "light.turn_on", '{"a":[1,"x"],"b":2}', "t1")
    others = {
        idempotency_key("scheduler", "light.x", "light.turn_on", data, "t1"),
        idempotency_key("orchestrator", "light.y", "light.turn_on", data, "t1"),
        idempotency_key("orchestrator", "light.x", "light.turn_off", data, "t1"),
        idempotency_key("orchestrator", "light.x", "light.turn_on", {"b": 3, "a": [1, "x"]}, "t1"),
        idempotency_key("orchestrator", "light.x", "light.turn_on", data, "t2"),
        idempotency_key("orchestrator", "light.x", "light.turn_on", data, SLOT),
    }
    assert key not in others and len(others) == 6
    # Same slot, different traces: one key (a re-issued scheduler command is a duplicate).
    a, _ = gate({"intent": "start", "device_alias": "dishwasher"}, slot_start=SLOT)
    ctx = prepared({"intent": "start", "device_alias": "dishwasher"}, slot_start=SLOT)
    ctx.trace_id = "t2"
    assert dry_run.evaluate(ctx).evidence["plan"]["idempotency_key"] == a.evidence["plan"]["idempotency_key"]


@pytest.mark.parametrize(
    ("domain", "service", "data", "expected"),
    [
        ("light", "turn_on", {"brightness_pct": 40}, {"states": ["on"]}),
        ("switch", "turn_off", {}, {"states": ["off"]}),
        ("cover", "open_cover", {}, {"states": ["open", "opening"]}),
        ("cover", "close_cover", {}, {"states": ["closed", "closing"]}),
        ("lock", "lock", {}, {"states": ["locked"]}),
        ("lock", "unlock", {}, {"states": ["unlocked"]}),
        ("climate", "set_temperature", {"temperature": 20}, {"attributes": {"temperature": 20}}),
        ("climate", "set_hvac_mode", {"hvac_mode": "heat"}, {"states": ["heat"]}),
        ("number", "set_value", {"value": 55.5}, {"numeric_state": 55.5}),
        ("vacuum", "start", {}, {"states": ["cleaning"]}),
        ("button", "press", {}, {}),
    ],
)
def test_expected_state(domain: str, service: str, data: dict[str, Any], expected: dict[str, Any]) -> None:
    assert expected_state(domain, service, data) == expected


@pytest.mark.parametrize("state", ["unavailable", "unknown"])
def test_unavailable_entity_fails(state: str) -> None:
    view = house()
    ctx = prepared({"intent": "turn_on", "device_alias": "kettle"}, view)
    view.add(view.entities["switch.kettle"], state)
    result = dry_run.evaluate(ctx)
    assert not result.passed and ctx.plan is None
    assert result.reason == f"cannot build execution plan: switch.kettle is {state}"
    assert result.evidence["state"] == state and result.evidence["plan"]["target"] == {"entity_id": "switch.kettle"}


def test_missing_state_fails() -> None:
    view = house()
    ctx = prepared({"intent": "turn_on", "device_alias": "kettle"}, view)
    del view.states["switch.kettle"]
    result = dry_run.evaluate(ctx)
    assert not result.passed and result.reason == "cannot build execution plan: switch.kettle is missing"
    assert result.evidence["state"] is None


def test_missing_service_fails() -> None:
    view = house()
    ctx = prepared({"intent": "turn_on", "device_alias": "kettle"}, view)
    view.services.discard(("switch", "turn_on"))
    result = dry_run.evaluate(ctx)
    assert not result.passed and ctx.plan is None
    assert result.reason == "cannot build execution plan: service switch.turn_on is not registered"
    assert result.evidence["service_registered"] is False


def test_duplicate_within_24_h_fails() -> None:
    ledger = IdempotencyLedger()
    first, _ = gate({"intent": "start", "device_alias": "dishwasher"}, slot_start=SLOT, ledger=ledger)
    key = first.evidence["plan"]["idempotency_key"]
    executed = NOW - timedelta(hours=23, minutes=59)
    ledger.remember(key, executed)
    result, ctx = gate({"intent": "start", "device_alias": "dishwasher"}, slot_start=SLOT, ledger=ledger)
    assert not result.passed and ctx.plan is None
    assert result.reason == f"cannot build execution plan: duplicate: key {key[:12]} executed within 24 h"
    assert result.evidence["duplicate"] is True and result.evidence["executed_at"] == executed


def test_not_a_duplicate_after_24_h() -> None:
    ledger = IdempotencyLedger()
    first, _ = gate({"intent": "start", "device_alias": "dishwasher"}, slot_start=SLOT, ledger=ledger)
    key = first.evidence["plan"]["idempotency_key"]
    ledger.remember(key, NOW - timedelta(hours=24))
    result, ctx = gate({"intent": "start", "device_alias": "dishwasher"}, slot_start=SLOT, ledger=ledger)
    assert result.passed and ctx.plan is not None and result.evidence["duplicate"] is False
    assert len(ledger) == 0  # the expired key was dropped


def test_ledger_expiry_and_round_trip() -> None:
    ledger = IdempotencyLedger()
    ledger.remember("k", NOW)
    assert ledger.seen("k", NOW + timedelta(hours=23, minutes=59, seconds=59))
    restored = IdempotencyLedger.from_dict(json.loads(json.dumps(ledger.as_dict())))
    assert restored.executed_at("k") == NOW and restored.seen("k", NOW)
    assert not ledger.seen("k", NOW + timedelta(hours=24)) and ledger.executed_at("k") is None
    assert not IdempotencyLedger().seen("k", NOW)
    short = IdempotencyLedger(timedelta(minutes=1))
    short.remember("k", NOW)
    assert not short.seen("k", NOW + timedelta(minutes=1))


def test_dry_run_does_not_remember() -> None:
    ledger = IdempotencyLedger()
    gate({"intent": "turn_on", "device_alias": "kettle"}, ledger=ledger)
    assert len(ledger) == 0
