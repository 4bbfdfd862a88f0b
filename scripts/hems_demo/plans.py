"""Scenario: setting agentic_hems up, prices, the appliances' plans and their entities."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
from datetime import datetime
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .client import fill_form, keep_form, step_fields
from .constants import (
    BATTERY_SETPOINT,
    CONFIRM_MINUTES,
    DOMAIN,
    ENTITY_DEADLINE_S,
    GARAGE_DOOR,
    GRID_OPTIONS,
    METERS,
    SLOT,
    STAND_INS,
)
from .devices import APPLIANCE_KEYS, APPLIANCES, CONFIG_FLOW_STEPS, ENTRY_KEYS
from .process import DemoError, log
from .timefmt import at, fmt_money, local, next_window


class PlansMixin:
    """Scenario: setting agentic_hems up, prices, the appliances' plans and their entities. A mixin of :class:`~.demo.Demo`."""

    async def setup_integration(self) -> str:
        """Create the agentic_hems entry and its appliance subentries; return the entry id."""
        result = await self.client.drive_flow(
            "config",
            "/api/config/config_entries/flow",
            DOMAIN,
            lambda step: fill_form(step, CONFIG_FLOW_STEPS.get(step["step_id"], {}), "config flow"),
        )
        entry = result["result"]
        entry_id = entry["entry_id"]
        log(f"  config entry {entry['title']!r} ({entry_id}): {entry.get('state')}")
        if entry.get("state") != "loaded":
            raise DemoError(
                f"the agentic_hems entry did not load: state {entry.get('state')!r}, reason {entry.get('reason')!r}"
            )
        done: list[str] = []
        for appliance in APPLIANCES:
            await self.client.drive_flow(
                "appliance subentry",
                "/api/config/config_entries/subentries/flow",
                [entry_id, "appliance"],
                lambda step, a=appliance: fill_form(step, step_fields(step, a), f"appliance {a['name']!r}"),
            )
            # Adding a subentry reloads the entry; wait for that before adding the next one, as a user would.
            done.append(appliance["name"])
            await self.wait_settled(entry_id, done)
            log(f"  appliance {appliance['name']!r}: {self.describe(appliance)}")
        await self.set_grid_options(entry_id)
        return entry_id

    async def set_grid_options(self, entry_id: str) -> None:
        """Drive the options flow (init, control, grid, assistant) over REST: the control step keeps a command waiting
        for confirmation CONFIRM_MINUTES and gives the garage door (hidden from Assist) to the gates, the grid step maps the home twin's meters and battery; every other step keeps
        its current values. Saving the options reloads the entry."""
        steps: list[str] = []

        def answer(step: dict[str, Any]) -> dict[str, Any]:
            steps.append(step["step_id"])
            control = {"confirmation_minutes": CONFIRM_MINUTES, "gated_entities": [GARAGE_DOOR]}
            wanted = {"grid": GRID_OPTIONS, "control": control}
            return keep_form(step, wanted.get(step["step_id"], {}), "options flow")

        result = await self.client.drive_flow("options", "/api/config/config_entries/options/flow", entry_id, answer)
        if "grid" not in steps:
            raise DemoError(f"the options flow has no grid step (steps {steps})")
        if result.get("type") != "create_entry":
            raise DemoError(f"the options flow ended with {result}")
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        # The REST answer carries no options: open the flow again, read the grid step's current values, abort it.
        path = "/api/config/config_entries/options/flow"
        step = await self.client.request("POST", path, json={"handler": entry_id, "show_advanced_options": False})
        while step.get("type") == "form" and step.get("step_id") != "grid":
            step = await self.client.request("POST", f"{path}/{step['flow_id']}", json=keep_form(step, {}, "options"))
        if step.get("flow_id"):
            await self.client.request("DELETE", f"{path}/{step['flow_id']}")
        saved = keep_form(step, {}, "options flow") if step.get("step_id") == "grid" else {}
        wrong = {k: saved.get(k) for k, v in GRID_OPTIONS.items() if saved.get(k) != v}
        if wrong:
            raise DemoError(f"the options flow did not save the grid options: {wrong}")
        self.report["grid_options"] = saved
        meters = ", ".join(GRID_OPTIONS[f"{meter}_entity"] for meter in METERS)
        log(
            f"  options ({' -> '.join(steps)}): PV {GRID_OPTIONS['pv_peak_kw']:g} kW peak, battery "
            f"{GRID_OPTIONS['battery_capacity_kwh']:g} kWh / {GRID_OPTIONS['battery_power_kw']:g} kW set by "
            f"{BATTERY_SETPOINT}, meters {meters}"
        )

    @staticmethod
    def describe(appliance: dict[str, Any]) -> str:
        amount = f"{appliance['duration_min']} min" if "duration_min" in appliance else f"{appliance['energy_kwh']} kWh"
        shape = "in one run" if appliance.get("contiguous") else "in any slots"
        window = f"daily {appliance['earliest_start'][:5]} to {appliance['deadline'][:5]}"
        return f"{appliance['power_kw']} kW, {amount} {shape}, {window}"

    async def show_prices(self) -> None:
        prices = await self.client.call_service("get_prices", {})
        slots = prices.get("prices") or []
        values = [s["price"] for s in slots if isinstance(s.get("price"), (int, float)) and math.isfinite(s["price"])]
        if not values:
            self.problems.append(f"get_prices returned no prices: {json.dumps(prices)[:500]}")
            return
        first, last = local(slots[0]["start"], self.tz), local(slots[-1]["end"], self.tz)
        unit = prices.get("unit") or f"{prices.get('currency', '')}/kWh"
        summary = {
            "min": min(values),
            "max": max(values),
            "slots": len(slots),
            "resolution_minutes": prices.get("resolution_minutes"),
            "first": first.isoformat() if first else None,
            "last": last.isoformat() if last else None,
            "sample": prices.get("sample"),
            "source": prices.get("source"),
            "unit": unit,
        }
        self.report["prices"] = summary
        log(
            f"PRICES min {fmt_money(summary['min'], unit)} max {fmt_money(summary['max'], unit)}, "
            f"{len(slots)} slots of {summary['resolution_minutes']} min, "
            f"{at(first, self.tz, '%a %d %b %H:%M')} to {at(last, self.tz, '%a %d %b %H:%M')}, "
            f"source {summary['source']}, sample: {str(summary['sample']).lower()}"
        )

    async def show_plans(self) -> None:
        log("")
        log(f"Plans (times in {self.tz.key}; 'baseline' = starting at the start of the window (now, when the window is open)):")
        width = max(len(a["name"]) for a in APPLIANCES)
        dearer: list[tuple[str, datetime, datetime, float, float]] = []
        spans: list[tuple[str, datetime, datetime]] = []
        for appliance in APPLIANCES:
            name = appliance["name"]
            window_start, window_end = next_window(appliance, datetime.now(self.tz), self.tz)
            plan = await self.client.call_service("plan", {"appliance": name})
            self.report["plans"][name] = plan
            if not isinstance(plan, dict):
                self.problems.append(f"plan for {name!r} is not a dict: {plan!r}")
                continue
            if not plan.get("feasible"):
                log(f"PLAN {name:<{width}}  INFEASIBLE: {plan.get('reason')} {plan.get('detail') or ''}")
                self.problems.append(f"plan for {name!r} is infeasible: {plan.get('reason')} {plan.get('detail')}")
                continue
            currency = plan.get("currency") or "EUR"
            start, end = local(plan.get("start"), self.tz), local(plan.get("end"), self.tz)
            cost, baseline, savings = plan.get("cost"), plan.get("baseline_cost"), plan.get("savings")
            if start is None or end is None or not start < end:
                self.problems.append(
                    f"plan for {name!r}: start {plan.get('start')} is not before end {plan.get('end')}"
                )
                continue
            if not all(isinstance(v, (int, float)) for v in (cost, baseline)):
                self.problems.append(f"plan for {name!r}: cost {cost!r} or baseline {baseline!r} is not a number")
                continue
            if cost > baseline + 1e-9:
                dearer.append((name, start, end, cost, baseline))
            spans.append((name, start, end))
            if savings is None:
                savings = baseline - cost
            percent = f" ({100 * savings / baseline:.0f}%)" if baseline > 0 else ""
            right_away = "now" if window_start <= datetime.now(self.tz) + SLOT else at(window_start, self.tz)
            log(
                f"PLAN {name:<{width}}  start {at(start, self.tz, '%a %Y-%m-%d %H:%M')}  "
                f"end {at(end, self.tz, '%a %Y-%m-%d %H:%M')}  "
                f"cost {fmt_money(cost, currency)}  baseline {fmt_money(baseline, currency)} (start {right_away})  "
                f"saves {fmt_money(savings, currency)}{percent}"
            )
            log(f"     {'':<{width}}  {self.describe(appliance)}; window {right_away} to {at(window_end, self.tz)}")
        # The baseline ignores the main-fuse limit; a plan may cost more than it only when it shares slots with others.
        for name, start, end, cost, baseline in dearer:
            if any(other != name and s < end and start < e for other, s, e in spans):
                log(f"NOTE {name}: costs more than starting now because the main-fuse limit binds (the baseline ignores it)")
            else:
                self.problems.append(f"plan for {name!r} costs {cost} > baseline (start of the window) {baseline}")

    async def wait_settled(self, entry_id: str, titles: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Wait until the entry is loaded (adding a subentry reloads it) with every entity of the given appliances.

        Returns the entity registry entries of agentic_hems and the entry's subentries. Raises DemoError when the
        entry does not settle within ENTITY_DEADLINE_S.
        """
        deadline = time.monotonic() + ENTITY_DEADLINE_S
        while True:
            entries = await self.client.request("GET", f"/api/config/config_entries/entry?domain={DOMAIN}")
            state = next((e.get("state") for e in entries if e.get("entry_id") == entry_id), None)
            registry, subentries = await self.client.ws(
                [
                    {"type": "config/entity_registry/list"},
                    {"type": "config_entries/subentries/list", "entry_id": entry_id},
                ]
            )
            ours = [e for e in registry if e.get("platform") == DOMAIN]
            by_subentry: dict[str | None, set[str]] = {}
            for entity in ours:
                by_subentry.setdefault(entity.get("config_subentry_id"), set()).add(entity.get("translation_key"))
            ids = {s["title"]: s["subentry_id"] for s in subentries if s.get("subentry_type") == "appliance"}
            missing = {title: sorted(APPLIANCE_KEYS - by_subentry.get(ids.get(title), set())) for title in titles}
            missing = {title: keys for title, keys in missing.items() if keys}
            missing_entry = sorted(ENTRY_KEYS - by_subentry.get(None, set()))
            if state == "loaded" and not missing and not missing_entry:
                return ours, subentries
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        details = [f"entry state {state!r}"]
        details += [
            f"appliance {t!r} " + ("has no subentry" if t not in ids else f"lacks entities {k}")
            for t, k in missing.items()
        ]
        if missing_entry:
            details.append(f"the entry lacks entities {missing_entry}")
        raise DemoError(f"agentic_hems did not settle within {ENTITY_DEADLINE_S:.0f} s: " + "; ".join(details))

    async def show_entities(self, ours: list[dict[str, Any]], subentries: list[dict[str, Any]]) -> None:
        """Print every agentic_hems entity's state; each must exist and not be unavailable."""
        titles = {s["subentry_id"]: s["title"] for s in subentries}
        log("")
        log(f"Entities ({len(ours)}):")
        for entity in sorted(ours, key=lambda e: (titles.get(e.get("config_subentry_id"), ""), e["entity_id"])):
            entity_id = entity["entity_id"]
            if entity.get("disabled_by"):
                log(f"  {entity_id:<55} disabled by {entity['disabled_by']}")
                continue
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            value = state.get("state") if isinstance(state, dict) and "state" in state else None
            unit = (state.get("attributes") or {}).get("unit_of_measurement", "") if value is not None else ""
            self.report["entities"].append(
                {
                    "entity_id": entity_id,
                    "translation_key": entity.get("translation_key"),
                    "subentry": titles.get(entity.get("config_subentry_id")),
                    "state": value,
                }
            )
            if value is None:
                self.problems.append(f"{entity_id} is in the entity registry but has no state")
                shown = "NO STATE"
            elif value == "unavailable":
                self.problems.append(f"{entity_id} is unavailable")
                shown = "UNAVAILABLE"
            else:
                shown = f"{value} {unit}".strip()
                if entity.get("translation_key") in ("next_start", "ready_by") and "T" in value:
                    with contextlib.suppress(ValueError):
                        shown = at(datetime.fromisoformat(value), self.tz)
            log(f"  {entity_id:<55} {shown}")
        for oid in STAND_INS:
            state = await self.client.request("GET", f"/api/states/input_boolean.{oid}", expect=(200, 404))
            if not isinstance(state, dict) or state.get("state") in (None, "unavailable"):
                self.problems.append(f"stand-in input_boolean.{oid} does not exist")
        await self.show_ev_charger()
