"""The demo's driver: one class built from the scenario modules, run in order."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .appliances import AppliancesMixin
from .client import HassClient
from .constants import START_DEADLINE_S
from .devices import APPLIANCES
from .ev import EvMixin
from .frontend import FrontendMixin
from .gates import GatesMixin
from .grid import GridMixin
from .heat import HeatMixin
from .home import HomeMixin
from .home_connect import HomeConnectMixin
from .plans import PlansMixin
from .process import DemoError, HassProcess, log


class Demo(
    PlansMixin, GatesMixin, GridMixin, FrontendMixin, HomeMixin, HeatMixin, AppliancesMixin, HomeConnectMixin, EvMixin
):
    """The steps after HA answers: onboarding, setup, plans, checks."""

    def __init__(self, client: HassClient, args: argparse.Namespace) -> None:
        self.client = client
        self.args = args
        self.problems: list[str] = []
        self.report: dict[str, Any] = {
            "plans": {}, "prices": None, "entities": [], "gates": {}, "ask": None, "grid": {}, "grid_options": None,
            "dashboard": None, "resource": None, "frontend": None, "brand": None,
        }
        self.entry_id = ""
        self.config_dir: Path | None = None
        self.tz = ZoneInfo("UTC")

    def expect(self, ok: bool, what: str) -> bool:
        """Record a problem unless ``ok``; returns ``ok``."""
        if not ok:
            self.problems.append(f"GRID: {what}")
        return ok

    def require(self, ok: bool, what: str) -> None:
        """Stop the section unless ``ok`` (the next calls need this one's result)."""
        if not ok:
            raise DemoError(what)

    async def run(self, hass: HassProcess) -> None:
        deadline = time.monotonic() + START_DEADLINE_S
        started = time.monotonic()
        await self.client.wait_http(deadline, hass)
        log(f"HTTP up after {time.monotonic() - started:.1f} s; onboarding the owner account")
        await self.client.onboard()
        config = await self.client.wait_running(deadline, hass)
        self.tz = ZoneInfo(config.get("time_zone") or "UTC")
        log(
            f"Home Assistant {config.get('version')} running after {time.monotonic() - started:.1f} s "
            f"(time zone {self.tz.key}, country {config.get('country')}, currency {config.get('currency')})"
        )
        log("Setting up agentic_hems through its config flow and appliance subentry flows:")
        await self.hide_from_assist()
        entry_id = self.entry_id = await self.setup_integration()
        ours, subentries = await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        await self.setup_home(entry_id)
        ours, subentries = await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        log("")
        await self.show_prices()
        await self.show_plans()
        await self.show_home()
        await self.show_gates()
        await self.show_mode_battery()
        await self.show_sg_ready()
        await self.show_ask()
        await self.show_grid()
        await self.show_entities(ours, subentries)
        await self.show_dashboard()
        await self.link_notification()
        await self.show_frontend()
        if not self.args.no_program_dishwasher:
            await self.show_program_dishwasher()
            await self.check_program_boundary()
            await self.show_home_connect_dishwasher()
        await self.show_ev_boundary()
        if self.args.check:
            await self.check_ev_boundary()
