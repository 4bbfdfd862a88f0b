"""Value binding: the values a request names (``orchestrator.values``), the pairs that carry them
(``orchestrator.intent``) and the Policy gate's check of a command's value against them or against the plan's
statement (``gates.values``, ``gates.policy``)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st
import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, freshness, input_guard, policy, schema
from custom_components.agentic_hems.gates.device_resolved import ResolverIndex
from custom_components.agentic_hems.gates.models import (
    SOURCE_GRID, SOURCE_ORCHESTRATOR, SOURCE_SCHEDULER, GateResult, RequestedAction,
)
from custom_components.agentic_hems.gates.pipeline import make_context
from custom_components.agentic_hems.gates.values import fits, plan_text, planned_value
from custom_components.agentic_hems.gates.view import EntityInfo
from custom_components.agentic_hems.orchestrator.intent import known_devices, requested_actions
from custom_components.agentic_hems.orchestrator.values import asked_values

from .fakes import NOW, FakeView, house, through


def home() -> FakeView:
    """``house()`` with a boiler, an EV charger's current (A) and a battery's power setpoint (W)."""
    view = house()
    view.services |= {("water_heater", "set_temperature")}
    view.add(EntityInfo(entity_id="water_heater.boiler", name="Boiler", area_id="kitchen", supported_features=1,
                        capabilities={"min_temp": 30, "max_temp": 130}), "eco", temperature=45)
    view.add(EntityInfo(entity_id="number.wallbox_current", name="Wallbox", area_id="garage",
                        capabilities={"min": 6, "max": 16, "step": 1}), "6", unit_of_measurement="A")
    view.add(EntityInfo(entity_id="number.battery_power", name="Battery setpoint", area_id="garage",
                        capabilities={"min": -5000, "max": 5000, "step": 100}), "0", unit_of_measurement="W")
    return view


def read(view: FakeView, home_unit: str = "°C") -> Any:
    def reader(text: str) -> frozenset[RequestedAction]:
        return requested_actions(text, known_devices(ResolverIndex.build(view)), home_unit=home_unit)

    return reader


def decide(candidate: dict[str, Any], request: str, *, source: str = SOURCE_ORCHESTRATOR,
           home_unit: str = "°C", view: FakeView | None = None) -> GateResult:
    """Run ``candidate`` from ``source`` with ``request`` as raw_input through gates 1-6 over ``view`` (:func:`home`)."""
    view = view or home()
    ctx = make_context(view, source_agent=source, raw_input=request, candidate=candidate, now=NOW, trace_id="t1",
                       read_request=read(view, home_unit))
    through(ctx, input_guard.evaluate, schema.evaluate, device_resolved.evaluate, capability.evaluate,
            freshness.evaluate)
    return policy.evaluate(ctx)


BOILER = {"intent": "set_temperature", "device_alias": "water_heater.boiler"}
WALLBOX = {"intent": "set_value", "device_alias": "number.wallbox_current"}
BATTERY = {"intent": "set_value", "device_alias": "number.battery_power"}
LOUNGE = {"intent": "set_brightness", "device_alias": "light.living_main"}
THERMOSTAT = {"intent": "set_temperature", "device_alias": "climate.living"}


# The parser, against values written out by hand.
@pytest.mark.parametrize(
    ("clause", "home_unit", "expected"),
    [
        ("set the boiler to 50 degrees", "°C", ((50.0, "°"),)),
        ("set the boiler to 50°", "°C", ((50.0, "°"),)),
        ("set the boiler to 122 °f", "°C", ((50.0, "°"),)),  # (122 - 32) * 5 / 9
        ("set the boiler to 50 °c", "°F", ((122.0, "°"),)),
        ("heat to 70 fahrenheit", "°C", ((21.1, "°"),)),  # 21.11 rounded to a tenth
        ("set it to 21 degrees celsius", "°F", ((69.8, "°"),)),
        ("set the living room to 21.5", "°C", ((21.5, ""),)),
        ("stelle das wohnzimmer auf 21,5", "°C", ((21.5, ""),)),
        ("stelle den boiler auf 55 grad", "°C", ((55.0, "°"),)),
        ("dim the light to 40 %", "°C", ((40.0, "%"),)),
        ("dim the light to 40%", "°C", ((40.0, "%"),)),
        ("dimme das licht auf 40 prozent", "°C", ((40.0, "%"),)),
        ("brighten it to 75 per cent", "°C", ((75.0, "%"),)),
        ("charge the car at 10 a", "°C", ((10.0, "A"),)),
        ("lade das auto mit 16 ampere", "°C", ((16.0, "A"),)),
        ("charge at 7 amps", "°C", ((7.0, "A"),)),
        ("set the battery to 2,5 kw", "°C", ((2500.0, "W"),)),
        ("set the battery to minus 2 kw", "°C", ((-2000.0, "W"),)),
        ("set the battery to -1500 w", "°C", ((-1500.0, "W"),)),
        ("set the battery to 3 kilowatt", "°C", ((3000.0, "W"),)),
        ("set lamp 2 to 30 % and lamp 3 to 60 %", "°C", ((30.0, "%"), (60.0, "%"))),
        # no value: a number that is a name, a time, or a number word (not read)
        ("turn on lamp 2", "°C", ()),
        ("make the living room warmer", "°C", ()),
        ("set the boiler to fifty degrees", "°C", ()),
        ("stelle die heizung auf zwanzig grad", "°C", ()),
        ("run the dishwasher in 2 hours", "°C", ()),
    ],
)
def test_asked_values(clause: str, home_unit: str, expected: tuple[tuple[float, str], ...]) -> None:
    assert asked_values(clause, home_unit) == expected


UNIT_WORDS = {"°": ("°", " degrees", " grad"), "%": ("%", " %", " percent", " prozent"), "A": (" a", " ampere"),
              "W": (" w", " watts")}


@settings(max_examples=200, deadline=None)
@given(
    whole=st.integers(min_value=0, max_value=999),
    tenths=st.one_of(st.none(), st.integers(min_value=0, max_value=9)),
    negative=st.booleans(),
    unit=st.sampled_from(sorted(UNIT_WORDS)),
    choice=st.integers(min_value=0, max_value=3),
    german=st.booleans(),
    lead=st.sampled_from(("set it to", "stelle es auf", "charge at", "lade mit")),
)
def test_a_written_value_reads_back(
    whole: int, tenths: int | None, negative: bool, unit: str, choice: int, german: bool, lead: str
) -> None:
    """A second formulation: the value is built as a number first, then written out as text in en or de."""
    value = (whole + (tenths or 0) / 10) * (-1 if negative else 1)
    digits = str(whole) if tenths is None else f"{whole}{',' if german else '.'}{tenths}"
    sign = ("minus " if german else "-") if negative else ""
    words = UNIT_WORDS[unit]
    text = f"{lead} {sign}{digits}{words[choice % len(words)]}"
    ((read_value, read_unit),) = asked_values(text)
    assert read_unit == unit
    assert read_value == pytest.approx(value)


def test_requests_carry_their_values() -> None:
    view = home()
    reader = read(view)
    assert reader("Set the boiler to 50 degrees") == {
        RequestedAction("water_heater.boiler", "set_temperature", 50.0, "°")}
    assert reader("Stelle das Wohnzimmer Thermostat auf 21,5") == {
        RequestedAction("climate.living", "set_temperature", 21.5, "")}
    assert reader("Dim the lounge ceiling to 40 %") == {RequestedAction("light.living_main", "set_brightness", 40.0, "%")}
    assert reader("Charge at 10 A on the wallbox") == {RequestedAction("number.wallbox_current", "set_value", 10.0, "A")}
    # "at 6.9" is a value, not a time at 6 (which would put the action off to later)
    assert reader("Charge at 6.9 kW on the wallbox") == {
        RequestedAction("number.wallbox_current", "set_value", 6900.0, "W")}
    # a clause that takes the previous clause's verb takes its value too; one with its own value keeps it
    assert reader("Set the boiler to 50 degrees and the thermostat") == {
        RequestedAction("water_heater.boiler", "set_temperature", 50.0, "°"),
        RequestedAction("climate.living", "set_temperature", 50.0, "°")}
    assert reader("Set the boiler to 50 degrees and the thermostat to 21 degrees") == {
        RequestedAction("water_heater.boiler", "set_temperature", 50.0, "°"),
        RequestedAction("climate.living", "set_temperature", 21.0, "°")}
    # no value named: the pair carries none; number words are not read, so without a temperature word nothing is asked
    assert reader("Make the thermostat warmer") == {RequestedAction("climate.living", "set_temperature")}
    for warm in ("Warm the boiler", "Warm up the boiler", "Heize den Boiler auf", "Erwärme den Boiler"):
        assert reader(warm) == {RequestedAction("water_heater.boiler", "set_temperature")}, warm
    assert reader("Set the thermostat temperature to twenty") == {RequestedAction("climate.living", "set_temperature")}
    assert reader("Set the thermostat to twenty") == frozenset()
    # °F homes read degrees in °F and convert °C
    assert read(view, "°F")("Set the boiler to 50 °C") == {
        RequestedAction("water_heater.boiler", "set_temperature", 122.0, "°")}


def test_a_hostile_value_is_refused_and_names_both_values() -> None:
    result = decide({**BOILER, "params": {"temperature": 90}}, "Set the boiler to 50 degrees")
    assert not result.passed and result.evidence["action"] == "deny"
    assert result.reason == "blocked by policy: the request asks for 50°, not 90°"
    binding = result.evidence["intent_binding"]
    assert binding["bound"] is False and binding["asked"] == ["50°"] and binding["proposed"] == "90°"


@pytest.mark.parametrize(
    ("candidate", "text", "source", "key", "placeholders"),
    [
        ({**BOILER, "params": {"temperature": 60}}, "Set the boiler to 50 degrees", SOURCE_ORCHESTRATOR,
         "value_not_requested", {"asked": "50°", "proposed": "60°"}),
        ({**WALLBOX, "params": {"value": 16}}, "Charge at 10 A on the wallbox", SOURCE_ORCHESTRATOR,
         "value_not_requested", {"asked": "10 A", "proposed": "16 A"}),
        ({**BOILER, "params": {"temperature": 60}}, "Set the boiler to 50 degrees and then to 55 degrees",
         SOURCE_ORCHESTRATOR, "value_not_requested", {"asked": "50° / 55°", "proposed": "60°"}),
        ({**WALLBOX, "params": {"value": 16}}, "Turn on the kettle", SOURCE_ORCHESTRATOR, "not_requested", {}),
        ({**WALLBOX, "params": {"value": 16}}, "What do prices look like?", SOURCE_ORCHESTRATOR, "nothing_requested",
         {}),
        ({**WALLBOX, "params": {"value": 16}}, f"{plan_text('number.wallbox_current', 10.0, 'A')}: slot",
         SOURCE_SCHEDULER, "value_not_planned", {"asked": "10 A", "proposed": "16 A"}),
        ({**WALLBOX, "params": {"value": 16}}, f"{plan_text('number.battery_power', 10.0, 'W')}: slot",
         SOURCE_SCHEDULER, "plan_no_value", {"asked": "", "proposed": "16 A"}),
    ],
)
def test_a_binding_refusal_names_its_reason_key_and_placeholders(
    candidate: dict[str, Any], text: str, source: str, key: str, placeholders: dict[str, str]
) -> None:
    """The key and placeholders the shell, the trace card and the summaries translate (written out by hand)."""
    result = decide(candidate, text, source=source)
    assert not result.passed
    assert result.evidence["reason_key"] == key
    assert result.evidence["reason_placeholders"] == {
        "entity_id": candidate["device_alias"], "intent": candidate["intent"], **placeholders}


def test_a_passing_command_names_no_reason_key() -> None:
    result = decide({**BOILER, "params": {"temperature": 50}}, "Set the boiler to 50 degrees")
    assert result.passed and "reason_key" not in result.evidence


@pytest.mark.parametrize(
    ("candidate", "text", "value"),
    [
        (BOILER, "Set the boiler to 50 degrees", 50),
        (BOILER, "Stelle den Boiler auf 50 Grad", 50),
        (THERMOSTAT, "Set the living room thermostat to 21.5", 21.5),
        (THERMOSTAT, "Stelle das Thermostat im Wohnzimmer auf 21,5 Grad", 21.5),
        (LOUNGE, "Dim the lounge ceiling to 40 %", 40),
        (WALLBOX, "Charge at 10 A on the wallbox", 10),
        (BATTERY, "Set the battery setpoint to -2 kW", -2000),
        (BATTERY, "Stelle den Battery setpoint auf minus 2,5 kW", -2500),
    ],
)
def test_the_asked_value_passes_and_another_is_refused(candidate: dict[str, Any], text: str, value: float) -> None:
    param = {"set_temperature": "temperature", "set_brightness": "brightness", "set_value": "value"}[
        candidate["intent"]]
    result = decide({**candidate, "params": {param: value}}, text)
    assert result.passed and result.evidence["action"] == "allow", result
    assert result.evidence["intent_binding"]["bound"] is True
    other = value + (1 if candidate is not BATTERY else 100)
    refused = decide({**candidate, "params": {param: other}}, text)
    assert not refused.passed and refused.evidence["intent_binding"]["bound"] is False
    assert "the request asks for" in refused.reason


def test_units_that_do_not_compare_are_refused() -> None:
    # amperes are never watts: no voltage is guessed
    result = decide({**BATTERY, "params": {"value": 2300}}, "Set the battery setpoint to 10 A")
    assert not result.passed and result.reason == "blocked by policy: the request asks for 10 A, not 2300 W"
    # a percentage is no temperature
    result = decide({**BOILER, "params": {"temperature": 40}}, "Set the boiler temperature to 40 %")
    assert not result.passed and "asks for 40 %, not 40°" in result.reason


@pytest.mark.parametrize("value_unit", ["A", None])
def test_a_unitless_charger_current_is_in_its_profiles_unit(value_unit: str | None) -> None:
    """HA's wallbox shows its maximum charging current without a unit; the charger profile says it is in A."""
    view = home()
    view.add(EntityInfo(entity_id="number.wallbox_maximum_charging_current", name="Wallbox Maximum charging current",
                        area_id="garage", capabilities={"min": 6, "max": 16, "step": 1}, value_unit=value_unit), "6")
    current = {"intent": "set_value", "device_alias": "number.wallbox_maximum_charging_current"}
    text = "Set the wallbox maximum charging current to 10 A"
    asked = decide({**current, "params": {"value": 10}}, text, view=view)
    hostile = decide({**current, "params": {"value": 16}}, text, view=view)
    if value_unit == "A":
        assert asked.passed and asked.evidence["intent_binding"]["proposed"] == "10 A"
        assert hostile.reason == "blocked by policy: the request asks for 10 A, not 16 A"
    else:  # no unit known: amperes compare with nothing, so even the asked number is refused
        assert asked.reason == "blocked by policy: the request asks for 10 A, not 10"
        assert hostile.reason == "blocked by policy: the request asks for 10 A, not 16"
    # a bare number is the entity's own unit, whatever it is
    assert decide({**current, "params": {"value": 10}}, "Set the wallbox maximum charging current to 10",
                  view=view).passed


