"""SG Ready across a restart: the block times kept in the entry's Store (``agentic_hems.<entry_id>.sg_ready``).

A restart resets the relays' ``last_changed``; the tests simulate it by storing the times a previous run kept and
switching the relays (template switches on input_booleans) at the restart, so their ``last_changed`` is the
restart's moment. The oracles: the clock (a block's real start plus its maximum, the stored release plus the release
time) and the contact changes seen on the state machine.
"""

from __future__ import annotations

from datetime import datetime, timedelta
import asyncio
import logging
from types import SimpleNamespace
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.core import HomeAssistant, callback
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.planning.sg_blocks import SgTimes
from custom_components.agentic_hems.planning.sg_exec import slot_states
from custom_components.agentic_hems.scheduling.sg_ready import BLOCKED, NORMAL, RECOMMENDED

from .conftest import NOW
from .test_heat_pump import HEAT_ID, INDOOR, heated_entry
from .test_sg_ready import RELAY_1, RELAY_2, SG_PUMP, _sg_house, contact_state, step

PUMP = {**SG_PUMP, "sg_max_block_min": 120.0}  # at most 8 slots blocked, then 8 free before the next block
SLOT = timedelta(minutes=15)
FIRST = dt_util.as_utc(NOW).replace(minute=0)  # the slot holding NOW (20:00 local)


def file_of(record: Any, version: int = 1) -> dict[str, Any]:
    """A Store file of SG Ready block times holding ``record`` for the heat pump (the key is added at set-up)."""
    return {"version": version, "minor_version": 1, "data": {"heat_pumps": {HEAT_ID: record}}}


def ago(minutes: float) -> datetime:
    """``minutes`` before the restart (NOW), aware UTC."""
    return dt_util.as_utc(NOW) - timedelta(minutes=minutes)


async def restart(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    hass_storage: dict[str, Any],
    file: dict[str, Any] | None,
    contact_1: bool,
    indoor_c: float = 21.9,
    control: bool = True,
    contact_2: bool = False,
) -> MockConfigEntry:
    """HA comes up at NOW: the relays show contact 1 ``contact_1`` and contact 2 ``contact_2``, changed at NOW; the
    Store file ``file`` (None: none) is there; the entry is set up, device control on with ``control``. At 21.9 °C
    indoors the plan keeps the heat pump off for hours (it would block from 20:00 to 21:45 without a block before)."""
    await _sg_house(hass, freezer)
    for n, on in ((1, contact_1), (2, contact_2)):
        if on:
            await hass.services.async_call(
                "input_boolean", "turn_on", {"entity_id": f"input_boolean.sg_contact_{n}"}, blocking=True
            )
    for entity_id in (RELAY_1, RELAY_2):  # restored at the restart: last_changed is now
        state = hass.states.get(entity_id)
        hass.states.async_set(entity_id, state.state, state.attributes, force_update=True)
    await hass.async_block_till_done()
    assert all(hass.states.get(e).last_changed == dt_util.utcnow() for e in (RELAY_1, RELAY_2))
    hass.states.async_set(INDOOR, str(indoor_c), {"unit_of_measurement": "°C", "device_class": "temperature"})
    entry = heated_entry(PUMP, battery_control="automatic")
    entry.add_to_hass(hass)
    if file is not None:
        hass_storage[f"{DOMAIN}.{entry.entry_id}.sg_ready"] = {**file, "key": f"{DOMAIN}.{entry.entry_id}.sg_ready"}
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(control)
    return entry


async def settle(hass: HomeAssistant) -> None:
    """Let a contact's change reach every listener: HA 2026.4 runs a template relay's update in a task and hands the
    relay's state change to state-change trackers one loop iteration later."""
    await hass.async_block_till_done()
    await asyncio.sleep(0)
    await hass.async_block_till_done()


async def run(hass: HomeAssistant, freezer: FrozenDateTimeFactory, entry: MockConfigEntry, n: int) -> list[int]:
    """The contacts' state after each of the next ``n`` boundaries (from 20:15), the house following the plan."""
    states = []
    for i in range(1, n + 1):
        await step(hass, freezer, entry, FIRST + i * SLOT)
        states.append(contact_state(hass))
    return states


def slot_of(moment: datetime) -> datetime:
    """The start of the slot holding ``moment``."""
    return FIRST + (moment - FIRST) // SLOT * SLOT


def first_block(states: list[int]) -> datetime | None:
    """The boundary (from 20:15 on, :func:`run`) at which the relays first show state 1."""
    return next((FIRST + (i + 1) * SLOT for i, s in enumerate(states) if s == BLOCKED), None)


