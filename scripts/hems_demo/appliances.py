"""Scenario: the Bosch dishwasher's delayed start and the EV charger's slot commands."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .client import fill_form
from .constants import DOMAIN
from .devices import APPLIANCES, EV_CURRENT, EV_PHASES, PROGRAM_DW, PROGRAM_DW_BOUNDARY_WAIT_S, PROGRAM_DW_ENTITIES
from .fixtures import program_dishwasher, program_steps
from .process import log
from .timefmt import at


class AppliancesMixin:
    """Scenario: the Bosch dishwasher's delayed start and the EV charger's slot commands. A mixin of :class:`~.demo.Demo`."""

    async def show_program_dishwasher(self) -> None:
        """Add the Bosch dishwasher (delayed-start profile) through "Add appliance" with device control on, print its
        plan and the scheduler's three commands for its next slot boundary, each previewed through the gates (the
        ``scheduler`` source may only preview through evaluate_command; the boundary itself runs in HA).

        Report ``program_dishwasher``: the form's answers, the planned start, the delay, the previews, the states.
        """
        answers = program_dishwasher(datetime.now(self.tz))
        added = datetime.now(UTC)  # its first boundary is the next one after it is added
        boundary = added.replace(second=0, microsecond=0) + timedelta(minutes=15 - added.minute % 15)
        await self.client.drive_flow(
            "appliance subentry", "/api/config/config_entries/subentries/flow", [self.entry_id, "appliance"],
            lambda step: fill_form(step, answers, f"appliance {PROGRAM_DW!r}"),
        )
        await self.wait_settled(self.entry_id, [a["name"] for a in APPLIANCES] + [PROGRAM_DW])
        plan = await self.stored_plan(PROGRAM_DW)
        planned = datetime.fromisoformat(plan["start"]) if plan.get("feasible") and plan.get("start") else None
        report: dict[str, Any] = {"subentry": answers, "plan": plan, "boundary": boundary.isoformat(), "previews": []}
        self.report["program_dishwasher"] = report
        log("")
        log(f"{PROGRAM_DW} (home_connect shapes: program select, start button, remote start, operation state, "
            f"start-in number in s), window {answers['earliest_start'][:5]} to {answers['deadline'][:5]}, "
            f"program {answers['program']}:")
        if planned is None or planned <= boundary:
            self.problems.append(f"{PROGRAM_DW}: no planned start after the next boundary: {plan}")
            return
        delay = round((planned - boundary).total_seconds())
        report |= {"planned_start": planned.isoformat(), "delay_s": delay}
        log(f"  planned start {at(planned, self.tz)}; at the next slot boundary {at(boundary, self.tz, '%H:%M')} the "
            f"scheduler sets its own delayed start once: {delay} s ({delay / 3600:.2f} h)")
        if boundary <= datetime.now(UTC):  # the boundary passed while the form ran: it acted already
            return
        for candidate, raw_input in program_steps(planned, boundary):
            decision = await self.client.call_service("evaluate_command", {
                "source_agent": "scheduler", "dry_run": True, "raw_input": raw_input, "model_candidate": candidate})
            report["previews"].append(decision)
            self._log_decision(f"preview {candidate['intent']} {candidate['device_alias']}", decision, "dry_run")

    async def stored_plan(self, name: str) -> dict[str, Any]:
        """The appliance's stored plan, the one the scheduler acts on (the schedule websocket; the ``plan`` service
        answers a fresh what-if plan instead)."""
        (payload,) = await self.client.ws([{"type": f"{DOMAIN}/schedule", "entry_id": self.entry_id}])
        return next((p for p in (payload or {}).get("plans") or [] if p.get("name") == name), {})

    async def check_program_boundary(self) -> None:
        """Wait for the Bosch dishwasher's boundary when it is at most PROGRAM_DW_BOUNDARY_WAIT_S away, then check what the scheduler did: the select, the number and the button each executed
        through the gates, once, the number at the delay, the operation state ``delayedstart``.

        Report ``program_dishwasher.acted`` (None when the boundary was not waited for) and ``traces``.
        """
        report = self.report.get("program_dishwasher") or {}
        if "delay_s" not in report:
            return
        boundary = datetime.fromisoformat(report["boundary"])
        left = (boundary - datetime.now(UTC)).total_seconds()
        report["acted"] = None
        if left > PROGRAM_DW_BOUNDARY_WAIT_S:
            log(f"{PROGRAM_DW}: the boundary {at(boundary, self.tz, '%H:%M')} is {left:.0f} s away; the demo does not "
                f"wait for it (the previews above passed every gate; HA runs it at {at(boundary, self.tz, '%H:%M')})")
            return
        if left > 0:
            log(f"{PROGRAM_DW}: waiting {left:.0f} s for the slot boundary {at(boundary, self.tz, '%H:%M')}")
            await asyncio.sleep(left + 5)
        states = {}
        for deadline in range(30):
            states = {k: ((await self.client.request("GET", f"/api/states/{e}", expect=(200, 404))) or {}).get("state")
                      for k, e in PROGRAM_DW_ENTITIES.items()}
            if states["operation"] == "delayedstart" or deadline == 29:
                break
            await asyncio.sleep(1)
        traces = []
        for key in ("select", "delay", "button"):
            found = await self.client.call_service("get_traces", {"entity_id": PROGRAM_DW_ENTITIES[key], "limit": 5})
            traces += [t for t in found.get("traces") or [] if t.get("dry_run") is not True
                       and t.get("outcome") != "dry_run"]
        stored = (await self.stored_plan(PROGRAM_DW)).get("start")
        if stored and stored != report["planned_start"]:  # replanned before the boundary: the delay follows the plan
            log(f"{PROGRAM_DW}: its plan moved to {at(datetime.fromisoformat(stored), self.tz)} before the boundary")
            report |= {"planned_start": stored,
                       "delay_s": round((datetime.fromisoformat(stored) - boundary).total_seconds())}
        report |= {"states": states, "traces": traces}
        acted = [((t.get("candidate") or {}).get("intent"), t.get("outcome")) for t in sorted(traces, key=lambda t: t["timestamp"])]
        report["acted"] = acted
        log(f"{PROGRAM_DW} at {at(boundary, self.tz, '%H:%M')}: " + ", ".join(f"{i} {o}" for i, o in acted)
            + f"; start in {states['delay']} s, operation state {states['operation']}")
        wanted = [("select_option", "executed"), ("set_value", "executed"), ("press", "executed")]
        if acted != wanted:
            self.problems.append(f"{PROGRAM_DW}: the scheduler's delayed start did not act once through the gates: "
                                 f"{acted}")
        if states["operation"] != "delayedstart" or float(states["delay"] or 0) != report["delay_s"]:
            self.problems.append(f"{PROGRAM_DW}: not waiting for its start in {report['delay_s']} s: {states}")

    async def show_ev_charger(self) -> None:
        """Print the EV charger's current and phases and its last gated commands (at its slot boundaries, as the
        scheduler's); a problem when a helper is missing, a command went around the gates or one failed."""
        for entity_id in (EV_CURRENT, EV_PHASES):
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            if not isinstance(state, dict) or state.get("state") in (None, "unavailable"):
                self.problems.append(f"the EV charger's {entity_id} does not exist")
            else:
                log(f"  {entity_id:<55} {state.get('state')}")
        traces: list[dict[str, Any]] = []
        for entity_id in (EV_CURRENT, EV_PHASES, "input_boolean.ev_charger"):
            answer = await self.client.call_service("get_traces", {"entity_id": entity_id, "limit": 5})
            traces += [t for t in answer.get("traces") or [] if t.get("source_agent") == "scheduler"]
        self.report["ev_charger"] = {"traces": len(traces), "outcomes": sorted({str(t.get("outcome")) for t in traces})}
        for trace in traces:
            log(f"  EV charger scheduler command: {trace.get('raw_input', '')[:90]} -> {trace.get('outcome')}")
        if not all(t.get("outcome") in ("executed", "dry_run") for t in traces):
            self.problems.append(f"EV charger: a slot command did not go through: {traces}")
