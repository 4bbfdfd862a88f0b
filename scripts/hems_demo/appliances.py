"""Scenario: the Bosch dishwasher's delayed start and the EV charger's slot commands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .client import fill_form
from .constants import DOMAIN
from .devices import APPLIANCES, EV_CURRENT, EV_PHASES, PROGRAM_DW, PROGRAM_DW_ENTITIES
from .fixtures import program_dishwasher
from .process import log
from .timefmt import at


class AppliancesMixin:
    """Scenario: the Bosch dishwasher's delayed start and the EV charger's slot commands. A mixin of :class:`~.demo.Demo`."""

    async def show_program_dishwasher(self) -> None:
        """Add the Bosch dishwasher (delayed-start profile) through "Add appliance" with device control on and print its
        plan. The new plan sets the appliance's own delayed start at once (its "start in" number is in seconds): the
        program select, the number and the start button, each through the gates as the scheduler's.

        Report ``program_dishwasher``: the form's answers, the plan, the planned start and ``added`` (the whole minute
        before the form was sent).
        """
        answers = program_dishwasher(datetime.now(self.tz))
        added = datetime.now(UTC).replace(second=0, microsecond=0)
        await self.client.drive_flow(
            "appliance subentry", "/api/config/config_entries/subentries/flow", [self.entry_id, "appliance"],
            lambda step: fill_form(step, answers, f"appliance {PROGRAM_DW!r}"),
        )
        await self.wait_settled(self.entry_id, [a["name"] for a in APPLIANCES] + [PROGRAM_DW])
        plan = await self.stored_plan(PROGRAM_DW)
        planned = datetime.fromisoformat(plan["start"]) if plan.get("feasible") and plan.get("start") else None
        report: dict[str, Any] = {"subentry": answers, "plan": plan, "added": added.isoformat()}
        self.report["program_dishwasher"] = report
        log("")
        log(f"{PROGRAM_DW} (home_connect shapes: program select, start button, remote start, operation state, "
            f"start-in number in s), window {answers['earliest_start'][:5]} to {answers['deadline'][:5]}, "
            f"program {answers['program']}:")
        if planned is None or planned <= datetime.now(UTC):
            self.problems.append(f"{PROGRAM_DW}: no planned start ahead: {plan}")
            return
        report["planned_start"] = planned.isoformat()
        log(f"  planned start {at(planned, self.tz)}; the new plan sets its own delayed start at once")

    async def stored_plan(self, name: str) -> dict[str, Any]:
        """The appliance's stored plan, the one the scheduler acts on (the schedule websocket; the ``plan`` service
        answers a fresh what-if plan instead)."""
        (payload,) = await self.client.ws([{"type": f"{DOMAIN}/schedule", "entry_id": self.entry_id}])
        return next((p for p in (payload or {}).get("plans") or [] if p.get("name") == name), {})

    async def check_program_boundary(self) -> None:
        """Check what the new plan did: the select, the number and the button each executed through the gates, once,
        the number at the time from the minute the plan was made to the planned start, the operation state
        ``delayedstart`` (read back from HA's states within 30 s).

        Report ``program_dishwasher``: ``delay_s`` (the number), ``armed_at`` (the planned start less it), ``states``,
        ``traces`` and ``acted`` (intent and outcome of each command, in order).
        """
        report = self.report.get("program_dishwasher") or {}
        if "planned_start" not in report:
            return
        states = await self.client.wait_states(PROGRAM_DW_ENTITIES, "operation", "delayedstart")
        traces = []
        for key in ("select", "delay", "button"):
            found = await self.client.call_service("get_traces", {"entity_id": PROGRAM_DW_ENTITIES[key], "limit": 5})
            traces += [t for t in found.get("traces") or [] if t.get("dry_run") is not True
                       and t.get("outcome") != "dry_run"]
        acted = [((t.get("candidate") or {}).get("intent"), t.get("outcome"))
                 for t in sorted(traces, key=lambda t: t["timestamp"])]
        delay = float(states["delay"] or 0)
        armed = datetime.fromisoformat(report["planned_start"]) - timedelta(seconds=delay)
        report |= {"states": states, "traces": traces, "acted": acted, "delay_s": delay, "armed_at": armed.isoformat()}
        log(f"{PROGRAM_DW}: " + ", ".join(f"{i} {o}" for i, o in acted) + f"; start in {delay:.0f} s (from "
            f"{at(armed, self.tz, '%H:%M:%S')}), operation state {states['operation']}")
        if acted != [("select_option", "executed"), ("set_value", "executed"), ("press", "executed")]:
            self.problems.append(f"{PROGRAM_DW}: the new plan's delayed start did not act once through the gates: {acted}")
        now = datetime.now(UTC)
        if states["operation"] != "delayedstart" or not datetime.fromisoformat(report["added"]) <= armed <= now:
            self.problems.append(f"{PROGRAM_DW}: not waiting for its planned start {report['planned_start']} from the "
                                 f"minute it was planned: {states}")

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
