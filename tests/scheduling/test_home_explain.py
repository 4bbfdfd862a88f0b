"""Why a home battery charges, discharges or idles: reason codes and texts against a hand-worked plan.

The plan: 7 slots, import prices 0.10 0.20 0.30 0.40 0.30 0.28 0.35 EUR/kWh (median 0.30; with a discharge
efficiency of 0.9 a kWh left in store at the end is worth 0.27), a 10 kWh battery (charge efficiency 0.95, no wear;
lowest 10 %, reserve 20 %, highest 90 %), fuse 11 kW. A kWh put in store costs p / 0.95 (0.105 0.211 0.316 0.421
0.316 0.295 0.368), one taken out saves 0.9 p (0.09 0.18 0.27 0.36 0.27 0.252 0.315); the plan discharges in slots 2
and 3, so a stored kWh is worth later max(0.27, the later discharges' 0.9 p): 0.36 up to slot 2, then 0.27.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.home_explain import (
    SlotReason,
    battery_mode,
    battery_reasons,
    plan_reasons,
    reason_text,
)
from custom_components.agentic_hems.scheduling.home_model import HomeBattery, HomePlan

PRICES = np.array([0.10, 0.20, 0.30, 0.40, 0.30, 0.28, 0.35])
BATTERY = HomeBattery(name="b1", capacity_kwh=10.0, charge_kw=3.0, discharge_kw=3.0, initial_soc_pct=50.0,
                      soc_min_pct=10.0, soc_max_pct=90.0, reserve_pct=20.0, discharge_efficiency=0.9)
KW = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 0.0, 0.0])
SOC = np.array([5.0, 5.5, 7.4, 5.2, 2.0, 6.0, 9.0, 9.0])  # kWh at each boundary
SURPLUS = np.array([3.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
IMPORT = np.array([0.0, 2.5, 11.0, 2.0, 1.0, 1.0, 1.0])
# slot by slot: PV surplus 3 >= 2 kW; surplus 0.5 < 2 kW, a stored kWh costs 0.211 < 0.36 later; import at the 11 kW
# fuse; import 2 kW, a stored kWh saves 0.36 > 0.27 at the end; idle at 20 % = the reserve; idle at 60 % where
# charging costs 0.295 >= 0.27 later >= 0.252 discharging saves; idle at 90 % = the highest
EXPECTED = ["pv", "cheap", "fuse", "dear", "floor", "spread", "full"]


def reasons() -> list[SlotReason]:
    return battery_reasons(BATTERY, KW, SOC, import_price=PRICES, surplus_kw=SURPLUS, import_kw=IMPORT, fuse_kw=11.0)


def test_the_reasons_of_a_hand_worked_plan() -> None:
    found = reasons()
    assert [r.reason for r in found] == EXPECTED
    assert [r.value for r in found] == pytest.approx([0.36, 0.36, 0.36, 0.27, 0.27, 0.27, 0.27])
    assert [r.end for r in found] == pytest.approx([0.27] * 7)
    assert [r.soc_pct for r in found] == pytest.approx([50.0, 55.0, 74.0, 52.0, 20.0, 60.0, 90.0])
    assert found[1].as_dict() == {"reason": "cheap", "kw": 2.0, "soc_pct": 55.0, "price": 0.2, "value": 0.36,
                                  "cost": 0.210526, "earn": 0.18, "end": 0.27}


def test_the_texts_in_english_and_german() -> None:
    found = reasons()
    en = [reason_text(r, currency="EUR", fuse_kw=11.0) for r in found]
    assert en == [
        "stores 2.00 kW of PV surplus",
        "charges from the grid at 0.200 EUR/kWh, 0.211 EUR/kWh per stored kWh after losses and wear: below the 0.360 "
        "EUR/kWh a stored kWh is worth later",
        "discharges to keep the import under the 11 kW fuse",
        "discharges at 0.400 EUR/kWh, 0.360 EUR/kWh per stored kWh after losses and wear: above the 0.270 EUR/kWh a "
        "kWh left in store is worth at the end",
        "idles: at its reserve floor (20 %)",
        "idles: at 0.280 EUR/kWh neither charging (0.295 EUR/kWh per stored kWh) nor discharging (0.252 EUR/kWh) "
        "beats the 0.270 EUR/kWh a stored kWh is worth later, once losses and wear are counted",
        "idles: full (90 %)",
    ]
    de = [reason_text(r, currency="EUR", fuse_kw=11.0, language="de") for r in found]
    assert de[2] == "entlädt, damit der Bezug unter der Hauptsicherung von 11 kW bleibt"
    assert de[4] == "ruht: an der Reserve (20 %)"


def test_the_fuse_is_each_slots_own() -> None:
    """A fuse per slot (11, 11, 12, 2, 11, 11, 11), as a plan keeps it where fixed loads pass the fuse: slot 2
    imports 11 kW under its 12 kW and discharges at 0.30, which saves 0.9 x 0.30 = 0.27 per stored kWh, no more than
    the 0.27 it is worth at the end (spend: it saves nothing); slot 3's 2 kW import is at its 2 kW (fuse)."""
    fuse = np.array([11.0, 11.0, 12.0, 2.0, 11.0, 11.0, 11.0])
    found = battery_reasons(BATTERY, KW, SOC, import_price=PRICES, surplus_kw=SURPLUS, import_kw=IMPORT, fuse_kw=fuse)
    assert [r.reason for r in found] == ["pv", "cheap", "spend", "fuse", "floor", "spread", "full"]
    assert reason_text(found[2], currency="EUR", fuse_kw=12.0) == (
        "discharges at 0.300 EUR/kWh, 0.270 EUR/kWh per stored kWh after losses and wear: not above the 0.270 EUR/kWh "
        "a kWh left in store is worth at the end, so it saves nothing (a tie between equal costs, or another limit of "
        "the plan)"
    )
    assert reason_text(found[3], currency="EUR", fuse_kw=float(fuse[3])) == (
        "discharges to keep the import under the 2 kW fuse"
    )


