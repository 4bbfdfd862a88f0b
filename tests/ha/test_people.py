"""The model proposes, the person decides: one admin rule, privacy between household members, secrets in
diagnostics (custom_components/agentic_hems/people.py, diagnostics.py).

Every admin-only path is tried by an active administrator (allowed), a non-admin user, an inactive administrator and
a call without a user (an automation, a script, an agent): the last three are refused with the path's translated
error, and nothing happens.
"""

from __future__ import annotations

from collections.abc import Iterator
import re
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import CLIENT_ID, MockConfigEntry, async_mock_service
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator, WebSocketGenerator

from homeassistant.auth.const import GROUP_ID_ADMIN, GROUP_ID_USER
from homeassistant.auth.models import User
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.setup import async_setup_component

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.diagnostics import async_get_config_entry_diagnostics
from custom_components.agentic_hems.gates.redact import redact_url
from custom_components.agentic_hems.prices.errors import PriceSourceError

from .conftest import NOW, admin_context, sample_entry
from .test_control import SWITCH, allow_control, house  # noqa: F401
from .test_grid import chain_ids, plan_chain, site  # noqa: F401
from .test_ha_view import PUMP, pump_home  # noqa: F401

KINDS = ["admin", "non_admin", "inactive_admin", "no_user"]
REFUSED = [kind for kind in KINDS if kind != "admin"]


async def evaluate(hass: HomeAssistant, candidate: dict[str, Any], context: Context | None = None) -> dict[str, Any]:
    response = await hass.services.async_call(DOMAIN, "evaluate_command", {
        "source_agent": "hermes", "model_candidate": candidate}, blocking=True, return_response=True, context=context)
    assert isinstance(response, dict)
    return response


async def person(hass: HomeAssistant, kind: str) -> Context:
    """The context of a caller of this kind (HA makes the first user the owner, an admin: one exists first)."""
    await admin_context(hass)
    if kind == "no_user":
        return Context()
    user = await hass.auth.async_create_user(kind, group_ids=[GROUP_ID_USER if kind == "non_admin" else GROUP_ID_ADMIN])
    if kind == "inactive_admin":
        await hass.auth.async_deactivate_user(user)
        assert not user.is_active and GROUP_ID_ADMIN in {group.id for group in user.groups}
    return Context(user_id=user.id)


# --- one admin rule --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("service", ["confirm", "reject"])
async def test_confirm_and_reject(hass: HomeAssistant, house: MockConfigEntry, kind: str,  # noqa: F811
                                  service: str) -> None:
    await allow_control(hass)
    trace_id = (await evaluate(hass, {"intent": "open", "device_alias": "garage door"}))["trace_id"]
    context = await person(hass, kind)
    if kind in REFUSED:
        with pytest.raises(ServiceValidationError) as err:
            await hass.services.async_call(DOMAIN, service, {"trace_id": trace_id}, blocking=True, context=context)
        assert err.value.translation_key == "admin_required"
        assert trace_id in house.runtime_data.control.keeper.pending
        assert hass.states.get("cover.garage_door").state == "closed"
        return
    done = await hass.services.async_call(DOMAIN, service, {"trace_id": trace_id}, blocking=True, context=context,
                                          return_response=True)
    assert done["outcome"] == ("executed" if service == "confirm" else "rejected")
    assert hass.states.get("cover.garage_door").state == ("open" if service == "confirm" else "closed")


@pytest.mark.parametrize("kind", KINDS)
async def test_turning_device_control_on(hass: HomeAssistant, house: MockConfigEntry, kind: str  # noqa: F811
                                         ) -> None:
    context = await person(hass, kind)
    if kind in REFUSED:
        with pytest.raises(ServiceValidationError) as err:
            await hass.services.async_call("switch", "turn_on", {"entity_id": SWITCH}, blocking=True, context=context)
        assert err.value.translation_key == "admin_required_control"
        assert hass.states.get(SWITCH).state == "off" and not house.runtime_data.control.allow_control
        return
    await hass.services.async_call("switch", "turn_on", {"entity_id": SWITCH}, blocking=True, context=context)
    assert hass.states.get(SWITCH).state == "on"


@pytest.mark.parametrize("kind", KINDS)
async def test_mobile_notification_tap(hass: HomeAssistant, pump_home: tuple[MockConfigEntry, Any],  # noqa: F811
                                       kind: str) -> None:
    async_mock_service(hass, "notify", "phone")
    await hass.services.async_call("switch", "turn_on", {"entity_id": PUMP}, blocking=True)
    trace_id = (await evaluate(hass, {"intent": "turn_off", "device_alias": "pump"}))["trace_id"]
    hass.bus.async_fire("mobile_app_notification_action", {"action": f"AGENTIC_HEMS_CONFIRM_{trace_id}"},
                        context=await person(hass, kind))
    await hass.async_block_till_done()
    assert hass.states.get(PUMP).state == ("off" if kind == "admin" else "on")
    assert (trace_id in pump_home[0].runtime_data.control.keeper.pending) is (kind != "admin")