async def test_a_block_begun_before_a_restart_ends_at_its_maximum_counted_from_its_real_start(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_storage: dict[str, Any]
) -> None:
    """Blocked since 18:35 (90 min before the restart at 20:05), at most 120 min: the relays leave state 1 at the
    boundary that opens the first slot past 18:35 + 120 min (20:30), not 120 min after the restart (counted from the
    restart the block would go on to 21:45), and stay out of it for the release time; the Store then keeps the
    executor's change (the block's end at 20:30)."""
    real_start = ago(90)
    file = file_of({"state": BLOCKED, "block_start": real_start.isoformat(), "block_end": None})
    entry = await restart(hass, freezer, hass_storage, file, contact_1=True)
    states = await run(hass, freezer, entry, 8)
    assert slot_of(real_start) + 8 * SLOT == FIRST + 2 * SLOT  # 120 min of whole slots from the block's first
    assert states[0] == BLOCKED and BLOCKED not in states[1:], states  # blocked at 20:15 (below its cap), not on
    assert [t["outcome"] for t in entry.runtime_data.control.traces.values() if RELAY_1 in t["raw_input"]] == [
        "executed"
    ]
    key = f"{DOMAIN}.{entry.entry_id}.sg_ready"
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert hass_storage[key]["data"] == {
        "heat_pumps": {HEAT_ID: {"state": states[-1], "block_start": None, "block_end": (FIRST + 2 * SLOT).isoformat()}}
    }


async def test_a_new_block_waits_its_release_counted_from_the_stored_end(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_storage: dict[str, Any]
) -> None:
    """The last block ended at 19:35, 30 min before the restart; the relays show state 2 since the restart. The
    release (8 whole slots without a block) starts with the first whole slot after 19:35 (19:45), so the next block
    may begin at 21:45 (counted from the restart at 20:05 it would be 22:15): the plan, which wants a block from
    20:00 on, gets it at 21:45."""
    released = ago(30)
    file = file_of({"state": NORMAL, "block_start": None, "block_end": released.isoformat()})
    entry = await restart(hass, freezer, hass_storage, file, contact_1=False)
    states = await run(hass, freezer, entry, 8)
    free_from = slot_of(released) + SLOT  # the first whole slot without the block
    assert first_block(states) == free_from + 8 * SLOT == FIRST + 7 * SLOT, states


def hand_plan(n: int) -> SimpleNamespace:
    """A plan of ``n`` slots from 20:00 that keeps the heat pump off, 1 K above the floor: every slot may block."""
    plan = SimpleNamespace(
        start=FIRST,
        resolution=SLOT,
        heat_kw={HEAT_ID: np.zeros(n)},
        temp_c={HEAT_ID: np.full(n + 1, 21.0)},
        pv_kw=np.zeros(n),
        curtail_kw=np.zeros(n),
        base_load_kw=np.full(n, 0.5),
    )
    inputs = SimpleNamespace(
        heat_pumps=[SimpleNamespace(name=HEAT_ID, comfort_low_c=np.full(n, 20.0), comfort_high_c=np.full(n, 22.0))],
        curve=SimpleNamespace(prices=np.full(n, 0.2)),
        fees=SimpleNamespace(energy_fee=np.full(n, 0.1)),
    )
    return SimpleNamespace(plan=plan, inputs=inputs)


def blocked_slots(states: list[int]) -> list[datetime]:
    """The starts of the slots in state 1 of a plan from 20:00."""
    return [FIRST + i * SLOT for i, s in enumerate(states) if s == BLOCKED]


VALID = {"state": BLOCKED, "block_start": ago(90).isoformat(), "block_end": None}


@pytest.mark.parametrize(
    ("file", "dropped"),
    [
        (file_of(VALID, version=2), True),  # a newer storage version
        ({"version": 1, "minor_version": 1, "data": ["not", "a", "mapping"]}, True),
        (file_of({**VALID, "state": 7}), True),
        (file_of({**VALID, "block_start": "2026-11-29T18:35:00"}), True),  # no time zone
        (file_of({**VALID, "block_start": "yesterday"}), True),
        (file_of({**VALID, "state": NORMAL}), True),  # a block start outside a block
        (file_of({"state": NORMAL, "block_start": None, "block_end": ago(30).isoformat()}), False),  # not 1
    ],
    ids=["newer version", "not a mapping", "state 7", "naive time", "not a time", "start outside a block", "state 2"],
)
async def test_stored_times_that_cannot_be_trusted_fall_back_to_the_contacts_last_change(
    hass: HomeAssistant,
    freezer: FrozenDateTimeFactory,
    hass_storage: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    file: dict[str, Any],
    dropped: bool,
) -> None:
    """The relays show state 1 since the restart. A store that cannot be read, or a record that is not one, is
    dropped with a warning; a record of another state than the relays show is not used. Either way the block counts
    from the restart as without a store: 8 slots from the restart's slot (20:00-21:45) on a plan that may block in
    every slot; with the valid record (blocked since 18:35) only 20:00 and 20:15."""
    caplog.set_level(logging.DEBUG, logger="custom_components.agentic_hems")
    entry = await restart(hass, freezer, hass_storage, file, contact_1=True, control=False)
    times = entry.runtime_data.home.sg_blocks.times
    hp = entry.runtime_data.home.config.heat_pumps[0]
    assert ("Dropping unreadable" in caplog.text) is dropped and (HEAT_ID in times) is not dropped
    assert blocked_slots(slot_states(hass, hp, hand_plan(16), 0, times.get(HEAT_ID))) == [
        FIRST + i * SLOT for i in range(8)
    ]
    assert "counted from last_changed" in caplog.text and "counted from the stored times" not in caplog.text
    valid = SgTimes.from_dict(VALID)
    assert blocked_slots(slot_states(hass, hp, hand_plan(10), 0, valid)) == [FIRST, FIRST + SLOT]  # then 8 free
    assert "counted from the stored times" in caplog.text


