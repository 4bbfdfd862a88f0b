"""Scenario: the heat pump's plan and the SG Ready hot-water tank."""

from __future__ import annotations

from datetime import datetime
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import HEAT_PUMP_CLIMATE, HEAT_PUMP_SUBENTRY, HOUSE_HP_KW, SG_OFFSET, SG_RELAYS, SG_TANK_SUBENTRY
from .process import log
from .timefmt import at


class HeatMixin:
    """Scenario: the heat pump's plan and the SG Ready hot-water tank. A mixin of :class:`~.demo.Demo`."""

    def show_heat_pump(self, home: dict[str, Any]) -> None:
        """Print the heat pump's first slots and check its plan: the band kept, the power within its range."""
        heat = [h for h in home.get("heat_pumps") or [] if h.get("name") == HEAT_PUMP_SUBENTRY["name"]]
        if len(heat) != 1 or not heat[0].get("slots"):
            self.problems.append(f"the home plan has no heat pump plan: {heat}")
            return
        slots = heat[0]["slots"]
        kwh = sum(s["kw"] for s in slots) / 4
        log(f"Heat pump ({len(slots)} slots from {heat[0]['measured_c']} °C indoors): {kwh:.1f} kWh planned")
        for slot in slots[:8]:
            log(f"  {at(datetime.fromisoformat(slot['start']), self.tz)}  heat pump {slot['kw']:5.2f} kW  indoor "
                f"{slot['temp_c']:5.2f} °C  band {slot['low_c']:g}-{slot['high_c']:g} °C  {slot.get('reason', '')}")
        outside = [s for s in slots if not s["low_c"] - 0.05 <= s["temp_c"] <= s["high_c"] + 0.05]
        if outside[1:]:  # the first slot may still be on its way into the band
            self.problems.append(f"the heat pump plan leaves the comfort band: {outside[1]}")
        if any(not -1e-6 <= s["kw"] <= HOUSE_HP_KW + 1e-6 for s in slots):
            self.problems.append("the heat pump plan leaves its power range")

    def sg_expect(self, ok: bool, what: str) -> None:
        """Record an SG Ready problem unless ``ok``."""
        if not ok:
            self.problems.append(f"SG Ready: {what}")

    async def show_sg_ready(self) -> None:
        """Replan with device control on and show the SG Ready tank's relays acting for the current slot.

        Checks: the relays are never both on (forced is off), relay 2 is on exactly when the plan runs the tank now
        (state 3, the offset set), each relay command went through the gates and was executed (a dry run while device
        control was still off), relay 2's latest one executed.
        """
        answer = await self.client.call_service("plan_home", {"replan": True})
        tank = next((h for h in answer.get("heat_pumps") or [] if h.get("name") == SG_TANK_SUBENTRY["name"]), {})
        slots = tank.get("slots") or []
        states = {}
        for entity_id in (*SG_RELAYS, SG_OFFSET):
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            states[entity_id] = state.get("state") if isinstance(state, dict) else None
        one, two = (states[e] == "on" for e in SG_RELAYS)
        sg_state = {(True, False): 1, (False, False): 2, (False, True): 3, (True, True): 4}[(one, two)]
        running = bool(slots) and slots[0]["kw"] > 1e-3
        log("")
        log(f"SG Ready tank now: {slots[0]['kw'] if slots else '?'} kW planned, relays {states[SG_RELAYS[0]]}/"
            f"{states[SG_RELAYS[1]]} = state {sg_state}, offset {states[SG_OFFSET]} °C")
        traces = []
        for entity_id in SG_RELAYS:
            found = await self.client.call_service("get_traces", {"entity_id": entity_id, "limit": 5})
            traces += found.get("traces") or []
        for trace in traces:
            log(f"  gates: {trace.get('raw_input', '')[:90]} -> {trace.get('outcome')}")
        self.report["sg_ready"] = {"slots": slots[:8], "states": states, "state": sg_state, "traces": traces}
        self.sg_expect(bool(slots), "the SG Ready tank has a plan")
        self.sg_expect(sg_state != 4, "the SG Ready relays are not both on (forced is off)")
        self.sg_expect(two == running, f"relay 2 is on exactly while the plan runs the tank now (state {sg_state})")
        offset = float(SG_TANK_SUBENTRY["sg_ready"]["sg_offset_k"]) if sg_state == 3 else 0.0
        self.sg_expect(states[SG_OFFSET] is not None and float(states[SG_OFFSET]) == offset, "the offset follows the state")
        latest = [max((t for t in traces if SG_RELAYS[1] in t.get("raw_input", "")), key=lambda t: t["timestamp"],
                      default={})]
        self.sg_expect(all(t.get("outcome") == "executed" for t in latest), "relay 2's latest command was executed")
        self.sg_expect(all(t.get("outcome") in ("executed", "dry_run") for t in traces),
                       "each relay command was executed (a dry run while device control was off)")
        await self.check_climate(answer)

    async def check_climate(self, answer: dict[str, Any]) -> None:
        """Check the heat pump's thermostat after the replan: its target is the current slot's command.

        The command (as the integration's heat pump profile computes it): the temperature at the slot's end while the
        plan runs the heat pump, else the slot's comfort floor, on the thermostat's 0.5 °C step within 15-25 °C. The
        thermostat must show it, and its latest scheduler command (none when it already showed it) must be executed,
        or a dry run from before device control was on.
        """
        heat = next((h for h in answer.get("heat_pumps") or [] if h.get("name") == HEAT_PUMP_SUBENTRY["name"]), {})
        slot = (heat.get("slots") or [{}])[0]
        if "kw" not in slot:
            self.problems.append(f"the heat pump has no plan for the current slot: {heat}")
            return
        wanted = slot["temp_c"] if slot["kw"] > 1e-3 else slot["low_c"]
        wanted = min(max(round(wanted / 0.5) * 0.5, 15.0), 25.0)
        state = await self.client.request("GET", f"/api/states/{HEAT_PUMP_CLIMATE}")
        shown = (state.get("attributes") or {}).get("temperature")
        found = await self.client.call_service("get_traces", {"entity_id": HEAT_PUMP_CLIMATE, "limit": 5})
        ours = [t for t in found.get("traces") or [] if t.get("source_agent") == "scheduler"]
        latest = max(ours, key=lambda t: t["timestamp"], default={})
        log(f"Heat pump thermostat now: target {shown} °C, the plan's slot asks {wanted:g} °C "
            f"({slot['kw']:.2f} kW); last scheduler command: {latest.get('outcome', 'none (it already showed it)')}")
        self.report["climate"] = {"slot": slot, "wanted_c": wanted, "shown_c": shown, "latest": latest}
        if shown != wanted or latest.get("outcome", "executed") not in ("executed", "dry_run"):
            self.problems.append(f"{HEAT_PUMP_CLIMATE}: target {shown} °C, the plan asks {wanted:g} °C: {latest}")