async def _pending_request(hass: HomeAssistant) -> str:
    chain = await plan_chain(hass)
    window = {"start": chain["plan"]["schedule"][0]["start"], "end": chain["plan"]["schedule"][3]["end"]}
    request = await hass.services.async_call(DOMAIN, "request_authorization",
                                             {**chain_ids(chain), "requested_window": window}, blocking=True,
                                             return_response=True)
    assert request["status"] == "pending"
    return str(request["request_id"])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("service", ["approve_authorization", "deny_authorization"])
async def test_approve_and_deny(hass: HomeAssistant, site: MockConfigEntry, kind: str,  # noqa: F811
                                service: str) -> None:
    request_id = await _pending_request(hass)
    context = await person(hass, kind)
    if kind in REFUSED:
        with pytest.raises(ServiceValidationError) as err:
            await hass.services.async_call(DOMAIN, service, {"request_id": request_id}, blocking=True,
                                           context=context)
        assert err.value.translation_key == "admin_required_grid"
        assert site.runtime_data.grid.requests[request_id]["status"] == "pending"
        return
    decided = await hass.services.async_call(DOMAIN, service, {"request_id": request_id}, blocking=True,
                                             context=context, return_response=True)
    assert decided["status"] == ("approved" if service == "approve_authorization" else "denied")
    assert decided["decided_by"] == context.user_id


@pytest.mark.parametrize("kind", KINDS)
async def test_verify_audit_chain(hass: HomeAssistant, site: MockConfigEntry, kind: str) -> None:  # noqa: F811
    context = await person(hass, kind)
    if kind in REFUSED:
        with pytest.raises(ServiceValidationError) as err:
            await hass.services.async_call(DOMAIN, "verify_audit_chain", {}, blocking=True, context=context,
                                           return_response=True)
        assert err.value.translation_key == "admin_required_grid"
        return
    status = await hass.services.async_call(DOMAIN, "verify_audit_chain", {}, blocking=True, context=context,
                                            return_response=True)
    assert status["ok"] is True


@pytest.mark.parametrize("kind", KINDS)
async def test_acknowledge_incident(hass: HomeAssistant, site: MockConfigEntry, kind: str) -> None:  # noqa: F811
    """A person only: an inactive administrator or a call without a user is refused (a non-admin needs the grant)."""
    snapshot = await hass.services.async_call(DOMAIN, "inspect_grid_state", {}, blocking=True, return_response=True)
    incident = await hass.services.async_call(DOMAIN, "create_incident", {
        "severity": "warning", "title": "x", "evidence_ids": [snapshot["snapshot_id"]]}, blocking=True,
        return_response=True)
    context = await person(hass, kind)
    data = {"incident_id": incident["incident_id"]}
    if kind in REFUSED:
        with pytest.raises(ServiceValidationError) as err:
            await hass.services.async_call(DOMAIN, "acknowledge_incident", data, blocking=True, context=context)
        assert err.value.translation_key == "incident_scope_required"
        assert not site.runtime_data.grid.incidents[incident["incident_id"]].get("acknowledged_at")
        return
    done = await hass.services.async_call(DOMAIN, "acknowledge_incident", data, blocking=True, context=context,
                                          return_response=True)
    assert done["acknowledged_by"] == context.user_id


# --- privacy between household members -------------------------------------------------------------------------------


async def _user(hass: HomeAssistant, name: str, group: str = GROUP_ID_USER) -> tuple[User, str]:
    """A user and an access token of theirs (HA makes the first user the owner, an admin: one exists first)."""
    await admin_context(hass)
    user = await hass.auth.async_create_user(name, group_ids=[group])
    refresh = await hass.auth.async_create_refresh_token(user, CLIENT_ID)
    return user, hass.auth.async_create_access_token(refresh)


