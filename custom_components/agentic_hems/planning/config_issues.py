"""The repair issues of planning: whole-home settings that do not validate, a device that did not follow its plan."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import DOMAIN, LOGGER


def report_invalid(hass: HomeAssistant, key: str, title: str, error: str) -> None:
    """Log and raise the repair issue ``home_config_invalid_<key>`` of a subentry or the options."""
    LOGGER.warning("Whole-home plan: ignoring the settings of %s: %s", title, error)
    ir.async_create_issue(
        hass,
        DOMAIN,
        f"home_config_invalid_{key}",
        is_fixable=False,
        is_persistent=True,
        severity=ir.IssueSeverity.ERROR,
        translation_key="home_config_invalid",
        translation_placeholders={"name": title, "error": error},
    )


def clear_invalid(hass: HomeAssistant, key: str) -> None:
    """Remove the repair issue of ``key`` (its settings validate again)."""
    ir.async_delete_issue(hass, DOMAIN, f"home_config_invalid_{key}")


def device_warning(
    hass: HomeAssistant, issue_id: str, key: str, placeholders: dict[str, str], *, persistent: bool = True
) -> None:
    """Raise the warning repair ``issue_id`` (translation ``key``) of a device that did not do what its plan asked."""
    ir.async_create_issue(
        hass,
        DOMAIN,
        issue_id,
        is_fixable=False,
        is_persistent=persistent,
        severity=ir.IssueSeverity.WARNING,
        translation_key=key,
        translation_placeholders=placeholders,
    )
