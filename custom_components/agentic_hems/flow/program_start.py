"""The appliance form's start profile: how a program appliance is started, and its own delayed start.

``program_start`` is ``button`` (select the program, press the start button: :mod:`.program`) or ``home_connect``
(HA core's ``home_connect.set_program_and_options`` on the picked Home Connect device). ``delayed_start`` sets the
appliance's own delayed start once ahead of the planned start: home_connect's "start in" option with the action, or
the ``delay_entity`` "start in" number (s, min or h) before the start button with the button profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import time
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.helpers.selector import (
    BooleanSelector,
    DeviceSelector,
    DeviceSelectorConfig,
    EntitySelectorConfig,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
)

from ..const import (
    CONF_DELAY_ENTITY,
    CONF_DELAYED_START,
    CONF_DURATION_MIN,
    CONF_HOME_CONNECT_DEVICE,
    CONF_OPERATION_ENTITY,
    CONF_PROGRAM_START,
    CONF_START_ENTITY,
    PROGRAM_START_BUTTON,
    PROGRAM_START_HOME_CONNECT,
)
from ..scheduling.appliance import window_length
from ..scheduling.program import DELAY_UNITS
from ..validation import vol
from .devices import ControlEntitySelector

HOME_CONNECT = "home_connect"
START_KEYS = (CONF_PROGRAM_START, CONF_HOME_CONNECT_DEVICE, CONF_DELAYED_START, CONF_DELAY_ENTITY)


def start_fields(exclude: list[str]) -> dict[vol.Optional, Any]:
    """Return the start profile's fields; the delay number picker leaves out ``exclude``."""
    return {
        vol.Optional(CONF_PROGRAM_START): SelectSelector(
            SelectSelectorConfig(
                options=[PROGRAM_START_BUTTON, PROGRAM_START_HOME_CONNECT],
                mode=SelectSelectorMode.DROPDOWN,
                translation_key=CONF_PROGRAM_START,
            )
        ),
        vol.Optional(CONF_HOME_CONNECT_DEVICE): DeviceSelector(DeviceSelectorConfig(integration=HOME_CONNECT)),
        vol.Optional(CONF_DELAYED_START): BooleanSelector(),
        vol.Optional(CONF_DELAY_ENTITY): ControlEntitySelector(
            EntitySelectorConfig(domain="number", exclude_entities=exclude)
        ),
    }


def is_set(data: Mapping[str, Any], key: str) -> bool:
    """Return True when ``data`` chooses something other than today's start for ``key``."""
    value = data.get(key)
    return bool(value) and value != PROGRAM_START_BUTTON


def start_errors(hass: HomeAssistant, data: Mapping[str, Any], select: str) -> dict[str, str]:
    """Return the start profile's errors (field -> translation key) for the program select ``select``.

    The action needs a Home Connect device (``home_connect_device_required``) that exists and is Home Connect's
    (``home_connect_device_invalid``) and owns the select (``program_select_not_on_device``). A delayed start needs
    the operation sensor (``delayed_start_needs_operation``); with the button profile a "start in" number
    (``delay_entity_required``, a number in s, min or h: ``delay_entity_unit``) whose maximum holds the longest
    delay the window can need, its length less the run time (``delay_range_short``), and the start button
    (``delay_needs_start_button``).
    """
    errors: dict[str, str] = {}
    action = data.get(CONF_PROGRAM_START) == PROGRAM_START_HOME_CONNECT
    if action:
        errors = _device_errors(hass, data.get(CONF_HOME_CONNECT_DEVICE), select)
    if not data.get(CONF_DELAYED_START):
        return errors
    if not data.get(CONF_OPERATION_ENTITY):
        errors[CONF_OPERATION_ENTITY] = "delayed_start_needs_operation"
    if action:
        return errors
    if not data.get(CONF_START_ENTITY):
        errors[CONF_START_ENTITY] = "delay_needs_start_button"
    delay_errors = _delay_errors(hass, data)
    return delay_errors | errors


def _device_errors(hass: HomeAssistant, device_id: Any, select: str) -> dict[str, str]:
    if not device_id:
        return {CONF_HOME_CONNECT_DEVICE: "home_connect_device_required"}
    device = dr.async_get(hass).async_get(str(device_id))
    if device is None or not any(domain == HOME_CONNECT for domain, _ in device.identifiers):
        return {CONF_HOME_CONNECT_DEVICE: "home_connect_device_invalid"}
    entry = er.async_get(hass).async_get(select)
    if entry is None or entry.device_id != device.id:
        return {CONF_HOME_CONNECT_DEVICE: "program_select_not_on_device"}
    return {}


def _delay_errors(hass: HomeAssistant, data: Mapping[str, Any]) -> dict[str, str]:
    entity_id = data.get(CONF_DELAY_ENTITY)
    if not entity_id:
        return {CONF_DELAY_ENTITY: "delay_entity_required"}
    state = hass.states.get(str(entity_id))
    if state is None:
        return {CONF_DELAY_ENTITY: "entity_not_found"}
    factor = DELAY_UNITS.get(str(state.attributes.get("unit_of_measurement") or "s"))
    high = state.attributes.get("max")
    if factor is None or not isinstance(high, int | float):
        return {CONF_DELAY_ENTITY: "delay_entity_unit"}
    window = window_length(time.fromisoformat(str(data["earliest_start"])), time.fromisoformat(str(data["deadline"])))
    needed_s = window.total_seconds() - 60.0 * float(data.get(CONF_DURATION_MIN) or 0.0)
    if float(high) * factor < needed_s:
        return {CONF_DELAY_ENTITY: "delay_range_short"}
    return {}