async def test_traces_are_private(hass: HomeAssistant, house: MockConfigEntry,  # noqa: F811
                                  hass_ws_client: WebSocketGenerator) -> None:
    """Each non-admin sees only the traces they asked for (pending ones too); administrators and the system see all;
    a trace without a user (an automation) is for administrators only."""
    await allow_control(hass)
    house.runtime_data.control.traces.clear()
    owner, owner_token = await _user(hass, "Owner of the kettle")
    member, member_token = await _user(hass, "Household member")
    admin, admin_token = await _user(hass, "Admin", GROUP_ID_ADMIN)
    mine = (await evaluate(hass, {"intent": "turn_on", "device_alias": "boiler"}, context=Context(user_id=owner.id)))
    garage = await evaluate(hass, {"intent": "open", "device_alias": "garage door"}, context=Context(user_id=owner.id))
    theirs = await evaluate(hass, {"intent": "turn_on", "device_alias": "Kettle"}, context=Context(user_id=member.id))
    automation = await evaluate(hass, {"intent": "turn_off", "device_alias": "boiler"})
    assert garage["outcome"] == "pending_confirmation"
    everyone = {mine["trace_id"], garage["trace_id"], theirs["trace_id"], automation["trace_id"]}
    expected: dict[str | None, set[str]] = {owner.id: {mine["trace_id"], garage["trace_id"]},
                                            member.id: {theirs["trace_id"]}, admin.id: everyone, None: everyone}
    for user_id, ids in expected.items():
        got = await hass.services.async_call(DOMAIN, "get_traces", {}, blocking=True, return_response=True,
                                             context=Context(user_id=user_id))
        assert {t["trace_id"] for t in got["traces"]} == ids
        assert got["pending"] == ([garage["trace_id"]] if garage["trace_id"] in ids else [])

    for user, token in ((owner, owner_token), (member, member_token), (admin, admin_token)):
        client = await hass_ws_client(hass, token)
        await client.send_json_auto_id({"type": "agentic_hems/subscribe_decisions"})
        assert (await client.receive_json())["success"]
        snapshot = (await client.receive_json())["event"]
        assert {d["trace_id"] for d in snapshot["decisions"]} == expected[user.id]
        assert snapshot["pending"] == ([garage["trace_id"]] if garage["trace_id"] in expected[user.id] else [])
        assert snapshot["is_admin"] is (user is admin)
        # a decision of someone else's is not forwarded: the next message is the user's own
        other = owner if user is member else member
        elsewhere = await evaluate(hass, {"intent": "turn_off", "device_alias": "Kettle"},
                                   context=Context(user_id=other.id))
        own = await evaluate(hass, {"intent": "turn_on", "device_alias": "boiler"}, context=Context(user_id=user.id))
        for trace, asker in ((elsewhere, other), (own, user)):
            for viewer in {asker.id, admin.id}:
                expected[viewer] = {*expected[viewer], trace["trace_id"]}
        event = (await client.receive_json())["event"]
        if user is admin:
            assert event["decision"]["trace_id"] != own["trace_id"]  # the admin sees the other decision first
            event = (await client.receive_json())["event"]
        assert event["type"] == "decision" and event["decision"]["trace_id"] == own["trace_id"]
        await client.close()


async def test_runs_are_private(hass: HomeAssistant, loaded_entry: MockConfigEntry,
                                hass_ws_client: WebSocketGenerator) -> None:
    """get_runs and agentic_hems/runs: a non-admin gets only their own runs, an administrator all; a run without a
    user is for administrators (and the system) only. subscribe_run streams only the caller's own runs."""
    owner, owner_token = await _user(hass, "Owner")
    member, member_token = await _user(hass, "Household member")
    admin, admin_token = await _user(hass, "Admin", GROUP_ID_ADMIN)
    member_client = await hass_ws_client(hass, member_token)
    await member_client.send_json_auto_id({"type": "agentic_hems/subscribe_run"})
    assert (await member_client.receive_json())["success"]

    async def ask(user_id: str | None) -> str:
        response = await hass.services.async_call(DOMAIN, "ask", {"text": "when is electricity cheapest?"},
                                                  blocking=True, return_response=True,
                                                  context=Context(user_id=user_id))
        return str(response["run_id"])

    owners = [await ask(owner.id), await ask(owner.id)]
    automation = await ask(None)
    members = [await ask(member.id)]
    everyone = {*owners, automation, *members}
    expected = {owner.id: set(owners), member.id: set(members), admin.id: everyone, None: everyone}
    for user_id, ids in expected.items():
        got = await hass.services.async_call(DOMAIN, "get_runs", {}, blocking=True, return_response=True,
                                             context=Context(user_id=user_id))
        assert {r["run_id"] for r in got["runs"]} == ids
    for user, token in ((owner, owner_token), (member, member_token), (admin, admin_token)):
        client = await hass_ws_client(hass, token)
        await client.send_json_auto_id({"type": "agentic_hems/runs"})
        result = (await client.receive_json())["result"]
        assert {r["run_id"] for r in result["runs"]} == expected[user.id]
        assert result["stats"]["runs"] == len(expected[user.id])
    messages = []
    while (message := (await member_client.receive_json())["event"])["type"] != "finished":
        messages.append(message)
    assert {m["run_id"] for m in [*messages, message]} == set(members)  # the owner's and the automation's: never


# --- secrets in diagnostics ------------------------------------------------------------------------------------------

