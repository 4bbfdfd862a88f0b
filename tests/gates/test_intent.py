"""Intent binding: what a person's request asks for (``orchestrator.intent.requested_actions``) and the Policy
gate's check of orchestrator commands against it."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.gates import capability, device_resolved, freshness, input_guard, policy, schema
from custom_components.agentic_hems.gates.device_resolved import ResolverIndex
from custom_components.agentic_hems.gates.models import SOURCE_ORCHESTRATOR, GateResult, RequestedAction
from custom_components.agentic_hems.gates.pipeline import make_context
from custom_components.agentic_hems.gates.tables import effective_policy, validate_rules
from custom_components.agentic_hems.orchestrator.intent import (
    KnownDevice, advice_targets, asks_for_grid_action, asks_for_incident, known_devices, partial_names,
    requested_actions,
)
from custom_components.agentic_hems.orchestrator.offline import ApplianceRef

from .fakes import NOW, house, reader, through

APPLIANCES = [ApplianceRef("Dishwasher", "dishwasher"), ApplianceRef("Washing machine", "washing_machine"),
              ApplianceRef("EV charger", "ev_charger")]
GERMAN = KnownDevice("light.kueche_decke", "light", ("deckenlicht",), ("küche",))
DEVICES = (*known_devices(ResolverIndex.build(house()), {"switch.dishwasher": "Dishwasher"}), GERMAN)


def pairs(*items: tuple[Any, ...]) -> frozenset[RequestedAction]:
    """(target, action) or (target, action, value, unit) items as a set of pairs."""
    return frozenset(RequestedAction(*item) for item in items)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # questions, and requests that name no device or appliance, ask for nothing
        ("How many lights are on?", pairs()),
        ("When is electricity cheapest?", pairs()),
        ("Is the kitchen light on?", pairs()),
        ("Wie viele Lichter sind an?", pairs()),
        ("What would it cost to run the dishwasher?", pairs()),
        ("Please help me", pairs()),
        ("hello", pairs()),
        # devices: by area plus device word, by name or alias, by "all"
        ("Turn on the kitchen light", pairs(("light.kitchen_main", "turn_on"))),
        ("turn the light in the kitchen on", pairs(("light.kitchen_main", "turn_on"))),
        ("Dim the lounge ceiling to 40%", pairs(("light.living_main", "set_brightness", 40, "%"))),
        ("Turn on the kitchen light and the lounge light",
         pairs(("light.kitchen_main", "turn_on"), ("light.living_main", "turn_on"))),
        ("Turn on the kitchen light and turn off the lounge light",
         pairs(("light.kitchen_main", "turn_on"), ("light.living_main", "turn_off"))),
        ("Switch the kettle on, then switch it off", pairs(("switch.kettle", "turn_on"), ("switch.kettle", "turn_off"))),
        ("Turn off all lights", pairs(("light.kitchen_main", "turn_off"), ("light.living_main", "turn_off"),
                                      ("light.kueche_decke", "turn_off"))),
        ("Don't turn off the kettle", pairs()),
        ("Unlock the front door", pairs(("lock.front_door", "unlock"))),
        ("Open the garage door", pairs(("cover.garage_door", "open"))),
        ("Set the thermostat to 21 degrees", pairs(("climate.living", "set_temperature", 21, "°"))),
        ("Start the dishwasher now",
         pairs(("switch.dishwasher", "start"), ("Dishwasher", "schedule"))),
        # appliances: the offline planner's reading
        ("Charge the car by 7", pairs(("EV charger", "schedule"))),
        ("Schedule all flexible loads",
         pairs(("Dishwasher", "schedule"), ("Washing machine", "schedule"), ("EV charger", "schedule"))),
        ("Cancel the dishwasher", pairs(("Dishwasher", "cancel"))),
        # German
        ("Lade das Auto bis 7 Uhr", pairs(("EV charger", "schedule"))),
        ("Schalte das Licht in der Küche ein", pairs(("light.kueche_decke", "turn_on"))),
        ("Mach das Deckenlicht aus", pairs(("light.kueche_decke", "turn_off"))),
        # an appliance's kind word names its entity for a device verb (else the switch-on was read as a plan only)
        ("Schalte die Spülmaschine jetzt ein", pairs(("switch.dishwasher", "turn_on"), ("Dishwasher", "schedule"))),
        ("Turn on the dish washer now", pairs(("switch.dishwasher", "turn_on"), ("Dishwasher", "schedule"))),
        ("Mach den Geschirrspüler aus", pairs(("switch.dishwasher", "turn_off"))),
        ("Turn on the kitchen light and the dishes",  # a clause without its own verb: a plan, no command
         pairs(("light.kitchen_main", "turn_on"), ("Dishwasher", "schedule"))),
        ("Schalte die Spülmaschine um 6 ein", pairs(("Dishwasher", "schedule"))),  # later: a plan, no command now
        ("Turn on the dish washer lamp", pairs(("Dishwasher", "schedule"))),  # some lamp, not the dishwasher
    ],
)
def test_requested_actions(text: str, expected: frozenset[RequestedAction]) -> None:
    assert requested_actions(text, DEVICES, APPLIANCES) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a name or "all" with another room is not this room's device
        ("Turn on the main light in the kitchen", pairs(("light.kitchen_main", "turn_on"))),
        ("Turn on the kitchen main light", pairs(("light.kitchen_main", "turn_on"))),
        ("Turn on all lights in the lounge", pairs(("light.living_main", "turn_on"))),
        # exclusions, contrasts and conditions set aside what they name, everywhere in the request
        ("Turn off all lights except the kitchen light",
         pairs(("light.living_main", "turn_off"), ("light.kueche_decke", "turn_off"))),
        ("Turn on all lights except the kitchen and the lounge", pairs(("light.kueche_decke", "turn_on"))),
        ("Turn off the kitchen light but leave the kettle on", pairs(("light.kitchen_main", "turn_off"))),
        ("Switch on the kettle instead of the lounge light", pairs(("switch.kettle", "turn_on"))),
        ("Turn on the kitchen light, not the lounge light", pairs(("light.kitchen_main", "turn_on"))),
        ("Turn on the kitchen light unless the thermostat is off", pairs(("light.kitchen_main", "turn_on"))),
        ("If the price is low, switch the kettle on", pairs(("switch.kettle", "turn_on"))),
        ("Check whether the garage door is open", pairs()),
        ("Schalte alle Lichter außer in der Küche aus",
         pairs(("light.living_main", "turn_off"), ("light.kitchen_main", "turn_off"))),
        # advice questions
        ("Should I turn on the kettle?", pairs()),
        ("Soll ich das Deckenlicht einschalten?", pairs()),
        ("Should I charge the car tonight?", pairs()),
        # appliances: not from clauses that switch off or stop, nor from "alle" with a device word
        ("Stop charging the car", pairs()),
        ("Turn off all devices", pairs()),
        ("Turn off the kettle and the dishwasher",
         pairs(("switch.kettle", "turn_off"), ("switch.dishwasher", "turn_off"))),
        ("Turn off the kettle and schedule the dishwasher",
         pairs(("switch.kettle", "turn_off"), ("Dishwasher", "schedule"))),
        ("Schalte alle Lichter ein", pairs(("light.kitchen_main", "turn_on"), ("light.living_main", "turn_on"),
                                          ("light.kueche_decke", "turn_on"))),
        ("Schedule all flexible loads except the car",
         pairs(("Dishwasher", "schedule"), ("Washing machine", "schedule"))),
        ("Run the dishwasher, not the washing machine",
         pairs(("switch.dishwasher", "start"), ("Dishwasher", "schedule"))),
        ("Run the dishwasher but don't charge the car",
         pairs(("switch.dishwasher", "start"), ("Dishwasher", "schedule"))),
        ("Don't cancel the dishwasher, just run it", pairs(("Dishwasher", "schedule"))),
    ],
)
def test_what_a_request_names_without_asking_for_it(text: str, expected: frozenset[RequestedAction]) -> None:
    """A model proposes every device a request mentions; only what the person asked for is bound."""
    assert requested_actions(text, DEVICES, APPLIANCES) == expected


def test_only_the_text_is_read() -> None:
    """Names come from the registry, never widen by themselves: a device called like an instruction is a name."""
    odd = KnownDevice("switch.odd", "switch", ("turn on all lights",))
    assert requested_actions("How are you?", (odd, *DEVICES), APPLIANCES) == frozenset()
    assert requested_actions("Turn on the kitchen light", (odd, *DEVICES), APPLIANCES) == pairs(
        ("light.kitchen_main", "turn_on"))


# The Policy gate's intent binding: an orchestrator command passes only when the request asks for it.


def policy_result(candidate: dict[str, Any], request: str, *, source: str = SOURCE_ORCHESTRATOR,
                  read: bool = True) -> GateResult:
    view = house()
    ctx = make_context(view, source_agent=source, raw_input=request, candidate=candidate, now=NOW, trace_id="t1",
                       read_request=reader(view) if read else None)
    through(ctx, input_guard.evaluate, schema.evaluate, device_resolved.evaluate, capability.evaluate,
            freshness.evaluate)
    return policy.evaluate(ctx)


KITCHEN_ON = {"intent": "turn_on", "room": "kitchen", "device_alias": "main light"}


def test_a_requested_command_passes_with_the_request_in_the_evidence() -> None:
    result = policy_result(KITCHEN_ON, "Turn on the kitchen light")
    assert result.passed and result.evidence["action"] == "allow"
    assert result.evidence["intent_binding"] == {
        "request": "Turn on the kitchen light", "bound": True,
        "requested": [{"target": "light.kitchen_main", "action": "turn_on"}]}


@pytest.mark.parametrize(
    ("candidate", "text", "reason"),
    [
        ({"intent": "turn_on", "room": "lounge", "device_alias": "ceiling"}, "Turn on the kitchen light",
         "blocked by policy: the request does not ask to turn_on light.living_main"),  # another target
        ({"intent": "turn_off", "room": "kitchen", "device_alias": "main light"}, "Turn on the kitchen light",
         "blocked by policy: the request does not ask to turn_off light.kitchen_main"),  # another action
        (KITCHEN_ON, "How many lights are on?", "blocked by policy: the request asks for no device action"),
        (KITCHEN_ON, "", "blocked by policy: the request asks for no device action"),
    ],
)
def test_an_unrequested_target_or_action_is_refused(candidate: dict[str, Any], text: str, reason: str) -> None:
    result = policy_result(candidate, text)
    assert not result.passed and result.reason == reason
    assert result.evidence["action"] == "deny" and result.evidence["override_available"] is False
    assert result.evidence["intent_binding"]["request"] == text and result.evidence["intent_binding"]["bound"] is False


def test_without_a_reader_every_orchestrator_command_is_refused() -> None:
    result = policy_result(KITCHEN_ON, "Turn on the kitchen light", read=False)
    assert not result.passed and result.evidence["intent_binding"]["requested"] == []


def test_other_sources_are_not_bound() -> None:
    """Automations, scripts, outside agents and the scheduler keep the table's verdict alone."""
    for source in ("hermes", "scheduler", "automation"):
        result = policy_result(KITCHEN_ON, "", source=source)
        assert result.passed and "intent_binding" not in result.evidence


