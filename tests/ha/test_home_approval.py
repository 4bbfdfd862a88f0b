"""The whole-home plan in approval mode, in a real Home Assistant: one request per plan for the batteries and heat
pumps together, and grants that bind the exact approved command (a switch's on is not its off).

Oracles: the request's own actions at the current slot (what the administrator approved), the entities' states and
the service calls HA saw.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
)

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.gates.models import GridGrant, NormalizedCommand
from custom_components.agentic_hems.planning.home_approval import command_refusal, summary
from custom_components.agentic_hems.planning.home_manager import HomePlanManager
from homeassistant.auth.models import User
from homeassistant.components import persistent_notification
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util

from .conftest import APPLIANCES, NOW
from .test_heat_pump import CLIMATE, HEAT_ID, HEAT_PUMP, INDOOR, _heated_house, reach
from .test_home_plan import BATTERY, SETPOINT, _house

SWITCH = "switch.heat_pump_boost"


def entry_with(heat_pump: dict[str, Any], battery: dict[str, Any] | None = None, **options: Any) -> MockConfigEntry:
    """The sample entry (its three appliances) with a heat pump, optionally a battery, in approval mode."""
    subentries = [ConfigSubentryData(data=data, subentry_id=key, subentry_type="appliance", title=data["name"],
                                     unique_id=None) for key, data in APPLIANCES.items()]
    subentries.append(ConfigSubentryData(data=heat_pump, subentry_id=HEAT_ID, subentry_type="heat_pump",
                                         title=heat_pump["name"], unique_id=None))
    if battery is not None:
        subentries.append(ConfigSubentryData(data=battery, subentry_id="battery1", subentry_type="battery",
                                             title=battery["name"], unique_id=None))
    return MockConfigEntry(
        domain=DOMAIN, title="Sample prices", unique_id="sample", data={"price_source": "sample"},
        options={**DEFAULT_OPTIONS, "execution_wait_s": 1, "battery_control": "approval", **options},
        subentries_data=subentries, version=1, minor_version=1,
    )


async def _start(hass: HomeAssistant, freezer: FrozenDateTimeFactory, entry: MockConfigEntry) -> HomePlanManager:
    """The heated house, then ``entry`` set up with device control on."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    await _heated_house(hass)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    manager: HomePlanManager = entry.runtime_data.home
    return manager


def now_action(request: dict[str, Any], entity_id: str) -> dict[str, Any]:
    """The request's action for ``entity_id`` covering now (the oracle: what was approved)."""
    now = dt_util.utcnow()
    (action,) = [a for a in request["actions"] if a["entity_id"] == entity_id
                 and datetime.fromisoformat(a["start"]) <= now < datetime.fromisoformat(a["end"])]
    return action


async def approve(hass: HomeAssistant, request_id: str, admin: User) -> None:
    await hass.services.async_call(DOMAIN, "approve_authorization", {"request_id": request_id}, blocking=True,
                                   context=Context(user_id=admin.id))
    await hass.async_block_till_done(wait_background_tasks=True)


def home_requests(entry: MockConfigEntry) -> list[dict[str, Any]]:
    return [r for r in entry.runtime_data.grid.records.requests.values() if r.get("kind") == "home_plan"]


