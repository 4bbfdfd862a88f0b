"""Entities: values, unrecorded slot arrays on normal and DST days, run-now timing, ready-by and the switch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.coordinator import tomorrow_available
from custom_components.agentic_hems.prices import PriceCurve
from custom_components.agentic_hems.sensor import AgenticHemsSensor

from .conftest import NOW, TZ, sample_entry
from .oracles import be_60m_hourly_eur_per_kwh, planned_kw

# Each appliance alone at NOW on the sample prices (dishwasher 0.131319 + washer -0.000035 + EV 0.88188 EUR).
UNCONSTRAINED_COST = 0.131319 - 0.000035 + 0.88188


async def test_price_sensor(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The state is the current slot's price; today's and tomorrow's curves are unrecorded attributes."""
    state = hass.states.get("sensor.agentic_hems_electricity_price")
    assert float(state.state) == pytest.approx(be_60m_hourly_eur_per_kwh()[20])  # 20:05 local → hour 20
    assert state.attributes["unit_of_measurement"] == "EUR/kWh"
    assert state.attributes["state_class"] == "measurement"
    assert state.attributes["sample"] is True
    assert len(state.attributes["today"]) == 96
    assert len(state.attributes["tomorrow"]) == 96
    assert {"today", "tomorrow"} <= AgenticHemsSensor._unrecorded_attributes
    assert hass.states.get("binary_sensor.agentic_hems_tomorrow_s_prices_available").state == STATE_ON


