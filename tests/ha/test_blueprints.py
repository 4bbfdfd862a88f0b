"""The automation blueprints in blueprints/automation/agentic_hems, imported into Home Assistant's blueprint folder
and run by its automation integration against the sample entry (the notify action is a stand-in that records calls)."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path
import shutil
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed, async_mock_service

from homeassistant.core import Event, HomeAssistant, ServiceCall, callback
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.const import DOMAIN, EVENT_RUN_FINISHED

from .conftest import NOW

BLUEPRINTS = Path(__file__).resolve().parents[2] / "blueprints" / "automation" / "agentic_hems"


async def set_up_automation(hass: HomeAssistant, blueprint: str, inputs: dict[str, Any]) -> list[ServiceCall]:
    """Import the repository's blueprints as a user does, add one automation from ``blueprint``, and return the
    calls of its notify action (``notify.phone``)."""
    folder = Path(hass.config.path("blueprints", "automation", "agentic_hems"))
    await hass.async_add_executor_job(lambda: shutil.copytree(BLUEPRINTS, folder))
    calls = async_mock_service(hass, "notify", "phone")
    config = {"use_blueprint": {"path": f"agentic_hems/{blueprint}", "input": {**inputs, "notify_action": "notify.phone"}}}
    assert await async_setup_component(hass, "automation", {"automation": [config]})
    await hass.async_block_till_done()
    assert len(hass.states.async_entity_ids("automation")) == 1
    assert hass.states.get(hass.states.async_entity_ids("automation")[0]).state == "on"  # valid: not unavailable
    return calls


async def run_until_waiting() -> None:
    """Let the event loop run what is ready, so that a (re)started automation reaches its delay; unlike
    ``async_block_till_done``, this does not wait for the delay to end (the frozen clock never ends it)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def test_notify_planned_run(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """A new plan for the dishwasher sends, once it has settled, its start, end and savings as the sensors show them;
    replans within the settle time send one notification, for the last plan."""
    calls = await set_up_automation(
        hass,
        "notify_planned_run.yaml",
        {"next_start": "sensor.dishwasher_next_start", "planned_cost": "sensor.dishwasher_planned_cost", "settle": 5},
    )
    assert calls == []  # nothing changed yet

    plans: list[Any] = []
    for hours in (5, 3):  # two plans in a row: the second restarts the automation's wait
        plans.append(await hass.services.async_call(
            DOMAIN, "schedule", {"appliance": "Dishwasher", "deadline": (NOW + timedelta(hours=hours)).isoformat()},
            blocking=True, return_response=True,
        ))
        await run_until_waiting()
    first, plan = plans
    assert first["start"] != plan["start"]
    freezer.tick(timedelta(seconds=4))
    async_fire_time_changed(hass)
    await run_until_waiting()
    assert calls == []  # not settled yet
    freezer.tick(timedelta(seconds=1))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()

    assert plan["feasible"] is True
    start, end = (dt_util.as_local(datetime.fromisoformat(str(plan[key]))) for key in ("start", "end"))
    cost = hass.states.get("sensor.dishwasher_planned_cost")
    assert cost is not None and cost.attributes["savings"] > 0
    assert [call.data for call in calls] == [
        {
            "title": "Agentic HEMS",
            "message": f"Dishwasher runs from {start:%a %H:%M} to {end:%H:%M}, saving "
            f"{cost.attributes['savings']:.2f} EUR.",
        }
    ]


async def test_daily_plan(hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory) -> None:
    """At the chosen time the assistant is asked, and its answer is the notification."""
    calls = await set_up_automation(hass, "daily_plan.yaml", {"at": "20:30:00"})
    finished: list[Event] = []

    @callback
    def _finished(event: Event) -> None:
        finished.append(event)

    hass.bus.async_listen(EVENT_RUN_FINISHED, _finished)
    freezer.move_to(NOW.replace(minute=29))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()
    assert calls == [] and finished == []

    freezer.move_to(NOW.replace(minute=30))
    async_fire_time_changed(hass)
    await hass.async_block_till_done()

    assert len(finished) == 1
    run = loaded_entry.runtime_data.assistant.runs[-1]
    assert run["user_request"] == "Schedule all flexible loads" and run["success"] is True
    summary = finished[0].data["summary"]
    assert summary.startswith("Dishwasher: ")
    assert [call.data for call in calls] == [{"title": "Agentic HEMS", "message": summary}]
    await hass.services.async_call("automation", "turn_off", {"entity_id": "all"}, blocking=True)  # its timer
