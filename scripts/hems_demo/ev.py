"""Scenario: the EV charger acting at a slot boundary through the gates (current, phases, start), read back.

Before the boundary the demo asks for a charge the way a person would (the ``schedule`` service, as "charge the car
by ..." through Assist does): :data:`EV_KWH` between the next slot boundary at least :data:`EV_LEAD` ahead and
:data:`EV_SLOTS` slots later. The window holds that energy only when the charger draws in every one of its slots (at
least ``EV_KWH`` less the other slots' most), so the plan charges from the boundary on; as the energy lies below the
window's most, the plan's power varies by slot. A person's plan is pinned: the whole-home plan keeps it as a fixed
load and the appliance planner's plan is the one the scheduler acts on (``planning/ev_exec.py``).

With ``--check`` the demo then waits for the boundary and checks, from HA's states and the traces, what the scheduler
did there; without it nothing waits (HA keeps running and acts at the boundary by itself).
"""

from __future__ import annotations

import asyncio
import math
from datetime import UTC, datetime, timedelta
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import DOMAIN, SLOT
from .devices import APPLIANCES, CONFIG_FLOW_STEPS, EV_CHARGER_STEP, EV_CURRENT, EV_PHASES
from .process import log
from .timefmt import at

EV_NAME = "EV charger"
EV_SWITCH = "input_boolean.ev_charger"
EV_KWH = 3.0  # over two 15-minute slots of at most 7 kW (3.5 kWh): at least 1.25 kWh (5 kW) in each
EV_SLOTS = 2
EV_LEAD = timedelta(seconds=90)  # the schedule is made (and the whole-home plan settles) before the boundary
FUSE_KW = CONFIG_FLOW_STEPS["settings"]["power_limit_kw"]
EV_SETTLE_S = 60  # after the boundary: the slot's commands (each waits for its read-back) and their traces


def ev_amps(kw: float, phases: int) -> float:
    """The charger's current for ``kw`` on ``phases`` phases at the demo charger's voltage: whole steps down, never
    below its minimum nor above its number's 16 A (the same rule as ``scheduling/charger.py``, written again here)."""
    step, low = EV_CHARGER_STEP["charger_step_a"], EV_CHARGER_STEP["charger_min_a"]
    amps = math.floor(kw * 1000 / (phases * EV_CHARGER_STEP["charger_voltage_v"]) / step + 1e-4) * step
    return float(min(max(amps, low), 16))


def ev_expected(planned_kw: float, export_kw: float, before: dict[str, Any]) -> dict[str, Any]:
    """What the scheduler sends at the boundary for the slot's ``planned_kw`` with the grid exporting ``export_kw``:
    the power raised by the PV surplus up to the charger's power, its phases and the amps.

    It wants one phase below the 3-phase minimum (4.14 kW), else three; ``before`` is the phase select just before the
    boundary (``option``, and ``since_min``, the minutes since it last changed): within 15 min of a change it stays.
    """
    top = next(a["power_kw"] for a in APPLIANCES if a["name"] == EV_NAME)
    kw = min(planned_kw + max(export_kw, 0.0), max(top, planned_kw))
    low = EV_CHARGER_STEP["charger_min_a"] * 3 * EV_CHARGER_STEP["charger_voltage_v"] / 1000
    options = {EV_CHARGER_STEP["charger_phase_one"]: 1, EV_CHARGER_STEP["charger_phase_three"]: 3}
    have, phases = options.get(before["option"]), 3 if kw >= low - 1e-6 else 1
    if have is not None and have != phases and before["since_min"] < EV_CHARGER_STEP["charger_phase_interval_min"]:
        phases = have
    return {"kw": round(kw, 6), "phases": phases, "amps": ev_amps(kw, phases),
            "option": next(option for option, count in options.items() if count == phases)}


