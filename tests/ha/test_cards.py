"""The cards' side in HA: websocket commands for every logged-in user, the served bundle, the Lovelace resource."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator, WebSocketGenerator

from homeassistant.auth.models import User
from homeassistant.core import Context, HomeAssistant
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.cards.frontend import BUNDLE_PATH, BUNDLE_URL, _async_lovelace_resource
from custom_components.agentic_hems.const import DOMAIN

from .conftest import sample_entry


async def test_schedule(hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_ws_client: WebSocketGenerator,
                        hass_read_only_access_token: str) -> None:
    """Today's and tomorrow's 15-minute prices (local days) and each stored plan's slots, for a non-admin user."""
    client = await hass_ws_client(hass, hass_read_only_access_token)
    await client.send_json_auto_id({"type": "agentic_hems/schedule"})
    result = (await client.receive_json())["result"]
    today = dt_util.as_utc(dt_util.start_of_local_day())
    assert result["prices"][0]["start"] == today.isoformat() and len(result["prices"]) == 192
    assert result["prices"][-1]["end"] == (today + timedelta(days=2)).isoformat()
    curve = loaded_entry.runtime_data.coordinator.data.total
    assert [p["price"] for p in result["prices"][:4]] == curve.window(today, today + timedelta(hours=1)).as_dict()[
        "prices"]
    planner = loaded_entry.runtime_data.planner
    assert {p["name"] for p in result["plans"]} == {a.name for a in planner.appliances.values()}
    for card_plan in result["plans"]:
        plan = planner.states[card_plan["appliance_id"]].plan
        energy = sum(s["power_kw"] * 0.25 for s in card_plan["slots"])
        assert energy == pytest.approx(plan.energy_kwh, abs=1e-6)
        assert card_plan["slots"][0]["start"] == plan.start.isoformat()
        assert card_plan["slots"][-1]["end"] == plan.end.isoformat()


async def test_decisions_stream_to_a_non_admin(hass: HomeAssistant, loaded_entry: MockConfigEntry,
                                               hass_ws_client: WebSocketGenerator, hass_read_only_user: User,
                                               hass_read_only_access_token: str) -> None:
    """A non-admin user's own decisions stream to them (other people's do not: tests/ha/test_people.py)."""
    client = await hass_ws_client(hass, hass_read_only_access_token)
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_decisions"})
    assert (await client.receive_json())["success"]
    snapshot = (await client.receive_json())["event"]
    assert snapshot == {"type": "snapshot", "decisions": [], "pending": [], "is_admin": False}
    await hass.services.async_call(DOMAIN, "evaluate_command", {
        "source_agent": "test", "model_candidate": {"intent": "turn_on", "device_alias": "input_boolean.dishwasher"}},
        blocking=True, return_response=True, context=Context(user_id=hass_read_only_user.id))
    event = (await client.receive_json())["event"]
    assert event["type"] == "decision" and event["decision"]["source_agent"] == "test"
    assert event["decision"]["candidate"]["device_alias"] == "input_boolean.dishwasher"
    assert [g["gate"] for g in event["decision"]["gate_results"]][:3] == ["input_guard", "schema", "device_resolved"]


async def test_runs_stream_to_their_user(hass: HomeAssistant, loaded_entry: MockConfigEntry,
                                         hass_ws_client: WebSocketGenerator, hass_read_only_user: User,
                                         hass_read_only_access_token: str, hass_admin_user: User) -> None:
    """A user sees their own run's iterations and its end, not another user's; the runs command lists only their
    own run, and its statistics count only that run."""
    client = await hass_ws_client(hass, hass_read_only_access_token)
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_run"})
    assert (await client.receive_json())["success"]
    await hass.services.async_call(DOMAIN, "ask", {"text": "Schedule all flexible loads"}, blocking=True,
                                   return_response=True, context=Context(user_id=hass_admin_user.id))
    response: Any = await hass.services.async_call(DOMAIN, "ask", {"text": "Schedule all flexible loads"},
                                                   blocking=True, return_response=True,
                                                   context=Context(user_id=hass_read_only_user.id))
    messages = [(await client.receive_json())["event"] for _ in range(response["iterations"] + 1)]
    assert [m["type"] for m in messages] == ["step"] * response["iterations"] + ["finished"]
    assert {m["run_id"] for m in messages} == {response["run_id"]}  # only this user's run
    assert [m["iteration"] for m in messages[:-1]] == list(range(1, response["iterations"] + 1))
    assert messages[-1]["summary"] == response["summary"] and messages[-1]["success"] is True

    await client.send_json_auto_id({"type": "agentic_hems/runs"})
    result = (await client.receive_json())["result"]
    assert [r["run_id"] for r in result["runs"]] == [response["run_id"]]
    assert result["stats"]["runs"] == 1 and loaded_entry.runtime_data.assistant.stats()["runs"] == 2


