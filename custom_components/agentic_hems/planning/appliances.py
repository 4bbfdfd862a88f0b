"""The entry's appliances from its subentries; a malformed subentry is skipped with a repair issue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import DOMAIN, LOGGER, SUBENTRY_APPLIANCE
from ..scheduling.appliance import Appliance

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry


def configured_appliances(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> dict[str, Appliance]:
    """Return the configured appliances by subentry id.

    A subentry whose data cannot be read is skipped with the repair issue ``appliance_invalid_<subentry_id>``
    instead of failing the entry; the issue goes when the subentry reads again.
    """
    appliances: dict[str, Appliance] = {}
    for subentry_id, subentry in entry.subentries.items():
        if subentry.subentry_type != SUBENTRY_APPLIANCE:
            continue  # a battery subentry is the whole-home plan's
        issue_id = f"appliance_invalid_{subentry_id}"
        try:
            appliances[subentry_id] = Appliance.from_config(subentry_id, dict(subentry.data))
        except (KeyError, TypeError, ValueError) as err:
            LOGGER.warning("Skipping appliance %s: %s", subentry.title, err)
            ir.async_create_issue(
                hass,
                DOMAIN,
                issue_id,
                is_fixable=False,
                is_persistent=True,
                severity=ir.IssueSeverity.ERROR,
                translation_key="appliance_invalid",
                translation_placeholders={"appliance": subentry.title, "error": str(err)},
            )
        else:
            ir.async_delete_issue(hass, DOMAIN, issue_id)
    return appliances