ENTSOE_KEY = "0f9e8d7c-6b5a-4321-9fed-cba987654321"
LLM_KEY = "sk-proj-Secr3tLlmKeyThatMustNeverLeak0123456789"
URL_USER, URL_PASSWORD, URL_QUERY_KEY = "llmuser", "hunter2-Pa55word", "AIzaQueryStringKey_9876543210abcdef"
LLM_URL = f"https://{URL_USER}:{URL_PASSWORD}@llm.example.com:8443/v1?key={URL_QUERY_KEY}&team=energy"
GRID_SECRET = bytes(range(100, 132))
SECRETS = [ENTSOE_KEY, LLM_KEY, URL_USER, URL_PASSWORD, URL_QUERY_KEY, GRID_SECRET.hex(), "hunter2"]
KEY_LIKE = [re.compile(p) for p in (r"sk-[A-Za-z0-9_-]{8,}", r"AIza[0-9A-Za-z_-]{8,}", r"\b[0-9a-fA-F]{32,}\b",
                                    r"[A-Za-z0-9+/_-]{40,}={0,2}",
                                    r"://(?!\*\*REDACTED\*\*[:@])[^/\s@]+:[^/\s@]+@")]
# Long hex by design, not secret: the audit chain's head is a SHA-256 of public records.
NOT_SECRET = {("grid", "audit", "head")}


def _strings(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every string of a JSON value (keys too) with its path."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield path, str(key)
            yield from _strings(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, path)


@pytest.fixture
async def secret_entry(hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory) -> MockConfigEntry:
    """An entry with every secret set: the ENTSO-E key, the LLM key, a base URL with credentials and a key in its
    query string, a grid HMAC secret, and a price error whose text carries the ENTSO-E URL with its token."""
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    entry = sample_entry({"api_key": ENTSOE_KEY, "bidding_zone": "BE", "llm_base_url": LLM_URL,
                          "llm_api_key": LLM_KEY})
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    entry.runtime_data.grid.secret = GRID_SECRET
    entry.runtime_data.coordinator.last_error = PriceSourceError(
        f"GET https://web-api.tp.entsoe.eu/api?securityToken={ENTSOE_KEY}&documentType=A44 failed "
        f"(model at {LLM_URL}, key {LLM_KEY})")
    return entry


async def test_diagnostics_hold_no_secret(hass: HomeAssistant, secret_entry: MockConfigEntry) -> None:
    diag = await async_get_config_entry_diagnostics(hass, secret_entry)
    data = diag["entry"]["data"]
    assert data["api_key"] == data["llm_api_key"] == "**REDACTED**"
    assert data["llm_base_url"] == "https://**REDACTED**@llm.example.com:8443/v1?key=%2A%2AREDACTED%2A%2A&team=%2A%2AREDACTED%2A%2A"
    assert diag["last_error"] is not None and "securityToken=**REDACTED**" in diag["last_error"]
    found = []
    for path, text in _strings(diag):
        found += [(path, secret) for secret in SECRETS if secret in text]
        if path not in NOT_SECRET:
            found += [(path, m.group()) for pattern in KEY_LIKE if (m := pattern.search(text))]
    assert found == []
    assert re.fullmatch(r"[0-9a-f]{64}", diag["grid"]["audit"]["head"])  # the one long hex string, a hash


def test_redact_url() -> None:
    assert redact_url("http://host:11434/v1") == "http://host:11434/v1"
    assert redact_url("https://u:p@[::1]:8080/v1?a=1") == "https://**REDACTED**@[::1]:8080/v1?a=%2A%2AREDACTED%2A%2A"
    assert redact_url("http://[::1") == "**REDACTED**"


@pytest.mark.parametrize("admin", [True, False])
async def test_only_admins_download_diagnostics(hass: HomeAssistant, secret_entry: MockConfigEntry,
                                                hass_client: ClientSessionGenerator, admin: bool) -> None:
    """HA 2026.10's download view requires an administrator; HA 2026.4's does not, so the integration refuses a
    non-admin itself: 401 on both."""
    assert await async_setup_component(hass, "diagnostics", {})
    user, token = await _user(hass, "Admin" if admin else "Household member", GROUP_ID_ADMIN if admin else GROUP_ID_USER)
    client = await hass_client(token)
    response = await client.get(f"/api/diagnostics/config_entry/{secret_entry.entry_id}")
    if not admin:
        assert response.status == 401
        return
    assert response.status == 200
    body = await response.text()
    assert all(secret not in body for secret in SECRETS)
    assert user.is_admin and (await response.json())["data"]["entry"]["data"]["llm_api_key"] == "**REDACTED**"


async def test_admin_context_helper(hass: HomeAssistant) -> None:
    """The tests' own helper gives an active administrator."""
    context = await admin_context(hass)
    user = await hass.auth.async_get_user(str(context.user_id))
    assert user is not None and user.is_admin and user.is_active
