"""Service actions against a loaded sample entry, checked against brute force on the served prices."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import translation

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.gates.models import Outcome

from .conftest import NOW, sample_entry
from .oracles import be_60m_hourly_eur_per_kwh, cheapest_fill, cheapest_run, planned_kw


async def call(hass: HomeAssistant, service: str, **data: Any) -> dict[str, Any]:
    """Call a service of ours and return its response."""
    return await hass.services.async_call(DOMAIN, service, data, blocking=True, return_response=True)


async def test_get_prices_serves_the_real_documents(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """Today is BE_60M re-dated to local midnight: each hour's price on four quarter-hours, in EUR/kWh."""
    response = await call(hass, "get_prices")
    assert response["unit"] == "EUR/kWh"
    assert response["currency"] == "EUR"
    assert response["resolution_minutes"] == 15
    assert response["source"] == "sample"
    assert response["sample"] is True
    prices = response["prices"]
    assert len(prices) == 192  # local today and tomorrow, 96 slots each
    assert prices[0]["start"] == "2026-11-28T23:00:00+00:00"
    assert prices[0]["end"] == "2026-11-28T23:15:00+00:00"
    hourly = be_60m_hourly_eur_per_kwh()
    assert [p["price"] for p in prices[:96]] == pytest.approx([hourly[k // 4] for k in range(96)])
    assert all(p["price"] is not None for p in prices)


async def test_plan_dishwasher_is_the_cheapest_run(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The appliance's next window is tonight 20:15 (rounded up from 20:05) to 07:00 tomorrow."""
    prices = (await call(hass, "get_prices"))["prices"]
    plan = await call(hass, "plan", appliance="Dishwasher")
    start, end = datetime.fromisoformat("2026-11-29T19:15:00+00:00"), datetime.fromisoformat("2026-11-30T06:00:00+00:00")
    base = planned_kw(hass, exclude="dishwasher")
    total, first = cheapest_run(prices, start, end, slots=10, power_kw=1.8, base=base, limit_kw=11.0)  # 150 min
    assert plan["feasible"] is True
    assert plan["start"] == prices[first]["start"]
    assert datetime.fromisoformat(plan["end"]) - datetime.fromisoformat(plan["start"]) == timedelta(minutes=150)
    assert plan["cost"] == pytest.approx(total * 1.8 * 0.25, abs=1e-6)
    baseline = sum(p["price"] for p in prices if start <= datetime.fromisoformat(p["start"]) < start + timedelta(minutes=150))
    assert plan["baseline_cost"] == pytest.approx(baseline * 1.8 * 0.25, abs=1e-6)
    assert plan["savings"] == pytest.approx(plan["baseline_cost"] - plan["cost"], abs=2e-6)  # each rounded to 1e-6
    assert plan["sample"] is True
    assert plan["appliance"] == "dishwasher"
    assert plan["currency"] == "EUR"


async def test_plan_ad_hoc_energy_fills_cheapest_slots(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """An ad-hoc EV load: 30 kWh at up to 11 kW takes the cheapest slots left under the fuse, the last one partial."""
    prices = (await call(hass, "get_prices"))["prices"]
    deadline = NOW + timedelta(hours=12)
    plan = await call(hass, "plan", power_kw=11, energy_kwh=30, deadline=deadline.isoformat(), contiguous=False)
    # 20:05 rounds up to 20:15 local; the deadline rounds down to 08:00; the other plans stay within the 11 kW fuse.
    oracle = cheapest_fill(
        prices,
        datetime.fromisoformat("2026-11-29T19:15:00+00:00"),
        datetime.fromisoformat("2026-11-30T07:00:00+00:00"),
        energy_kwh=30,
        max_kw=11,
        base=planned_kw(hass), limit_kw=11.0,
    )
    assert plan["feasible"] is True
    assert plan["energy_kwh"] == pytest.approx(30.0)
    assert plan["cost"] == pytest.approx(oracle, abs=1e-6)
    base = planned_kw(hass)
    starts = [p["start"] for p in prices]
    planned = dict(zip(starts, plan["power_kw"][: len(starts)] if plan["curve_start"] == starts[0] else [], strict=False))
    assert planned, "the plan is aligned with the served curve"
    assert all(base.get(s, 0.0) + kw <= 11.0 + 1e-9 for s, kw in planned.items())
    assert plan["appliance"] is None


async def test_plan_rejects_bad_input(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """Bad input raises a translated ServiceValidationError."""
    cases = [
        ({"appliance": "Toaster"}, "appliance_not_found"),
        ({"power_kw": 2, "duration_min": 60}, "missing_load_fields"),
        ({"power_kw": 2, "deadline": (NOW + timedelta(hours=2)).isoformat()}, "missing_load_fields"),
        (
            {"power_kw": 2, "duration_min": 60, "earliest_start": (NOW + timedelta(hours=3)).isoformat(), "deadline": (NOW + timedelta(hours=2)).isoformat()},
            "deadline_before_start",
        ),
        ({"config_entry_id": "nope", "appliance": "Dishwasher"}, "entry_not_found"),
        ({"power_kw": 2, "duration_min": 60, "deadline": (NOW - timedelta(minutes=5)).isoformat()}, "deadline_passed"),
        ({"appliance": "Dishwasher", "energy_kwh": 5}, "amount_mismatch"),
        ({"power_kw": 2, "duration_min": 60, "contiguous": False, "deadline": (NOW + timedelta(hours=2)).isoformat()}, "amount_mismatch"),
    ]
    for data, key in cases:
        with pytest.raises(ServiceValidationError) as err:
            await call(hass, "plan", **data)
        assert err.value.translation_key == key, data
        assert err.value.translation_domain == DOMAIN


async def test_two_entries_need_an_entry_id(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """With two loaded entries the services refuse to guess."""
    other = MockConfigEntry(domain=DOMAIN, title="Second", unique_id="second", data={"price_source": "sample"}, options=dict(loaded_entry.options))
    other.add_to_hass(hass)
    assert await hass.config_entries.async_setup(other.entry_id)
    await hass.async_block_till_done()
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "get_prices")
    assert err.value.translation_key == "entry_required"
    response = await call(hass, "get_prices", config_entry_id=other.entry_id)
    assert len(response["prices"]) == 192


async def test_schedule_persists_and_clear_replans(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_storage: dict[str, Any]
) -> None:
    """A scheduled plan is stored, shown by the entities, kept over a reload, and cleared on request."""
    auto_start = hass.states.get("sensor.dishwasher_next_start").state
    deadline = NOW + timedelta(hours=3)
    response = await call(hass, "schedule", appliance="dishwasher", deadline=deadline.isoformat())
    assert response["feasible"] is True
    assert datetime.fromisoformat(response["end"]) <= deadline
    state = hass.states.get("sensor.dishwasher_next_start")
    assert datetime.fromisoformat(state.state) == datetime.fromisoformat(response["start"])
    assert state.attributes["scheduled_by_service"] is True
    stored = hass_storage[f"{DOMAIN}.{loaded_entry.entry_id}.plans"]["data"]["dishwasher"]
    assert stored["pinned"] is True
    assert stored["plan"]["start"] == response["start"]

    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    await hass.async_block_till_done()
    assert hass.states.get("sensor.dishwasher_next_start").state == state.state

    await hass.services.async_call(DOMAIN, "clear_schedule", {"appliance": "Dishwasher"}, blocking=True)
    await hass.async_block_till_done()
    state = hass.states.get("sensor.dishwasher_next_start")
    assert state.state == auto_start
    assert state.attributes["scheduled_by_service"] is False


async def test_schedule_refuses_infeasible_and_stores_nothing(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_storage: dict[str, Any]
) -> None:
    """A 150-minute run cannot fit before a deadline one hour away: translated error, nothing stored."""
    before = hass_storage[f"{DOMAIN}.{loaded_entry.entry_id}.plans"]["data"]["dishwasher"]
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "schedule", appliance="Dishwasher", deadline=(NOW + timedelta(hours=1)).isoformat())
    assert err.value.translation_key == "plan_infeasible"
    assert hass_storage[f"{DOMAIN}.{loaded_entry.entry_id}.plans"]["data"]["dishwasher"] == before
    assert hass.states.get("sensor.dishwasher_next_start").attributes["scheduled_by_service"] is False


async def test_no_entry_loaded(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """Services exist once the integration is set up; with every entry unloaded they say so."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert await hass.config_entries.async_unload(entry.entry_id)
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "get_prices")
    assert err.value.translation_key == "no_entry_loaded"
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "get_prices", config_entry_id=entry.entry_id)
    assert err.value.translation_key == "entry_not_loaded"


async def test_own_deadline_plans_from_now(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """An appliance with a caller's deadline runs from now, even before its daily window would open."""
    deadline = NOW + timedelta(hours=4)  # 00:05 local; the washing machine's window opens at 08:00
    prices = (await call(hass, "get_prices"))["prices"]
    plan = await call(hass, "plan", appliance="Washing machine", deadline=deadline.isoformat())
    base = planned_kw(hass, exclude="washing_machine")
    start = datetime.fromisoformat("2026-11-29T19:15:00+00:00")
    end = datetime.fromisoformat("2026-11-29T23:00:00+00:00")  # 00:05 local rounds down to 00:00
    total, first = cheapest_run(prices, start, end, slots=7, power_kw=2.0, base=base, limit_kw=11.0)  # 100 min
    assert plan["start"] == prices[first]["start"]
    assert plan["cost"] == pytest.approx(total * 2.0 * 0.25, abs=1e-6)


async def test_stored_plan_is_costed_at_new_prices(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """A scheduled plan survives an options change; its cost sensor follows the new price formula."""
    response = await call(hass, "schedule", appliance="Dishwasher", deadline=(NOW + timedelta(hours=3)).isoformat())
    kwh = response["energy_kwh"]
    hass.config_entries.async_update_entry(loaded_entry, options={**loaded_entry.options, "grid_fee": 0.1})
    await hass.async_block_till_done()
    state = hass.states.get("sensor.dishwasher_next_start")
    assert state.state == response["start"] and state.attributes["scheduled_by_service"] is True
    cost = float(hass.states.get("sensor.dishwasher_planned_cost").state)
    assert cost == pytest.approx(response["cost"] + 0.1 * kwh, abs=1e-6)  # the grid fee on every kWh


async def test_stored_plan_over_a_lowered_fuse_is_replanned(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """A scheduled EV plan at 11 kW is replanned when the fuse drops to 3 kW; every slot then stays within it."""
    await call(hass, "schedule", appliance="EV charger", energy_kwh=10)
    hass.config_entries.async_update_entry(loaded_entry, options={**loaded_entry.options, "power_limit_kw": 3.0})
    await hass.async_block_till_done(wait_background_tasks=True)
    total = planned_kw(hass)
    assert max(total.values()) <= 3.0 + 1e-9
    assert hass.states.get("sensor.ev_charger_next_start").attributes["scheduled_by_service"] is False


async def message(hass: HomeAssistant, err: ServiceValidationError) -> str:
    """The English sentence the frontend shows for ``err``: its message in en.json with the placeholders filled."""
    strings = await translation.async_get_translations(hass, "en", "exceptions", [DOMAIN])
    text = strings[f"component.{DOMAIN}.exceptions.{err.translation_key}.message"]
    return text.format(**(err.translation_placeholders or {}))


SOON = (NOW + timedelta(hours=2)).isoformat()


@pytest.mark.parametrize(
    ("service", "data", "expected"),
    [
        ("plan", {"power_kw": 0, "duration_min": 60, "deadline": SOON}, "Power must be at least 0.01."),
        ("plan", {"power_kw": 2000, "duration_min": 60, "deadline": SOON}, "Power must be at most 1000."),
        ("plan", {"power_kw": "lots", "duration_min": 60, "deadline": SOON}, "Power must be a number."),
        ("plan", {"power_kw": 2, "duration_min": 60, "energy_kwh": 3, "deadline": SOON}, "Give only one of Duration, Energy."),
        ("plan", {"power_kw": 2, "duration_min": 60, "deadline": "tonight"},
         "Deadline must be a date and time, such as 2026-12-01 18:30."),
        ("plan", {"power_kw": 2, "duration_min": 60, "deadline": SOON, "why": 1}, "This action has no field why."),
        ("plan", {"contiguous": "maybe"}, "Runs without a break must be true or false."),
        ("schedule", {}, "Appliance is required."),
        ("get_traces", {"limit": 0}, "Limit must be at least 1."),
        ("get_traces", {"limit": 2.5}, "Limit must be a whole number."),
        ("get_traces", {"outcome": "done"}, f"Outcome must be one of: {', '.join(map(str, Outcome))}."),
        ("get_traces", {"entity_id": "dishwasher"}, "Entity must be an entity ID, such as switch.dishwasher."),
        ("evaluate_command", {"source_agent": ""}, "Source agent must not be empty."),
        ("evaluate_command", {"source_agent": "a" * 65}, "Source agent must be at most 64 characters long."),
        ("confirm", {}, "Trace ID is required."),
        ("simulate_action", {"snapshot_id": "s", "signature": "abc", "actions": [
            {"type": "battery_power", "asset_id": "battery", "start": SOON, "end": SOON, "p_kw": 1}]},
         "Signature must be at least 64 characters long."),
    ],
)
async def test_invalid_fields_are_sentences(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, service: str, data: dict[str, Any], expected: str
) -> None:
    """A field the schema rejects is a translated sentence naming the field (as the action's form does) and limit."""
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, service, **data)
    assert err.value.translation_domain == DOMAIN
    assert await message(hass, err.value) == expected


async def test_times_in_errors_are_local(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """Times in error messages are HA's time zone's (Brussels, UTC+1 in November), never UTC ISO strings."""
    passed = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)  # 19:00 in Brussels
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "plan", power_kw=2, duration_min=60, deadline=passed.isoformat())
    assert await message(hass, err.value) == "The deadline 2026-11-29 19:00 has already passed."
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "plan", power_kw=2, duration_min=60, earliest_start="2026-11-30T03:00:00+00:00",
                   deadline="2026-11-30T02:30:00+00:00")
    assert await message(hass, err.value) == (
        "The deadline 2026-11-30 03:30 must come after the earliest start 2026-11-30 04:00."
    )
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "get_traces", since="2026-11-29T12:00:00", until="2026-11-29T10:00:00+00:00")
    assert await message(hass, err.value) == "The start of the time range (2026-11-29 12:00) is after its end (2026-11-29 11:00)."
