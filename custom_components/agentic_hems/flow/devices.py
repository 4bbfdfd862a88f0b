"""What every device subentry flow (appliance, battery, heat pump) checks against the entry's other devices.

Two devices never share a name (case-insensitive) or a control entity, two batteries never share a state of charge
sensor, and no device is controlled or measured through one of this integration's own entities (the gates refuse to
act on those, and its planned state of charge is no measurement). The pickers leave those entities out; the flows
check a step's input when it is submitted and again right before they store it, since another flow may have stored
a device in between.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, cast

from homeassistant.const import CONF_ENTITY_ID, CONF_NAME
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv, entity_registry as er
from homeassistant.helpers.selector import EntitySelector, EntitySelectorConfig

from ..const import (
    CONF_CONTROL_ENTITY,
    CONF_DELAY_ENTITY,
    CONF_POWER_SETPOINT,
    CONF_SG_CONTACT_2,
    CONF_SG_OFFSET_ENTITY,
    CONF_SOC_ENTITY,
    CONF_START_ENTITY,
    DOMAIN,
    SUBENTRY_APPLIANCE,
    SUBENTRY_BATTERY,
    SUBENTRY_HEAT_PUMP,
)

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry

CHARGER_CURRENT: Final = "charger_current_entity"  # an EV charger appliance's current setpoint (flow/charger.py)
CHARGER_PHASE: Final = "charger_phase_entity"  # its 1/3-phase select or switch
CHARGER_STOP: Final = "charger_stop_entity"  # its stop button
# Where each device subentry keeps its control entity: an appliance's switch (or another entity it switches), a
# battery's number or select, a heat pump's climate, switch or water heater.
CONTROL_KEYS: Final = {
    SUBENTRY_APPLIANCE: CONF_ENTITY_ID,
    SUBENTRY_BATTERY: CONF_CONTROL_ENTITY,
    SUBENTRY_HEAT_PUMP: CONF_CONTROL_ENTITY,
}


def own_entity_ids(hass: HomeAssistant) -> list[str]:
    """Return the entity IDs this integration registers, sorted (the control pickers leave them out)."""
    return sorted(e.entity_id for e in er.async_get(hass).entities.values() if e.platform == DOMAIN)


def _others(entry: AgenticHemsConfigEntry, own_id: str | None, kinds: Mapping[str, str]) -> set[str]:
    """Return what the entry's other devices of ``kinds`` (subentry type -> data key) keep under their key."""
    return {
        str(sub.data[kinds[sub.subentry_type]])
        for sid, sub in entry.subentries.items()
        if sid != own_id and sub.subentry_type in kinds and sub.data.get(kinds[sub.subentry_type])
    }


def _controlled(entry: AgenticHemsConfigEntry, own_id: str | None) -> set[str]:
    """Return the entities other devices control.

    Their control entities, program start buttons and "start in" numbers, charger and battery power setpoints, a
    charger's phase entity and stop button, SG Ready's contact 2 and offset number.
    """
    kinds = (CONTROL_KEYS, {SUBENTRY_APPLIANCE: CONF_START_ENTITY}, {SUBENTRY_APPLIANCE: CHARGER_CURRENT})
    more = ({SUBENTRY_BATTERY: CONF_POWER_SETPOINT}, {SUBENTRY_HEAT_PUMP: CONF_SG_CONTACT_2})
    more_2 = ({SUBENTRY_HEAT_PUMP: CONF_SG_OFFSET_ENTITY}, {SUBENTRY_APPLIANCE: CONF_DELAY_ENTITY})
    chargers = ({SUBENTRY_APPLIANCE: CHARGER_PHASE}, {SUBENTRY_APPLIANCE: CHARGER_STOP})
    return {e for k in (*kinds, *more, *more_2, *chargers) for e in _others(entry, own_id, k)}


def taken_entities(hass: HomeAssistant, entry: AgenticHemsConfigEntry, own_id: str | None) -> list[str]:
    """Return what the control pickers leave out, sorted: this integration's entities and the other devices' controls.

    The controls include the program appliances' start buttons. ``own_id`` is the reconfigured device's subentry id
    (its own control entity stays offered), None when adding.
    """
    return sorted(set(own_entity_ids(hass)) | _controlled(entry, own_id))


