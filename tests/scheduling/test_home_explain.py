"""Why a home battery charges, discharges or idles: reason codes and texts against a hand-worked plan.

The plan: 7 slots, import prices 0.10 0.20 0.30 0.40 0.30 0.28 0.32 EUR/kWh (median 0.30; with a discharge
efficiency of 0.9 a kWh left in store at the end is worth 0.27), a 10 kWh battery (3 kW each way, charge efficiency
0.95, no wear; lowest 10 %, reserve 20 %, highest 90 %), fuse 11 kW, no export. A kWh put in store costs p / 0.95
(0.105 0.211 0.316 0.421 0.316 0.295 0.337), one taken out saves 0.9 p (0.09 0.18 0.27 0.36 0.27 0.252 0.288).

Worked backwards from the end (0.27): ``value`` (one more kWh kept after the slot: the best later use, discharging
more where there is power to spare, never carried through a slot that ends full at 9 kWh) is 0.36 0.36 0.36 0.27
0.252 0.288 0.27; ``need`` (what a stored kWh saves: the least of the later discharges it feeds, never carried through
a slot that ends at the 2 kWh floor; the discharge at the fuse in slot 2 is worth any price) is 0.36 0.36 0.36 0.27
0.27 0.27 0.27.
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

PRICES = np.array([0.10, 0.20, 0.30, 0.40, 0.30, 0.28, 0.32])
BATTERY = HomeBattery(name="b1", capacity_kwh=10.0, charge_kw=3.0, discharge_kw=3.0, initial_soc_pct=50.0,
                      soc_min_pct=10.0, soc_max_pct=90.0, reserve_pct=20.0, discharge_efficiency=0.9)
KW = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 0.0, 0.0])
SOC = np.array([5.0, 5.5, 7.4, 5.2, 2.0, 6.0, 9.0, 9.0])  # kWh at each boundary
SURPLUS = np.array([3.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
IMPORT = np.array([0.0, 2.5, 11.0, 2.0, 1.0, 1.0, 1.0])
# slot by slot: PV surplus 3 >= 2 kW; surplus 0.5 < 2 kW, a stored kWh costs 0.211 < the 0.36 it saves; import at the
# 11 kW fuse; import 2 kW, a kWh taken out saves 0.36 > the 0.27 a kept one is worth; idle at 20 % = the reserve; idle
# at 60 % where charging costs 0.295 >= 0.288 and discharging saves 0.252 <= 0.27; idle at 90 % = the highest
EXPECTED = ["pv", "cheap", "fuse", "dear", "floor", "spread", "full"]


def reasons() -> list[SlotReason]:
    return battery_reasons(BATTERY, KW, SOC, import_price=PRICES, surplus_kw=SURPLUS, import_kw=IMPORT, fuse_kw=11.0)


def test_the_reasons_of_a_hand_worked_plan() -> None:
    found = reasons()
    assert [r.reason for r in found] == EXPECTED
    assert [r.value for r in found] == pytest.approx([0.36, 0.36, 0.36, 0.27, 0.252, 0.288, 0.27])
    assert [r.need for r in found] == pytest.approx([0.36, 0.36, 0.36, 0.27, 0.27, 0.27, 0.27])
    assert [r.end for r in found] == pytest.approx([0.27] * 7)
    assert [r.soc_pct for r in found] == pytest.approx([50.0, 55.0, 74.0, 52.0, 20.0, 60.0, 90.0])
    assert found[1].as_dict() == {"reason": "cheap", "kw": 2.0, "soc_pct": 55.0, "price": 0.2, "export": 0.0,
                                  "value": 0.36, "need": 0.36, "cost": 0.210526, "earn": 0.18, "end": 0.27}


def test_the_texts_in_english_and_german() -> None:
    found = reasons()
    en = [reason_text(r, currency="EUR", fuse_kw=11.0) for r in found]
    assert en == [
        "stores 2.00 kW of PV surplus",
        "charges from the grid at 0.200 EUR/kWh, 0.211 EUR/kWh per stored kWh after losses and wear: below the 0.360 "
        "EUR/kWh a stored kWh saves later",
        "discharges to keep the import under the 11 kW fuse",
        "discharges at 0.400 EUR/kWh, 0.360 EUR/kWh per stored kWh after losses and wear: above the 0.270 EUR/kWh a "
        "kWh kept in store is worth later",
        "idles: at its reserve floor (20 %)",
        "idles: at 0.280 EUR/kWh charging (0.295 EUR/kWh per stored kWh) would not beat the 0.288 EUR/kWh a kWh kept "
        "in store is worth later, nor discharging (0.252 EUR/kWh) the 0.270 EUR/kWh a stored kWh saves later",
        "idles: full (90 %)",
    ]
    de = [reason_text(r, currency="EUR", fuse_kw=11.0, language="de") for r in found]
    assert de[2] == "entlädt, damit der Bezug unter der Hauptsicherung von 11 kW bleibt"
    assert de[4] == "ruht: an der Reserve (20 %)"


def test_the_fuse_is_each_slots_own() -> None:
    """A fuse per slot (11, 11, 12, 2, 11, 11, 11), as a plan keeps it where fixed loads pass the fuse: slot 2
    imports 11 kW under its 12 kW and discharges at 0.30, which saves 0.9 x 0.30 = 0.27 per stored kWh, less than the
    0.36 a kWh kept for slot 3 (2 of its 3 kW used) saves there (spend: it saves nothing); slot 3's 2 kW import is
    at its 2 kW (fuse)."""
    fuse = np.array([11.0, 11.0, 12.0, 2.0, 11.0, 11.0, 11.0])
    found = battery_reasons(BATTERY, KW, SOC, import_price=PRICES, surplus_kw=SURPLUS, import_kw=IMPORT, fuse_kw=fuse)
    assert [r.reason for r in found] == ["pv", "cheap", "spend", "fuse", "floor", "spread", "full"]
    assert reason_text(found[2], currency="EUR", fuse_kw=12.0) == (
        "discharges for 0.270 EUR/kWh per stored kWh after losses and wear: not above the 0.360 EUR/kWh a kWh kept in "
        "store is worth later, so it saves nothing (a tie between equal costs, or another limit of the plan)"
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
    the value was the end value (median 0.057 x 0.95), though the plan charges to discharge at 0.30 later. The kWh
    stored at 0.057 / 0.95 = 0.060 saves 0.95 x 0.30 = 0.285 there (the battery then ends empty)."""
    battery = HomeBattery(name="b", capacity_kwh=4.0, charge_kw=4.0, discharge_kw=4.0, initial_soc_pct=0.0)
    prices = np.array([0.057, 0.056, 0.058, 0.0568, 0.30])  # median 0.057 -> 0.054 at the end
    kw = np.array([4.0, 0.0, 0.0, 0.0, -3.61])
    soc = np.array([0.0, 0.95, 0.95, 0.95, 0.95, 0.0])
    found = battery_reasons(battery, kw, soc, import_price=prices, surplus_kw=np.zeros(5),
                            import_kw=np.array([4.5, 0.5, 0.5, 0.5, 0.39]), fuse_kw=11.0)
    assert found[0].reason == "cheap" and found[0].end == pytest.approx(0.05415)
    assert reason_text(found[0], currency="EUR", fuse_kw=11.0) == (
        "charges from the grid at 0.057 EUR/kWh, 0.060 EUR/kWh per stored kWh after losses and wear: below the 0.285 "
        "EUR/kWh a stored kWh saves later"
    )
    assert reason_text(found[4], currency="EUR", fuse_kw=11.0, language="de") == (
        "entlädt zu 0,300 EUR/kWh, 0,285 EUR/kWh je gespeicherte kWh nach Verlusten und Verschleiß: über den 0,054 "
        "EUR/kWh, die eine behaltene kWh später wert ist"
    )


