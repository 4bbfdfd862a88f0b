"""generate_explanation given a whole-home plan: the hand-worked plan of tests/scheduling/test_home_explain.py.

7 quarter hours from 20:00 +01:00; import prices 0.10 0.20 0.30 0.40 0.30 0.28 0.32 EUR/kWh (median 0.30, x 0.9 =
0.27 a kWh left in store at the end); a 10 kWh battery (charge efficiency 0.95 by default, discharge 0.9, its power
limits the most the plan uses: 2 kW; lowest 10 %, reserve 20 %, highest 90 %); fuse 11 kW. Slot by slot the battery
stores PV, charges cheap (0.211 per stored kWh < the 0.36 the discharge at 0.40 saves with it), discharges at the
fuse, discharges dear (0.36 > the 0.27 a kept kWh is worth), idles at the reserve, idles on the spread, idles full.
"""

from __future__ import annotations

from typing import Any

import pytest
import voluptuous as vol

from custom_components.agentic_hems.grid.catalog import GENERATE_EXPLANATION
from custom_components.agentic_hems.grid.explain_home import explain_home

PLAN: dict[str, Any] = {
    "start": "2026-11-29T20:00:00+01:00", "currency": "EUR", "fuse_kw": 11,
    "import_price": [0.10, 0.20, 0.30, 0.40, 0.30, 0.28, 0.32],
    "pv_kw": [5.0, 1.5, 0, 0, 0, 0, 0], "curtail_kw": [1.0, 0, 0, 0, 0, 0, 0],
    "house_kw": [1.0, 1.0, 0, 0, 0, 0, 0],  # surplus 3 kW, then 0.5 kW
    "import_kw": [0.0, 2.5, 11.0, 2.0, 1.0, 1.0, 1.0],
    "batteries": [{"name": "Home battery", "capacity_kwh": 10, "soc_min_pct": 10, "soc_max_pct": 90,
                   "reserve_pct": 20, "discharge_efficiency": 0.9,
                   "battery_kw": [2.0, 2.0, -2.0, -2.0, 0, 0, 0],
                   "soc_kwh": [5.0, 5.5, 7.4, 5.2, 2.0, 6.0, 9.0, 9.0]}],
}


def explained(audience: str = "operator", lang: str = "en", plan: dict[str, Any] = PLAN) -> dict[str, Any]:
    data = GENERATE_EXPLANATION.schema({"home_plan": plan, "audience": audience, "lang": lang})
    return explain_home(data["home_plan"], data["audience"], data["lang"])


def test_the_structured_reasons() -> None:
    battery = explained()["structured"]["batteries"][0]
    assert [s["reason"] for s in battery["slots"]] == ["pv", "cheap", "fuse", "dear", "floor", "spread", "full"]
    assert [s["mode"] for s in battery["slots"]] == ["charge"] * 2 + ["discharge"] * 2 + ["idle"] * 3
    assert battery["value_per_kwh"] == pytest.approx(0.27)
    assert battery["counts"] == {"pv": 1, "cheap": 1, "fuse": 1, "dear": 1, "floor": 1, "spread": 1, "full": 1}
    assert battery["slots"][3] == {"start": "2026-11-29T20:45:00+01:00", "mode": "discharge", "reason": "dear",
                                   "kw": -2.0, "soc_pct": 52.0, "price": 0.4, "export": 0.0, "value": 0.27,
                                   "need": 0.27, "cost": 0.421053, "earn": 0.36, "end": 0.27,
                                   "why": "discharges at 0.400 EUR/kWh, 0.360 EUR/kWh per stored kWh after losses and "
                                          "wear: above the 0.270 EUR/kWh a kWh kept in store is worth later"}
    assert battery["slots"][1]["need"] == 0.36  # what the discharge at 0.40 saves with a stored kWh


