"""An MCP client plans, schedules and proposes device commands; a person confirms them in Home Assistant.

HA's ``mcp_server`` serves the entry's LLM API to the ``mcp`` package's client over Streamable HTTP, with a token of
one of the hostile suite's two people (test_hostile.py: the owner is an administrator, the member is not; device
control on, automatic planning off). Over MCP the person's words never reach HA, so an acting tool neither acts nor
refuses: it returns a pending confirmation. Only the ``confirm`` action of an administrator makes it happen.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
import json
from typing import Any

import httpx
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
import pytest
from pytest_homeassistant_custom_component.common import async_fire_time_changed

from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import llm
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.assistant.llm_api import api_id
from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.control.manager import notification_id

from .oracles import cheapest_run
from .test_hostile import FRONT_DOOR, POOL, Home, offline_home  # noqa: F401 - offline_home is a fixture
from .test_llm_api import serve_over_mcp

PENDING_EN = "Not done yet: a person must confirm this in Home Assistant"
TTL = timedelta(minutes=10)  # the pending confirmations' default lifetime
UNLOCK = ("propose_device_command", {"intent": "unlock", "device_alias": "front door"})
ALLOW_UNLOCK = [{"operation": "unlock", "device_type": "lock", "risk_min": 0, "risk_max": 5, "action": "allow"}]


@pytest.fixture
async def mcp_url(offline_home: Home, hass_client: Any, socket_enabled: None) -> str:
    """The Streamable HTTP endpoint of mcp_server, serving the home's API."""
    await serve_over_mcp(offline_home.hass, offline_home.entry.entry_id)
    return str((await hass_client()).make_url("/api/mcp"))


async def token(home: Home, who: str) -> str:
    user = await home.hass.auth.async_get_user(home.people[who])  # None fails the token's creation
    refresh = await home.hass.auth.async_create_refresh_token(user, "https://mcp.example/")
    return home.hass.auth.async_create_access_token(refresh)