# Five slots at 0.30 0.25 0.33 0.40 0.30 (end value 0.9 x 0.30 = 0.27), the battery of the hand-worked plan charging
# 2 kW in slot 0 and discharging 2 kW in slot 2, importing throughout: value (kept) 0.36 0.36 0.36 0.27 0.27 (slot 3
# could discharge more at 0.40), need 0.27 throughout (a kWh less would end the plan lower).
LATER = {"import_price": np.array([0.30, 0.25, 0.33, 0.40, 0.30]), "surplus_kw": np.zeros(5), "fuse_kw": 11.0}
LATER_KW = np.array([2.0, 0.0, -2.0, 0.0, 0.0])
LATER_SOC = np.array([5.0, 5.475, 5.475, 5.03, 5.03, 5.03])


def test_charges_and_discharges_that_save_nothing_say_so() -> None:
    """Slot 0 stores a kWh at 0.316 that saves 0.27 (loss); slot 2 takes one out for 0.9 x 0.33 = 0.297, though a
    kept one fetches 0.36 in slot 3 (spend); idle slots where charging would beat the kept value, or discharging the
    need, are elsewhere; slot 4 (0.316 >= 0.27 >= 0.27) is spread."""
    found = battery_reasons(BATTERY, LATER_KW, LATER_SOC, import_kw=np.ones(5), **LATER)
    assert [r.reason for r in found] == ["loss", "elsewhere", "spend", "elsewhere", "spread"]
    texts = [reason_text(r, currency="EUR", fuse_kw=11.0) for r in found]
    assert texts[0] == (
        "charges from the grid at 0.300 EUR/kWh, 0.316 EUR/kWh per stored kWh after losses and wear: not below the "
        "0.270 EUR/kWh a stored kWh saves later, so it saves nothing (a tie between equal costs, or another limit of "
        "the plan)"
    )
    assert texts[2] == (
        "discharges for 0.297 EUR/kWh per stored kWh after losses and wear: not above the 0.360 EUR/kWh a kWh kept in "
        "store is worth later, so it saves nothing (a tie between equal costs, or another limit of the plan)"
    )
    assert reason_text(found[1], currency="EUR", fuse_kw=11.0, language="de") == (
        "ruht bei 0,250 EUR/kWh: der Plan lädt oder entlädt in anderen Slots, oder eine seiner Grenzen greift"
    )