def test_the_efficiencies_and_the_wear_the_plan_used() -> None:
    """With a charge efficiency of 0.5 and a wear cost of 0.02 per kWh, a kWh put in store at 0.20 costs
    (0.20 + 0.02) / 0.5 = 0.44, more than the 0.9 x (0.40 - 0.02) = 0.342 the later discharge saves with it: no
    saving, but ahead of slot 2's discharge at the fuse (fuse_ahead)."""
    battery = {**PLAN["batteries"][0], "charge_efficiency": 0.5, "wear_cost": 0.02}
    slots = explained(plan={**PLAN, "batteries": [battery]})["structured"]["batteries"][0]["slots"]
    assert (slots[1]["reason"], slots[1]["cost"], slots[1]["need"]) == ("fuse_ahead", 0.44, 0.342)


def test_an_idle_slot_exporting_is_weighed_at_the_export_price() -> None:
    """Slot 5 exports 1 kW at 0.29 instead of importing: charging from PV would cost 0.29 / 0.95 = 0.305 per stored
    kWh, not below the 0.288 a kept kWh fetches in slot 6 (0.9 x 0.32); discharging would save 0.9 x 0.29 = 0.261,
    not above the 0.27 a stored kWh saves later."""
    plan = {**PLAN, "import_kw": [0.0, 2.5, 11.0, 2.0, 1.0, 0.0, 1.0], "export_kw": [0, 0, 0, 0, 0, 1.0, 0],
            "export_price": [0, 0, 0, 0, 0, 0.29, 0]}
    slot = explained(plan=plan)["structured"]["batteries"][0]["slots"][5]
    assert (slot["reason"], slot["export"], slot["cost"], slot["earn"]) == ("spread_export", 0.29, 0.305263, 0.261)
    assert slot["why"] == (
        "idles: at the 0.290 EUR/kWh export price charging from PV (0.305 EUR/kWh per stored kWh) would not beat the "
        "0.288 EUR/kWh a kWh kept in store is worth later, nor discharging (0.261 EUR/kWh) the 0.270 EUR/kWh a stored "
        "kWh saves later")
    with pytest.raises(vol.Invalid):
        GENERATE_EXPLANATION.schema({"home_plan": {**plan, "export_limit_kw": -1}})


def test_the_operator_text_merges_equal_neighbours_in_the_plan_offset() -> None:
    plan = {**PLAN, "import_price": [0.10, 0.10, 0.30, 0.40, 0.30, 0.25, 0.35],
            "pv_kw": [5.0, 5.0, 0, 0, 0, 0, 0], "curtail_kw": [1.0, 1.0, 0, 0, 0, 0, 0]}  # two equal PV slots
    assert explained(plan=plan)["text"].splitlines()[:2] == [
        "Home battery 20:00–20:30: stores 2.00 kW of PV surplus",
        "Home battery 20:30–20:45: discharges to keep the import under the 11 kW fuse",
    ]


def test_the_manager_and_auditor_texts_in_english_and_german() -> None:
    assert explained("manager")["text"] == (
        "Home battery: charges in 2 slots (1 from PV surplus, 1 from cheap grid power), discharges in 2 (1 at dear "
        "prices, 1 for the fuse), idles in 3.")
    assert explained("manager", "de")["text"].startswith("Home battery: lädt in 2 Slots (1 aus PV-Überschuss")
    lines = explained("auditor")["text"].splitlines()
    assert lines[0] == ("Home battery: a kWh left in store at the end is worth 0.2700 EUR/kWh (median import price "
                        "0.3000 x discharge efficiency 0.9); fuse 11 kW.")
    assert lines[5] == "21:00 Home battery: floor, 0.000 kW, SoC 20.0 %, price 0.3000 EUR/kWh: idles: at its reserve floor (20 %)"
    assert explained("operator", "de")["text"].splitlines()[4] == "Home battery 21:00–21:15: ruht: an der Reserve (20 %)"


