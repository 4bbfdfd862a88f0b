"""Automatic planning over time: one run per daily window, replans on appliance changes, robust persistence."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN

from .conftest import APPLIANCES, NOW, TZ, sample_entry


def plan_of(hass: HomeAssistant, name: str) -> tuple[datetime, datetime]:
    attrs = hass.states.get(f"binary_sensor.{name}_run_now").attributes
    return datetime.fromisoformat(attrs["start"]), datetime.fromisoformat(attrs["end"])


async def test_one_run_per_daily_window(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """When the washing machine's run ends, the next plan goes into tomorrow's 08:00-20:00 window, not today's rest."""
    start, end = plan_of(hass, "washing_machine")
    local = ZoneInfo(TZ)
    assert datetime(2026, 11, 30, 8, tzinfo=local) <= start < end <= datetime(2026, 11, 30, 20, tzinfo=local)
    freezer.move_to(end)
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    next_start, next_end = plan_of(hass, "washing_machine")
    assert next_start >= datetime(2026, 12, 1, 8, tzinfo=local)  # the window of the day after
    assert next_end <= datetime(2026, 12, 1, 20, tzinfo=local)


async def test_an_ended_plan_is_replaced_after_its_stop_is_issued(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """At a plan's end the price update's replan and the scheduler fire in either order: a replan that comes first
    keeps the ended plan, so the scheduler still finds its stop; once the scheduler has taken it, the plan is
    replaced by the next window's."""
    planner = loaded_entry.runtime_data.planner
    plan = planner.states["dishwasher"].plan
    assert plan is not None and plan.start is not None and plan.end is not None
    freezer.move_to(plan.end)
    await planner.async_replan_due()  # the price update, before the scheduler
    assert planner.states["dishwasher"].plan is plan
    assert planner.transitions_at(plan.end) == [("dishwasher", "stop")]
    await planner.async_replan_due()  # what the scheduler starts after taking the boundary's transitions
    replanned = planner.states["dishwasher"].plan
    assert replanned is not None and replanned.start is not None and replanned.start >= plan.end + timedelta(hours=12)


async def test_changed_appliance_is_replanned(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """Reconfiguring the dishwasher's duration replans it at once, with the new run length."""
    subentry = loaded_entry.subentries["dishwasher"]
    hass.config_entries.async_update_subentry(loaded_entry, subentry, data={**subentry.data, "duration_min": 60})
    await hass.async_block_till_done(wait_background_tasks=True)
    start, end = plan_of(hass, "dishwasher")
    assert end - start == timedelta(minutes=60)


async def test_ready_by_override_yields_to_a_new_configured_deadline(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """A "ready by" set on the entity wins until the appliance's own deadline is reconfigured."""
    await hass.services.async_call(
        "time", "set_value", {"entity_id": "time.dishwasher_ready_by", "time": "23:30:00"}, blocking=True
    )
    await hass.async_block_till_done(wait_background_tasks=True)
    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert hass.states.get("time.dishwasher_ready_by").state == "23:30:00"  # kept over a restart
    subentry = loaded_entry.subentries["dishwasher"]
    hass.config_entries.async_update_subentry(loaded_entry, subentry, data={**subentry.data, "deadline": "06:00:00"})
    await hass.async_block_till_done(wait_background_tasks=True)
    assert hass.states.get("time.dishwasher_ready_by").state == "06:00:00"


@pytest.mark.parametrize(
    "stored",
    [
        {"version": 1, "minor_version": 1, "key": "k", "data": ["not", "a", "dict"]},
        {"version": 1, "minor_version": 1, "key": "k", "data": {"dishwasher": {"plan": {"start": "nonsense"}}}},
        {"version": 9, "minor_version": 1, "key": "k", "data": {}},
    ],
    ids=["not-a-mapping", "bad-plan", "newer-version"],
)
async def test_unreadable_plans_start_fresh(
    hass: HomeAssistant,
    tz: str,
    freezer: FrozenDateTimeFactory,
    hass_storage: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    stored: dict[str, Any],
) -> None:
    """A corrupt plans Store is dropped with a warning; the entry loads and plans afresh."""
    freezer.move_to(NOW)
    entry = sample_entry()
    hass_storage[f"{DOMAIN}.{entry.entry_id}.plans"] = stored
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    assert "Dropping unreadable stored plan" in caplog.text
    start, end = plan_of(hass, "dishwasher")
    assert end - start == timedelta(minutes=150)


async def test_sample_is_not_reparsed_while_the_cache_covers_both_days(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """A restart or a slot boundary reuses the cached sample; the local day turning re-dates it once."""
    from unittest.mock import patch

    from custom_components.agentic_hems.prices import sample

    with patch.object(sample, "sample_curve", wraps=sample.sample_curve) as spy:
        assert await hass.config_entries.async_reload(loaded_entry.entry_id)
        await hass.async_block_till_done(wait_background_tasks=True)
        freezer.move_to(NOW + timedelta(minutes=10))  # 20:15: a slot boundary
        async_fire_time_changed(hass)
        await hass.async_block_till_done(wait_background_tasks=True)
        assert spy.call_count == 0
        assert hass.states.get("sensor.agentic_hems_electricity_price").state != "unavailable"
        freezer.move_to(datetime(2026, 11, 30, 0, 0, tzinfo=ZoneInfo(TZ)))  # the local day turns
        async_fire_time_changed(hass)
        await hass.async_block_till_done(wait_background_tasks=True)
        assert spy.call_count == 1
        assert len(hass.states.get("sensor.agentic_hems_electricity_price").attributes["tomorrow"]) == 96
        assert all(p["price"] is not None for p in hass.states.get("sensor.agentic_hems_electricity_price").attributes["tomorrow"])


async def test_malformed_appliance_is_skipped_with_a_repair_issue(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory
) -> None:
    """A subentry without its duration does not take the others down; a persistent repair issue names it."""
    from homeassistant.config_entries import ConfigSubentryData
    from homeassistant.helpers import issue_registry as ir

    freezer.move_to(NOW)
    broken = {"name": "Dryer", "kind": "generic", "entity_id": "switch.dryer", "power_kw": 2.0, "contiguous": True,
              "earliest_start": "08:00:00", "deadline": "20:00:00"}
    entry = MockConfigEntry(
        domain=DOMAIN,
        unique_id="sample",
        data={"price_source": "sample"},
        options=DEFAULT_OPTIONS,
        subentries_data=[
            *(ConfigSubentryData(data=data, subentry_id=key, subentry_type="appliance", title=data["name"], unique_id=None)
              for key, data in APPLIANCES.items()),
            ConfigSubentryData(data=broken, subentry_id="dryer", subentry_type="appliance", title="Dryer", unique_id=None),
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    issue = ir.async_get(hass).async_get_issue(DOMAIN, "appliance_invalid_dryer")
    assert issue is not None and issue.is_persistent and issue.translation_placeholders["appliance"] == "Dryer"
    assert set(entry.runtime_data.planner.appliances) == {"dishwasher", "washer", "ev"}
    assert plan_of(hass, "dishwasher")[1] - plan_of(hass, "dishwasher")[0] == timedelta(minutes=150)


async def test_placements_made_together_are_taken_together_or_not_at_all(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """The whole-home plan places the dishwasher and the EV together; when the dishwasher's plan may no longer move
    (pinned meanwhile), neither placement is taken and both are returned for a new plan; else both are taken."""
    planner = loaded_entry.runtime_data.planner
    before = {aid: planner.states[aid].plan for aid in ("dishwasher", "ev")}
    moved = {}
    for aid, plan in before.items():
        assert plan is not None and plan.start is not None and plan.end is not None and plan.start > NOW
        later = replace(plan, start=plan.start + timedelta(minutes=15), end=plan.end + timedelta(minutes=15))
        moved[aid] = (later, planner.load_for(aid, NOW))
    planner.states["dishwasher"].pinned = True
    assert await planner.async_adopt(moved, NOW) == {"dishwasher"}
    assert all(planner.states[aid].plan is before[aid] for aid in before)
    planner.states["dishwasher"].pinned = False
    assert await planner.async_adopt(moved, NOW) == set()
    assert all(planner.states[aid].plan is moved[aid][0] for aid in before)