def test_a_charge_ahead_of_a_discharge_at_the_fuse_and_a_discharge_into_the_grid() -> None:
    at_fuse = battery_reasons(BATTERY, LATER_KW, LATER_SOC, import_kw=np.array([3.0, 1, 11, 1, 1]), **LATER)
    assert [r.reason for r in at_fuse][:3] == ["fuse_ahead", "elsewhere", "fuse"]
    assert reason_text(at_fuse[0], currency="EUR", fuse_kw=11.0) == (
        "charges from the grid at 0.300 EUR/kWh for a later discharge that keeps the import under the fuse"
    )
    # Slot 2 exports 1 kW at 0.50: its last kW out saves 0.9 x 0.50 = 0.45 > 0.36.
    exported = battery_reasons(BATTERY, LATER_KW, LATER_SOC, import_kw=np.array([3.0, 1, 0, 1, 1]),
                               export_kw=np.array([0, 0, 1.0, 0, 0]), export_price=0.5, **LATER)
    assert exported[2].reason == "export" and exported[2].earn == pytest.approx(0.45)
    assert reason_text(exported[2], currency="EUR", fuse_kw=11.0) == (
        "discharges into the grid at the 0.500 EUR/kWh export price, 0.450 EUR/kWh per stored kWh after losses and "
        "wear: above the 0.360 EUR/kWh a kWh kept in store is worth later"
    )