@pytest.mark.parametrize("bad", [
    {"plan_id": "plan_1", "home_plan": PLAN},  # one subject only
    {"home_plan": {**PLAN, "fuse_kw": 0}},
    {"home_plan": {**PLAN, "import_price": [0.1, float("nan")]}},
    {"home_plan": {**PLAN, "start": "2026-11-29T20:00:00"}},  # no offset
    {"home_plan": {**PLAN, "batteries": []}},
    {"home_plan": {**PLAN, "setpoint": "number.battery"}},  # extra keys are refused
    {"home_plan": {**PLAN, "import_price": [0.1, None]}},  # a null, a list, a string or a bool is no price
    {"home_plan": {**PLAN, "import_price": [0.1, [0.2]]}},
    {"home_plan": {**PLAN, "import_price": [0.1, "0.2"]}},
    {"home_plan": {**PLAN, "import_price": [0.1, True]}},
])
def test_the_schema_refuses(bad: dict[str, Any]) -> None:
    with pytest.raises(vol.Invalid):
        GENERATE_EXPLANATION.schema(bad)


def test_lists_of_other_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="every per-slot list needs 7 values"):
        explained(plan={**PLAN, "house_kw": [1.0]})
    with pytest.raises(ValueError, match="arrays of 7 slots"):
        explained(plan={**PLAN, "batteries": [{**PLAN["batteries"][0], "soc_kwh": [5.0]}]})


# A heat pump over 5 quarter hours from 20:00 +01:00 (its own prices), hand-worked slot by slot: off it would end
# slot 0 at 19.6 °C, below the 20 °C floor (comfort floor); slot 1 off; slot 2 starts a run and ends above the floor
# with 0.40 to come (pre-heating); slot 3 is the run's 2nd slot at its 0.5 kW floor with a 3-slot minimum run (minimum
# run); slot 4 runs at 0.8 kW, the last slot (cheap slot).
HEAT_PUMP: dict[str, Any] = {
    "name": "Heat pump", "heat_kw": [2.0, 0.0, 1.0, 0.5, 0.8], "temp_c": [20.0, 20.8, 20.5, 21.0, 20.6, 20.4],
    "low_c": [20.0] * 5, "off_c": [19.6, 20.5, 20.2, 20.7, 20.2], "min_run_slots": 3, "on_floor_kw": 0.5,
}
HEAT_PLAN: dict[str, Any] = {
    "start": "2026-11-29T20:00:00+01:00", "currency": "EUR", "fuse_kw": 11,
    "import_price": [0.10, 0.30, 0.20, 0.40, 0.25], "pv_kw": [0.0] * 5, "house_kw": [1.0] * 5,
    "import_kw": [3.0, 1.0, 2.0, 1.5, 1.8], "heat_pumps": [HEAT_PUMP],
}


def test_a_heat_pumps_reasons_and_sentences() -> None:
    heat = explained(plan=HEAT_PLAN)["structured"]["heat_pumps"][0]
    assert [s["reason"] for s in heat["slots"]] == [
        "comfort_floor", "off", "preheat_before_peak", "min_run", "cheap_slot"]
    assert heat["counts"] == {"comfort_floor": 1, "off": 1, "preheat_before_peak": 1, "min_run": 1, "cheap_slot": 1}
    assert heat["slots"][0] == {
        "start": "2026-11-29T20:00:00+01:00", "reason": "comfort_floor", "kw": 2.0, "temp_c": 20.8, "low_c": 20.0,
        "price": 0.1, "why": "heats: off, it would end the slot at 19.60 °C, below the 20.00 °C comfort floor"}
    assert [s["why"] for s in heat["slots"][1:]] == [
        "off", "pre-heats at 0.200 EUR/kWh, before a dearer slot at 0.400 EUR/kWh",
        "stays on for its minimum run time", "runs at 0.250 EUR/kWh, no dearer than any later slot"]
    german = explained(plan=HEAT_PLAN, lang="de")["structured"]["heat_pumps"][0]["slots"]
    assert german[2]["why"] == "heizt vor zu 0,200 EUR/kWh, vor einem teureren Slot zu 0,400 EUR/kWh"


