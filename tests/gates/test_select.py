"""A select (or input_select) through the gates: ``select_option`` checked against the entity's own options."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, schema
from custom_components.agentic_hems.gates.keeper import Gatekeeper, Settings
from custom_components.agentic_hems.gates.tables import expected_state, risk_level, service_for
from custom_components.agentic_hems.gates.view import EntityInfo

from .fakes import NOW, FakeView, RecordingActuator, context, house, through

MODES = ["Auto", "Force charge", "Force discharge"]


def battery_house() -> FakeView:
    view = house()
    view.services |= {("select", "select_option"), ("input_select", "select_option")}
    view.add(
        EntityInfo(entity_id="select.battery_mode", name="Battery mode", capabilities={"options": MODES}),
        "Auto",
        options=MODES,
    )
    return view


def select(option: Any) -> dict[str, Any]:
    return {"intent": "select_option", "device_alias": "select.battery_mode", "params": {"option": option}}


def test_the_tables_know_select() -> None:
    assert service_for("select", "select_option") == "select_option"
    assert service_for("input_select", "select_option") == "select_option"
    assert service_for("select", "set_value") is None
    assert (risk_level("select", None), risk_level("input_select", None)) == (2, 1)
    assert expected_state("select", "select_option", {"option": "Force charge"}) == {"states": ["Force charge"]}


@pytest.mark.parametrize("option", [3, None, "", True])
def test_schema_wants_an_option_string(option: Any) -> None:
    result = schema.evaluate(context(select(option), battery_house()))
    assert not result.passed
    assert [e["path"] for e in result.evidence["errors"]] == ["params.option"]


def test_capability_wants_one_of_the_entity_options() -> None:
    ctx = through(context(select("Force charge"), battery_house()), schema.evaluate, device_resolved.evaluate)
    result = capability.evaluate(ctx)
    assert result.passed and result.evidence["ranges"] == {"options": MODES}
    ctx = through(context(select("Boost"), battery_house()), schema.evaluate, device_resolved.evaluate)
    result = capability.evaluate(ctx)
    assert not result.passed
    assert (
        result.reason
        == "option 'Boost' is not one of select.battery_mode's ['Auto', 'Force charge', 'Force discharge']"
    )


async def test_an_allowed_select_option_is_executed_and_verified() -> None:
    view = battery_house()
    keeper = Gatekeeper(Settings(allow_control=True), lambda: NOW)
    actuator = RecordingActuator(view)
    record = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=select("Force discharge"))
    assert record["outcome"] == "executed", record
    assert actuator.calls == [("select", "select_option", "select.battery_mode", {"option": "Force discharge"})]
    dry_run = next(g for g in record["gate_results"] if g["gate"] == "dry_run")
    assert dry_run["evidence"]["plan"]["expected_state"] == {"states": ["Force discharge"]}
    assert view.states["select.battery_mode"].state == "Force discharge"
    again = await keeper.evaluate(view, actuator, source_agent="scheduler", candidate=select("Force charge"))
    assert again["outcome"] == "executed" and view.states["select.battery_mode"].state == "Force charge"
