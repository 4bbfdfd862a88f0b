"""Serving the Lovelace cards' bundle.

The bundle (``frontend/agentic-hems-cards.js``, committed: users need no build step) is served from one static path,
registered once in ``async_setup`` (a second registration raises), and every dashboard loads it as an extra module
(``frontend.add_extra_js_url``, which HA provides for custom integrations) as ``<url>?v=<version>``, in storage and
YAML mode alike. Lovelace's resources belong to the user: the integration neither writes them nor reads Lovelace's
state (a resource an older version added loads the same file; the bundle defines each card once).

Without ``http`` (tests, a headless core) nothing is registered, and without ``frontend`` (loaded first when
configured: an after-dependency) the bundle is only served; the integration still sets up.
"""

from __future__ import annotations

from pathlib import Path

from homeassistant.core import HomeAssistant

from ..const import DOMAIN

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
    if "frontend" in hass.config.components:
        from homeassistant.components.frontend import add_extra_js_url  # noqa: PLC0415

        add_extra_js_url(hass, f"{BUNDLE_URL}?v={version}")