def test_a_heat_pumps_texts_for_each_audience() -> None:
    assert explained(plan=HEAT_PLAN)["text"].splitlines() == [
        "Heat pump 20:00–20:15: heats: off, it would end the slot at 19.60 °C, below the 20.00 °C comfort floor",
        "Heat pump 20:15–20:30: off",
        "Heat pump 20:30–20:45: pre-heats at 0.200 EUR/kWh, before a dearer slot at 0.400 EUR/kWh",
        "Heat pump 20:45–21:00: stays on for its minimum run time",
        "Heat pump 21:00–21:15: runs at 0.250 EUR/kWh, no dearer than any later slot",
    ]
    assert explained("manager", plan=HEAT_PLAN)["text"] == (
        "Heat pump: runs in 4 slots (1 at the cheapest price to come, 1 pre-heating before dearer slots, 1 for the "
        "comfort floor, 1 for its minimum run time), off in 1.")
    assert explained("auditor", "de", plan=HEAT_PLAN)["text"].splitlines()[3] == (
        "20:45 Heat pump: min_run, 0.500 kW, 20.60 °C am Ende (Grenze 20.00 °C, 20.70 °C wenn aus), Preis 0.4000 "
        "EUR/kWh: bleibt für seine Mindestlaufzeit an")
    both = explained(plan={**PLAN, "heat_pumps": [{**HEAT_PUMP, **{k: HEAT_PUMP[k] + [0.0, 0.0] for k in (
        "heat_kw", "low_c", "off_c")}, "temp_c": HEAT_PUMP["temp_c"] + [20.0, 20.0]}]})["structured"]
    assert [len(both["batteries"]), len(both["heat_pumps"])] == [1, 1]


@pytest.mark.parametrize("bad", [
    {**HEAT_PLAN, "heat_pumps": []},  # neither a battery nor a heat pump
    {**HEAT_PLAN, "heat_pumps": [{k: v for k, v in HEAT_PUMP.items() if k != "off_c"}]},
    {**HEAT_PLAN, "heat_pumps": [{**HEAT_PUMP, "control": "climate.heat_pump"}]},
    {**HEAT_PLAN, "heat_pumps": [{**HEAT_PUMP, "low_c": [20.0, None, 20.0, 20.0, 20.0]}]},
    {**HEAT_PLAN, "heat_pumps": [{**HEAT_PUMP, "min_run_slots": -1}]},
])
def test_the_schema_refuses_bad_heat_pumps(bad: dict[str, Any]) -> None:
    with pytest.raises(vol.Invalid):
        GENERATE_EXPLANATION.schema({"home_plan": bad})


def test_heat_pump_lists_of_other_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="heat pump 'Heat pump': per-slot lists need 5 values"):
        explained(plan={**HEAT_PLAN, "heat_pumps": [{**HEAT_PUMP, "temp_c": [20.0] * 5}]})


def test_a_per_slot_fuse_names_each_slots_own_limit() -> None:
    """Where loads the plan cannot move raised the fuse (slot 2 at 12 kW), the import there is at that slot's fuse;
    an import of 11 kW under a 12 kW fuse is not (and 0.9 x 0.30 = 0.27 saves no more than the end value: spend)."""
    raised = explained(plan={**PLAN, "fuse_kw": [11, 11, 12, 11, 11, 11, 11]})["structured"]["batteries"][0]
    assert raised["slots"][2]["reason"] == "spend" and "fuse" not in raised["counts"]
    at_fuse = explained(plan={**PLAN, "fuse_kw": [11, 11, 11, 12, 11, 11, 11],
                              "import_kw": [0.0, 2.5, 11.0, 12.0, 1.0, 1.0, 1.0]})["structured"]["batteries"][0]
    assert [s["reason"] for s in at_fuse["slots"][2:4]] == ["fuse", "fuse"]
    assert at_fuse["slots"][3]["why"] == "discharges to keep the import under the 12 kW fuse"
    with pytest.raises(ValueError, match="every per-slot list needs 7 values"):
        explained(plan={**PLAN, "fuse_kw": [11, 12]})


def test_slots_past_the_last_representable_time_are_refused_as_invalid() -> None:
    """A start at the end of year 9999: the slots cannot be dated, a ValueError (``home_plan_invalid``), not an
    OverflowError that reaches the caller unhandled."""
    with pytest.raises(ValueError, match="past the last time Python can represent"):
        explained(plan={**PLAN, "start": "9999-12-31T23:00:00+00:00"})
