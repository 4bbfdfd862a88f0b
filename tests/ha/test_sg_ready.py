"""SG Ready heat pumps in a real Home Assistant: two relay contacts (template switches on input_booleans, named like
Shelly relays wired to the SG Ready terminals) and a heating-curve-shift number of ViCare's shape (°C, -13..40, step
1), driven slot by slot through the gates, in automatic and approval mode; a refused contact; the form's section."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed

from homeassistant.auth.models import User
from homeassistant.config_entries import SOURCE_RECONFIGURE, ConfigSubentry
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.planning.home_config import home_config
from custom_components.agentic_hems.planning.home_manager import planned_temp_c
from custom_components.agentic_hems.planning.home_view import why_now
from custom_components.agentic_hems.planning.heat_config import parse_heat_pump
from custom_components.agentic_hems.planning.sg_exec import async_switch, slot_states, state_values
from custom_components.agentic_hems.scheduling.sg_ready import (
    BLOCKED,
    CONTACTS,
    FORCED,
    NORMAL,
    RECOMMENDED,
    state_of,
    state_text,
)

from .conftest import APPLIANCES, NOW, sample_entry
from .test_heat_pump import (
    DEVICE,
    HEAT_ID,
    HEAT_PUMP,
    INDOOR,
    MODEL,
    add_heat_pump,
    device_step,
    error_text,
    fields,
    heat_pumps,
    heated_entry,
    open_form,
    weather_config,
)

RELAY_1, RELAY_2 = "switch.sg_ready_relay_1", "switch.sg_ready_relay_2"
SHIFT = "number.heating_curve_shift"
SG_PUMP = {
    **HEAT_PUMP,
    "control_entity": RELAY_1,
    "sg_contact_2_entity": RELAY_2,
    "sg_offset_entity": SHIFT,
    "sg_offset_k": 2.0,
    "sg_max_block_min": 60.0,
}


def relay(n: int) -> dict[str, Any]:
    """A template switch on input_boolean.sg_contact_<n> (the relay's output), available while sg_relay_<n>_online."""
    helper = f"input_boolean.sg_contact_{n}"
    return {
        "name": f"SG Ready relay {n}",
        "state": f"{{{{ is_state('{helper}', 'on') }}}}",
        "availability": f"{{{{ is_state('input_boolean.sg_relay_{n}_online', 'on') }}}}",
        "turn_on": {"action": "input_boolean.turn_on", "target": {"entity_id": helper}},
        "turn_off": {"action": "input_boolean.turn_off", "target": {"entity_id": helper}},
    }


SHIFT_NUMBER = {  # ViCare's heating curve shift: °C, -13..40, step 1
    "name": "Heating curve shift",
    "state": "{{ states('input_number.curve_shift') | float(0) }}",
    "set_value": {
        "action": "input_number.set_value",
        "target": {"entity_id": "input_number.curve_shift"},
        "data": {"value": "{{ value }}"},
    },
    "min": -13,
    "max": 40,
    "step": 1,
    "unit_of_measurement": "°C",
}


async def _sg_house(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """The relays and the number exist since 3 hours before NOW (no block in that time); the house and weather."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW - timedelta(hours=3))
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(
        hass,
        "input_boolean",
        {
            "input_boolean": {
                "sg_contact_1": {},
                "sg_contact_2": {},
                "sg_relay_1_online": {"initial": True},
                "sg_relay_2_online": {"initial": True},
            }
        },
    )
    assert await async_setup_component(
        hass, "input_number", {"input_number": {"curve_shift": {"min": -13, "max": 40, "step": 1, "initial": 0}}}
    )
    templates = weather_config(48)
    templates["template"].append({"switch": [relay(1), relay(2)], "number": [SHIFT_NUMBER]})
    assert await async_setup_component(hass, "template", templates)
    await hass.async_block_till_done()
    freezer.move_to(NOW)
    hass.states.async_set(INDOOR, "20.5", {"unit_of_measurement": "°C", "device_class": "temperature"})


async def _setup(hass: HomeAssistant, freezer: FrozenDateTimeFactory, **options: Any) -> MockConfigEntry:
    await _sg_house(hass, freezer)
    entry = heated_entry(SG_PUMP, **options)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    await entry.runtime_data.control.async_set_allow_control(True)
    return entry


def contact_state(hass: HomeAssistant) -> int:
    return state_of(hass.states.get(RELAY_1).state == "on", hass.states.get(RELAY_2).state == "on")


def watch(hass: HomeAssistant) -> list[int]:
    """The SG Ready state after each change of either contact, in order (the relays' outputs)."""
    seen: list[int] = []

    @callback
    def changed(event: Any) -> None:
        if event.data["entity_id"] in (RELAY_1, RELAY_2):
            seen.append(contact_state(hass))

    hass.bus.async_listen("state_changed", changed)
    return seen


async def step(hass: HomeAssistant, freezer: FrozenDateTimeFactory, entry: MockConfigEntry, moment: Any) -> None:
    """Reach the slot boundary ``moment``: the house follows the plan, the relays and number report 5 s before."""
    freezer.move_to(moment - timedelta(seconds=5))
    temp = planned_temp_c(entry.runtime_data.home.result.plan, HEAT_ID, moment)
    hass.states.async_set(INDOOR, str(round(temp, 2)), {"unit_of_measurement": "°C"})
    for entity_id in (RELAY_1, RELAY_2, SHIFT):  # the devices report (Freshness)
        state = hass.states.get(entity_id)
        hass.states.async_set(entity_id, state.state, state.attributes)
    freezer.move_to(moment)
    async_fire_time_changed(hass, moment)
    await hass.async_block_till_done(wait_background_tasks=True)


async def test_the_contacts_follow_the_plan_in_order_and_blocks_end_on_time(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """Over 16 slots: recommended (3) exactly where the plan runs the heat pump, with the offset 2 on the curve shift;
    blocked (1) only where the plan keeps it off above the floor's margin, for at most 4 slots (60 min) and then as
    long without; else normal (2). Every contact change passes only through 2 or 3 (never 4: forced is off)."""
    entry = await _setup(hass, freezer, battery_control="automatic")
    manager = entry.runtime_data.home
    seen, states = watch(hass), []
    first = manager.result.plan
    for i in range(4, 20):
        moment = first.start + i * first.resolution
        await step(hass, freezer, entry, moment)
        plan, inputs = manager.result.plan, manager.result.inputs
        assert plan.start == moment
        state = contact_state(hass)
        running = plan.heat_kw[HEAT_ID][0] > 1e-3
        if running:
            assert state == RECOMMENDED
        elif state == BLOCKED:
            assert plan.temp_c[HEAT_ID][1] >= inputs.heat_pumps[0].comfort_low_c[0] + 0.5
        else:
            assert state == NORMAL
        assert float(hass.states.get(SHIFT).state) == (2.0 if state == RECOMMENDED else 0.0)
        freezer.move_to(moment + timedelta(minutes=7))  # the explanation names the state the relays are in
        for lang in ("en", "de"):
            answer = why_now(manager, "Heat pump", lang, dt_util.utcnow())
            assert answer["now"].endswith(f" {state_text(state, lang)}."), (moment, answer)
        states.append(state)
    assert {NORMAL, RECOMMENDED, BLOCKED} <= set(states), states
    runs = "".join(str(s) for s in states).replace("2", " ").replace("3", " ").split()
    assert all(len(r) <= 4 for r in runs), states
    text = "".join(str(s) for s in states)
    assert all(len(gap) >= 4 for gap in text.split("1")[1:-1] if gap), states  # the release between two blocks
    assert FORCED not in seen and "31" not in "".join(map(str, seen)), seen  # 3 -> 1 passes through 2
    traces = [
        t
        for t in entry.runtime_data.control.traces.values()
        if any(e in t["raw_input"] for e in (RELAY_1, RELAY_2, SHIFT))
    ]
    assert traces and all(t["outcome"] == "executed" and t["source_agent"] == "scheduler" for t in traces)


async def test_a_refused_contact_leaves_the_other_alone_and_says_which_state_is_left(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """From 3 (0:1) to 1 (1:0) contact 2 goes off first; unavailable, the gates refuse it, contact 1 is not sent,
    the heat pump stays in 3 and the trace says so; nothing is remembered as done, so the next slot tries again."""
    entry = await _setup(hass, freezer, battery_control="automatic")
    await hass.services.async_call(
        "input_boolean", "turn_on", {"entity_id": "input_boolean.sg_contact_2"}, blocking=True
    )
    await hass.async_block_till_done()  # the template relay follows its input_boolean (a task on HA 2026.4)
    hp = entry.runtime_data.home.config.heat_pumps[0]
    assert contact_state(hass) == RECOMMENDED
    await hass.services.async_call(
        "input_boolean", "turn_off", {"entity_id": "input_boolean.sg_relay_2_online"}, blocking=True
    )
    await hass.async_block_till_done()
    assert hass.states.get(RELAY_2).state == "unavailable"
    executor, slot = entry.runtime_data.home.heat, dt_util.utcnow()

    async def evaluate(entity_id: str, value: float | str) -> dict[str, Any]:
        return await executor._command(entity_id, value, slot)

    seen = watch(hass)
    records, done = await async_switch(hass, hp, state_values(hp, BLOCKED), evaluate)
    assert not done and len(records) == 1
    (record,) = records
    assert record["candidate"]["device_alias"] == RELAY_2 and record["outcome"] != "executed"
    assert record["sg_ready"]["target"] == BLOCKED and record["sg_ready"]["left"] is None  # contact 2 unknown
    assert "not reached" in record["sg_ready"]["text"]
    assert hass.states.get(RELAY_1).state == "off" and seen == []  # contact 1 was not sent
    assert hass.states.get("input_boolean.sg_contact_2").state == "on"


async def test_approval_mode_asks_for_both_contacts_and_the_offset_then_switches_as_approved(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    entry = await _setup(hass, freezer, battery_control="approval")
    manager = entry.runtime_data.home
    request = entry.runtime_data.grid.records.requests[manager.approvals.request_id]
    entities = {a["entity_id"] for a in request["actions"]}
    assert entities == {RELAY_1, RELAY_2, SHIFT} and {a["type"] for a in request["actions"]} == {"home_heat_pump"}
    assert "Heat pump (switch.sg_ready_relay_2)" in request["summary"]
    # a scheduler command on a reserved contact is refused before approval
    record = await entry.runtime_data.control.async_evaluate(
        source_agent="scheduler",
        context=Context(),
        raw_input="turn on the relay",
        candidate={"intent": "turn_on", "device_alias": RELAY_1},
    )
    assert record["outcome"] == "blocked"
    await hass.services.async_call(
        DOMAIN,
        "approve_authorization",
        {"request_id": request["request_id"]},
        blocking=True,
        context=Context(user_id=hass_admin_user.id),
    )
    await hass.async_block_till_done(wait_background_tasks=True)
    first = manager.result.plan
    seen, checked = watch(hass), 0
    for i in range(4, 10):  # 2 -> 3 -> 1 as approved
        moment = first.start + i * first.resolution
        await step(hass, freezer, entry, moment)
        approved = {
            a["entity_id"]: a["value"] for a in request["actions"] if a["start"] <= moment.isoformat() < a["end"]
        }
        if request["status"] != "approved" or len(approved) < 2:
            continue
        assert hass.states.get(RELAY_1).state == approved[RELAY_1], (moment, approved)
        assert hass.states.get(RELAY_2).state == approved[RELAY_2], (moment, approved)
        assert float(hass.states.get(SHIFT).state) == approved[SHIFT]
        checked += 1
    assert FORCED not in seen and RECOMMENDED in seen and checked >= 4, (seen, checked)
    traces = [t for t in entry.runtime_data.control.traces.values() if RELAY_2 in t["raw_input"]]
    assert traces and all(t["source_agent"] == "grid" and t["outcome"] == "executed" for t in traces)
    assert np.isfinite(first.heat_kw[HEAT_ID]).all() and CONTACTS[NORMAL] == (False, False)


SECTION = {
    "sg_contact_2_entity": RELAY_2,
    "sg_offset_entity": SHIFT,
    "sg_offset_k": 2,
    "sg_forced": True,
    "sg_max_block_min": 90,
}


def relays(hass: HomeAssistant, shift_range: tuple[float, float] = (-13, 40), step: float = 1) -> None:
    """The relays and the curve shift as bare states of their integrations' shapes (the form reads them)."""
    for entity_id in (RELAY_1, RELAY_2, "switch.other_relay"):
        hass.states.async_set(entity_id, "off")
    hass.states.async_set(
        SHIFT,
        "0",
        {
            "min": shift_range[0],
            "max": shift_range[1],
            "step": step,
            "unit_of_measurement": "°C",
            "device_class": "temperature",
        },
    )


async def test_the_form_stores_sg_ready_and_shows_it_again(hass: HomeAssistant) -> None:
    """The section's fields are stored flat with the control entity as contact 1, read back as SG Ready, and a
    reconfigure shows them inside the section."""
    relays(hass)
    entry = sample_entry()
    entry.add_to_hass(hass)
    device = {**DEVICE, "control_entity": RELAY_1, "sg_ready": SECTION}
    result = await add_heat_pump(hass, entry, device, MODEL)
    assert result["type"] is FlowResultType.CREATE_ENTRY, result.get("errors")
    stored = heat_pumps(entry)["Heat pump"]
    assert {k: stored[k] for k in (*SECTION, "control_entity")} == {
        "sg_contact_2_entity": RELAY_2,
        "sg_offset_entity": SHIFT,
        "sg_offset_k": 2.0,
        "sg_forced": True,
        "sg_max_block_min": 90.0,
        "control_entity": RELAY_1,
    }
    (hp,) = home_config(hass, entry).heat_pumps
    assert hp.sg_ready and hp.entities() == (RELAY_1, RELAY_2, SHIFT) and hp.sg_max_block_min == 90.0
    assert home_config(hass, entry).control_entities() == {RELAY_1, RELAY_2, SHIFT}
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "heat_pump"),
        context={
            "source": SOURCE_RECONFIGURE,
            "subentry_id": next(iter(k for k, s in entry.subentries.items() if s.subentry_type == "heat_pump")),
        },
    )
    result = await hass.config_entries.subentries.async_configure(
        result["flow_id"], {"name": "Heat pump", "store": "space_heating"}
    )
    (section,) = [v for k, v in result["data_schema"].schema.items() if str(k) == "sg_ready"]
    assert fields(result)["control_entity"] == RELAY_1
    shown = {str(k): (k.description or {}).get("suggested_value") for k in section.schema.schema}
    assert shown == {
        "sg_contact_2_entity": RELAY_2,
        "sg_offset_entity": SHIFT,
        "sg_offset_k": 2.0,
        "sg_forced": True,
        "sg_max_block_min": 90.0,
    }


@pytest.mark.parametrize(
    ("control", "section", "error"),
    [
        (RELAY_1, {"sg_contact_2_entity": RELAY_1}, "sg_contacts_same"),
        ("climate.heat_pump", {"sg_contact_2_entity": RELAY_2}, "sg_contact_domain"),
        (RELAY_1, {"sg_contact_2_entity": "switch.not_there"}, "sg_entity_missing"),
        (RELAY_1, {"sg_offset_entity": SHIFT, "sg_offset_k": 2}, "sg_offset_needs_contacts"),
        (RELAY_1, {**SECTION, "sg_offset_k": -14.5}, "sg_number_range"),
        (RELAY_1, {**SECTION, "sg_max_block_min": 50}, "sg_number_range"),
        (RELAY_1, {**SECTION, "sg_contact_2_entity": "switch.other_relay"}, "control_entity_in_use"),
    ],
    ids=["same", "climate", "missing", "offset-alone", "offset-range", "block-slots", "other-device"],
)
async def test_bad_sg_ready_input_is_an_error_on_the_section(
    hass: HomeAssistant, control: str, section: dict[str, Any], error: str
) -> None:
    relays(hass)
    entry = sample_entry()
    entry.add_to_hass(hass)
    hass.config_entries.async_add_subentry(
        entry,
        ConfigSubentry(
            data={**APPLIANCES["dishwasher"], "name": "Boiler", "entity_id": "switch.other_relay"},
            subentry_type="appliance",
            title="Boiler",
            unique_id=None,
        ),
    )
    result = await device_step(
        hass, (await open_form(hass, entry))["flow_id"], {**DEVICE, "control_entity": control, "sg_ready": section}
    )
    assert (result["step_id"], result["errors"]) == ("space_heating", {"sg_ready": error})
    assert error_text("en", error) and error_text("de", error)


async def test_an_offset_number_whose_range_misses_the_offset_or_zero_is_refused(hass: HomeAssistant) -> None:
    """The number is set to the offset in states 3 and 4 and to 0 otherwise: its range and step grid must hold both."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    # (min, max, step), offset, accepted; off the grid too (the Capability gate refuses such a value at a boundary):
    # 1.5 K on 1 K steps, and 0 (outside states 3 and 4) on 1 K steps from -12.5
    cases = [((1, 40, 1), 2, False), ((-13, 1, 1), 2, False), ((-13, 40, 1), 2, True), ((0, 5, 1), 5, True)]
    cases += [((-13, 40, 1), 1.5, False), ((-12.5, 40, 1), 2.5, False), ((-13, 40, 0.5), 1.5, True)]
    for (low, high, step), k, ok in cases:
        shift_range = (low, high)
        relays(hass, shift_range, step)
        result = await device_step(
            hass,
            (await open_form(hass, entry))["flow_id"],
            {**DEVICE, "control_entity": RELAY_1, "sg_ready": {**SECTION, "sg_offset_k": k}},
        )
        assert (result["step_id"] == "model") is ok, (shift_range, k, result.get("errors"))
        if not ok:
            assert result["errors"] == {"sg_ready": "sg_offset_range"}


async def test_a_slot_is_forced_only_on_a_pv_surplus_or_a_negative_price_when_allowed(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """The plan's figures, written out by hand: a PV surplus (the kept PV covers the base load and the heat pump), a
    negative import price (fee included), a plain running slot, an off slot 0.6 K and one 0.4 K above the floor, a
    running slot whose PV falls 0.1 kW short. Forced allowed: 4 4 3 1 2 3; not allowed: 3 3 3 1 2 3."""
    freezer.move_to(NOW - timedelta(hours=3))
    hass.states.async_set(RELAY_1, "off")
    hass.states.async_set(RELAY_2, "off")
    freezer.move_to(NOW)
    start = dt_util.as_utc(NOW).replace(minute=0)
    plan = SimpleNamespace(
        start=start,
        resolution=timedelta(minutes=15),
        heat_kw={HEAT_ID: np.array([1.0, 1.0, 1.0, 0.0, 0.0, 1.0])},
        temp_c={HEAT_ID: np.array([20.5, 20.8, 21.0, 21.2, 20.6, 20.4, 20.7])},
        pv_kw=np.array([3.0, 0.0, 0.0, 0.0, 0.0, 1.6]),
        curtail_kw=np.array([0.0, 0, 0, 0, 0, 0.2]),
        base_load_kw=np.full(6, 0.5),
    )
    inputs = SimpleNamespace(
        heat_pumps=[SimpleNamespace(name=HEAT_ID, comfort_low_c=np.full(6, 20.0), comfort_high_c=np.full(6, 22.0))],
        curve=SimpleNamespace(prices=np.array([0.2, -0.15, 0.2, 0.2, 0.2, 0.1])),
        fees=SimpleNamespace(energy_fee=np.full(6, 0.1)),
    )
    result = SimpleNamespace(plan=plan, inputs=inputs)
    for forced, wanted in ((True, [4, 4, 3, 1, 2, 3]), (False, [3, 3, 3, 1, 2, 3])):
        hp = parse_heat_pump(HEAT_ID, {**SG_PUMP, "sg_forced": forced})
        assert slot_states(hass, hp, result, 0) == wanted, forced
        assert slot_states(hass, hp, result, 3) == wanted[3:], forced