def test_start_counts_as_turn_on_and_a_user_rule_cannot_allow_an_unbound_command() -> None:
    started = policy_result({"intent": "start", "device_alias": "dishwasher"}, "Turn on the dishwasher")
    assert started.passed
    view = house()
    ctx = make_context(view, source_agent=SOURCE_ORCHESTRATOR, raw_input="Turn on the kettle",
                       candidate={"intent": "unlock", "device_alias": "front door"}, now=NOW, trace_id="t1",
                       read_request=reader(view), rules=effective_policy(
                           validate_rules([{"operation": "unlock", "device_type": "lock", "action": "allow"}])))
    through(ctx, input_guard.evaluate, schema.evaluate, device_resolved.evaluate, capability.evaluate,
            freshness.evaluate)
    result = policy.evaluate(ctx)
    assert not result.passed and result.reason == "blocked by policy: the request does not ask to unlock lock.front_door"


# German compounds and partial names. A partial name is a trailing part of a name that only one device holds.
MORE = (
    *DEVICES,
    KnownDevice("light.flur", "light", ("decke",), ("flur",)),
    KnownDevice("lock.haustuer", "lock", ("haustür",), ("flur",)),
    KnownDevice("light.wz_steh", "light", ("wohnzimmer stehlampe",), ("wohnzimmer",)),
    KnownDevice("switch.coffee", "switch", ("siemens coffee maker",)),
    KnownDevice("light.hallway_lamp", "light", ("hallway lamp",)),
    KnownDevice("switch.kitchen_kettle", "switch", ("kitchen kettle",)),  # "kettle" is also switch.kettle's name
    KnownDevice("light.anna", "light", ("anna reading lamp",)),
    KnownDevice("light.ben", "light", ("ben reading lamp",)),
    KnownDevice("water_heater.tank", "water_heater", ("tank",), ("basement", "keller")),  # a hot-water heat pump
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # area and device word as one German word, with or without a linking "n"
        ("Schalte das Küchenlicht ein", pairs(("light.kueche_decke", "turn_on"))),
        ("Mach das Flurlicht an", pairs(("light.flur", "turn_on"))),
        ("Schalte die Wohnzimmerlampe aus", pairs(("light.wz_steh", "turn_off"))),
        ("Öffne das Garagentor", pairs(("cover.garage_door", "open"))),
        ("Schließe die Garagentore", pairs(("cover.garage_door", "close"))),
        # a compound of an area without such a device, or an English area, names nothing
        ("Schalte das Garagenlicht ein", pairs()),
        ("Schalte das Kitchenlicht ein", pairs(("light.kitchen_main", "turn_on"))),
        ("Öffne das Flurtor", pairs()),
        # "ß" folds to "ss" in the request; the verbs read it either way
        ("Schließ die Haustür ab", pairs(("lock.haustuer", "lock"))),
        ("Schliess die Haustür auf", pairs(("lock.haustuer", "unlock"))),
        # a distinctive trailing part that one device holds
        ("Turn on the coffee maker", pairs(("switch.coffee", "turn_on"))),
        ("Schalte die Stehlampe ein", pairs(("light.wz_steh", "turn_on"))),
        # a part two devices share names neither; the full name still names its device
        ("Turn on the reading lamp", pairs()),
        ("Turn on the kettle", pairs(("switch.kettle", "turn_on"))),
        ("Turn on the kitchen kettle", pairs(("switch.kitchen_kettle", "turn_on"))),
        # no stems, no leading parts, no area words, no device words alone
        ("Turn on the hall lamp", pairs()),
        ("Turn on the anna", pairs()),
        ("Turn on the siemens", pairs()),
        ("Turn on the maker", pairs(("switch.coffee", "turn_on"))),
        ("Turn on the lamp", pairs()),
        ("Turn on the kitchen", pairs()),
        # a water heater (a hot-water tank's heat pump): its area and a water heater word, apart or as one word
        ("Set the basement water heater to 55 degrees", pairs(("water_heater.tank", "set_temperature", 55, "°"))),
        ("Set the hot water in the basement to 55 degrees", pairs(("water_heater.tank", "set_temperature", 55, "°"))),
        ("Set the basement boiler to 55 degrees", pairs(("water_heater.tank", "set_temperature", 55, "°"))),
        ("Set all water heaters to 50 degrees", pairs(("water_heater.tank", "set_temperature", 50, "°"))),
        ("Stelle das Warmwasser im Keller auf 55 Grad", pairs(("water_heater.tank", "set_temperature", 55, "°"))),
        ("Stelle den Warmwasserspeicher im Keller auf 55 Grad", pairs(("water_heater.tank", "set_temperature", 55, "°"))),
        ("Stelle den Kellerboiler auf 55 Grad", pairs(("water_heater.tank", "set_temperature", 55, "°"))),
        ("Turn on the basement water heater", pairs()),  # no service of a water heater turns it on
        ("Set the kitchen boiler to 55 degrees", pairs()),  # no water heater in the kitchen
    ],
)
def test_compounds_and_partial_names(text: str, expected: frozenset[RequestedAction]) -> None:
    assert requested_actions(text, MORE, APPLIANCES) == expected