async def test_an_unknown_entry_is_a_clear_error(hass: HomeAssistant, loaded_entry: MockConfigEntry,
                                                 hass_ws_client: WebSocketGenerator) -> None:
    client = await hass_ws_client(hass)
    await client.send_json_auto_id({"type": "agentic_hems/schedule", "entry_id": "nope"})
    message = await client.receive_json()
    assert not message["success"] and message["error"]["code"] == "entry_not_found"


async def test_the_bundle_is_served(hass: HomeAssistant, hass_client: ClientSessionGenerator, tz: str) -> None:
    """Registered once in async_setup; served as JavaScript, byte for byte the committed bundle."""
    assert await async_setup_component(hass, "http", {})
    assert await async_setup_component(hass, "homeassistant", {})
    entry = sample_entry()
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    assert await hass.config_entries.async_reload(entry.entry_id)  # async_setup ran once: no second registration
    client = await hass_client()
    response = await client.get(BUNDLE_URL)
    assert response.status == 200 and "javascript" in response.headers["Content-Type"]
    assert await response.read() == BUNDLE_PATH.read_bytes()
    for name in ("agentic-hems-schedule-card", "agentic-hems-trace-card", "agentic-hems-ask-card",
                 "agentic-hems-runs-card"):
        assert name.encode() in BUNDLE_PATH.read_bytes()


async def test_the_lovelace_resource_is_added_once_and_updated(hass: HomeAssistant) -> None:
    """Storage mode: one resource item, its ?v= updated on a version change, never a second item."""
    from homeassistant.components.lovelace.const import LOVELACE_DATA

    assert await async_setup_component(hass, "lovelace", {})
    assert await _async_lovelace_resource(hass, f"{BUNDLE_URL}?v=0.1.0")
    assert await _async_lovelace_resource(hass, f"{BUNDLE_URL}?v=0.1.0")
    assert await _async_lovelace_resource(hass, f"{BUNDLE_URL}?v=0.2.0")
    items = hass.data[LOVELACE_DATA].resources.async_items()
    assert [(i["url"], i["type"]) for i in items] == [(f"{BUNDLE_URL}?v=0.2.0", "module")]


async def test_yaml_mode_is_not_a_resource(hass: HomeAssistant) -> None:
    # resource_mode: HA 2026.2 split resources' mode from the dashboards' (mode: yaml is deprecated)
    assert await async_setup_component(hass, "lovelace", {"lovelace": {"resource_mode": "yaml"}})
    assert not await _async_lovelace_resource(hass, f"{BUNDLE_URL}?v=0.1.0")


async def test_subscribers_hear_an_entry_reload(hass: HomeAssistant, loaded_entry: MockConfigEntry,
                                                hass_ws_client: WebSocketGenerator) -> None:
    """An options change reloads the entry: live subscribers get "unloaded", and a new subscription sees the
    reloaded entry's decisions."""
    client = await hass_ws_client(hass)
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_decisions"})
    assert (await client.receive_json())["success"]
    await client.receive_json()  # the snapshot
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_run"})
    assert (await client.receive_json())["success"]
    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    events = [(await client.receive_json())["event"] for _ in range(2)]
    assert events == [{"type": "unloaded"}, {"type": "unloaded"}]
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_decisions"})
    assert (await client.receive_json())["success"]
    await client.receive_json()
    await hass.services.async_call(DOMAIN, "evaluate_command", {
        "source_agent": "test", "model_candidate": {"intent": "turn_on", "device_alias": "input_boolean.dishwasher"}},
        blocking=True, return_response=True)
    assert (await client.receive_json())["event"]["type"] == "decision"