def taken_soc_sensors(hass: HomeAssistant, entry: AgenticHemsConfigEntry, own_id: str | None) -> list[str]:
    """Return what the state of charge picker leaves out, sorted.

    This integration's entities and the other batteries' state of charge sensors (``own_id`` as in
    :func:`taken_entities`).
    """
    return sorted(set(own_entity_ids(hass)) | _others(entry, own_id, {SUBENTRY_BATTERY: CONF_SOC_ENTITY}))


def soc_errors(hass: HomeAssistant, entry: AgenticHemsConfigEntry, own_id: str | None, soc: Any) -> dict[str, str]:
    """Return the error of a battery's state of charge sensor ``soc``, if any.

    One of this integration's own entities is ``soc_entity_own`` (its planned state of charge is no measurement),
    another battery's is ``soc_entity_in_use``.
    """
    errors: dict[str, str] = {}
    if soc and soc in own_entity_ids(hass):
        errors[CONF_SOC_ENTITY] = "soc_entity_own"
    elif soc and soc in _others(entry, own_id, {SUBENTRY_BATTERY: CONF_SOC_ENTITY}):
        errors[CONF_SOC_ENTITY] = "soc_entity_in_use"
    return errors


def own_measurement_errors(hass: HomeAssistant, data: Mapping[str, Any], keys: tuple[str, ...]) -> dict[str, str]:
    """Return ``measurement_entity_own`` for each of ``keys`` whose entity in ``data`` is this integration's own.

    Its planned temperature or power is what the plan makes of a measurement, not one: planning from it is a loop.
    """
    own = set(own_entity_ids(hass))
    errors: dict[str, str] = {}
    for key in keys:
        if data.get(key) in own:
            errors[key] = "measurement_entity_own"
    return errors


def device_errors(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, own_id: str | None, data: Mapping[str, Any], control_key: str
) -> dict[str, str]:
    """Return the errors (field -> translation key) of ``data``'s name and control entity among the entry's devices.

    ``data[CONF_NAME]``, when given, must differ (case-insensitive) from every other device's name
    (``name_exists``); ``data[control_key]``, when given and not empty, must not be one of this integration's own
    entities (``control_entity_own``) nor another device's control entity or start button (``control_entity_in_use``);
    the same holds for a program appliance's start button ``data["start_entity"]`` and "start in" number
    ``data["delay_entity"]``, a battery's power setpoint ``data["power_setpoint_entity"]`` and SG Ready's contact 2
    and offset number; another device's controls include a charger's phase entity and stop button. ``own_id`` is
    the reconfigured device's subentry id (its own name and entity pass), None when adding.
    """
    others = [sub for sid, sub in entry.subentries.items() if sid != own_id and sub.subentry_type in CONTROL_KEYS]
    errors: dict[str, str] = {}
    if CONF_NAME in data and str(data[CONF_NAME]).casefold() in {sub.title.casefold() for sub in others}:
        errors[CONF_NAME] = "name_exists"
    keys = (CONF_START_ENTITY, CONF_DELAY_ENTITY, CONF_POWER_SETPOINT, CONF_SG_CONTACT_2, CONF_SG_OFFSET_ENTITY)
    for key in (control_key, *keys):
        control = data.get(key)
        if control and control in own_entity_ids(hass):
            errors[key] = "control_entity_own"
        elif control and control in _controlled(entry, own_id):
            errors[key] = "control_entity_in_use"
    return errors


class LooseEntitySelector(EntitySelector):
    """An entity picker whose domains and ``exclude_entities`` only guide the frontend.

    The flow's own checks name another domain (a water heater for space heating) or an excluded entity in a translated
    error, instead of the selector's own English text.
    """

    def __call__(self, data: Any) -> str:
        """Return ``data`` as an entity ID; raises ``vol.Invalid`` for a value that is not one."""
        return str(cv.entity_id(data))


class ControlEntitySelector(EntitySelector):
    """An entity picker whose ``exclude_entities`` only hide entities in the frontend.

    An excluded entity is left to :func:`device_errors` (or :func:`soc_errors`), which names the field in a translated
    error instead of the selector's own English text; the other settings (domains, filters) are checked as HA's
    entity picker does.
    """

    def __call__(self, data: Any) -> str:
        """Return ``data`` as an entity ID; raises ``vol.Invalid`` for a value the picker's domains refuse."""
        config = {k: v for k, v in self.config.items() if k != "exclude_entities"}
        return str(EntitySelector(cast("EntitySelectorConfig", config))(data))
