"""The offline planner: 40+ phrasings read into intents and action sequences, and its summaries."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.agentic_hems.gates.models import RequestedAction
from custom_components.agentic_hems.orchestrator.actions import Action
from custom_components.agentic_hems.orchestrator.offline import (
    ApplianceRef,
    Intent,
    OfflinePlanner,
    summarize,
    understand,
)
from custom_components.agentic_hems.orchestrator.intent import KnownDevice, requested_actions
from custom_components.agentic_hems.orchestrator.parser import parse

HOUSE = [
    ApplianceRef("Dishwasher", "dishwasher"),
    ApplianceRef("Washing machine", "washing_machine"),
    ApplianceRef("EV charger", "ev_charger"),
    ApplianceRef("Heat pump", "heat_pump"),
]
ALL = ("Dishwasher", "Washing machine", "EV charger", "Heat pump")
DW, WM, EV, HP = ALL

PHRASINGS: list[tuple[str, Intent]] = [
    ("Schedule all flexible loads", Intent("schedule", ALL)),
    ("Plan all appliances for tonight", Intent("schedule", ALL)),
    ("Schedule everything as cheap as possible", Intent("schedule", ALL)),
    ("optimize all my loads", Intent("schedule", ALL)),
    ("Plane alle Geräte", Intent("schedule", ALL)),
    ("Charge the car by 7:30 tomorrow", Intent("schedule", (EV,), "tomorrow 07:30")),
    ("Lade das Auto bis morgen 7 Uhr", Intent("schedule", (EV,), "tomorrow 07:00")),
    ("Spülmaschine heute morgen bis 11 Uhr", Intent("schedule", (DW,), "11:00")),  # this morning
    ("charge the EV by 7", Intent("schedule", (EV,), "07:00")),
    ("Charge my car before 6am", Intent("schedule", (EV,), "06:00")),
    ("Make sure the car is charged by 8:15", Intent("schedule", (EV,), "08:15")),
    ("Wallbox: ready at 6.45", Intent("schedule", (EV,), "06:45")),
    ("Lade das Auto bis 7 Uhr", Intent("schedule", (EV,), "07:00")),
    ("E-Auto bis 6:30 laden", Intent("schedule", (EV,), "06:30")),
    ("charge the electric vehicle cheapest tonight", Intent("schedule", (EV,))),
    ("Run the dishwasher tonight", Intent("schedule", (DW,))),
    ("Schedule the dishwasher at the cheapest time", Intent("schedule", (DW,))),
    ("dishwasher please, done by 7", Intent("schedule", (DW,), "07:00")),
    ("Start the dish washer when power is cheap", Intent("schedule", (DW,))),
    ("Spülmaschine heute Nacht laufen lassen", Intent("schedule", (DW,))),
    ("Geschirrspüler bis 6 Uhr fertig", Intent("schedule", (DW,), "06:00")),
    ("Do the laundry tomorrow", Intent("schedule", (WM,))),
    ("Washing machine finished by 5 pm", Intent("schedule", (WM,), "17:00")),
    ("run the washer before noon", Intent("schedule", (WM,), "12:00")),
    ("Waschmaschine bis 18 Uhr", Intent("schedule", (WM,), "18:00")),
    ("Wäsche waschen, spätestens um 14:30", Intent("schedule", (WM,), "14:30")),
    ("Heat pump: plan the cheapest block", Intent("schedule", (HP,))),
    ("Heat the hot water by 6", Intent("schedule", (HP,), "06:00")),
    ("Wärmepumpe günstig planen", Intent("schedule", (HP,))),
    ("Schedule the dishwasher and the washing machine", Intent("schedule", (DW, WM))),
    ("Run the dishwasher and charge the car by 7:30", Intent("schedule", (DW, EV), "07:30")),
    ("Laundry and dishes tonight", Intent("schedule", (DW, WM))),
    ("Cancel the dishwasher", Intent("cancel", (DW,))),
    ("Clear the EV plan", Intent("cancel", (EV,))),
    ("don't run the washing machine today", Intent("cancel", (WM,))),
    ("Cancel all appliances", Intent("cancel", ALL)),
    ("Spülmaschine abbrechen", Intent("cancel", (DW,))),
    ("When is electricity cheapest tomorrow?", Intent("prices")),
    ("What are the prices today?", Intent("prices")),
    ("How expensive is power tonight?", Intent("prices")),
    ("Wann ist der Strom morgen am günstigsten?", Intent("prices")),
    ("Show me the tariff", Intent("prices")),
    ("hello", Intent("unknown")),
    ("What can you do?", Intent("unknown")),
    ("Charge the car by 25:00", Intent("schedule", (EV,))),  # not a time: no deadline
    ("Dishwasher by midnight", Intent("schedule", (DW,), "00:00")),
    # found by a break test
    ("Don't cancel the dishwasher, just run it by 9", Intent("schedule", (DW,), "09:00")),
    ("Charge the car by 10 tonight", Intent("schedule", (EV,), "22:00")),
    ("Run the dishwasher at 10pm", Intent("schedule", (DW,), None, "22:00", exact=True)),
    ("Start the washing machine after 8pm", Intent("schedule", (WM,), None, "20:00")),
    ("Wäsche bis 18 Uhr und Spülmaschine bis 7 Uhr",
     Intent("schedule", (DW, WM), times=((DW, "07:00", None), (WM, "18:00", None)))),
    ("Lade das Auto bis morgen früh um 7", Intent("schedule", (EV,), "tomorrow 07:00")),
    ("How much does electricity cost right now?", Intent("prices", now=True)),
    ("Is power cheap at the moment?", Intent("prices", now=True)),
    ("Charge my car to 80%", Intent("schedule", (EV,))),
]


@pytest.mark.parametrize(("text", "intent"), PHRASINGS, ids=[p[0] for p in PHRASINGS])
def test_phrasings(text: str, intent: Intent) -> None:
    assert understand(text, HOUSE) == intent


def test_at_least_forty_phrasings() -> None:
    assert len(PHRASINGS) >= 40


@pytest.mark.parametrize(
    ("text", "expected"),
    [("by 7", "07:00"), ("by 7:30 pm", "19:30"), ("by 12 am", "00:00"), ("before 12pm", "12:00"),
     ("until 23.15", "23:15"), ("bis 9 uhr", "09:00"), ("at 7", None), ("by 24", None)],
)
def test_the_deadline_of_a_request(text: str, expected: str | None) -> None:
    assert understand(f"schedule the dishwasher {text}", HOUSE).deadline == expected


@pytest.mark.parametrize(
    ("intent", "calendar", "actions"),
    [
        (Intent("schedule", (DW, EV), "07:30"), True,
         [Action("GET_PRICES"), Action("SCHEDULE", {"appliance": "Dishwasher, EV charger", "deadline": "07:30"})]),
        (Intent("schedule", ALL), True,
         [Action("GET_PRICES"), Action("SCHEDULE", {"appliance": "Dishwasher, Washing machine, Heat pump"}),
          Action("GET_CALENDAR_CONSTRAINT"), Action("SCHEDULE", {"appliance": EV})]),
        (Intent("schedule", (EV,)), True,
         [Action("GET_PRICES"), Action("GET_CALENDAR_CONSTRAINT"), Action("SCHEDULE", {"appliance": EV})]),
        (Intent("schedule", (EV,)), False, [Action("GET_PRICES"), Action("SCHEDULE", {"appliance": EV})]),
        (Intent("cancel", (DW, WM)), False, [Action("SCHEDULE", {"appliance": "Dishwasher, Washing machine", "cancel": True})]),
        (Intent("prices"), False, [Action("GET_PRICES")]),
        (Intent("schedule", (DW, WM), times=((DW, "07:00", None), (WM, "18:00", None))), False,
         [Action("GET_PRICES"), Action("SCHEDULE", {"appliance": DW, "deadline": "07:00"}),
          Action("SCHEDULE", {"appliance": WM, "deadline": "18:00"})]),
        (Intent("schedule", (DW,), None, "22:00", exact=True), False,
         [Action("GET_PRICES"), Action("SCHEDULE", {"appliance": DW, "start_at": "22:00"})]),
    ],
)
def test_plans(intent: Intent, calendar: bool, actions: list[Action]) -> None:
    assert OfflinePlanner(HOUSE, calendar=calendar).plan(intent) == actions


async def test_replies_one_parseable_action_per_turn_and_uses_the_calendar_deadline() -> None:
    planner = OfflinePlanner(HOUSE, calendar=True)
    messages = [{"role": "system", "content": "x"},
                {"role": "user", "content": "<user_request>\nCharge the car\n</user_request>\n\nIMPORTANT: ..."}]
    first = parse(await planner.complete(messages)).action
    assert first == Action("GET_PRICES")
    messages.append({"role": "user", "content": 'Observation: {"action":"GET_PRICES","min":0.1}'})
    assert parse(await planner.complete(messages)).action == Action("GET_CALENDAR_CONSTRAINT")
    messages.append({"role": "user", "content": 'Observation: {"action":"GET_CALENDAR_CONSTRAINT","deadline":"2026-12-01T06:15:00+01:00"}'})
    assert parse(await planner.complete(messages)).action == Action(
        "SCHEDULE", {"appliance": EV, "deadline": "2026-12-01T06:15:00+01:00"})
    messages.append({"role": "user", "content": 'Observation: {"action":"SCHEDULE","plans":[{"appliance":"EV charger",'
                                                '"feasible":true,"start_local":"Mon 02:00","end_local":"Mon 05:30",'
                                                '"cost":1.5,"currency":"EUR","savings":0.2}]}'})
    finish = parse(await planner.complete(messages)).action
    assert finish == Action("FINISH", {"summary": "EV charger: Mon 02:00 to Mon 05:30, 1.50 EUR (saves 0.20 EUR)."})


def test_summarize_prices_and_failures() -> None:
    prices = {"action": "GET_PRICES", "unit": "EUR/kWh", "min": 0.05, "max": 0.3,
              "cheapest": {"start_local": "Tue 03:00", "price": 0.05}}
    assert summarize([prices]) == "Cheapest slot: Tue 03:00 at 0.05 EUR/kWh; prices from 0.05 to 0.3 EUR/kWh."
    failed = {"action": "SCHEDULE", "appliance": "Dishwasher", "feasible": False, "reason": "window_too_short",
              "detail": "the window holds 1 slot; the run needs 11"}
    assert summarize([prices, failed]) == "Dishwasher: not planned: the window holds 1 slot; the run needs 11."
    assert summarize([prices | {"now": 0.0537}], now=True) == (
        "Price now: 0.0537 EUR/kWh. Cheapest slot: Tue 03:00 at 0.05 EUR/kWh; prices from 0.05 to 0.3 EUR/kWh.")
    dearer = {"action": "SCHEDULE", "plans": [{"appliance": "EV", "feasible": True, "start_local": "Mon 02:15",
                                                "end_local": "Mon 05:45", "cost": 1.5, "currency": "EUR", "savings": -0.05}]}
    assert summarize([dearer]) == ("EV: Mon 02:15 to Mon 05:45, 1.50 EUR (0.05 EUR more than starting now: the main fuse is "
                                   "shared with the other plans).")


def test_german_summaries() -> None:
    prices = {"action": "GET_PRICES", "unit": "EUR/kWh", "min": 0.05, "max": 0.3, "now": 0.0537,
              "cheapest": {"start_local": "Tue 03:00", "price": 0.05}}
    assert summarize([prices], now=True, lang="de") == (
        "Preis jetzt: 0,0537 EUR/kWh. Günstigster Zeitraum: Di 03:00 zu 0,05 EUR/kWh; Preise von 0,05 bis 0,3 EUR/kWh.")
    failed = {"action": "SCHEDULE", "appliance": "Dishwasher", "feasible": False, "reason": "no_prices",
              "detail": "no known price in Tue 03:00-07:00"}
    assert summarize([failed], lang="de") == "Dishwasher: nicht geplant: im Zeitfenster sind keine Preise bekannt."
    assert summarize([{"action": "GET_PRICES", "error": "no_prices"}], lang="de") == (
        "Preisabfrage fehlgeschlagen: noch keine Preise bekannt.")
    assert summarize([{"action": "GET_PRICES", "error": "no_prices"}]) == (
        "Looking up the prices failed: no prices are known yet.")  # in words: no GET_PRICES, no no_prices
    assert summarize([{"action": "EXPLAIN_DEVICE", "error": "home_plan_not_configured"}]) == (
        "Explaining the device failed: no whole-home plan is set up.")
    assert summarize([{"action": "SOME_TOOL", "error": "the tool's own message."}]) == (
        "Some tool failed: the tool's own message.")
    assert summarize([], lang="de") == "Nichts zu tun." and summarize([]) == "Nothing to do."
    assert OfflinePlanner(HOUSE[:2], lang="de").plan(Intent("unknown")) == [Action("FINISH", {"summary": (
        "Ich habe die Anfrage nicht verstanden, daher wurde nichts ausgeführt. Ich kann deine Geräte planen (Dishwasher, "
        "Washing machine) und die Preise nennen.")})]
    assert OfflinePlanner([], lang="de").plan(Intent("unknown"))[0].args["summary"].endswith("(noch keine Geräte) und die Preise nennen.")


HOME = [ApplianceRef("Home battery", "battery"), ApplianceRef("Living room", "heat_pump")]


@pytest.mark.parametrize(("text", "intent"), [
    ("Why does the heat pump run?", Intent("why", ("Living room",))),
    ("Warum lädt die Batterie jetzt?", Intent("why", ("Home battery",))),
    ("wieso heizt Living room und warum entlädt der Speicher?", Intent("why", ("Home battery", "Living room"))),
    ("Run the heat pump", Intent("schedule", (HP,))),  # no question: the appliance of that kind, as before
    ("Why is electricity so expensive?", Intent("prices")),  # no home device named
])
def test_why_questions_about_the_home_plans_devices(text: str, intent: Intent) -> None:
    assert understand(text, HOUSE, HOME) == intent


@pytest.mark.parametrize(("text", "intent"), [
    ("When will the dishwasher run?", Intent("why", (DW,))),
    ("Why does the dishwasher run at 3?", Intent("why", (DW,))),  # no schedule at 03:00
    ("Läuft die Waschmaschine heute?", Intent("why", (WM,))),
    ("Do the laundry tomorrow", Intent("schedule", (WM,))),  # a request, not a question
])
def test_questions_about_an_appliances_plan(text: str, intent: Intent) -> None:
    assert understand(text, HOUSE) == intent


def test_a_why_question_asks_for_the_explanation_and_sets_nothing() -> None:
    planner = OfflinePlanner(HOUSE, home_devices=HOME, lang="de")
    assert planner.plan(Intent("why", ("Living room",))) == [
        Action("EXPLAIN_DEVICE", {"device": "Living room", "lang": "de"})]
    obs = {"action": "EXPLAIN_DEVICE", "device": "Living room", "now": "heizt vor zu 0.200 EUR/kWh",
           "until": "2026-12-02T12:45:00+00:00", "until_local": "Wed 13:45", "then": "aus"}
    assert summarize([obs], lang="de") == "Living room: heizt vor zu 0.200 EUR/kWh bis Mi 13:45, danach aus."
    assert summarize([obs | {"now": "pre-heats", "then": "off"}]) == "Living room: pre-heats until Wed 13:45, then off."
    assert summarize([{"action": "EXPLAIN_DEVICE", "device": "Home battery", "now": "idles: full (90 %)",
                       "until": None, "then": None}]) == "Home battery: idles: full (90 %) to the plan's end."
    stored = {"appliance": "Dishwasher", "feasible": True, "start_local": "Wed 02:00", "end_local": "Wed 04:00",
              "cost": 0.3, "savings": 0.1, "currency": "EUR", "reason": "optimal", "detail": ""}
    assert summarize([{"action": "EXPLAIN_DEVICE", "plans": [stored]}]) == (
        "Dishwasher: Wed 02:00 to Wed 04:00, 0.30 EUR (saves 0.10 EUR).")


# Device commands: the offline planner sends what the intent binding reads, when the action needs no value.
LIGHTS = (
    KnownDevice("light.kitchen", "light", ("kitchen light",), ("kitchen",)),
    KnownDevice("cover.garage_door", "cover", ("garage door", "garagentor"), ("garage",)),
)


def _planner() -> OfflinePlanner:
    def devices(text: str) -> list[RequestedAction]:
        return [p for p in requested_actions(text, LIGHTS, HOUSE) if p.action not in ("schedule", "cancel")]

    return OfflinePlanner(HOUSE, devices=devices)


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("Turn on the kitchen light", [("EVALUATE_COMMAND", {"intent": "turn_on", "device_alias": "light.kitchen"})]),
        ("Öffne das Garagentor", [("EVALUATE_COMMAND", {"intent": "open", "device_alias": "cover.garage_door"})]),
        (
            "Turn off the kitchen light and run the dishwasher",
            [("EVALUATE_COMMAND", {"intent": "turn_off", "device_alias": "light.kitchen"}), ("GET_PRICES", {})],
        ),
        # a value: the one the request names, sent as it is
        ("Dim the kitchen light to 30%", [("EVALUATE_COMMAND", {"intent": "set_brightness",
                                                                "device_alias": "light.kitchen",
                                                                "params": {"brightness": 30.0}})]),
        ("Dimme das Kitchen light auf 12,5 Prozent", [("EVALUATE_COMMAND", {"intent": "set_brightness",
                                                                          "device_alias": "light.kitchen",
                                                                          "params": {"brightness": 12.5}})]),
        ("Dim the kitchen light", [("FINISH", None)]),  # no value: left to a model
        ("Set the kitchen light to 2 kW", [("FINISH", None)]),  # a unit it does not send
        ("Is the kitchen light on?", [("FINISH", None)]),  # a question asks for nothing
    ],
)
async def test_device_requests_become_gated_commands(text: str, first: list[tuple[str, Any]]) -> None:
    planner = _planner()
    messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
    replies = []
    for _ in first:
        action = parse(await planner.complete(messages)).action or Action("UNPARSEABLE")
        replies.append((action.type, action.args if action.type != "FINISH" else None))
        messages.append({"role": "user", "content": f'Observation: {{"action": "{action.type}"}}'})
    assert replies == first


PLUGS = (
    KnownDevice("switch.dishwasher_plug", "switch", ("dishwasher plug",)),
    KnownDevice("switch.washer_plug", "switch", ("washer plug",)),
)
PLUGGED = [
    ApplianceRef("Dishwasher", "dishwasher", "switch.dishwasher_plug"),
    ApplianceRef("Washing machine", "washing_machine", "switch.washer_plug"),
]


async def _actions_of(planner: OfflinePlanner, text: str) -> list[tuple[str, dict[str, Any] | None]]:
    """Every action the planner takes for ``text`` (each Observation empty), up to its FINISH."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
    replies: list[tuple[str, dict[str, Any] | None]] = []
    while not replies or replies[-1][0] != "FINISH":
        action = parse(await planner.complete(messages)).action or Action("UNPARSEABLE")
        replies.append((action.type, action.args if action.type != "FINISH" else None))
        messages.append({"role": "user", "content": f'Observation: {{"action": "{action.type}"}}'})
    return replies


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # switched on now: this run, no plan for later on top of it
        ("Turn on the dishwasher plug now", [("EVALUATE_COMMAND", {"intent": "turn_on",
                                                                   "device_alias": "switch.dishwasher_plug"})]),
        # the other appliance named is still planned
        ("Turn on the dishwasher plug and run the washing machine by 6 pm", [
            ("EVALUATE_COMMAND", {"intent": "turn_on", "device_alias": "switch.dishwasher_plug"}),
            ("GET_PRICES", {}), ("SCHEDULE", {"appliance": "Washing machine", "deadline": "18:00"})]),
        # switching off is no run: the plan asked for stays
        ("Turn off the dishwasher plug and schedule the dishwasher", [
            ("EVALUATE_COMMAND", {"intent": "turn_off", "device_alias": "switch.dishwasher_plug"}),
            ("GET_PRICES", {}), ("SCHEDULE", {"appliance": "Dishwasher"})]),
    ],
)
async def test_an_appliance_switched_on_now_is_not_planned_as_well(
    text: str, expected: list[tuple[str, dict[str, Any]]]
) -> None:
    def devices(request: str) -> list[RequestedAction]:
        return [p for p in requested_actions(request, PLUGS, PLUGGED) if p.action not in ("schedule", "cancel")]

    assert (await _actions_of(OfflinePlanner(PLUGGED, devices=devices), text))[:-1] == expected


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Turn on everything", "switch_all"),
        ("Switch all devices on", "switch_all"),
        ("Schalte alles ein", "switch_all"),
        ("Mach alle Geräte an", "switch_all"),
        ("Schedule everything", "schedule"),  # a planning word
        ("Run everything as cheap as possible", "schedule"),
        ("Turn on everything after 10 pm", "schedule"),  # a time: a plan for all
        ("Turn on the dishwasher", "schedule"),  # named: the intent binding reads the device too
    ],
)
async def test_switching_on_everything_asks_for_no_plan(text: str, kind: str) -> None:
    """"Turn on everything" names no device to switch on and asks for no plan: nothing is planned or bound, and the
    answer says that nothing was switched on and no plan changed (a run that does nothing is no success)."""
    assert understand(text, HOUSE).kind == kind
    if kind != "switch_all":
        return
    assert requested_actions(text, LIGHTS, HOUSE) == frozenset()  # a model cannot re-plan everything either
    for lang, start in (("en", "Nothing was switched on and no plan was changed"),
                        ("de", "Es wurde nichts eingeschaltet und kein Plan geändert")):
        reply = parse(await OfflinePlanner(HOUSE, lang=lang).complete([{"role": "user", "content": text}]))
        assert reply.action is not None and reply.action.type == "FINISH"
        assert reply.action.args["summary"].startswith(start)
