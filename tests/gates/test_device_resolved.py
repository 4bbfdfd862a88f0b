"""Gate 3, DeviceResolved: room + alias to exactly one exposed entity; ambiguity and misses fail with evidence."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.gates import device_resolved, schema
from custom_components.agentic_hems.gates.device_resolved import fold

from .fakes import context, house, through


def resolve(candidate: dict[str, Any], **kw: Any) -> tuple[Any, Any]:
    ctx = through(context(candidate, **kw), schema.evaluate)
    return device_resolved.evaluate(ctx), ctx


def test_fold() -> None:
    assert fold("  Living_Room--Main  ") == "living room main"


@pytest.mark.parametrize(
    ("candidate", "entity_id", "matched_by"),
    [
        ({"room": "living_room", "device_alias": "main light"}, "light.living_main", "name"),
        ({"room": "Lounge", "device_alias": "Main Light"}, "light.living_main", "name"),  # area alias, case
        ({"device_alias": "ceiling"}, "light.living_main", "alias"),  # entity registry alias
        ({"device_alias": "Living Room Main light"}, "light.living_main", "friendly_name"),
        ({"device_alias": "thermostat"}, "climate.living", "device_name"),
        ({"room": "garage", "device_type": "cover"}, "cover.garage_door", "room"),  # room + domain only
        ({"room": "kitchen", "device_alias": "kettle"}, "switch.kettle", "name"),
        ({"device_alias": "switch.kettle"}, "switch.kettle", "entity_id"),  # the scheduler names the entity_id
    ],
)
def test_resolves_exactly_one(candidate: dict[str, Any], entity_id: str, matched_by: str) -> None:
    result, ctx = resolve({"intent": "turn_on", **candidate})
    assert result.passed, result
    assert result.evidence["entity_id"] == entity_id
    assert result.evidence["matched_by"] == matched_by
    assert result.evidence["confidence"] == 1.0
    assert ctx.command is not None and ctx.command.entity_id == entity_id


def test_ambiguous_alias_fails_listing_alternatives() -> None:
    result, ctx = resolve({"intent": "turn_on", "device_alias": "main light"})
    assert not result.passed and ctx.command is None
    assert result.reason == "ambiguous: main light matches 2 entities (light.kitchen_main, light.living_main)"
    assert [a["entity_id"] for a in result.evidence["alternatives"]] == ["light.kitchen_main", "light.living_main"]
    assert result.evidence["alternatives"][0]["name"] == "Kitchen Main light"


def test_miss_fails_with_fuzzy_suggestions_only() -> None:
    result, _ = resolve({"intent": "turn_on", "device_alias": "kettel"})
    assert not result.passed
    assert result.reason == "device not found: kettel"
    assert result.evidence["entity_id"] is None
    assert {"name": "kettle", "entity_id": "switch.kettle"} in result.evidence["suggestions"]


def test_unknown_room_fails_with_area_suggestions() -> None:
    result, _ = resolve({"intent": "turn_on", "room": "kitchn", "device_alias": "kettle"})
    assert not result.passed and result.reason == "room not found: kitchn"
    assert result.evidence["suggestions"] == [{"area": "Kitchen"}]


def test_unexposed_entity_is_not_a_candidate() -> None:
    result, _ = resolve({"intent": "turn_on", "device_alias": "hidden lamp"})
    assert not result.passed and result.reason == "device not found: hidden lamp"


def test_own_entities_are_never_candidates() -> None:
    # the integration's sensor is also named "Main light" in the living room; it must not make this ambiguous
    result, _ = resolve({"intent": "turn_on", "room": "living room", "device_alias": "main light"})
    assert result.passed and result.evidence["entity_id"] == "light.living_main"
    view = house()
    view.unexposed.clear()  # even when exposed
    assert "sensor.agentic_hems_last_decision" not in device_resolved.candidate_ids(view, True)


def test_appliance_entities_are_candidates_unless_the_option_is_off() -> None:
    result, ctx = resolve({"intent": "start", "device_alias": "dishwasher"})
    assert result.passed and result.evidence["appliance"] is True
    assert ctx.command is not None and ctx.command.service == "turn_on" and ctx.command.risk_level == 1
    result, _ = resolve({"intent": "start", "device_alias": "dishwasher"}, include_appliances=False)
    assert not result.passed


@pytest.mark.parametrize(
    ("alias", "risk"),
    [("front door", 4), ("garage door", 4), ("thermostat", 2), ("kettle", 1), ("ceiling", 0), ("boiler setpoint", 2)],
)
def test_normalization_assigns_risk_from_the_table(alias: str, risk: int) -> None:
    result, ctx = resolve({"intent": "turn_on", "device_alias": alias})
    assert result.passed and ctx.command.risk_level == risk and result.evidence["risk_level"] == risk


def test_index_snapshot_contents() -> None:
    index = device_resolved.ResolverIndex.build(house())
    assert "light.hidden" not in index.entities and "sensor.agentic_hems_last_decision" not in index.entities
    assert "switch.dishwasher" in index.entities  # appliance-controlled, although unexposed
    assert index.names["main light"] == [("light.kitchen_main", "name"), ("light.living_main", "name")]
    assert index.area_keys["lounge"] == {"living_room"}
    assert index.by_area["garage"] == ["cover.garage_door"]
    without = device_resolved.ResolverIndex.build(house(), include_appliances=False)
    assert "switch.dishwasher" not in without.entities and without.appliances == frozenset()


def test_index_built_with_other_option_is_ignored() -> None:
    index = device_resolved.ResolverIndex.build(house(), include_appliances=True)
    ctx = through(context({"intent": "start", "device_alias": "dishwasher"}, include_appliances=False, index=index),
                  schema.evaluate)
    assert not device_resolved.evaluate(ctx).passed