class EvMixin:
    """Scenario: the EV charger acting at a slot boundary. A mixin of :class:`~.demo.Demo`."""

    async def show_ev_boundary(self) -> None:
        """Ask for :data:`EV_KWH` by :data:`EV_SLOTS` slots after the next boundary at least :data:`EV_LEAD` ahead and
        print the stored plan's slots there.

        Report ``ev_boundary``: ``boundary`` and ``deadline`` (UTC ISO), ``energy_kwh``, ``plan`` (the stored plan) and
        ``appliances_kw`` (every appliance's planned kW summed, per slot of the request).
        """
        now = datetime.now(UTC)
        boundary = datetime.fromtimestamp(math.ceil((now + EV_LEAD).timestamp() / 900) * 900, UTC)
        deadline = boundary + EV_SLOTS * SLOT
        await self.client.call_service("schedule", {
            "appliance": EV_NAME, "energy_kwh": EV_KWH, "earliest_start": boundary.isoformat(),
            "deadline": deadline.isoformat(),
        })
        (payload,) = await self.client.ws([{"type": f"{DOMAIN}/schedule", "entry_id": self.entry_id}])
        plans = (payload or {}).get("plans") or []
        plan = next((p for p in plans if p.get("name") == EV_NAME), {})
        # every stored plan's kW in the EV's slots, which the appliance planner keeps under the 11 kW fuse
        drawn = [sum(slot_kw(p, boundary + index * SLOT) for p in plans) for index in range(EV_SLOTS)]
        report: dict[str, Any] = {"boundary": boundary.isoformat(), "deadline": deadline.isoformat(),
                                  "energy_kwh": EV_KWH, "plan": plan, "appliances_kw": drawn}
        self.report["ev_boundary"] = report
        log("")
        log(f"{EV_NAME} (wallbox shapes: current number 6..16 A, phase select, charging switch): asked for {EV_KWH:g} "
            f"kWh from {at(boundary, self.tz)} to {at(deadline, self.tz)}; the plan's slots:")
        for index in range(EV_SLOTS):
            kw = slot_kw(plan, boundary + index * SLOT)
            log(f"  {at(boundary + index * SLOT, self.tz)}  {kw:5.2f} kW  = {ev_amps(kw, 3):g} A on 3 phases")
        if not plan.get("feasible") or slot_kw(plan, boundary) <= 0:
            self.problems.append(f"{EV_NAME}: the plan does not charge from {boundary.isoformat()}: {plan}")
        if max(drawn) > FUSE_KW + 1e-6:
            self.problems.append(f"{EV_NAME}: the appliances draw {drawn} kW in its slots, over the {FUSE_KW:g} kW fuse")

    async def check_ev_boundary(self) -> None:
        """Wait for the boundary, then check the slot's commands from HA's states and the traces: the phases as
        planned, the current number at the slot's amps (:func:`ev_expected`), the switch on, each executed by the
        scheduler with its read-back verified.

        Report ``ev_boundary``: ``waited_s``, ``phases_before`` (the phase select 2 s before the boundary, see
        :func:`ev_expected`), ``export_kw`` (the grid meter's export at the boundary), ``expected``,
        ``states`` and ``traces`` (the slot's, in order).
        """
        report = self.report.get("ev_boundary") or {}
        if "boundary" not in report or not report["plan"].get("feasible"):
            return
        boundary = datetime.fromisoformat(report["boundary"])
        log(f"{EV_NAME}: waiting until {at(boundary, self.tz, '%H:%M:%S')} (the slot boundary) and up to "
            f"{EV_SETTLE_S} s for its commands")
        started = datetime.now(UTC)
        await asyncio.sleep(max((boundary - started).total_seconds() - 2, 0))
        select = await self.client.request("GET", f"/api/states/{EV_PHASES}")  # as the scheduler will find it
        since = (boundary - datetime.fromisoformat(select["last_changed"])).total_seconds() / 60
        before = {"option": select["state"], "since_min": round(since, 3)}
        await asyncio.sleep(max((boundary - datetime.now(UTC)).total_seconds(), 0))
        grid = await self.client.request("GET", "/api/states/sensor.grid_power")
        export_kw = max(-float(grid["state"]) / 1000, 0.0)  # a signed W meter, negative exporting
        expected = ev_expected(slot_kw(report["plan"], boundary), export_kw, before)
        traces: list[dict[str, Any]] = []
        for _ in range(EV_SETTLE_S):
            await asyncio.sleep(1)
            traces = await self.slot_traces(boundary)
            if any(t.get("entity_id") == EV_SWITCH for t in traces):
                break
        states = await self.client.states({e: e for e in (EV_CURRENT, EV_PHASES, EV_SWITCH)})
        waited = (datetime.now(UTC) - started).total_seconds()
        report |= {"waited_s": round(waited, 1), "phases_before": before, "export_kw": export_kw, "expected": expected,
                   "states": states, "traces": traces}
        acted = [(t.get("entity_id"), (t.get("candidate") or {}).get("intent"),
                  (t.get("candidate") or {}).get("params"), t.get("outcome")) for t in traces]
        log(f"{EV_NAME} at {at(boundary, self.tz)} (after {waited:.0f} s): " + "; ".join(
            f"{e} {i} {p or ''} {o}".replace("  ", " ") for e, i, p, o in acted))
        log(f"  plan {expected['kw']:.2f} kW on {expected['phases']} phases = {expected['amps']:g} A; now {states}")
        self.ev_problems(expected, states, traces)

    async def slot_traces(self, boundary: datetime) -> list[dict[str, Any]]:
        """The scheduler's traces of the charger's entities for the slot at ``boundary``, oldest first."""
        traces = []
        for entity_id in (EV_PHASES, EV_CURRENT, EV_SWITCH):
            found = await self.client.call_service("get_traces", {"entity_id": entity_id, "limit": 5})
            traces += [t | {"entity_id": entity_id} for t in found.get("traces") or []
                       if f"plan slot {boundary.isoformat()}" in str(t.get("raw_input"))]
        return sorted(traces, key=lambda t: t["timestamp"])

    def ev_problems(self, expected: dict[str, Any], states: dict[str, Any], traces: list[dict[str, Any]]) -> None:
        """Record a problem for each way the slot's commands differ from ``expected`` (with the traces)."""
        by_entity = {t["entity_id"]: t for t in traces}
        current, switch = by_entity.get(EV_CURRENT), by_entity.get(EV_SWITCH)
        wrong = []
        if current is None or (current.get("candidate") or {}).get("params") != {"value": expected["amps"]}:
            wrong.append(f"the current was not set to {expected['amps']:g} A")
        if switch is None or (switch.get("candidate") or {}).get("intent") != "start":
            wrong.append("the charger was not started")
        if EV_PHASES in by_entity and by_entity[EV_PHASES].get("outcome") != "executed":
            wrong.append("the phase switch did not go through")
        for trace in traces:
            checked = next((g for g in trace.get("gate_results") or [] if g.get("gate") == "execution"), {})
            if (trace.get("outcome"), trace.get("source_agent")) != ("executed", "scheduler") or not (
                checked.get("evidence") or {}).get("verified"):
                wrong.append(f"{trace['entity_id']} was not executed by the scheduler and read back")
        if states != {EV_CURRENT: f"{expected['amps']:.1f}", EV_PHASES: expected["option"], EV_SWITCH: "on"}:
            wrong.append(f"HA's states are {states}")
        if wrong:
            self.problems.append(f"{EV_NAME} at its slot boundary: {'; '.join(wrong)}; traces {traces}")


def slot_kw(plan: dict[str, Any], moment: datetime) -> float:
    """The stored plan's (the schedule websocket's, its running ``slots``) kW in the slot starting at ``moment``; 0
    outside them."""
    return next((float(slot["power_kw"]) for slot in plan.get("slots") or []
                 if datetime.fromisoformat(slot["start"]) == moment), 0.0)