async def test_a_grant_for_a_switch_covers_only_the_approved_on_or_off(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    entry = entry_with({**HEAT_PUMP, "control_entity": SWITCH})
    manager = await _start(hass, freezer, entry)
    request_id = manager.approvals.request_id
    request = entry.runtime_data.grid.records.requests[request_id]
    approved = now_action(request, SWITCH)["value"]
    other = {"on": "off", "off": "on"}[approved]
    await hass.services.async_call("input_boolean", f"turn_{other}", {"entity_id": "input_boolean.boost_contact"},
                                   blocking=True)  # the contact starts in the other state
    await hass.async_block_till_done()
    assert hass.states.get(SWITCH).state == other
    await approve(hass, request_id, hass_admin_user)
    assert hass.states.get(SWITCH).state == approved  # the executor carried out the approved command
    slot = manager.result.plan.start
    record = await entry.runtime_data.control.async_evaluate(
        source_agent="grid", candidate={"intent": f"turn_{other}", "device_alias": SWITCH, "params": {}},
        context=Context(), raw_input=f"turn {other} the boost contact", slot_start=slot,
        grant=manager.approvals.grant(slot))
    assert (record["outcome"], record["failed_gate"]) == ("blocked", "policy")
    policy = record["gate_results"][-1]
    assert policy["reason"] == (f"blocked by policy: turn_{other} on {SWITCH} is not the approved turn_{approved} "
                                f"for slot {slot.isoformat()}")
    assert policy["evidence"]["approved_command"] == {"intent": f"turn_{approved}", "data": {}}
    assert hass.states.get(SWITCH).state == approved


def command(intent: str, data: dict[str, Any], entity_id: str = CLIMATE) -> NormalizedCommand:
    return NormalizedCommand(intent=intent, entity_id=entity_id, domain=entity_id.split(".")[0], device_class=None,
                             service=intent, data=data, params=data, risk_level=1, appliance=False,
                             source_agent="grid")


@pytest.mark.parametrize(
    ("approved", "asked", "passes"),
    [
        (("set_temperature", {"temperature": 21.5}), ("set_temperature", {"temperature": 21.5}), True),
        (("set_temperature", {"temperature": 21.5}), ("set_temperature", {"temperature": 21.5 + 1e-7}), True),
        (("set_temperature", {"temperature": 21.5}), ("set_temperature", {"temperature": 21.5 + 1e-5}), False),
        (("set_temperature", {"temperature": 21.5}), ("set_hvac_mode", {"hvac_mode": "off"}), False),
        (("set_value", {"value": 2.5}), ("set_value", {"value": 2.5, "extra": 1}), False),
        (("set_value", {"value": 2.5}), ("set_value", {"value": True}), False),
        (("select_option", {"option": "Auto"}), ("select_option", {"option": "Auto"}), True),
        (("select_option", {"option": "Auto"}), ("select_option", {"option": "auto"}), False),
        (("turn_on", {}), ("turn_on", {}), True),
        (("turn_on", {}), ("turn_off", {}), False),
    ],
)
def test_a_command_passes_only_as_approved(
    approved: tuple[str, dict[str, Any]], asked: tuple[str, dict[str, Any]], passes: bool
) -> None:
    slot = dt_util.as_utc(NOW).replace(minute=0)
    refusal = command_refusal(approved, command(*asked), slot)
    assert (refusal is None) is passes
    if refusal is not None:
        assert refusal.approved == {"intent": approved[0], "data": approved[1]}


async def _both(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> tuple[MockConfigEntry, HomePlanManager]:
    """The heated house with the battery (its setpoint, SoC sensor and tomorrow's PV) in approval mode."""
    solar = await _house(hass)
    entry = entry_with(HEAT_PUMP, BATTERY, pv_forecast_entries=[solar.entry_id], export_price_mode="spot",
                       export_spot_factor=0.8, export_spot_fee=0.01)
    return entry, await _start(hass, freezer, entry)


async def test_one_plan_asks_once_for_the_battery_and_the_heat_pump_and_one_approval_runs_both(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    entry, manager = await _both(hass, freezer)
    (request,) = home_requests(entry)
    assert request["status"] == "pending" and request["request_id"] == manager.approvals.request_id
    assert {a["type"] for a in request["actions"]} == {"home_battery_power", "home_heat_pump"}
    lines = request["summary"].splitlines()
    assert [line.split(" (")[0] for line in lines[1:]] == ["- Home battery", "- Heat pump"]
    assert f"({SETPOINT}): " in lines[1] and f"({CLIMATE}): " in lines[2]
    issues = [i for (domain, i) in ir.async_get(hass).issues if domain == DOMAIN and i.startswith("authorization_")]
    assert issues == [f"authorization_{request['request_id']}"]
    power, target = now_action(request, SETPOINT)["p_kw"], now_action(request, CLIMATE)["value"]
    assert power != 0.0 and target != 19.0  # both differ from the entities' states: approving must set both
    events = async_capture_events(hass, "call_service")
    assert await manager.async_execute() == []  # nothing before the approval
    await approve(hass, request["request_id"], hass_admin_user)
    assert float(hass.states.get(SETPOINT).state) == pytest.approx(power)
    assert hass.states.get(CLIMATE).attributes["temperature"] == pytest.approx(target)
    called = [(e.data["domain"], e.data["service"]) for e in events if e.data["domain"] != DOMAIN]
    assert sorted(called) == [("climate", "set_temperature"), ("input_number", "set_value")]


async def test_a_newer_plan_withdraws_the_approved_request(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    entry, manager = await _both(hass, freezer)
    first = manager.approvals.request_id
    await approve(hass, first, hass_admin_user)
    hass.states.async_set("sensor.battery_soc", "90", {"unit_of_measurement": "%"})  # far from the plan: replans
    await hass.async_block_till_done(wait_background_tasks=True)
    second = manager.approvals.request_id
    assert second not in (None, first)
    assert [(r["request_id"], r["status"]) for r in home_requests(entry)] == [(first, "expired"), (second, "pending")]
    registry = ir.async_get(hass)
    assert registry.async_get_issue(DOMAIN, f"authorization_{first}") is None
    assert registry.async_get_issue(DOMAIN, f"authorization_{second}") is not None
    slot = manager.result.plan.start
    value = entry.runtime_data.grid.records.requests[first]["actions"][0]["p_kw"]  # the old request's first setting
    record = await entry.runtime_data.control.async_evaluate(
        source_agent="grid", candidate={"intent": "set_value", "device_alias": SETPOINT, "params": {"value": value}},
        context=Context(), raw_input="set the battery", slot_start=slot,
        grant=GridGrant(request_id=first, slot_start=slot))
    assert record["outcome"] == "blocked"
    assert record["gate_results"][-1]["reason"] == (
        f"blocked by policy: authorization request {first} is expired, not approved")


async def test_a_request_that_expired_unanswered_is_asked_again_for_the_same_plan(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """A pending request expires after 30 minutes; the plan, unchanged, must then ask again (a new pending request and
    its repair issue), else nothing is left to approve and nothing runs until the plan happens to change."""
    entry = entry_with(HEAT_PUMP)
    manager = await _start(hass, freezer, entry)
    records = entry.runtime_data.grid.records
    start = dt_util.as_utc(NOW).replace(minute=0)
    for k in range(1, 7):  # six boundaries, 19:15 to 20:30 UTC: the first request (19:05) expires at 19:35
        moment = start + k * timedelta(minutes=15)
        await reach(hass, freezer, moment)
        in_force = records.requests[manager.approvals.request_id]
        assert in_force["status"] == "pending", (moment, [(r["created_at"], r["status"]) for r in home_requests(entry)])
        assert ir.async_get(hass).async_get_issue(DOMAIN, f"authorization_{in_force['request_id']}") is not None
        assert [r["status"] for r in home_requests(entry)].count("pending") == 1


async def test_a_replan_after_the_expiry_asks_again_even_when_the_plan_is_unchanged(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """Replans every 5 minutes (no slot boundary timers): one within a slot finds the plan unchanged, and must still
    replace a request past its expiry (19:35) with a new pending one."""
    entry = entry_with(HEAT_PUMP)
    manager = await _start(hass, freezer, entry)
    records = entry.runtime_data.grid.records
    for minutes in range(5, 60, 5):
        freezer.move_to(dt_util.as_utc(NOW) + timedelta(minutes=minutes))
        hass.states.async_set(INDOOR, "20.49", {"unit_of_measurement": "°C", "device_class": "temperature"})
        await manager.async_replan()
        in_force = records.requests[manager.approvals.request_id]
        assert in_force["status"] == "pending", minutes
        assert datetime.fromisoformat(in_force["expires_at"]) > dt_util.utcnow(), minutes


async def test_a_denied_plan_is_not_asked_again_while_it_stays_the_same(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    entry = entry_with(HEAT_PUMP)
    manager = await _start(hass, freezer, entry)
    first = manager.approvals.request_id
    await hass.services.async_call(DOMAIN, "deny_authorization", {"request_id": first}, blocking=True,
                                   context=Context(user_id=hass_admin_user.id))
    assert await manager.approvals.async_plan_changed(manager.result, dt_util.utcnow()) is False
    assert [r["status"] for r in home_requests(entry)] == ["denied"]


async def test_turning_approval_off_withdraws_the_pending_request(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    """In automatic mode nothing waits for an approval: the request left from approval mode is withdrawn (its issue
    and notification closed), so an administrator cannot approve a request that no longer carries anything out."""
    entry = entry_with(HEAT_PUMP)
    manager = await _start(hass, freezer, entry)
    first = manager.approvals.request_id
    hass.config_entries.async_update_entry(entry, options={**entry.options, "battery_control": "automatic"})
    await hass.async_block_till_done(wait_background_tasks=True)
    assert [(r["request_id"], r["status"]) for r in home_requests(entry)] == [(first, "expired")]
    assert ir.async_get(hass).async_get_issue(DOMAIN, f"authorization_{first}") is None
    with pytest.raises(ServiceValidationError) as err:
        await approve(hass, first, hass_admin_user)
    assert err.value.translation_key == "request_not_pending"


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", ["Whole-home plan until 2026-11-30 07:00:",
                "- Home battery (input_number.battery_power): charge 2.5 kW 20:00–21:00, discharge 1.25 kW 21:00–22:00, "
                "charge 0 kW 22:00–23:00, charge 3 kW 23:00–00:15 (+1 more)",
                "- Heat pump (climate.heat_pump): 21.5 °C 20:00–23:00",
                "- Boost (switch.heat_pump_boost): on 20:00–21:00, off 21:00–22:00",
                "- PV limit (number.pv_limit): limit 3.5 kW 20:00–21:00, no limit 21:00–22:00"]),
        ("de", ["Hausplan bis 30.11.2026 07:00:",
                "- Home battery (input_number.battery_power): laden 2,5 kW 20:00–21:00, entladen 1,25 kW 21:00–22:00, "
                "laden 0 kW 22:00–23:00, laden 3 kW 23:00–00:15 (+1 weitere)",
                "- Heat pump (climate.heat_pump): 21,5 °C 20:00–23:00",
                "- Boost (switch.heat_pump_boost): an 20:00–21:00, aus 21:00–22:00",
                "- PV-Begrenzung (number.pv_limit): begrenzen auf 3,5 kW 20:00–21:00, keine Begrenzung 21:00–22:00"]),
    ],
)
async def test_the_summary_is_in_the_language_asked_with_the_end_s_date_when_not_today(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, lang: str, expected: list[str]
) -> None:
    _, manager = await _both(hass, freezer)
    heat = manager.config.heat_pumps[0]
    config = replace(manager.config, heat_pumps=(heat, replace(heat, name="Boost", control_entity=SWITCH)))
    start = NOW.replace(minute=0)  # 20:00 local

    def at(hours: float, minutes: int = 60) -> tuple[str, str]:
        begin = start + timedelta(hours=hours)
        return begin.isoformat(), (begin + timedelta(minutes=minutes)).isoformat()

    def action(kind: str, entity: str, when: tuple[str, str], **value: Any) -> dict[str, Any]:
        return {"type": kind, "entity_id": entity, "start": when[0], "end": when[1], **value}

    battery = [action("home_battery_power", SETPOINT, at(h, m), p_kw=kw)
               for h, m, kw in ((0, 60, 2.5), (1, 60, -1.25), (2, 60, 0.0), (3, 75, 3.0), (4.25, 60, 1.0))]
    actions = [*battery, action("home_heat_pump", CLIMATE, at(0, 180), value=21.5),
               action("home_heat_pump", SWITCH, at(0), value="on"), action("home_heat_pump", SWITCH, at(1), value="off"),
               action("home_pv_limit", "number.pv_limit", at(0), limit_kw=3.5),
               action("home_pv_limit", "number.pv_limit", at(1), limit_kw=None)]
    assert summary(config, actions, (start, start + timedelta(hours=11)), lang).splitlines() == expected
    same_day = summary(config, actions[:1], (start, start + timedelta(hours=3, minutes=45)), lang)
    assert same_day.splitlines()[0] == {"en": "Whole-home plan until 23:45:", "de": "Hausplan bis 23:45:"}[lang]


@pytest.mark.parametrize(
    ("lang", "head", "title", "message"),
    [
        ("en", "Whole-home plan until {end}:", "Agentic HEMS: authorization requested",
         "Request `{id}` for 20:00 to {end} waits for an administrator: `agentic_hems.approve_authorization` or "
         "`agentic_hems.deny_authorization` (expires 20:35)."),
        ("de", "Hausplan bis {end}:", "Agentic HEMS: Freigabe angefragt",
         "Anfrage `{id}` für 20:00 bis {end} wartet auf einen Administrator: `agentic_hems.approve_authorization` "
         "oder `agentic_hems.deny_authorization` (läuft 20:35 ab)."),
    ],
)
async def test_the_request_and_its_notification_follow_ha_s_language(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, lang: str, head: str, title: str, message: str
) -> None:
    hass.config.language = lang
    entry, manager = await _both(hass, freezer)
    (request,) = home_requests(entry)
    end = dt_util.as_local(manager.result.plan.horizon_end)
    assert end.date() != NOW.date()  # the plan runs into tomorrow: its end has its date
    end_text = f"{end:%d.%m.%Y %H:%M}" if lang == "de" else f"{end:%Y-%m-%d %H:%M}"
    lines = request["summary"].splitlines()
    assert lines[0] == head.format(end=end_text)
    assert lines[1].startswith(f"- Home battery ({SETPOINT}): ") and lines[2].startswith(f"- Heat pump ({CLIMATE}): ")
    assert " °C" in lines[2]
    note = persistent_notification._async_get_or_create_notifications(hass)[f"authorization_{request['request_id']}"]
    assert note["title"] == title
    assert note["message"] == f"{request['summary']}\n\n" + message.format(id=request["request_id"], end=end_text)