async def test_devices_per_appliance(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """Each appliance subentry has one device with its five entities, linked to the subentry."""
    registry = er.async_get(hass)
    devices = {  # the entry's devices by identifier (HA 2026.10: identifiers are unique per config entry only)
        identifier: device
        for device in dr.async_entries_for_config_entry(dr.async_get(hass), loaded_entry.entry_id)
        for identifier in device.identifiers
    }
    site = devices[(DOMAIN, loaded_entry.entry_id)]
    assert site.id == loaded_entry.runtime_data.device_id
    assert site.entry_type is dr.DeviceEntryType.SERVICE  # prices, device control and the assistant: a service
    for subentry_id, name, model in (
        ("dishwasher", "Dishwasher", "Dishwasher"),
        ("washer", "Washing machine", "Washing machine"),
        ("ev", "EV charger", "EV charger"),
    ):
        device = devices[(DOMAIN, subentry_id)]
        assert device.name == name and device.via_device_id == site.id
        assert (device.entry_type, device.manufacturer, device.model) == (None, None, model)  # a device, no service
        keys = sorted(e.translation_key for e in er.async_entries_for_device(registry, device.id))
        assert keys == ["automatic_planning", "next_start", "planned_cost", "ready_by", "run_now"]
        assert {e.config_subentry_id for e in er.async_entries_for_device(registry, device.id)} == {subentry_id}


async def test_appliance_devices_registered_as_services_become_devices(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory
) -> None:
    """Set-up turns appliance devices that an earlier version registered as services into devices, once."""
    freezer.move_to(NOW)
    entry = sample_entry()
    entry.add_to_hass(hass)
    registry = dr.async_get(hass)
    for subentry_id, identifier in ((None, entry.entry_id), ("dishwasher", "dishwasher"), ("ev", "ev")):
        registry.async_get_or_create(
            config_entry_id=entry.entry_id,
            config_subentry_id=subentry_id,
            identifiers={(DOMAIN, identifier)},
            manufacturer="Agentic HEMS",
            entry_type=dr.DeviceEntryType.SERVICE,
        )
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    kinds = {
        identifier: (device.entry_type, device.manufacturer)
        for device in dr.async_entries_for_config_entry(registry, entry.entry_id)
        for _, identifier in device.identifiers
    }
    assert kinds == {
        entry.entry_id: (dr.DeviceEntryType.SERVICE, "Agentic HEMS"),
        "dishwasher": (None, None),
        "washer": (None, None),
        "ev": (None, None),
    }


async def test_more_info_attributes_stay_small(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """Run now carries its start and end, the last decision its small fields and reason: no arrays, no trace."""
    plan = loaded_entry.runtime_data.planner.states["dishwasher"].plan
    run = hass.states.get("binary_sensor.dishwasher_run_now").attributes
    assert {k: run[k] for k in ("start", "end")} == {"start": plan.start.isoformat(), "end": plan.end.isoformat()}
    assert set(run) == {"start", "end", "friendly_name"}
    await hass.services.async_call(
        DOMAIN,
        "evaluate_command",
        {"source_agent": "test", "model_candidate": {"intent": "turn_on", "device_alias": "nowhere"},
         "raw_input": "turn on nowhere"},
        blocking=True,
        return_response=True,
    )
    last = loaded_entry.runtime_data.control.last
    decision = hass.states.get("sensor.agentic_hems_last_gate_decision").attributes
    assert "trace" not in decision
    assert decision["trace_id"] == last["trace_id"] and decision["reason"] == last["gate_results"][-1]["reason"]
    own = {k: v for k, v in decision.items() if k != "options"}  # the enum's states: Home Assistant's own attribute
    assert all(not isinstance(v, list | dict) for v in {**run, **own}.values())


async def test_monetary_sensors_have_the_currency(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, entity_registry: er.EntityRegistry
) -> None:
    """Every monetary sensor shows the entry's currency, and each cost shows two decimals."""
    entity_registry.async_update_entity("sensor.agentic_hems_assistant_total_cost", disabled_by=None)
    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    await hass.async_block_till_done()
    monetary = [
        e for e in er.async_entries_for_config_entry(entity_registry, loaded_entry.entry_id)
        if e.original_device_class == "monetary"
    ]
    assert sorted(e.translation_key for e in monetary) == ["planned_cost"] * 3 + ["run_total_cost"]
    for entry in monetary:
        assert entry.unit_of_measurement == "EUR", entry.entity_id
        assert entry.options["sensor"]["suggested_display_precision"] == 2, entry.entity_id
    await loaded_entry.runtime_data.planner.async_set_auto("dishwasher", False)
    await loaded_entry.runtime_data.planner.async_clear_plan("dishwasher")
    await hass.async_block_till_done()
    cleared = hass.states.get("sensor.dishwasher_planned_cost")
    assert (cleared.state, cleared.attributes["unit_of_measurement"]) == ("unknown", "EUR")  # no plan: still EUR


async def test_run_now_follows_the_plan(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """Run now turns on at the planned start's slot boundary and off after the last planned slot."""
    state = hass.states.get("binary_sensor.dishwasher_run_now")
    start = datetime.fromisoformat(state.attributes["start"])
    end = datetime.fromisoformat(state.attributes["end"])
    assert state.state == STATE_OFF
    freezer.move_to(start - timedelta(seconds=1))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert hass.states.get("binary_sensor.dishwasher_run_now").state == STATE_OFF
    freezer.move_to(start)
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert hass.states.get("binary_sensor.dishwasher_run_now").state == STATE_ON
    freezer.move_to(end)
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert hass.states.get("binary_sensor.dishwasher_run_now").state == STATE_OFF


@pytest.mark.parametrize(
    ("local_now", "today_slots", "tomorrow_slots"),
    [
        (datetime(2026, 11, 29, 20, 5), 96, 96),
        (datetime(2026, 3, 28, 20, 5), 96, 92),  # tomorrow is the 23-hour day
        (datetime(2026, 3, 29, 12, 5), 92, 96),
        (datetime(2025, 10, 26, 12, 5), 100, 96),  # the 25-hour day
    ],
)
async def test_slot_arrays_on_dst_days(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, local_now: datetime, today_slots: int, tomorrow_slots: int
) -> None:
    """Price arrays cover the local day: 92, 96 or 100 entries; the plan holds the EV's energy; run now stays small."""
    await hass.config.async_set_time_zone(TZ)
    freezer.move_to(local_now.replace(tzinfo=ZoneInfo(TZ)))
    entry = sample_entry()
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    price = hass.states.get("sensor.agentic_hems_electricity_price").attributes
    assert (len(price["today"]), len(price["tomorrow"])) == (today_slots, tomorrow_slots)
    assert all(p["price"] is not None for p in price["today"] + price["tomorrow"])
    starts = [datetime.fromisoformat(p["start"]) for p in price["today"] + price["tomorrow"]]
    assert all(b - a == timedelta(minutes=15) for a, b in zip(starts, starts[1:], strict=False))
    ev_kwh = (sum(planned_kw(hass).values()) - sum(planned_kw(hass, exclude="ev_charger").values())) * 0.25
    assert ev_kwh == pytest.approx(30.0)  # the EV's 30 kWh
    assert set(hass.states.get("binary_sensor.ev_charger_run_now").attributes) == {"start", "end", "friendly_name"}


async def test_ready_by_replans(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """An earlier "ready by" moves the plan inside the new deadline."""
    await hass.services.async_call(
        "time", "set_value", {"entity_id": "time.dishwasher_ready_by", "time": "23:30:00"}, blocking=True
    )
    await hass.async_block_till_done()
    assert hass.states.get("time.dishwasher_ready_by").state == "23:30:00"
    end = datetime.fromisoformat(hass.states.get("binary_sensor.dishwasher_run_now").attributes["end"])
    assert end <= datetime(2026, 11, 29, 23, 30, tzinfo=ZoneInfo(TZ))


async def test_switch_off_keeps_the_plan(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """With automatic planning off, a new deadline does not move the plan."""
    before = hass.states.get("sensor.dishwasher_next_start").state
    await hass.services.async_call("switch", "turn_off", {"entity_id": "switch.dishwasher_automatic_planning"}, blocking=True)
    assert hass.states.get("switch.dishwasher_automatic_planning").state == STATE_OFF
    await hass.services.async_call(
        "time", "set_value", {"entity_id": "time.dishwasher_ready_by", "time": "23:30:00"}, blocking=True
    )
    await hass.async_block_till_done()
    assert hass.states.get("sensor.dishwasher_next_start").state == before
    await hass.services.async_call("switch", "turn_on", {"entity_id": "switch.dishwasher_automatic_planning"}, blocking=True)
    await hass.async_block_till_done()
    assert hass.states.get("sensor.dishwasher_next_start").state != before


async def test_unload_removes_entities_state(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """Unloading leaves every entity unavailable and stops the slot timer."""
    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    await hass.async_block_till_done()
    assert hass.states.get("sensor.agentic_hems_electricity_price").state == "unavailable"
    assert hass.states.get("binary_sensor.dishwasher_run_now").state == "unavailable"


@pytest.mark.parametrize("limit_kw", [11.0, 12.0, 100.0])
async def test_automatic_plans_share_the_fuse(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, limit_kw: float
) -> None:
    """All automatic plans together stay under the household power limit; a loose limit costs no more."""
    freezer.move_to(NOW)
    entry = sample_entry(power_limit_kw=limit_kw)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    total = planned_kw(hass)
    assert max(total.values()) <= limit_kw + 1e-9
    costs = sum(float(hass.states.get(f"sensor.{n}_planned_cost").state) for n in ("dishwasher", "washing_machine", "ev_charger"))
    # The unconstrained optimum (each appliance's own cheapest plan) is a lower bound on the joint cost.
    assert costs >= UNCONSTRAINED_COST - 1e-6
    if limit_kw >= 12.8:  # the EV's 11 kW and the dishwasher's 1.8 kW fit side by side
        assert costs == pytest.approx(UNCONSTRAINED_COST, abs=1e-5)
    else:  # their unconstrained plans overlap at 12.8 kW, so the fuse costs something
        assert costs > UNCONSTRAINED_COST + 1e-4


@pytest.mark.parametrize(
    ("zone", "local_now", "daily", "expected"),
    [
        ("Europe/Brussels", datetime(2026, 11, 29, 12, 40), False, True),  # the sample always has tomorrow
        ("Europe/Brussels", datetime(2026, 11, 29, 12, 40), True, False),  # a market: not published yet
        ("Europe/Brussels", datetime(2026, 11, 29, 13, 0), True, True),
        ("Europe/Lisbon", datetime(2026, 11, 29, 12, 0), True, True),  # 13:00 in Brussels
        ("Europe/Helsinki", datetime(2026, 11, 29, 13, 30), True, False),  # 12:30 in Brussels
        ("Europe/Helsinki", datetime(2026, 11, 29, 13, 50), True, True),
    ],
)
async def test_tomorrow_available(
    hass: HomeAssistant, zone: str, local_now: datetime, daily: bool, expected: bool
) -> None:
    """Tomorrow counts once published (12:45 Brussels) and priced as far as published."""
    await hass.config.async_set_time_zone(zone)
    now = local_now.replace(tzinfo=ZoneInfo(zone))
    # Published: Brussels today and tomorrow; the Brussels day after tomorrow is unknown.
    start = datetime(2026, 11, 28, 23, tzinfo=UTC)
    prices = np.full(2 * 96 + 8, 0.1)
    prices[192:] = np.nan
    curve = PriceCurve(start, timedelta(minutes=15), prices)
    assert tomorrow_available(curve, now, daily_publication=daily) is expected


async def test_tomorrow_sensor(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The sample entry's sensor is on: both days are priced."""
    assert hass.states.get("binary_sensor.agentic_hems_tomorrow_s_prices_available").state == STATE_ON


async def test_ready_by_too_early_is_refused(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """A "ready by" that leaves no room for the run is a translated error; nothing changes."""
    from homeassistant.exceptions import ServiceValidationError

    before = hass.states.get("sensor.dishwasher_next_start").state
    with pytest.raises(ServiceValidationError) as err:  # 150 minutes from 18:00 need until 20:30
        await hass.services.async_call(
            "time", "set_value", {"entity_id": "time.dishwasher_ready_by", "time": "20:00:00"}, blocking=True
        )
    assert err.value.translation_key == "window_too_short"
    assert hass.states.get("time.dishwasher_ready_by").state == "07:00:00"
    assert hass.states.get("sensor.dishwasher_next_start").state == before


async def test_ready_by_shows_the_deadline_asked_for(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """After "charge the car by 7:30" the car's "ready by" shows 07:30 until that plan ends; a new value replans."""
    response = await hass.services.async_call(
        DOMAIN, "ask", {"text": "charge the car by 7:30"}, blocking=True, return_response=True
    )
    (plan,) = response["plans"]
    assert plan["feasible"] and datetime.fromisoformat(plan["end"]) <= datetime(2026, 11, 30, 7, 30, tzinfo=ZoneInfo(TZ))
    assert hass.states.get("time.ev_charger_ready_by").state == "07:30:00"
    assert hass.states.get("time.dishwasher_ready_by").state == "07:00:00"  # not asked for: the daily deadline
    await hass.services.async_call(
        "time", "set_value", {"entity_id": "time.ev_charger_ready_by", "time": "06:00:00"}, blocking=True
    )
    await hass.async_block_till_done()
    assert hass.states.get("time.ev_charger_ready_by").state == "06:00:00"
    end = datetime.fromisoformat(hass.states.get("binary_sensor.ev_charger_run_now").attributes["end"])
    assert end <= datetime(2026, 11, 30, 6, 0, tzinfo=ZoneInfo(TZ))


async def test_a_request_understood_as_nothing_is_no_success(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """A question the offline planner does not understand does nothing, says so, and counts as a failed run."""
    response = await hass.services.async_call(
        DOMAIN, "ask", {"text": "how many lights are on?"}, blocking=True, return_response=True
    )
    assert response["success"] is False and response["plans"] == [] and response["actions"] == []
    assert response["summary"] == (
        "I did not understand the request, so nothing was done. I can plan your appliances (Dishwasher, "
        "Washing machine, EV charger) and tell the prices."
    )
    runs = await hass.services.async_call(DOMAIN, "get_runs", {}, blocking=True, return_response=True)
    assert runs["runs"][0]["success"] is False