def test_a_fahrenheit_home_binds_in_fahrenheit() -> None:
    assert decide({**BOILER, "params": {"temperature": 122}}, "Set the boiler to 50 °C", home_unit="°F").passed
    assert not decide({**BOILER, "params": {"temperature": 50}}, "Set the boiler to 50 °C", home_unit="°F").passed
    assert decide({**BOILER, "params": {"temperature": 50}}, "Set the boiler to 122 °F").passed


@pytest.mark.parametrize(("candidate", "text"), [(THERMOSTAT, "Make the thermostat warmer"),
                                               (BOILER, "Warm the boiler"), (BOILER, "Heize den Boiler auf")])
def test_a_value_nobody_named_waits_for_a_person(candidate: dict[str, Any], text: str) -> None:
    result = decide({**candidate, "params": {"temperature": 24 if candidate is THERMOSTAT else 60}}, text)
    assert result.passed and result.evidence["action"] == "confirm" and result.evidence["override_available"]
    assert result.evidence["intent_binding"]["value_asked"] is False


def test_a_plan_command_is_bound_to_its_planned_value() -> None:
    statement = f"{plan_text('number.battery_power', -2000.0, 'W')}: whole-home plan, slot {NOW.isoformat()}"
    assert planned_value(statement) == ("number.battery_power", -2000.0)
    assert decide({**BATTERY, "params": {"value": -2000}}, statement, source=SOURCE_SCHEDULER).passed
    refused = decide({**BATTERY, "params": {"value": 5000}}, statement, source=SOURCE_SCHEDULER)
    assert not refused.passed and refused.reason == "blocked by policy: the plan sets -2000 W, not 5000 W"
    # a statement for another entity, or none, plans no value here
    other = decide({**WALLBOX, "params": {"value": 16}}, statement, source=SOURCE_SCHEDULER)
    assert not other.passed and other.reason == "blocked by policy: the plan sets no value for number.wallbox_current"
    assert not decide({**BATTERY, "params": {"value": -2000}}, "", source=SOURCE_SCHEDULER).passed
    # the plan's temperature, written to a tenth, binds the heat pump's target
    heat = f"{plan_text('climate.living', 21.5, '°C')}: whole-home plan (heat pump), slot {NOW.isoformat()}"
    assert decide({**THERMOSTAT, "params": {"temperature": 21.5}}, heat, source=SOURCE_SCHEDULER).passed
    assert not decide({**THERMOSTAT, "params": {"temperature": 25}}, heat, source=SOURCE_SCHEDULER).passed
    # a plan's start carries no value and stays bound by the plan alone
    switch = {"intent": "turn_on", "device_alias": "switch.kettle"}
    assert decide(switch, "turn_on Kettle (plan slot)", source=SOURCE_SCHEDULER).passed


