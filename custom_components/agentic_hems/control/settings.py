"""The gatekeeper's settings from the entry's options, and the site's controlled entities.

Policy rules are validated when the options flow saves them; stored rules that no longer validate (edited by hand)
fail closed: everything is denied, with the repair issue ``policy_invalid_<entry_id>``, rather than silently dropping
a user's deny.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import (
    CONF_CONFIRM_MINUTES,
    CONF_INCLUDE_APPLIANCES,
    CONF_POLICY_RULES,
    CONF_WAIT_S,
    DOMAIN,
    LOGGER,
    MEASUREMENT_OPTIONS,
)
from ..gates.keeper import Settings
from ..gates.models import PolicyAction
from ..gates.tables import MAX_RISK, PolicyRule, effective_policy, validate_rules
from ..scheduling import program
from ..scheduling.appliance import Appliance
from ..validation import vol

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry


def control_settings(hass: HomeAssistant, entry: AgenticHemsConfigEntry, options: Mapping[str, Any]) -> Settings:
    """Return the gatekeeper's settings from ``options`` (the entry's options over the defaults)."""
    return Settings(
        wait_s=float(options[CONF_WAIT_S]),
        confirm_ttl=timedelta(minutes=float(options[CONF_CONFIRM_MINUTES])),
        rules=effective_rules(hass, entry, options[CONF_POLICY_RULES]),
        include_appliances=bool(options[CONF_INCLUDE_APPLIANCES]),
    )


def controlled_entity_ids(appliances: Iterable[Appliance], options: Mapping[str, Any]) -> frozenset[str]:
    """Return the site's controlled entities: the appliances', their chargers' current, phases and stop button, the battery setpoint."""
    setpoint = options.get(MEASUREMENT_OPTIONS["battery.setpoint"])
    controlled = frozenset(e for a in appliances for e in program.controlled_entities(a))
    profiles = [a.charger for a in appliances if a.charger]
    chargers = [e for c in profiles for e in (c.current_entity, c.phase_entity, c.stop_entity)]
    return controlled | frozenset(filter(None, [setpoint, *chargers]))


def effective_rules(hass: HomeAssistant, entry: AgenticHemsConfigEntry, raw: Any) -> tuple[PolicyRule, ...]:
    """Return the effective policy of the stored rules ``raw``.

    Deny-all, with a repair issue, when they do not validate.
    """
    issue_id = f"policy_invalid_{entry.entry_id}"
    try:
        rules = effective_policy(validate_rules(raw if isinstance(raw, list) else [raw]))
    except vol.Invalid as err:
        LOGGER.error("Stored policy rules are invalid, denying every command: %s", err)
        ir.async_create_issue(
            hass,
            DOMAIN,
            issue_id,
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key="policy_invalid",
            translation_placeholders={"error": str(err)},
        )
        return (PolicyRule("*", "*", 0, MAX_RISK, PolicyAction.DENY, "user"),)
    ir.async_delete_issue(hass, DOMAIN, issue_id)
    return rules
