"""The real HA adapter: registries, exposure and polling as the gates see them, index invalidation, the Freshness
refresh of a polling entity, Freshness of push-only entities, and the actionable mobile notification of a pending
confirmation."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import timedelta
import logging
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_mock_service,
    setup_test_component_platform,
)

from homeassistant.auth.models import User
from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.components.cover import CoverDeviceClass, CoverEntity, CoverEntityFeature
from homeassistant.components.fan import FanEntity, FanEntityFeature
from homeassistant.components.light import ColorMode, LightEntity
from homeassistant.components.switch import SwitchEntity
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import area_registry as ar, device_registry as dr, entity_registry as er
from homeassistant.helpers.update_coordinator import CoordinatorEntity, DataUpdateCoordinator
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.gates.view import EntityInfo

from .conftest import NOW, sample_entry

PUMP = "switch.pump"


class PollingSwitch(SwitchEntity):
    """A switch that polls its device (``should_poll``); ``updates`` counts the polls."""

    _attr_should_poll = True
    _attr_name = "Pump"
    _attr_unique_id = "pump"

    def __init__(self) -> None:
        self._attr_is_on = False
        self.updates = 0

    async def async_update(self) -> None:
        self.updates += 1

    async def async_turn_on(self, **kwargs: Any) -> None:
        self._attr_is_on = True

    async def async_turn_off(self, **kwargs: Any) -> None:
        self._attr_is_on = False


class PushFan(FanEntity):
    """A fan (risk 1) whose integration pushes its state (no polling)."""

    _attr_should_poll = False
    _attr_name = "Attic fan"
    _attr_unique_id = "attic_fan"
    _attr_supported_features = FanEntityFeature.TURN_ON | FanEntityFeature.TURN_OFF

    def __init__(self) -> None:
        self._attr_percentage = 0

    async def async_turn_on(self, percentage: int | None = None, preset_mode: str | None = None, **kwargs: Any) -> None:
        self._attr_percentage = 100
        self.async_write_ha_state()


class PushGarage(CoverEntity):
    """A garage door (risk 4) whose integration pushes its state (no polling); ``report()`` is the device reporting."""

    _attr_should_poll = False
    _attr_name = "Garage door"
    _attr_unique_id = "garage_door"
    _attr_device_class = CoverDeviceClass.GARAGE
    _attr_supported_features = CoverEntityFeature.OPEN | CoverEntityFeature.CLOSE

    def __init__(self) -> None:
        self._attr_is_closed = True

    async def async_open_cover(self, **kwargs: Any) -> None:
        self._attr_is_closed = False
        self.async_write_ha_state()

    def report(self) -> None:
        self.async_write_ha_state()


class CloudLamp(CoordinatorEntity[DataUpdateCoordinator[bool]], LightEntity):
    """A lamp whose integration polls its cloud every hour through a coordinator (``should_poll`` is False)."""

    _attr_name = "Cloud lamp"
    _attr_unique_id = "cloud_lamp"
    _attr_color_mode = ColorMode.ONOFF
    _attr_supported_color_modes = {ColorMode.ONOFF}

    @property
    def is_on(self) -> bool:
        return bool(self.coordinator.data)

    async def async_turn_on(self, **kwargs: Any) -> None:
        await self.coordinator.async_refresh()


@pytest.fixture
async def pump_home(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory
) -> AsyncGenerator[tuple[MockConfigEntry, PollingSwitch]]:
    """A polling pump on a device named by the user, in the "Utility room" (alias "Laundry"); the sample entry with
    device control on, a notify action, and a rule that asks for confirmation before turning a switch on."""
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    pump = PollingSwitch()
    setup_test_component_platform(hass, "switch", [pump])
    assert await async_setup_component(hass, "switch", {"switch": {"platform": "test"}})
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", PUMP, True)
    owner = MockConfigEntry(domain="test")
    owner.add_to_hass(hass)
    area = ar.async_get(hass).async_create("Utility room", aliases={"Laundry"})
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=owner.entry_id, identifiers={("test", "pump")}, name="Circulation pump 3000"
    )
    dr.async_get(hass).async_update_device(device.id, name_by_user="Heat pump", area_id=area.id)
    er.async_get(hass).async_update_entity(PUMP, device_id=device.id, aliases=["circulator"])
    entry = sample_entry(
        execution_wait_s=1,
        notify_service="notify.phone",
        policy_rules=[{"operation": "turn_off", "device_type": "switch", "risk_min": 0, "risk_max": 5,
                       "action": "confirm"}],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    await entry.runtime_data.control.async_set_allow_control(True)
    yield entry, pump


async def evaluate(hass: HomeAssistant, candidate: dict[str, Any], context: Context | None = None) -> dict[str, Any]:
    response = await hass.services.async_call(
        DOMAIN, "evaluate_command", {"source_agent": "test", "model_candidate": candidate},
        blocking=True, return_response=True, context=context,
    )
    assert isinstance(response, dict)
    return response


async def test_entity_record_from_the_registries(
    hass: HomeAssistant, pump_home: tuple[MockConfigEntry, PollingSwitch]
) -> None:
    entry, _ = pump_home
    view = entry.runtime_data.control.view
    pump_entry = er.async_get(hass).async_get(PUMP)
    assert pump_entry is not None and pump_entry.device_id is not None  # the pump_home fixture's device
    assert view.entity(PUMP) == EntityInfo(
        entity_id=PUMP, name="Pump", aliases=frozenset({"circulator"}), area_id="utility_room",
        device_name="Heat pump", device_class=None, supported_features=0, capabilities={}, polls=True,
        platform="test", device_id=pump_entry.device_id,  # the registry's: an allow-listed action targets this device
    )
    state = view.state(PUMP)
    assert state is not None and state.last_reported is not None
    assert state.last_reported.tzinfo is not None and state.last_reported.utcoffset() == timedelta(0)
    assert view.should_expose(PUMP) and not view.should_expose("switch.agentic_hems_allow_device_control")
    assert "switch.agentic_hems_allow_device_control" in view.own_entity_ids()
    assert view.appliance_entity_ids() == {"input_boolean.dishwasher", "input_boolean.washing_machine",
                                           "input_boolean.ev_charger"}
    assert view.entity("switch.nothing") is None


async def test_update_modes_come_from_public_interfaces_not_the_entity_components(
    hass: HomeAssistant, pump_home: tuple[MockConfigEntry, PollingSwitch]
) -> None:
    """Whether an entity polls is read through ``entity_platform.async_get_platforms``: with HA's private registry of
    entity components hidden, a registered polling switch, a push-only fan and an unregistered YAML template switch
    (no unique_id: found through ``hass.config.components``) keep their update modes."""
    entry, _ = pump_home
    setup_test_component_platform(hass, "fan", [PushFan()])
    assert await async_setup_component(hass, "fan", {"fan": {"platform": "test"}})
    assert await async_setup_component(hass, "template", {"template": [{"switch": [{
        "name": "Kettle", "default_entity_id": "switch.kettle", "state": "{{ true }}",
        "turn_on": {"delay": 0}, "turn_off": {"delay": 0}}]}]})
    await hass.async_block_till_done()
    assert er.async_get(hass).async_get("switch.kettle") is None
    view = entry.runtime_data.control.view
    expected = {PUMP: (True, False), "fan.attic_fan": (False, True), "switch.kettle": (True, False),
                "switch.nothing": (False, False)}
    components = hass.data.pop("entity_components")
    try:
        modes = {entity_id: view._update_mode(entity_id) for entity_id in expected}
    finally:
        hass.data["entity_components"] = components
    assert modes == expected


async def test_room_alias_device_name_and_index_invalidation(
    hass: HomeAssistant, pump_home: tuple[MockConfigEntry, PollingSwitch]
) -> None:
    for candidate in ({"intent": "turn_on", "room": "Laundry", "device_alias": "circulator"},
                      {"intent": "turn_on", "device_alias": "heat pump"}):
        response = await evaluate(hass, candidate)
        assert response["gate_results"][2]["evidence"]["entity_id"] == PUMP, response["gate_results"][2]
    er.async_get(hass).async_update_entity(PUMP, aliases=["boiler pump"])
    await hass.async_block_till_done()
    gone = await evaluate(hass, {"intent": "turn_on", "device_alias": "circulator"})
    assert gone["gate_results"][2]["passed"] is False
    renamed = await evaluate(hass, {"intent": "turn_on", "device_alias": "boiler pump"})
    assert renamed["gate_results"][2]["evidence"]["entity_id"] == PUMP
    async_expose_entity(hass, "conversation", PUMP, False)
    hidden = await evaluate(hass, {"intent": "turn_on", "device_alias": "boiler pump"})
    assert hidden["outcome"] == "blocked" and hidden["gate_results"][-1]["gate"] == "device_resolved"
    own = await evaluate(hass, {"intent": "turn_on", "device_alias": "allow device control"})
    assert own["outcome"] == "blocked" and own["gate_results"][-1]["gate"] == "device_resolved"
    assert hass.states.get("switch.agentic_hems_allow_device_control").state == "on"


async def test_a_stale_polling_entity_is_refreshed_once(
    hass: HomeAssistant, pump_home: tuple[MockConfigEntry, PollingSwitch], freezer: FrozenDateTimeFactory
) -> None:
    _, pump = pump_home
    freezer.tick(timedelta(minutes=6))  # older than the 5 min of risk 1
    before = pump.updates
    response = await evaluate(hass, {"intent": "turn_on", "device_alias": "pump"})
    freshness = response["gate_results"][4]
    assert freshness["passed"] is True and freshness["evidence"]["polls"] is True
    assert freshness["evidence"]["first_attempt"]["reason"].startswith("stale: refresh and retry (age 360.0 s")
    assert pump.updates >= before + 2  # the refresh, and the update HA runs after a service call on a polling entity
    assert response["outcome"] == "executed" and hass.states.get(PUMP).state == "on"


async def test_a_push_entity_is_current_while_usable_up_to_risk_3(
    hass: HomeAssistant, pump_home: tuple[MockConfigEntry, PollingSwitch], freezer: FrozenDateTimeFactory
) -> None:
    entry, _ = pump_home
    fan = PushFan()
    setup_test_component_platform(hass, "fan", [fan])
    assert await async_setup_component(hass, "fan", {"fan": {"platform": "test"}})
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "fan.attic_fan", True)
    assert entry.runtime_data.control.view.entity("fan.attic_fan").pushes is True
    freezer.tick(timedelta(hours=3))  # the fan reports only when it changes: 3 h unchanged
    response = await evaluate(hass, {"intent": "turn_on", "device_alias": "attic fan"})
    freshness = response["gate_results"][4]
    assert freshness["passed"] is True and freshness["evidence"]["push"] is True
    assert freshness["reason"] == "current: the device pushes every change (last one 10800.0 s ago)"
    assert response["outcome"] == "executed" and hass.states.get("fan.attic_fan").state == "on"
    fan._attr_assumed_state = True  # an RF or IR fan: nothing reports its changes, so it is not push-current
    assert entry.runtime_data.control.view.entity("fan.attic_fan").pushes is False


async def test_a_stale_push_garage_door_stays_pending_until_it_reports(
    hass: HomeAssistant,
    pump_home: tuple[MockConfigEntry, PollingSwitch],
    hass_admin_user: User,
    freezer: FrozenDateTimeFactory,
) -> None:
    garage = PushGarage()
    setup_test_component_platform(hass, "cover", [garage])
    assert await async_setup_component(hass, "cover", {"cover": {"platform": "test"}})
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "cover.garage_door", True)
    pending = await evaluate(hass, {"intent": "open", "device_alias": "garage door"})
    assert pending["outcome"] == "pending_confirmation"  # risk 4: confirm
    freezer.tick(timedelta(seconds=6))  # older than the 5 s of risk 4; a push entity cannot be refreshed
    admin = Context(user_id=hass_admin_user.id)
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(
            DOMAIN, "confirm", {"trace_id": pending["trace_id"]}, blocking=True, context=admin
        )
    assert err.value.translation_key == "confirm_stale"
    assert "stale: refresh and retry (age 6.0 s > 5 s)" in err.value.translation_placeholders["reason"]
    assert hass.states.get("cover.garage_door").state == "closed"
    garage.report()
    done = await hass.services.async_call(
        DOMAIN, "confirm", {"trace_id": pending["trace_id"]}, blocking=True, context=admin, return_response=True
    )
    assert done["outcome"] == "executed" and hass.states.get("cover.garage_door").state == "open"


async def test_mobile_notification_confirms_only_for_an_admin(
    hass: HomeAssistant, pump_home: tuple[MockConfigEntry, PollingSwitch], hass_admin_user: User,
    hass_read_only_user: User,
) -> None:
    calls = async_mock_service(hass, "notify", "phone")
    await hass.services.async_call("switch", "turn_on", {"entity_id": PUMP}, blocking=True)
    pending = await evaluate(hass, {"intent": "turn_off", "device_alias": "pump"})
    assert pending["outcome"] == "pending_confirmation"
    await hass.async_block_till_done()
    trace_id = pending["trace_id"]
    assert [a["action"] for a in calls[0].data["data"]["actions"]] == [
        f"AGENTIC_HEMS_CONFIRM_{trace_id}", f"AGENTIC_HEMS_REJECT_{trace_id}"]
    action = {"action": f"AGENTIC_HEMS_CONFIRM_{trace_id}"}
    hass.bus.async_fire("mobile_app_notification_action", action, context=Context(user_id=hass_read_only_user.id))
    hass.bus.async_fire("mobile_app_notification_action", action)  # no user
    await hass.async_block_till_done()
    assert hass.states.get(PUMP).state == "on"
    hass.bus.async_fire("mobile_app_notification_action", action, context=Context(user_id=hass_admin_user.id))
    await hass.async_block_till_done()
    assert hass.states.get(PUMP).state == "off"
    traces = await hass.services.async_call(DOMAIN, "get_traces", {"outcome": "executed"}, blocking=True,
                                            return_response=True)
    assert traces["traces"][0]["execution_result"]["confirmed_by"] == hass_admin_user.id
    later = dt_util.utcnow() + timedelta(seconds=1)
    none = await hass.services.async_call(DOMAIN, "get_traces", {"since": later.isoformat()}, blocking=True,
                                          return_response=True)
    assert none["traces"] == []
    until = await hass.services.async_call(DOMAIN, "get_traces", {"until": later.isoformat(), "limit": 1},
                                           blocking=True, return_response=True)
    assert [t["trace_id"] for t in until["traces"]] == [trace_id]


async def test_the_computed_name_is_an_alias(
    hass: HomeAssistant, pump_home: tuple[MockConfigEntry, PollingSwitch]
) -> None:
    """An entity's aliases may hold ``er.COMPUTED_NAME`` (HA 2026.4 and newer): the gates see the computed full name
    as HA does, never the placeholder, and resolve the device by it."""
    entry, _ = pump_home
    er.async_get(hass).async_update_entity(PUMP, aliases=[er.COMPUTED_NAME, "circulator"])
    info = entry.runtime_data.control.view.entity(PUMP)
    assert info is not None and info.aliases == frozenset({"Heat pump Pump", "circulator"})  # device name + name
    response = await evaluate(hass, {"intent": "turn_on", "device_alias": "heat pump pump"})
    assert response["outcome"] == "executed" and hass.states.get(PUMP).state == "on"


async def test_a_coordinator_entity_polls_and_is_refreshed_not_push_current(
    hass: HomeAssistant, pump_home: tuple[MockConfigEntry, PollingSwitch], freezer: FrozenDateTimeFactory
) -> None:
    """A coordinator's entity does not poll itself, but its coordinator polls the device: its old state is a stale
    one (the lamp was switched by hand since), and ``homeassistant.update_entity`` asks the coordinator again."""
    entry, _ = pump_home
    device = {"on": False, "polls": 0}

    async def _poll() -> bool:
        device["polls"] += 1
        return device["on"]

    coordinator = DataUpdateCoordinator(
        hass, logging.getLogger(__name__), config_entry=None, name="cloud", update_method=_poll,
        update_interval=timedelta(hours=1),
    )
    await coordinator.async_refresh()
    setup_test_component_platform(hass, "light", [CloudLamp(coordinator)])
    assert await async_setup_component(hass, "light", {"light": {"platform": "test"}})
    await hass.async_block_till_done()
    async_expose_entity(hass, "conversation", "light.cloud_lamp", True)
    info = entry.runtime_data.control.view.entity("light.cloud_lamp")
    assert (info.polls, info.pushes) == (True, False)
    device["on"] = True  # switched on at the lamp; the cloud has not been asked since
    freezer.tick(timedelta(minutes=6))  # older than the 5 min of risk 0
    response = await evaluate(hass, {"intent": "turn_on", "device_alias": "cloud lamp"})
    freshness = response["gate_results"][4]
    assert freshness["passed"] is True and "push" not in freshness["evidence"]
    assert freshness["evidence"]["first_attempt"]["reason"].startswith("stale: refresh and retry (age 360.0 s")
    execution = response["gate_results"][-1]
    assert device["polls"] == 2 and execution["evidence"]["no_op"] is True  # the refresh saw it on already
    assert execution["evidence"]["state_before"] == "on"
    await coordinator.async_shutdown()