async def test_changes_by_other_hands_are_kept_across_a_reload_and_the_store_goes_with_the_entry(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_storage: dict[str, Any]
) -> None:
    """Device control off (the plan switches nothing): a person closes contact 1 at 20:06 (state 1), HA restarts at
    21:00 (the relays' last_changed reset): the block counts from 20:06, so on a plan that may block in every slot
    it goes on for the 4 slots left of its 8 (21:00-21:45). Contact 1 opens at 21:05: the Store keeps state 2 and
    the block's end; removing the entry removes the Store."""
    entry = await restart(hass, freezer, hass_storage, None, contact_1=False, control=False)
    key = f"{DOMAIN}.{entry.entry_id}.sg_ready"
    seen: list[tuple[datetime, int]] = []

    @callback
    def changed(event: Any) -> None:
        if event.data["entity_id"] in (RELAY_1, RELAY_2):
            seen.append((event.data["new_state"].last_changed, contact_state(hass)))

    hass.bus.async_listen("state_changed", changed)

    async def contact_1(on: bool, moment: datetime) -> None:
        freezer.move_to(moment)
        service = "turn_on" if on else "turn_off"
        await hass.services.async_call("input_boolean", service, {"entity_id": "input_boolean.sg_contact_1"})
        await settle(hass)

    await contact_1(True, FIRST + timedelta(minutes=6))
    assert seen == [(FIRST + timedelta(minutes=6), BLOCKED)]
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert hass_storage[key]["data"] == {
        "heat_pumps": {HEAT_ID: {"state": BLOCKED, "block_start": seen[0][0].isoformat(), "block_end": None}}
    }
    freezer.move_to(FIRST + timedelta(hours=1))
    for entity_id in (RELAY_1, RELAY_2):  # the restart
        state = hass.states.get(entity_id)
        hass.states.async_set(entity_id, state.state, state.attributes, force_update=True)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    home = entry.runtime_data.home
    hp = home.config.heat_pumps[0]
    states = slot_states(hass, hp, hand_plan(16), 4, home.sg_blocks.times.get(HEAT_ID))
    left = [t for t in (FIRST + i * SLOT for i in range(4, 16)) if t < slot_of(seen[0][0]) + 8 * SLOT]
    assert blocked_slots([0] * 4 + states) == left == [FIRST + i * SLOT for i in range(4, 8)]
    await contact_1(False, FIRST + timedelta(minutes=65))
    assert seen[-1] == (FIRST + timedelta(minutes=65), NORMAL)
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert hass_storage[key]["data"] == {
        "heat_pumps": {HEAT_ID: {"state": NORMAL, "block_start": None, "block_end": seen[-1][0].isoformat()}}
    }
    await hass.config_entries.async_remove(entry.entry_id)
    await hass.async_block_till_done()
    assert key not in hass_storage


async def test_a_kept_block_end_is_not_carried_past_contacts_that_changed_unseen(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_storage: dict[str, Any]
) -> None:
    """Kept: state 2, the last block ended at 19:35. The relays come up in state 3 (they changed while HA was down, so
    a block may have come and gone); at 20:10 a person opens contact 2 (state 2 again). The kept end is not carried
    on: the release counts from contact 1's last change (the restart, 20:05), so on a plan that may block in every
    slot the next block begins at 22:15 (from 19:35 it would be 21:45)."""
    file = file_of({"state": NORMAL, "block_start": None, "block_end": ago(30).isoformat()})
    entry = await restart(hass, freezer, hass_storage, file, contact_1=False, contact_2=True, control=False)
    assert contact_state(hass) == RECOMMENDED
    freezer.move_to(FIRST + timedelta(minutes=10))
    await hass.services.async_call("input_boolean", "turn_off", {"entity_id": "input_boolean.sg_contact_2"})
    await settle(hass)
    assert contact_state(hass) == NORMAL
    home = entry.runtime_data.home
    hp = home.config.heat_pumps[0]
    states = slot_states(hass, hp, hand_plan(16), 1, home.sg_blocks.times.get(HEAT_ID))
    restart_slot = slot_of(dt_util.as_utc(NOW))
    assert blocked_slots([0] + states)[0] == restart_slot + SLOT + 8 * SLOT == FIRST + 9 * SLOT
    key = f"{DOMAIN}.{entry.entry_id}.sg_ready"
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert hass_storage[key]["data"] == {
        "heat_pumps": {HEAT_ID: {"state": NORMAL, "block_start": None, "block_end": None}}
    }
