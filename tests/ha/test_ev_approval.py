"""The charging current in approval mode: part of the whole-home plan's one authorization request, in a real HA.

The EV charger of tests/ha/test_ev_charger.py (wallbox shape: a 6..16 A current number, a charging switch) beside a
battery, with ``battery_control: approval``. Oracle: the stored plan's own kW per slot turned into amperes by hand
(:func:`.test_ev_charger.amps`, three phases of 230 V); what was approved is the request's own action.
"""

from __future__ import annotations

from datetime import datetime

from freezegun.api import FrozenDateTimeFactory
import pytest

from custom_components.agentic_hems.planning.ev_exec import planned_kw
from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util

from .conftest import NOW
from .test_ev_charger import CURRENT, SLOT, SWITCH, _boundary, _entry, amps
from .test_home_approval import approve, home_requests


def _slots(start: datetime, end: datetime) -> list[datetime]:
    return [start + k * SLOT for k in range(int((end - start) / SLOT))]


async def test_the_charging_current_is_asked_for_and_set_only_as_approved(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User, caplog: pytest.LogCaptureFixture
) -> None:
    """The request holds the charger's current for each slot the plan charges in (the oracle's amperes), named in its
    summary; before the approval the plan's first charging slot sets nothing and starts nothing; after it, the next
    approved slot sets exactly the approved current with the request's grant (source grid) and starts the charger."""
    entry = await _entry(hass, freezer, power_limit_kw=7.0, battery_control="approval")
    planner = entry.runtime_data.planner
    (request,) = home_requests(entry)
    plan = planner.states["ev"].plan
    ev = [a for a in request["actions"] if a["type"] == "ev_current"]
    assert ev and all(a["entity_id"] == CURRENT and a["unit"] == "A" and a["phases"] == 3 for a in ev)
    for action in ev:
        slot = datetime.fromisoformat(action["start"])
        while slot < datetime.fromisoformat(action["end"]):
            assert action["value"] == amps(planned_kw(plan, slot)), (slot, action)
            slot += SLOT
    assert f"- EV charger ({CURRENT}): current {ev[0]['value']:g} A" in request["summary"]
    first = dt_util.as_utc(NOW).replace(minute=15, second=0)
    charging = [first + k * SLOT for k in range(40) if planned_kw(plan, first + k * SLOT) > 0]
    await _boundary(hass, freezer, charging[0])
    assert hass.states.get(SWITCH).state == "off" and hass.states.get(CURRENT).state == "6.0"
    assert "not charging in slot 2026-11-30T03:00:00+00:00: no approved current" in caplog.text
    (request,) = [r for r in home_requests(entry) if r["status"] == "pending"]
    await approve(hass, request["request_id"], hass_admin_user)
    approved_slots = {slot: a for a in request["actions"] if a["type"] == "ev_current"
                      for slot in _slots(datetime.fromisoformat(a["start"]), datetime.fromisoformat(a["end"]))}
    moment = min(slot for slot in approved_slots if slot > charging[0])
    await _boundary(hass, freezer, moment)
    approved = approved_slots[moment]
    assert float(hass.states.get(CURRENT).state) == approved["value"]
    assert hass.states.get(SWITCH).state == "on"
    current = [t for t in entry.runtime_data.control.traces.values()
               if (t.get("candidate") or {}).get("device_alias") == CURRENT]
    assert current[-1]["outcome"] == "executed" and current[-1]["source_agent"] == "grid"
