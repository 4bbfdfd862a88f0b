"""Agentic HEMS: day-ahead prices to optimal appliance plans, gated device control, an assistant, a grid toolkit.

This module sets an entry up (its runtime is built and started in :mod:`.runtime`), unloads, removes and migrates
it; the service actions, the cards' websocket commands and their bundle are registered once for all entries.

Importing this module stays cheap (HA's own modules and :mod:`.const`): the rest of the integration (numpy, the
planners, the assistant, the grid toolkit) is imported by :func:`async_setup` in one import executor job. highspy,
scipy, openai, pandas and entsoe-py are imported later still, in the executor jobs that first use them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryNotReady
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.storage import Store
from homeassistant.helpers.typing import ConfigType
from homeassistant.loader import async_get_integration

from .const import DOMAIN, LOGGER, PLATFORMS, STORAGE_VERSION

if TYPE_CHECKING:
    from .runtime import AgenticHemsConfigEntry

CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)
STORES = ("prices", "plans", "control", "traces", "runs", "grid", "sg_ready")  # agentic_hems.<entry_id>.<name>
SETUP_MODULES = ("services", "cards.frontend", "cards.websocket", "runtime", "assistant.llm_api")


def _import_setup_modules() -> None:
    """Import the modules that set up the integration and its entries (blocking: the import executor)."""
    for name in SETUP_MODULES:
        import_module(f"{__name__}.{name}")


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the service actions, the websocket commands and the cards' bundle once for all entries."""
    await hass.async_add_import_executor_job(_import_setup_modules)
    # noqa: PLC0415 below: each module was imported above, in the executor; these are dictionary look-ups
    from .cards.frontend import async_register_frontend  # noqa: PLC0415
    from .cards.websocket import async_setup_websocket  # noqa: PLC0415
    from .services import async_setup_services  # noqa: PLC0415

    async_setup_services(hass)
    async_setup_websocket(hass)
    integration = await async_get_integration(hass, DOMAIN)
    await async_register_frontend(hass, str(integration.version))
    return True


async def async_setup_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> bool:
    """Build and start the entry's runtime, then its platforms.

    The runtime holds cached prices, plans, device control, the assistant and the grid toolkit; starting it starts
    prices, the slot scheduler and a first plan. The entry's LLM API (energy tools for any assistant) lives as long.
    """
    from .assistant.llm_api import async_register_llm_api  # noqa: PLC0415 - imported by async_setup
    from .runtime import async_build_runtime, async_start_runtime, reload_on_change  # noqa: PLC0415 - likewise

    entry.async_on_unload(entry.add_update_listener(reload_on_change(entry)))  # before any await
    try:
        entry.runtime_data = await async_build_runtime(hass, entry)
    except OSError as err:  # the audit folder cannot be read or locked: read-only, full, not a folder
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN, translation_key="audit_unavailable", translation_placeholders={"error": str(err)}
        ) from err
    await async_start_runtime(hass, entry)
    entry.async_on_unload(async_register_llm_api(hass, entry))  # energy tools for any assistant and MCP
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> bool:
    """Unload the platforms and write the traces and runs; timers and listeners go with ``async_on_unload``."""
    if unloaded := await hass.config_entries.async_unload_platforms(entry, PLATFORMS):
        await entry.runtime_data.control.async_flush()
        await entry.runtime_data.assistant.async_flush()
    return unloaded


async def async_remove_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> None:
    """Delete the entry's Stores.

    They hold cached prices, plans, device-control state, traces, runs, the grid toolkit's requests, incidents
    and secret, and the SG Ready heat pumps' block times. The audit log (``<config>/agentic_hems/audit/``) and its
    anchor stay as evidence.
    """
    for name in STORES:
        await Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry.entry_id}.{name}").async_remove()


async def async_migrate_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> bool:
    """Migrate older entries; version 1.1 is the first, so only newer (downgrades) are refused."""
    if entry.version > 1:
        LOGGER.error("Cannot downgrade %s from version %s.%s", entry.title, entry.version, entry.minor_version)
        return False
    return True