@asynccontextmanager
async def session_of(home: Home, url: str, who: str) -> AsyncGenerator[ClientSession]:
    headers = {"Authorization": f"Bearer {await token(home, who)}"}
    async with (
        httpx.AsyncClient(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def mcp_call(home: Home, url: str, who: str, *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Call the tools over MCP as ``who``; their results (JSON), none an error result."""
    results = []
    async with session_of(home, url, who) as session:
        for name, args in calls:
            done = await session.call_tool(name, args)
            assert not done.isError
            results.append(json.loads(done.content[0].text))
    await home.hass.async_block_till_done()
    return results


async def decide(home: Home, service: str, who: str | None, trace_id: str) -> dict[str, Any]:
    response = await home.hass.services.async_call(
        DOMAIN, service, {"trace_id": trace_id}, blocking=True, return_response=True, context=home.context(who))
    await home.hass.async_block_till_done()
    assert isinstance(response, dict)
    return response


async def pending_ids(home: Home) -> list[str]:
    response = await home.hass.services.async_call(
        DOMAIN, "get_traces", {}, blocking=True, return_response=True, context=home.context("owner"))
    assert isinstance(response, dict)
    return list(response["pending"])


def trace(home: Home, trace_id: str) -> dict[str, Any]:
    record: dict[str, Any] = home.entry.runtime_data.control.traces[trace_id]
    return record


def notified(hass: HomeAssistant, trace_id: str) -> bool:

    return notification_id(trace_id) in persistent_notification._async_get_or_create_notifications(hass)


def assert_pending(result: dict[str, Any]) -> str:
    """A pending confirmation: its id, expiring one TTL from now (local time), with the English message."""
    assert result["status"] == "pending_confirmation"
    assert result["confirmation_id"] == result["trace_id"]
    expires = datetime.fromisoformat(result["expires_at"])
    assert expires.utcoffset() == dt_util.now().utcoffset()
    assert expires == (dt_util.utcnow() + TTL).replace(second=0, microsecond=0)
    assert result["message"].startswith(PENDING_EN) and expires.strftime("%H:%M") in result["message"]
    return str(result["trace_id"])


async def test_an_mcp_schedule_waits_until_an_administrator_confirms_it(offline_home: Home, mcp_url: str) -> None:
    """Nothing is stored until the owner confirms; the member cannot; then the plan is the brute-force cheapest run.
    A cancel over MCP waits the same way, and clears the plan once confirmed."""
    home, hass = offline_home, offline_home.hass
    (held,) = await mcp_call(home, mcp_url, "member", ("schedule_appliance", {"appliance": "Dishwasher"}))
    trace_id = assert_pending(held)
    assert home.planner.states["dishwasher"].plan is None
    assert await pending_ids(home) == [trace_id] and notified(hass, trace_id)
    note = persistent_notification._async_get_or_create_notifications(hass)[notification_id(trace_id)]["message"]
    assert note.startswith("An assistant outside Home Assistant (MCP) asks: **Plan Dishwasher**."), note  # in words, never "schedule Dishwasher"
    record = home.entry.runtime_data.control.traces[trace_id]
    assert record["candidate"] == {"intent": "schedule", "appliance": "Dishwasher"}
    assert record["history"][0]["user_id"] == home.people["member"] and record["source_agent"] == "mcp"

    with pytest.raises(ServiceValidationError) as err:
        await decide(home, "confirm", "member", trace_id)
    assert err.value.translation_key == "admin_required"
    assert home.planner.states["dishwasher"].plan is None and await pending_ids(home) == [trace_id]

    done = await decide(home, "confirm", "owner", trace_id)
    assert done["outcome"] == "executed" and done["result"]["execution"]["confirmed_by"] == home.people["owner"]
    prices = (await hass.services.async_call(DOMAIN, "get_prices", {}, blocking=True, return_response=True))["prices"]
    start = datetime.fromisoformat("2026-11-29T19:15:00+00:00")  # 20:15 local, the slot after now's
    total, first = cheapest_run(prices, start, datetime.fromisoformat("2026-11-30T06:00:00+00:00"), slots=10)  # 07:00
    state = home.planner.states["dishwasher"]
    assert state.pinned and state.plan.start == datetime.fromisoformat(prices[first]["start"])
    assert state.plan.cost == pytest.approx(total * 1.8 * 0.25, abs=1e-4)
    assert await pending_ids(home) == [] and not notified(hass, trace_id)

    (cancel,) = await mcp_call(home, mcp_url, "member", ("cancel_appliance_plan", {"appliance": "Dishwasher"}))
    cancel_id = assert_pending(cancel)
    assert home.planner.states["dishwasher"].plan is not None
    assert (await decide(home, "confirm", "owner", cancel_id))["outcome"] == "executed"
    assert home.planner.states["dishwasher"].plan is None


@pytest.mark.parametrize("ending", ["reject", "expire"])
async def test_a_rejected_or_expired_plan_change_leaves_nothing(
    offline_home: Home, mcp_url: str, ending: str
) -> None:
    home, hass = offline_home, offline_home.hass
    (held,) = await mcp_call(home, mcp_url, "owner", ("schedule_appliance", {"appliance": "Washing machine"}))
    trace_id = assert_pending(held)
    if ending == "reject":
        assert (await decide(home, "reject", "owner", trace_id))["outcome"] == "rejected"
    else:
        moment = dt_util.utcnow() + TTL + timedelta(seconds=1)
        home.freezer.move_to(moment)
        async_fire_time_changed(hass, moment)
        await hass.async_block_till_done()
        assert home.entry.runtime_data.control.traces[trace_id]["outcome"] == "expired"
    with pytest.raises(ServiceValidationError) as err:
        await decide(home, "confirm", "owner", trace_id)
    assert err.value.translation_key == "not_pending"
    assert home.planner.states["washer"].plan is None
    assert await pending_ids(home) == [] and not notified(hass, trace_id)


async def test_an_mcp_device_command_waits_and_a_gate_that_denies_still_denies(
    offline_home: Home, mcp_url: str
) -> None:
    """The pool pump, which the policy allows outright, waits for the owner. The unlock (the policy denies it), an
    unknown device and a capability the lock lacks are denied by their gates, not held. Once a rule allows unlocking,
    the unlock waits too, and the door stays locked until the owner (not the member) confirms."""
    home, hass = offline_home, offline_home.hass
    denied, pool, unknown, brightness = await mcp_call(
        home, mcp_url, "member", UNLOCK, ("propose_device_command", {"intent": "turn_on", "device_alias": "pool pump"}),
        ("propose_device_command", {"intent": "unlock", "device_alias": "garage gate"}),
        ("propose_device_command", {"intent": "set_brightness", "device_alias": "front door",
                                    "params": {"brightness": 50}}),
    )
    pool_id = assert_pending(pool)
    pool_policy = next(g for g in trace(home, pool_id)["gate_results"] if g["gate"] == "policy")["evidence"]
    assert pool_policy["rule"]["action"] == "allow" and pool_policy["action"] == "confirm"
    assert (denied["outcome"], denied["failed_gate"]) == ("blocked", "policy")
    assert denied["reason"] == "blocked by policy: a default rule denies unlocking at risk 4 to 5"
    assert (unknown["outcome"], unknown["failed_gate"]) == ("blocked", "device_resolved")
    assert (brightness["outcome"], brightness["failed_gate"]) == ("blocked", "capability")
    assert await pending_ids(home) == [pool_id] and hass.states.get(POOL).state == "off"
    assert (await decide(home, "reject", "owner", pool_id))["outcome"] == "rejected"
    assert hass.states.get(POOL).state == "off" and await pending_ids(home) == []

    hass.config_entries.async_update_entry(home.entry, options={**home.entry.options, "policy_rules": ALLOW_UNLOCK})
    await hass.async_block_till_done()
    (unlock,) = await mcp_call(home, mcp_url, "member", UNLOCK)
    unlock_id = assert_pending(unlock)
    assert hass.states.get(FRONT_DOOR).state == "locked" and await pending_ids(home) == [unlock_id]
    with pytest.raises(ServiceValidationError):
        await decide(home, "confirm", "member", unlock_id)
    assert hass.states.get(FRONT_DOOR).state == "locked"
    done = await decide(home, "confirm", "owner", unlock_id)
    assert done["outcome"] == "executed" and done["result"]["execution"]["confirmed_by"] == home.people["owner"]
    assert hass.states.get(FRONT_DOOR).state == "unlocked"
    assert trace(home, unlock_id)["history"][0]["user_id"] == home.people["member"]


async def test_a_pending_plan_change_is_on_the_trace_card_in_german_and_survives_a_restart(
    offline_home: Home, hass_ws_client: Any
) -> None:
    """A call without a conversation (here in German) is in the trace card's pending list with its record; after a
    reload it is still pending, notified, and an administrator's confirmation stores the plan."""
    home, hass = offline_home, offline_home.hass
    llm_context = llm.LLMContext(platform="test", context=home.context("member"), language="de",
                                 assistant="conversation", device_id=None)
    instance = await llm.async_get_api(hass, api_id(home.entry.entry_id), llm_context)
    result = await instance.async_call_tool(llm.ToolInput("schedule_appliance", {"appliance": "EV charger"}))
    held = json.loads(json.dumps(result.data if hasattr(result, "data") else result))
    trace_id = held["trace_id"]
    assert held["status"] == "pending_confirmation"
    assert held["message"].startswith("Noch nicht ausgeführt: Eine Person muss das bis ")

    client = await hass_ws_client(hass, access_token=await token(home, "owner"))
    await client.send_json_auto_id({"type": "agentic_hems/subscribe_decisions"})
    assert (await client.receive_json())["success"]
    snapshot = (await client.receive_json())["event"]
    assert snapshot["pending"] == [trace_id] and snapshot["is_admin"] is True
    (record,) = [d for d in snapshot["decisions"] if d["trace_id"] == trace_id]
    assert record["outcome"] == "pending_confirmation" and record["candidate"]["intent"] == "schedule"
    assert snapshot["labels"]["users"] == {home.people["member"]: "Member"}

    assert await hass.config_entries.async_reload(home.entry.entry_id)
    await hass.async_block_till_done()
    assert await pending_ids(home) == [trace_id] and notified(hass, trace_id)
    assert home.planner.states["ev"].plan is None
    assert (await decide(home, "confirm", "owner", trace_id))["outcome"] == "executed"
    assert home.planner.states["ev"].plan is not None and home.planner.states["ev"].pinned