def test_partial_names_are_unique_distinctive_tails() -> None:
    parts = partial_names(MORE)
    assert parts["switch.coffee"] == ("coffee maker", "maker")
    assert parts["light.wz_steh"] == ("stehlampe",)
    assert parts["light.anna"] == parts["light.ben"] == ()  # "reading lamp" is both, "lamp" is a device word
    assert parts["switch.kitchen_kettle"] == () and parts["light.hallway_lamp"] == ()
    assert parts["switch.kettle"] == ()  # entity_ids are not split
    odd = KnownDevice("switch.odd", "switch", ("please turn on all lights",))
    assert partial_names((odd,))["switch.odd"] == ()  # verbs, articles and device words are not distinctive


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Charge the battery tonight", True),
        ("Optimize the battery dispatch and request authorization", True),
        ("Discharge the home battery at 6 pm", True),
        ("Plane den Speicher und beantrage die Freigabe", True),
        ("Lade den Akku bis 7 Uhr", True),
        ("Gib den Batterieplan frei", True),
        ("Run a power flow on the feeder", False),  # a study, not a battery or grid action
        ("Show me the grid", False),  # no action verb
        ("How full is the battery?", False),  # a question
        ("Wie voll ist der Speicher?", False),
        ("Don't charge the battery", False),  # negated
        ("Charge the car", False),  # the EV is no grid or battery action
        ("Schedule all flexible loads", False),
        ("Request authorization for the plan", False),  # names neither the battery nor the grid
    ],
)
def test_asks_for_grid_action(text: str, asks: bool) -> None:
    assert asks_for_grid_action(text) is asks


