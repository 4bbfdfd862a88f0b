"""The appliance form's program profile checks: a program select, its program, and the entities around it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homeassistant.const import CONF_ENTITY_ID
from homeassistant.core import HomeAssistant
from homeassistant.helpers.selector import EntitySelector, EntitySelectorConfig, TextSelector

from ..const import CONF_OPERATION_ENTITY, CONF_PROGRAM, CONF_REMOTE_START_ENTITY, CONF_START_ENTITY
from ..validation import vol
from .devices import ControlEntitySelector
from .program_start import START_KEYS, is_set, start_errors, start_fields

PROGRAM_ENTITIES: Final = (CONF_START_ENTITY, CONF_REMOTE_START_ENTITY, CONF_OPERATION_ENTITY)


def program_fields(exclude: list[str]) -> dict[vol.Optional, Any]:
    """Return the appliance form's program fields; the start button picker leaves out ``exclude``."""
    return {
        vol.Optional(CONF_PROGRAM): TextSelector(),
        vol.Optional(CONF_START_ENTITY): ControlEntitySelector(
            EntitySelectorConfig(domain="button", exclude_entities=exclude)
        ),
        vol.Optional(CONF_REMOTE_START_ENTITY): EntitySelector(EntitySelectorConfig(domain="binary_sensor")),
        vol.Optional(CONF_OPERATION_ENTITY): EntitySelector(EntitySelectorConfig(domain="sensor")),
        **start_fields(exclude),
    }


def clean_program(data: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``data`` with the program trimmed and empty program fields (and an unset delayed start) left out."""
    fields = (CONF_PROGRAM, *PROGRAM_ENTITIES, *START_KEYS)
    cleaned = {k: v for k, v in data.items() if k not in fields or v not in (None, "", False)}
    if CONF_PROGRAM in cleaned:
        cleaned[CONF_PROGRAM] = str(cleaned[CONF_PROGRAM]).strip() or None
        if cleaned[CONF_PROGRAM] is None:
            del cleaned[CONF_PROGRAM]
    return cleaned


def program_errors(hass: HomeAssistant, data: Mapping[str, Any]) -> dict[str, str]:
    """Return the errors (field -> translation key) of a cleaned appliance's program profile.

    Nothing when no program field is given (a switch, or a select the appliance is switched through as before). A
    program and its entities need a ``select`` as the controlled entity (``program_needs_select``) and a program
    (``program_required``) that is one of the select's ``options`` (``program_not_offered``); the select and each
    entity given must exist (``entity_not_found``). Whether the start button is another device's is
    :func:`.devices.device_errors`'. The start profile's errors are :func:`.program_start.start_errors`'.
    """
    control = str(data.get(CONF_ENTITY_ID) or "")
    given = [key for key in (CONF_PROGRAM, *PROGRAM_ENTITIES) if data.get(key)]
    given += [key for key in START_KEYS if is_set(data, key)]
    if not given:
        return {}
    errors: dict[str, str] = {}
    for key in given:
        if not control.startswith("select."):
            errors[key] = "program_needs_select"
        elif key in PROGRAM_ENTITIES and hass.states.get(data[key]) is None:
            errors[key] = "entity_not_found"
    if not control.startswith("select."):
        return errors
    state = hass.states.get(control)
    if state is None:
        errors[CONF_ENTITY_ID] = "entity_not_found"
    elif CONF_PROGRAM not in given:
        errors[CONF_PROGRAM] = "program_required"
    elif data[CONF_PROGRAM] not in [str(o) for o in state.attributes.get("options") or []]:
        errors[CONF_PROGRAM] = "program_not_offered"
    return start_errors(hass, data, control) | errors