def test_a_home_plan_gives_the_same_reasons() -> None:
    n = KW.size
    plan = HomePlan(
        start=datetime(2026, 12, 1, tzinfo=UTC), resolution=timedelta(minutes=15),
        horizon_end=datetime(2026, 12, 1, 1, 45, tzinfo=UTC), import_kw=IMPORT, export_kw=np.zeros(n),
        curtail_kw=np.array([1.0, 0, 0, 0, 0, 0, 0]), pv_kw=np.array([5.0, 1.5, 0, 0, 0, 0, 0]),
        base_load_kw=np.array([0.5, 0.5, 0, 0, 0, 0, 0]), battery_kw={"b1": KW}, soc_kwh={"b1": SOC},
        load_kw={"ev": np.array([0.5, 0.5, 0, 0, 0, 0, 0])}, starts={}, unplanned={}, cost=0.0, net_cost=0.0,
        baseline_cost=0.0, baseline_net_cost=0.0, currency="EUR",
    )  # surplus 5 - 1 - 0.5 - 0.5 = 3 kW and 1.5 - 0.5 - 0.5 = 0.5 kW, as above
    assert [r.reason for r in plan_reasons(plan, BATTERY, np.append(PRICES, 9.9), 11.0)] == EXPECTED
    # A heat pump drawing 1.5 kW in slot 0 leaves 1.5 kW of the 3 kW surplus: the 2 kW charge comes partly from the
    # grid, at 0.10 / 0.95 = 0.105 per stored kWh < 0.36 later (cheap).
    pumped = replace(plan, heat_kw={"hp": np.array([1.5, 0, 0, 0, 0, 0, 0])})
    assert [r.reason for r in plan_reasons(pumped, BATTERY, PRICES, 11.0)] == ["cheap", *EXPECTED[1:]]


def test_arrays_of_other_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="arrays of 7 slots"):
        battery_reasons(BATTERY, KW, SOC[:5], import_price=PRICES, surplus_kw=SURPLUS, import_kw=IMPORT,
                        fuse_kw=11.0)


