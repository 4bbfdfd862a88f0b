"""The heat pump form's SG Ready section: contact 2, an optional setpoint-offset number, "forced" and the longest block.

The section (collapsed) sits on the device step of either store; the control entity above it is contact 1. Its data
is stored flat in the subentry (:func:`flat`), the forms show it nested again (:func:`nested`). The checks
(:func:`sg_errors`, each error on the section, since its fields share it):

- both contacts are switches or input_booleans (``sg_contact_domain``), contact 2 another one (``sg_contacts_same``),
  both exist (``sg_entity_missing``); being this integration's own or another device's is
  :func:`.devices.device_errors`' (``control_entity_own``, ``control_entity_in_use``);
- an offset number needs the contacts (``sg_offset_needs_contacts``), exists, is a number or input_number and its
  ``min``..``max`` and ``step`` grid hold both the offset and 0, which it is set to outside states 3 and 4
  (``sg_offset_range``);
- the offset lies within -10..10 K and the longest block within 0..240 minutes in whole 15-minute slots
  (``sg_number_range``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import section
from homeassistant.helpers.selector import (
    BooleanSelector,
    EntitySelectorConfig,
    NumberSelectorConfig,
    NumberSelectorMode,
)

from ..const import (
    CONF_CONTROL_ENTITY,
    CONF_SG_CONTACT_2,
    CONF_SG_FORCED,
    CONF_SG_MAX_BLOCK_MIN,
    CONF_SG_OFFSET_ENTITY,
    CONF_SG_OFFSET_K,
)
from ..gates.capability import value_error
from ..validation import vol
from .devices import LooseEntitySelector
from .schemas import LooseNumberSelector, outside_limits

SECTION = "sg_ready"
KEYS = (CONF_SG_CONTACT_2, CONF_SG_OFFSET_ENTITY)  # the section's entities: their errors show on the section
CONTACT_DOMAINS = ("switch", "input_boolean")
# field -> (minimum, maximum, step, unit)
SG_NUMBERS: dict[str, tuple[float, float, float, str]] = {
    CONF_SG_OFFSET_K: (-10, 10, 0.5, "K"),
    CONF_SG_MAX_BLOCK_MIN: (0, 240, 15, "min"),
}
DEFAULTS: dict[str, Any] = {
    CONF_SG_CONTACT_2: None,
    CONF_SG_OFFSET_ENTITY: None,
    CONF_SG_OFFSET_K: 0.0,
    CONF_SG_FORCED: False,
    CONF_SG_MAX_BLOCK_MIN: 120.0,
}


def _number(key: str) -> LooseNumberSelector:
    minimum, maximum, step, unit = SG_NUMBERS[key]
    return LooseNumberSelector(
        NumberSelectorConfig(min=minimum, max=maximum, step=step, mode=NumberSelectorMode.BOX, unit_of_measurement=unit)
    )


def sg_section(exclude: list[str]) -> section:
    """Return the collapsed SG Ready section; its pickers leave out ``exclude`` (own and taken entities)."""
    fields: dict[Any, Any] = {
        vol.Optional(CONF_SG_CONTACT_2): LooseEntitySelector(
            EntitySelectorConfig(domain=list(CONTACT_DOMAINS), exclude_entities=exclude)
        ),
        vol.Optional(CONF_SG_OFFSET_ENTITY): LooseEntitySelector(
            EntitySelectorConfig(domain=["number", "input_number"], exclude_entities=exclude)
        ),
        vol.Required(CONF_SG_OFFSET_K, default=0.0): _number(CONF_SG_OFFSET_K),
        vol.Required(CONF_SG_FORCED, default=False): BooleanSelector(),
        vol.Required(CONF_SG_MAX_BLOCK_MIN, default=120): _number(CONF_SG_MAX_BLOCK_MIN),
    }
    return section(vol.Schema(fields), {"collapsed": True})


def flat(user_input: Mapping[str, Any]) -> dict[str, Any]:
    """Return a device step's input with the section's fields at the top (the defaults where it was not sent).

    Without contact 2 and an offset number the section's fields are left out: a heat pump without SG Ready stores none.
    """
    data = {k: v for k, v in user_input.items() if k != SECTION}
    part = user_input.get(SECTION) or {}
    for key, default in DEFAULTS.items():
        value = part.get(key, data.get(key, default))
        data[key] = default if value in (None, "") and default is None else value
    if not data[CONF_SG_CONTACT_2] and not data[CONF_SG_OFFSET_ENTITY]:  # no SG Ready: nothing of it is stored
        data = {k: v for k, v in data.items() if k not in DEFAULTS}
    return data


def nested(values: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``values`` as the device step shows them: the section's fields inside the section."""
    if SECTION in values:
        return dict(values)
    out = {k: v for k, v in values.items() if k not in DEFAULTS}
    out[SECTION] = {k: values[k] for k in DEFAULTS if values.get(k) is not None}
    return out


def sg_errors(hass: HomeAssistant, data: Mapping[str, Any]) -> dict[str, str]:
    """Return the SG Ready section's error (see the module docstring), keyed by the section; {} when none."""
    contact, offset = data.get(CONF_SG_CONTACT_2), data.get(CONF_SG_OFFSET_ENTITY)
    if CONF_SG_OFFSET_K in data and outside_limits(data, SG_NUMBERS, tuple(SG_NUMBERS)):
        return {SECTION: "sg_number_range"}
    if CONF_SG_MAX_BLOCK_MIN in data and float(data[CONF_SG_MAX_BLOCK_MIN]) % 15:
        return {SECTION: "sg_number_range"}
    if not contact and offset:
        return {SECTION: "sg_offset_needs_contacts"}
    if not contact:
        return {}
    one = str(data.get(CONF_CONTROL_ENTITY) or "")
    if any(str(e).split(".", 1)[0] not in CONTACT_DOMAINS for e in (one, contact)):
        return {SECTION: "sg_contact_domain"}
    if contact == one:
        return {SECTION: "sg_contacts_same"}
    if any(hass.states.get(e) is None for e in (one, contact, *((offset,) if offset else ()))):
        return {SECTION: "sg_entity_missing"}
    if offset:
        if str(offset).split(".", 1)[0] not in ("number", "input_number"):
            return {SECTION: "sg_offset_range"}
        attributes = hass.states.get(offset).attributes  # type: ignore[union-attr]
        low, high, value = attributes.get("min"), attributes.get("max"), float(data[CONF_SG_OFFSET_K])
        if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
            return {SECTION: "sg_offset_range"}
        if not low - 1e-9 <= min(value, 0.0) <= max(value, 0.0) <= high + 1e-9:
            return {SECTION: "sg_offset_range"}
        if any(value_error(attributes, v)[0] is not None for v in (value, 0.0)):  # the Capability gate's grid
            return {SECTION: "sg_offset_range"}
    return {}