def test_advice_targets_are_the_appliances_the_request_names() -> None:
    assert advice_targets("When should the dishwasher run?", APPLIANCES) == {"Dishwasher"}  # a question counts
    assert advice_targets("Schedule all flexible loads", APPLIANCES) == {"Dishwasher", "Washing machine", "EV charger"}
    assert advice_targets("When is electricity cheapest?", APPLIANCES) == frozenset()
    assert advice_targets("Turn on the kitchen light", APPLIANCES) == frozenset()


@pytest.mark.parametrize(
    ("text", "asked"),
    [
        ("Report an incident: the inverter tripped", True),
        ("File a fault for the heat pump", True),
        ("Melde eine Störung am Wechselrichter", True),
        ("Erstelle einen Vorfall", True),
        ("How many lights are on?", False),
        ("Was there an outage last night?", False),  # a question
        ("Don't report an incident", False),
        ("Turn on the kitchen light", False),
    ],
)
def test_what_asks_to_report_an_incident(text: str, asked: bool) -> None:
    assert asks_for_incident(text) is asked


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a reminder or a time puts a device action off: no device command is asked for now
        ("Remind me to turn on the kettle at 6", pairs()),
        ("Remind me to turn on the kettle", pairs()),
        ("Turn on the kitchen light at 6pm", pairs()),
        ("Turn on the kitchen light at 18:30 and the lounge light", pairs()),
        ("Open the garage door in 2 hours", pairs()),
        ("Switch the kettle on tomorrow", pairs()),
        ("Erinnere mich, das Deckenlicht einzuschalten", pairs()),
        ("Schalte das Deckenlicht um 7 Uhr ein", pairs()),
        ("Mach das Deckenlicht später aus", pairs()),
        # ... while a plan still reads its appliances, and a value with "at" is no time
        ("Run the dishwasher tomorrow", pairs(("Dishwasher", "schedule"))),
        ("Turn on the kettle at once, then open the garage door at 7",
         pairs(("switch.kettle", "turn_on"))),
        ("Dim the lounge ceiling to 40%", pairs(("light.living_main", "set_brightness", 40, "%"))),
        ("Set the thermostat at 21 degrees", pairs(("climate.living", "set_temperature", 21, "°"))),
        # "a.m." is a time, not amperes; "10 A" is a value
        ("Turn on the kettle at 6 a.m.", pairs()),
        ("Turn on the kettle at 6 a. m.", pairs()),
        ("Set the boiler setpoint at 6 A", pairs(("number.boiler_setpoint", "set_value", 6, "A"))),
        # "Do not ..." is a negated request, not a question: its other clauses still count
        ("Do not turn off the kettle", pairs()),
        ("Do not open the garage door, turn on the kitchen light", pairs(("light.kitchen_main", "turn_on"))),
    ],
)
def test_what_is_put_off_to_later_is_not_asked_for_now(text: str, expected: frozenset[RequestedAction]) -> None:
    assert requested_actions(text, DEVICES, APPLIANCES) == expected
