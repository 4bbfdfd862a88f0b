"""Phase limits of the whole-home plan in a real Home Assistant: a pinned single-phase appliance counts on its own
phase, and a phase the plan cannot keep below its limit is named with its devices (detail, sensor, card payload).

The sample house of ``test_home_plan`` (a three-phase battery, PV from an energy platform, no base load) with the
dishwasher on L2, the washing machine on L3 at 4 kW and the EV three-phase, on a three-phase 230 V connection.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
import re

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.planning.home_manager import HomePlanManager
from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling.home_grid import phases_over_fixed
from custom_components.agentic_hems.scheduling.home_model import PhaseLimits
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import HomeAssistant

from .conftest import APPLIANCES, NOW
from .test_heat_pump import HEAT_ID, HEAT_PUMP, _heated_house
from .test_home_plan import BATTERY, _house

PHASED = {
    "dishwasher": {**APPLIANCES["dishwasher"], "phase": "L2"},
    "washer": {**APPLIANCES["washer"], "phase": "L3", "power_kw": 4.0},
    "ev": APPLIANCES["ev"],
}


async def _setup(hass: HomeAssistant, freezer: FrozenDateTimeFactory, amperes: float) -> MockConfigEntry:
    """The house on ``amperes`` per phase, planned once."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    solar = await _house(hass)
    subentries = [ConfigSubentryData(data=data, subentry_id=key, subentry_type="appliance", title=data["name"],
                                     unique_id=None) for key, data in PHASED.items()]
    subentries.append(ConfigSubentryData(data=BATTERY, subentry_id="battery1", subentry_type="battery",
                                         title="Home battery", unique_id=None))
    entry = MockConfigEntry(
        domain=DOMAIN, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options={**DEFAULT_OPTIONS, "pv_forecast_entries": [solar.entry_id], "phase_count": "3",
                 "phase_current_a": amperes, "nominal_voltage": 230.0},
        subentries_data=subentries, version=1, minor_version=1,
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    return entry


async def _pin_dishwasher(hass: HomeAssistant, entry: MockConfigEntry) -> HomePlanManager:
    """Pin the dishwasher's next run (the schedule service's way) and plan the home again."""
    planner = entry.runtime_data.planner
    plan = await planner.async_schedule("dishwasher", planner.load_for("dishwasher", NOW))
    assert plan.feasible and planner.states["dishwasher"].pinned
    manager: HomePlanManager = entry.runtime_data.home
    await manager.async_replan()
    await hass.async_block_till_done(wait_background_tasks=True)
    return manager


@pytest.fixture
async def sixteen(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> MockConfigEntry:
    return await _setup(hass, freezer, 16)


@pytest.fixture
async def eight(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> MockConfigEntry:
    return await _setup(hass, freezer, 8)


async def test_a_pinned_single_phase_appliance_counts_on_its_phase(hass: HomeAssistant, sixteen: MockConfigEntry) -> None:
    """16 A x 230 V = 3.68 kW per phase. The pinned dishwasher (1.8 kW, L2) is a fixed load of the plan; the only
    single-phase devices are it on L2 and the washer on L3, so L2 - L3 = dishwasher - washer and L1 - L3 = -washer
    (the battery, the EV and the PV spread equally); the phases add up to the net import."""
    entry = sixteen
    manager = await _pin_dishwasher(hass, entry)
    result = manager.result
    assert result is not None and result.plan is not None, result and result.detail
    plan, n = result.plan, result.plan.import_kw.size
    pinned = entry.runtime_data.planner.states["dishwasher"].plan.power_on(plan.start, n)
    assert pinned.max() == pytest.approx(1.8) and "dishwasher" not in plan.load_kw
    np.testing.assert_allclose(plan.fixed_kw["dishwasher"], pinned)
    washer = plan.load_kw["washer"]
    assert washer.max() == pytest.approx(4.0)  # planned within the horizon, above the limit: the PV and battery help
    np.testing.assert_allclose(plan.phase_kw["L2"] - plan.phase_kw["L3"], pinned - washer, atol=1e-6)
    np.testing.assert_allclose(plan.phase_kw["L1"] - plan.phase_kw["L3"], -washer, atol=1e-6)
    total = plan.phase_kw["L1"] + plan.phase_kw["L2"] + plan.phase_kw["L3"]
    np.testing.assert_allclose(total, plan.import_kw - plan.export_kw, atol=1e-6)
    assert np.all(np.abs(total) <= 3 * 3.68 + 1e-6)


async def test_a_phase_the_plan_cannot_keep_is_named_with_its_devices(
    hass: HomeAssistant, eight: MockConfigEntry, hass_ws_client: WebSocketGenerator, hass_read_only_access_token: str
) -> None:
    """8 A x 230 V = 1.84 kW per phase: the pinned dishwasher (1.8 kW on L2) still fits; the 4 kW washer on L3 never
    does: the PV (2 kW) and the battery (3 kW), both three-phase, take at most 5 / 3 kW off L3, leaving 2.33 kW."""
    manager = await _pin_dishwasher(hass, eight)
    result = manager.result
    assert result is not None and result.plan is None and result.reason == "phase"
    over = result.phase_over
    assert over is not None and over.phase == "L3" and over.limit_kw == pytest.approx(1.84)
    assert over.devices[0] == ("Washing machine", pytest.approx(4.0))
    assert 4.0 - 5 / 3 - 1e-6 <= over.power_kw <= 4.0 + 1e-6
    assert "phase L3 would carry" in result.detail and "Washing machine 4.00 kW" in result.detail
    attributes = hass.states.get("sensor.agentic_hems_home_plan_cost").attributes
    assert attributes["status"] == "phase"
    assert attributes["phase_over"]["phase"] == "L3"
    assert attributes["phase_over"]["devices"][0] == {"name": "Washing machine", "kw": 4.0}
    client = await hass_ws_client(hass, hass_read_only_access_token)
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_schedule"})
    assert (await client.receive_json())["success"]
    home = (await client.receive_json())["event"]["home"]
    assert home["reason"] == "phase" and home["phase_over"] == attributes["phase_over"]


def test_fixed_loads_past_a_phase_limit_raise_that_phase_only() -> None:
    """A washer pinned on L2 draws 4 kW in the second hour and the base load 0.9 kW (0.3 per phase): L2 carries
    4.3 kW there, above the 3.68 kW limit; L1 and L3 (0.3 kW) stay. The limit of L2 becomes 4.3 kW in that hour
    only, 3.68 kW in the others, noted with the hour."""
    curve = PriceCurve(start=datetime(2026, 11, 29, 19, tzinfo=UTC), resolution=timedelta(hours=1),
                       prices=np.array([0.3, 0.1, 0.2]), source="test")
    phases = PhaseLimits(limit_kw=3.68, assignment={"washer": "L2"})
    fixed = {"base": np.full(3, 0.9), "washer": np.array([0.0, 4.0, 0.0])}
    notes: list[str] = []
    kept = phases_over_fixed(phases, fixed, notes, {"washer": "Washing machine"}, curve)
    assert kept is not None and list(kept.raised_kw) == ["L2"]
    np.testing.assert_allclose(kept.limit("L2"), [3.68, 4.3, 3.68])
    assert (kept.limit("L1"), kept.limit("L3")) == (3.68, 3.68)
    assert notes == ["loads the plan cannot move draw up to 4.30 kW on L2, above its 3.68 kW limit, at "
                     "2026-11-29T20:00-21:00Z: Washing machine 4.00 kW, base load 0.30 kW"]
    assert phases_over_fixed(phases, {"base": np.full(3, 0.9)}, notes, {}, curve) is phases and len(notes) == 1
    assert phases_over_fixed(None, fixed, notes, {}, curve) is None


async def test_heat_pumps_left_out_for_a_phase_are_named_as_users_see_them(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """2 A x 230 V = 0.46 kW per phase: the heat pump on L2 cannot keep the living room warm (it loses about 2.8 kW
    of heat at 2 °C outdoors) within it, so the home is planned without it; the note names it "Heat pump", not by its
    subentry id."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _heated_house(hass)
    entry = MockConfigEntry(
        domain=DOMAIN, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options={**DEFAULT_OPTIONS, "phase_count": "3", "phase_current_a": 2, "nominal_voltage": 230.0},
        subentries_data=[ConfigSubentryData(data=HEAT_PUMP, subentry_id=HEAT_ID, subentry_type="heat_pump",
                                            title=HEAT_PUMP["name"], unique_id=None)],
        version=1, minor_version=1,
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    result = entry.runtime_data.home.result
    assert result is not None and result.plan is not None and result.plan.heat_kw == {}
    assert re.search(r"left out: heat pumps: no plan satisfies every constraint; conflicting: comfort, phase: phase L2 "
                     r"would carry 3\.00 kW at \S+, above its 0\.46 kW limit; on it draw: Heat pump 3\.00 kW;",
                     result.detail), result.detail
    assert HEAT_ID not in result.detail
