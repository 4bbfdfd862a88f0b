"""Serving the Lovelace cards' bundle.

The bundle (``frontend/agentic-hems-cards.js``, committed: users need no build step) is served from one static path,
registered once in ``async_setup`` (a second registration raises). It is then loaded by the frontend:

- in Lovelace's storage mode, as a dashboard resource ``<url>?v=<version>``; on a version change the existing item is
  updated rather than a second one added;
- otherwise (YAML mode), through ``add_extra_js_url``, and only when ``frontend`` is loaded.

Without ``http`` (tests, a headless core) nothing is registered and the integration still sets up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from homeassistant.const import EVENT_HOMEASSISTANT_STARTED
from homeassistant.core import CoreState, Event, HomeAssistant

from ..const import DOMAIN, LOGGER

URL_BASE = f"/{DOMAIN}_frontend"
BUNDLE = "agentic-hems-cards.js"
BUNDLE_PATH = Path(__file__).parent.parent / "frontend" / BUNDLE
BUNDLE_URL = f"{URL_BASE}/{BUNDLE}"


async def async_register_frontend(hass: HomeAssistant, version: str) -> None:
    """Serve the bundle and have every dashboard load it (see the module docstring)."""
    if hass.http is None:
        return
    # HA 2026.10 defines StaticPathConfig in http.server and re-exports it from http without __all__ (2026.4 defines
    # it in http itself): ``http.StaticPathConfig`` works on both; mypy --strict objects to the implicit
    # re-export.
    from homeassistant.components import http  # noqa: PLC0415

    static = http.StaticPathConfig(BUNDLE_URL, str(BUNDLE_PATH), False)  # type: ignore[attr-defined, unused-ignore]
    await hass.http.async_register_static_paths([static])
    url = f"{BUNDLE_URL}?v={version}"

    async def _register(_: Event | None = None) -> None:
        if not await _async_lovelace_resource(hass, url) and "frontend" in hass.config.components:
            from homeassistant.components.frontend import add_extra_js_url  # noqa: PLC0415

            add_extra_js_url(hass, url)

    if hass.state is CoreState.running:
        await _register()
    else:  # Lovelace loads its resources late in start-up
        hass.bus.async_listen_once(EVENT_HOMEASSISTANT_STARTED, _register)


async def _async_lovelace_resource(hass: HomeAssistant, url: str) -> bool:
    """Add or update the bundle as a storage-mode Lovelace resource; False when Lovelace is not in storage mode."""
    from homeassistant.components.lovelace.const import LOVELACE_DATA, MODE_STORAGE  # noqa: PLC0415

    data = hass.data.get(LOVELACE_DATA)
    if data is None or data.resource_mode != MODE_STORAGE:  # HA 2026.2 renamed mode to resource_mode
        return False
    resources: Any = data.resources
    if not resources.loaded:
        await resources.async_load()
        resources.loaded = True
    ours = [item for item in resources.async_items() if str(item.get("url", "")).split("?")[0] == BUNDLE_URL]
    if not ours:
        await resources.async_create_item({"res_type": "module", "url": url})
        LOGGER.info("Registered the Lovelace resource %s", url)
    elif ours[0]["url"] != url:
        await resources.async_update_item(ours[0]["id"], {"res_type": "module", "url": url})
        LOGGER.info("Updated the Lovelace resource to %s", url)
    return True