def test_other_sources_are_not_value_bound() -> None:
    for source in ("automation", SOURCE_GRID):
        result = decide({**BOILER, "params": {"temperature": 90}}, "Set the boiler to 50 degrees", source=source)
        if source == SOURCE_GRID:  # refused for want of a grant, not for its value
            assert "intent_binding" not in result.evidence
        else:
            assert result.passed and "intent_binding" not in result.evidence


@pytest.mark.parametrize(
    ("asked", "intent", "proposed", "unit", "expected"),
    [
        (RequestedAction("x", "set_value", 2.5, "W"), "set_value", 2.5, "kW", False),
        (RequestedAction("x", "set_value", 2500.0, "W"), "set_value", 2.5, "kW", True),
        (RequestedAction("x", "set_value", 2500.0, "W"), "set_value", 2500, "W", True),
        (RequestedAction("x", "set_value", 10.0, "A"), "set_value", 10, "A", True),
        (RequestedAction("x", "set_value", 10.0, "A"), "set_value", 10, "W", False),
        (RequestedAction("x", "set_value", 10.0, ""), "set_value", 10, "W", True),
        (RequestedAction("x", "set_value", 55.0, "°"), "set_value", 55, "°C", True),
        (RequestedAction("x", "set_value", 55.0, "°"), "set_value", 55, "%", False),
        (RequestedAction("x", "set_value", 40.0, "%"), "set_value", 40, "%", True),
        (RequestedAction("x", "set_temperature", 21.1, "°"), "set_temperature", 21.11, None, True),
        (RequestedAction("x", "set_temperature", 21.1, "°"), "set_temperature", 21.2, None, False),
        (RequestedAction("x", "set_brightness", 40.0, "°"), "set_brightness", 40, None, False),
        (RequestedAction("x", "set_brightness"), "set_brightness", 40, None, False),
    ],
)
def test_fits(asked: RequestedAction, intent: str, proposed: float, unit: str | None, expected: bool) -> None:
    assert fits(asked, intent, proposed, unit) is expected
