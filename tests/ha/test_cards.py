"""The cards' side in HA: websocket commands for every logged-in user, the served bundle, the Lovelace resource."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator, WebSocketGenerator

import dataclasses
import math

import numpy as np

from homeassistant.auth.models import User
from homeassistant.core import Context, HomeAssistant
from homeassistant.loader import async_get_integration
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.cards.frontend import BUNDLE_PATH, BUNDLE_URL
from custom_components.agentic_hems.cards.websocket import async_labels
from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.coordinator import PriceData
from custom_components.agentic_hems.people import Viewer
from custom_components.agentic_hems.prices.trust import PriceIssue, PriceNote

from .conftest import NOW, sample_entry


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
    assert snapshot == {"type": "snapshot", "decisions": [], "pending": [], "is_admin": False,
                        "labels": {"entities": {}, "users": {}}}
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


@pytest.mark.parametrize("lovelace", [{}, {"lovelace": {"resource_mode": "yaml"}}], ids=["storage", "yaml"])
async def test_every_dashboard_loads_the_bundle_as_an_extra_module(
    hass: HomeAssistant, hass_storage: dict[str, Any], lovelace: dict[str, Any], tz: str
) -> None:
    """The bundle is a frontend extra module at ``?v=<version>`` in storage and YAML mode alike, and Lovelace's
    resources (the user's) are left as they were: no resource is written (it was one in storage mode)."""
    from homeassistant.components.frontend import DATA_EXTRA_MODULE_URL

    assert await async_setup_component(hass, "http", {})
    assert await async_setup_component(hass, "frontend", {})
    assert await async_setup_component(hass, "lovelace", lovelace)
    assert await async_setup_component(hass, "homeassistant", {})
    entry = sample_entry()
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    version = (await async_get_integration(hass, DOMAIN)).version
    ours = [url for url in hass.data[DATA_EXTRA_MODULE_URL].urls if url.startswith(BUNDLE_URL)]
    assert ours == [f"{BUNDLE_URL}?v={version}"]
    assert "lovelace_resources" not in hass_storage


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


async def _next_event(client: Any) -> dict[str, Any]:
    message = await client.receive_json()
    assert message["type"] == "event", message
    return dict(message["event"])


async def test_schedule_subscription_pushes_a_changed_plan(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_ws_client: WebSocketGenerator,
    hass_read_only_access_token: str,
) -> None:
    """A non-admin subscribes: the schedule comes at once, a plan stored by the schedule service comes without
    asking again, and after unsubscribing no listener of the managers is left."""
    runtime = loaded_entry.runtime_data
    listeners_before = len(runtime.planner._change_listeners or ())
    client = await hass_ws_client(hass, hass_read_only_access_token)
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_schedule"})
    subscription = await client.receive_json()
    assert subscription["success"]
    first = await _next_event(client)
    old = next(p for p in first["plans"] if p["name"] == "Dishwasher")
    assert first["type"] == "schedule" and old["start"] == runtime.planner.states["dishwasher"].plan.start.isoformat()

    deadline = NOW + timedelta(hours=4)  # the dishwasher's run (2.5 h) must now end by 00:05
    await hass.services.async_call(DOMAIN, "schedule", {"appliance": "Dishwasher", "deadline": deadline.isoformat()},
                                   blocking=True)
    plan = runtime.planner.states["dishwasher"].plan
    assert plan.start.isoformat() != old["start"] and plan.end <= deadline
    while True:  # every change sends: the last message carries the stored plan
        pushed = await _next_event(client)
        new = next(p for p in pushed["plans"] if p["name"] == "Dishwasher")
        if new["start"] == plan.start.isoformat():
            break
    stored = plan.as_dict()
    assert (new["end"], new["cost"], new["reason"]) == (stored["end"], stored["cost"], stored["reason"])

    await client.send_json_auto_id({"type": "unsubscribe_events", "subscription": subscription["id"]})
    assert (await client.receive_json())["success"]
    assert len(runtime.planner._change_listeners or ()) == listeners_before


async def test_schedule_carries_each_slots_trust(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_ws_client: WebSocketGenerator,
) -> None:
    """New prices reach a subscriber: tomorrow a day of zeros (doubtful, trust 1, with its note), tonight's last hour
    refused (unknown: price None, trust 2), everything else known (trust 0)."""
    coordinator = loaded_entry.runtime_data.coordinator
    client = await hass_ws_client(hass)
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_schedule"})
    assert (await client.receive_json())["success"]
    await _next_event(client)

    curve = coordinator.data.total
    today = dt_util.as_utc(dt_util.start_of_local_day())
    tomorrow, day_after = today + timedelta(days=1), today + timedelta(days=2)
    zeros = slice(curve.index_of(tomorrow), curve.index_of(day_after))
    refused = slice(curve.index_of(tomorrow - timedelta(hours=1)), curve.index_of(tomorrow))
    prices, marks = curve.prices.copy(), np.full(len(curve), -1, dtype=np.int16)
    prices[zeros], marks[zeros] = 0.0, 0
    prices[refused], marks[refused] = math.nan, 1
    notes = (PriceNote(PriceIssue.ZERO_DAY, "every price of the day is zero"), PriceNote(PriceIssue.BAD_VALUE, "bad"))
    doubtful = curve.replace(prices=prices, notes=notes, marks=marks)
    coordinator.async_set_updated_data(dataclasses.replace(coordinator.data, total=doubtful))
    result = await _next_event(client)

    def expected(start: str) -> tuple[float | None, int]:
        at = dt_util.parse_datetime(start)  # None fails the comparisons below
        if tomorrow <= at < day_after:
            return 0.0, 1
        if tomorrow - timedelta(hours=1) <= at < tomorrow:
            return None, 2
        return doubtful.price_at(at), 0

    assert len(result["prices"]) == 192
    assert [(p["price"], p["trust"]) for p in result["prices"]] == [expected(p["start"]) for p in result["prices"]]
    assert [(n["start"], n["end"], n["issue"], n["trust"]) for n in result["price_notes"]] == [
        ((tomorrow - timedelta(hours=1)).isoformat(), tomorrow.isoformat(), "bad_value", "unknown"),
        (tomorrow.isoformat(), day_after.isoformat(), "zero_day", "doubtful"),
    ]


async def test_decisions_name_devices_and_people(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_ws_client: WebSocketGenerator, hass_read_only_user: User,
    hass_read_only_access_token: str, hass_admin_user: User,
) -> None:
    """A decision comes with its device's friendly name and its requester's name; a non-admin is never told another
    person's name (an administrator who rejected, say), an administrator is told every name."""
    assert await async_setup_component(hass, "input_boolean", {"input_boolean": {"dishwasher": {"name": "Plug"}}})
    client = await hass_ws_client(hass, hass_read_only_access_token)
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_decisions"})
    assert (await client.receive_json())["success"]
    await _next_event(client)
    await hass.services.async_call(DOMAIN, "evaluate_command", {
        "source_agent": "test", "model_candidate": {"intent": "turn_on", "device_alias": "input_boolean.dishwasher"}},
        blocking=True, return_response=True, context=Context(user_id=hass_read_only_user.id))
    event = await _next_event(client)
    assert event["decision"]["entity_id"] == "input_boolean.dishwasher"
    assert event["labels"] == {"entities": {"input_boolean.dishwasher": "Plug"},
                               "users": {hass_read_only_user.id: hass_read_only_user.name}}

    rejected = {"entity_id": "input_boolean.dishwasher", "history": [{"user_id": hass_read_only_user.id}],
                "gate_results": [{"gate": "execution", "evidence": {"user_id": hass_admin_user.id}}]}
    person = Viewer(hass_read_only_user.id, admin=False)
    admin = Viewer(hass_admin_user.id, admin=True)
    assert (await async_labels(hass, person, [rejected]))["users"] == {hass_read_only_user.id: hass_read_only_user.name}
    assert (await async_labels(hass, admin, [rejected]))["users"] == {
        hass_read_only_user.id: hass_read_only_user.name, hass_admin_user.id: hass_admin_user.name}
