"""Scenario: the Lovelace dashboard, what the frontend loads, and the brand icons."""

from __future__ import annotations

from pathlib import Path
import re

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import DOMAIN, HOST
from .devices import BRAND_IMAGES, BUNDLE_URL, CARDS, DASHBOARD_CONFIG, DASHBOARD_TITLE, DASHBOARD_URL_PATH
from .process import log
from .timefmt import png_size


class FrontendMixin:
    """Scenario: the Lovelace dashboard, what the frontend loads, and the brand icons. A mixin of :class:`~.demo.Demo`."""

    async def show_dashboard(self) -> None:
        """Check that the frontend loads the bundle as an extra module (imported by its index page), then create the
        storage-mode dashboard with the four cards over the websocket API and read its config back."""
        log("")
        page = str(await self.client.request("GET", "/"))
        ours = re.findall(rf'import\("({re.escape(BUNDLE_URL)}\?v=[^"]*)"\)', page)
        self.report["resource"] = {"type": "module", "url": ours[0]} if len(ours) == 1 else None
        if len(ours) == 1:
            log(f"LOVELACE bundle: {ours[0]} (a frontend extra module, every dashboard)")
        else:
            log(f"LOVELACE bundle: MISSING ({len(ours)} imports of {BUNDLE_URL} in the frontend's page)")
            self.problems.append(f"the frontend does not import the cards' bundle once as an extra module: {ours}")
        dashboard, _, saved = await self.client.ws([
            {"type": "lovelace/dashboards/create", "url_path": DASHBOARD_URL_PATH, "title": DASHBOARD_TITLE,
             "icon": "mdi:calendar-clock", "mode": "storage", "show_in_sidebar": True, "require_admin": False},
            {"type": "lovelace/config/save", "url_path": DASHBOARD_URL_PATH, "config": DASHBOARD_CONFIG},
            {"type": "lovelace/config", "url_path": DASHBOARD_URL_PATH},
        ])
        cards = [c.get("type") for view in (saved or {}).get("views") or [] for c in view.get("cards") or []]
        url = f"{self.client.base}/{DASHBOARD_URL_PATH}"
        self.report["dashboard"] = {**(dashboard or {}), "url": url, "cards": cards}
        log(f"LOVELACE dashboard {DASHBOARD_TITLE!r} (storage mode, in the sidebar): {url}")
        log(f"     cards: {', '.join(cards)}")
        if (dashboard or {}).get("url_path") != DASHBOARD_URL_PATH or cards != [f"custom:{c}" for c in CARDS]:
            self.problems.append(f"dashboard {dashboard} with cards {cards}")

    async def show_frontend(self) -> None:
        """What HA's frontend needs from the server beyond the cards: the websocket commands it sends on every page
        load (``get_services`` fails when a component that HA's service descriptions import lacks its packages, and
        then the UI never leaves "Loading..."), the dashboard's panel, HTTP settings with nothing pending (else an
        administrator gets a confirmation dialog over every page), and the integration's brand icons."""
        log("")
        replies = await self.client.ws_replies(
            [{"type": "get_services"}, {"type": "get_panels"}, {"type": "http/config"}]
        )
        services, panels, http = (reply.get("result") if reply.get("success") else None for reply in replies)
        ours = sorted((services or {}).get(DOMAIN) or {})
        self.report["frontend"] = {"services": ours, "panel": (panels or {}).get(DASHBOARD_URL_PATH),
                                   "http": http or replies[2].get("error")}
        if services is None:
            log(f"FRONTEND get_services: FAILED ({replies[0].get('error')}); the UI would stay at 'Loading...'")
            self.problems.append(f"websocket get_services failed (HA's log says why): {replies[0].get('error')}")
        else:
            log(f"FRONTEND get_services: {len(services)} domains, {DOMAIN} with {len(ours)} actions")
            if "ask" not in ours or "evaluate_command" not in ours:
                self.problems.append(f"get_services lists no {DOMAIN}.ask or .evaluate_command: {ours}")
        panel = (panels or {}).get(DASHBOARD_URL_PATH) or {}
        log(f"FRONTEND panel /{DASHBOARD_URL_PATH}: {panel.get('component_name')} {panel.get('title')!r}")
        if panel.get("component_name") != "lovelace" or panel.get("title") != DASHBOARD_TITLE:
            self.problems.append(f"get_panels has no Lovelace panel {DASHBOARD_URL_PATH!r}: {panel}")
        if http is None:  # HA 2026.4 has no stored HTTP settings (unknown_command): YAML
            log(f"FRONTEND http/config: {replies[2].get('error', {}).get('code')} (HTTP settings from YAML)")
        else:
            stable = http.get("stable") or {}
            log(
                f"FRONTEND http/config: {http.get('active_config_type')} {stable.get('server_host')}:"
                f"{stable.get('server_port')}, pending {http.get('pending')}"
            )
            wanted = {"server_host": [HOST], "server_port": self.args.port}
            if http.get("pending") is not None or http.get("active_config_type") != "stable" or any(
                stable.get(key) != value for key, value in wanted.items()
            ):
                self.problems.append(f"HTTP settings are not the demo's stable ones {wanted}: {http}")
        await self.check_brand()

    async def check_brand(self) -> None:
        """GET the brand icons as the frontend does (``?token=`` from ``brands/access_token``, no Authorization
        header): HA's brands integration serves them from the integration's ``brand/`` folder, byte for byte."""
        (token,) = await self.client.ws([{"type": "brands/access_token"}])
        brand = Path(self.args.integration) / "brand"
        self.report["brand"] = {}
        for image, side in BRAND_IMAGES.items():
            path = f"/api/brands/integration/{DOMAIN}/{image}"
            async with self.client.session.get(
                self.client.base + path, params={"token": token["token"], "placeholder": "no"},
                timeout=aiohttp.ClientTimeout(total=30),
            ) as resp:
                body = await resp.read()
                status, kind = resp.status, resp.content_type
            size = png_size(body)
            same = (brand / image).exists() and body == (brand / image).read_bytes()
            self.report["brand"][image] = {"status": status, "content_type": kind, "size": size, "bytes": len(body),
                                           "same_as_file": same}
            shown = f"{size[0]}x{size[1]} PNG" if size else f"not a PNG ({kind}, {len(body)} bytes)"
            log(f"BRAND {path}: HTTP {status}, {shown}" + (f", the integration's brand/{image}" if same else ""))
            if status != 200 or size != (side, side) or not same:
                self.problems.append(
                    f"{path}: HTTP {status}, {shown}, same as brand/{image}: {same} (want {side}x{side})"
                )
