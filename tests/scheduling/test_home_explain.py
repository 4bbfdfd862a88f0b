"""Why a home battery charges, discharges or idles: reason codes and texts against a hand-worked plan.

The plan: 7 slots, import prices 0.10 0.20 0.30 0.40 0.30 0.25 0.35 EUR/kWh (median 0.30; with a discharge
efficiency of 0.9 a stored kWh is worth 0.27), a 10 kWh battery (lowest 10 %, reserve 20 %, highest 90 %), fuse 11 kW.
"""

from __future__ import annotations

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

PRICES = np.array([0.10, 0.20, 0.30, 0.40, 0.30, 0.25, 0.35])
BATTERY = HomeBattery(name="b1", capacity_kwh=10.0, charge_kw=3.0, discharge_kw=3.0, initial_soc_pct=50.0,
                      soc_min_pct=10.0, soc_max_pct=90.0, reserve_pct=20.0, discharge_efficiency=0.9)
KW = np.array([2.0, 2.0, -2.0, -2.0, 0.0, 0.0, 0.0])
SOC = np.array([5.0, 5.5, 7.4, 5.2, 2.0, 6.0, 9.0, 9.0])  # kWh at each boundary
SURPLUS = np.array([3.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0])
IMPORT = np.array([0.0, 2.5, 11.0, 2.0, 1.0, 1.0, 1.0])
# slot by slot: PV surplus 3 >= 2 kW; surplus 0.5 < 2 kW at 0.20 < 0.27; import at the 11 kW fuse; import 2 kW at
# 0.40 > 0.27; idle at 20 % = the reserve; idle at 60 % with 0.25 < 0.27; idle at 90 % = the highest
EXPECTED = ["pv", "cheap", "fuse", "dear", "floor", "spread", "full"]


def reasons() -> list[SlotReason]:
    return battery_reasons(BATTERY, KW, SOC, import_price=PRICES, surplus_kw=SURPLUS, import_kw=IMPORT, fuse_kw=11.0)


def test_the_reasons_of_a_hand_worked_plan() -> None:
    found = reasons()
    assert [r.reason for r in found] == EXPECTED
    assert [r.value for r in found] == pytest.approx([0.27] * 7)
    assert [r.soc_pct for r in found] == pytest.approx([50.0, 55.0, 74.0, 52.0, 20.0, 60.0, 90.0])
    assert found[1].as_dict() == {"reason": "cheap", "kw": 2.0, "soc_pct": 55.0, "price": 0.2, "value": 0.27}


def test_the_texts_in_english_and_german() -> None:
    found = reasons()
    en = [reason_text(r, currency="EUR", fuse_kw=11.0) for r in found]
    assert en == [
        "stores 2.00 kW of PV surplus",
        "charges from the grid at 0.200 EUR/kWh: below the 0.270 EUR/kWh a stored kWh is worth later",
        "discharges to keep the import under the 11 kW fuse",
        "discharges at 0.400 EUR/kWh: above the 0.270 EUR/kWh a stored kWh is worth later",
        "idles: at its reserve floor (20 %)",
        "idles: at 0.250 EUR/kWh neither charging nor discharging pays once losses and wear are counted (a stored kWh "
        "is worth 0.270 EUR/kWh)",
        "idles: full (90 %)",
    ]
    de = [reason_text(r, currency="EUR", fuse_kw=11.0, language="de") for r in found]
    assert de[2] == "entlädt, damit der Bezug unter der Hauptsicherung von 11 kW bleibt"
    assert de[4] == "ruht: an der Reserve (20 %)"


def test_the_fuse_is_each_slots_own() -> None:
    """A fuse per slot (11, 11, 12, 2, 11, 11, 11), as a plan keeps it where fixed loads pass the fuse: slot 2
    imports 11 kW under its 12 kW and discharges at 0.30 > 0.27 (dear); slot 3's 2 kW import is at its 2 kW (fuse)."""
    fuse = np.array([11.0, 11.0, 12.0, 2.0, 11.0, 11.0, 11.0])
    found = battery_reasons(BATTERY, KW, SOC, import_price=PRICES, surplus_kw=SURPLUS, import_kw=IMPORT, fuse_kw=fuse)
    assert [r.reason for r in found] == ["pv", "cheap", "dear", "fuse", "floor", "spread", "full"]
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


def test_arrays_of_other_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="arrays of 7 slots"):
        battery_reasons(BATTERY, KW, SOC[:5], import_price=PRICES, surplus_kw=SURPLUS, import_kw=IMPORT,
                        fuse_kw=11.0)


@pytest.mark.parametrize(("kw", "mode"), [(0.051, "charge"), (0.05, "idle"), (0.0, "idle"), (-0.05, "idle"),
                                          (-0.051, "discharge"), (3.0, "charge")])
def test_battery_mode(kw: float, mode: str) -> None:
    assert battery_mode(kw) == mode