@pytest.mark.parametrize(("kw", "mode"), [(0.051, "charge"), (0.05, "idle"), (0.0, "idle"), (-0.05, "idle"),
                                          (-0.051, "discharge"), (3.0, "charge")])
def test_battery_mode(kw: float, mode: str) -> None:
    assert battery_mode(kw) == mode


def test_the_reported_contradiction_is_gone() -> None:
    """The demo said "charges from the grid at 0.057 EUR/kWh: below the 0.054 EUR/kWh a stored kWh is worth later":
    the value was the end value (median 0.057 x 0.95), though the plan charges to discharge at 0.30 in the evening.
    A stored kWh is worth 0.95 x 0.30 = 0.285 there, and costs 0.057 / 0.95 = 0.060."""
    battery = HomeBattery(name="b", capacity_kwh=10.0, charge_kw=4.0, discharge_kw=4.0, initial_soc_pct=20.0)
    prices = np.array([0.057, 0.056, 0.058, 0.0568, 0.30])  # median 0.057 -> 0.054 at the end
    kw = np.array([4.0, 0.0, 0.0, 0.0, -3.8])
    soc = np.array([2.0, 5.8, 5.8, 5.8, 5.8, 1.8])
    found = battery_reasons(battery, kw, soc, import_price=prices, surplus_kw=np.zeros(5),
                            import_kw=np.array([4.5, 0.5, 0.5, 0.5, 0.0]), fuse_kw=11.0)
    assert found[0].reason == "cheap" and found[0].end == pytest.approx(0.05415)
    assert reason_text(found[0], currency="EUR", fuse_kw=11.0) == (
        "charges from the grid at 0.057 EUR/kWh, 0.060 EUR/kWh per stored kWh after losses and wear: below the 0.285 "
        "EUR/kWh a stored kWh is worth later"
    )
    assert found[4].reason == "dear"


def test_charges_that_save_nothing_say_so() -> None:
    """Charging at 0.30 (0.316 per stored kWh) for a discharge at 0.33 (0.9 x 0.33 = 0.297 per stored kWh): no
    saving once losses count. Ahead of a discharge at the fuse it is fuse_ahead, otherwise loss; at the end the
    discharge itself earns 0.297, above the 0.27 end value (dear), and idle slots before the discharge, where a
    kWh costs less than it fetches later, are elsewhere."""
    prices = np.array([0.30, 0.25, 0.33, 0.30, 0.30])  # median 0.30 -> 0.27 at the end
    kw = np.array([2.0, 0.0, -2.0, 0.0, 0.0])
    soc = np.array([5.0, 5.475, 5.475, 5.03, 5.03, 5.03])
    common = {"import_price": prices, "surplus_kw": np.zeros(5), "fuse_kw": 11.0}
    loss = battery_reasons(BATTERY, kw, soc, import_kw=np.array([3.0, 1.0, 1.0, 1.0, 1.0]), **common)
    assert [r.reason for r in loss] == ["loss", "elsewhere", "dear", "spread", "spread"]
    assert reason_text(loss[0], currency="EUR", fuse_kw=11.0) == (
        "charges from the grid at 0.300 EUR/kWh, 0.316 EUR/kWh per stored kWh after losses and wear: not below the "
        "0.297 EUR/kWh a stored kWh is worth later, so it saves nothing (a tie between equal costs, or another limit "
        "of the plan)"
    )
    assert reason_text(loss[1], currency="EUR", fuse_kw=11.0, language="de") == (
        "ruht bei 0.250 EUR/kWh: der Plan lädt oder entlädt in anderen Slots, oder eine seiner Grenzen greift (eine "
        "gespeicherte kWh ist später 0.297 EUR/kWh wert)"
    )
    ahead = battery_reasons(BATTERY, kw, soc, import_kw=np.array([3.0, 1.0, 11.0, 1.0, 1.0]), **common)
    assert [r.reason for r in ahead][:3] == ["fuse_ahead", "elsewhere", "fuse"]
