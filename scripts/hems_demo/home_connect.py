"""Scenario: a Siemens dishwasher started through home_connect's action, on the demo's stand-in integration.

HA core's ``home_connect`` needs a Home Connect cloud account, so the demo links its own stand-in
(``home_connect_stand_in/``, in HA core 2026.10's shapes) into the config's ``custom_components/home_connect``, which
replaces the built-in integration. The driver adds it through its config flow, then the appliance through "Add
appliance" with the Home Connect action profile and its own delayed start, as a person would. The new plan sets the
delayed start at once: one ``home_connect.set_program_and_options`` through the gates as the scheduler's, with the
start-in option in seconds from the whole minute the plan was made to the planned start. Remote start is on.
"""

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
from .devices import APPLIANCES, PROGRAM_DW
from .process import DemoError, log
from .timefmt import at

HC_DW = "Siemens dishwasher"
HC_PROGRAM = "dishcare_dishwasher_program_eco_50"
HC_ACTION = "home_connect.set_program_and_options"
START_IN = "b_s_h_common_option_start_in_relative"
# The stand-in's entities by the Home Connect key their unique id ends with (HA core's home_connect: f"{haId}-{key}").
HC_KEYS = {"select": "BSH.Common.Root.SelectedProgram", "remote": "BSH.Common.Status.RemoteControlStartAllowed",
           "operation": "BSH.Common.Status.OperationState", "start_in": "BSH.Common.Option.StartInRelative"}
HC_LEAD = timedelta(hours=2)  # the window opens this long after the demo adds it: the start is ahead
HC_WINDOW = timedelta(hours=8)


def home_connect_dishwasher(now: datetime, entities: dict[str, str], device_id: str) -> dict[str, Any]:
    """The Siemens dishwasher's "Add appliance" answers: the Home Connect action on the stand-in's device with its own
    delayed start; its window opens HC_LEAD after ``now`` (local, on a slot boundary) and lasts HC_WINDOW."""
    opens = now + HC_LEAD + (-now.minute % 15) * timedelta(minutes=1)
    return {
        "name": HC_DW, "kind": "dishwasher", "entity_id": entities["select"], "program": HC_PROGRAM,
        "remote_start_entity": entities["remote"], "operation_entity": entities["operation"],
        "program_start": "home_connect", "home_connect_device": device_id, "delayed_start": True,
        "power_kw": 2.0, "duration_min": 120, "contiguous": True,
        "earliest_start": f"{opens:%H:%M}:00", "deadline": f"{opens + HC_WINDOW:%H:%M}:00",
    }


class HomeConnectMixin:
    """Scenario: the Siemens dishwasher on the home_connect stand-in. A mixin of :class:`~.demo.Demo`."""

    async def stand_in_entities(self) -> tuple[dict[str, str], str]:
        """The stand-in's entity ids (by :data:`HC_KEYS`' names) and its device id, from HA's entity registry."""
        (registry,) = await self.client.ws([{"type": "config/entity_registry/list"}])
        ours = {e["unique_id"].rsplit("-", 1)[-1]: e for e in registry if e.get("platform") == "home_connect"}
        found = {name: ours[key] for name, key in HC_KEYS.items() if key in ours}
        devices = {e.get("device_id") for e in found.values()}
        if len(found) != len(HC_KEYS) or len(devices) != 1 or None in devices:
            raise DemoError(f"the home_connect stand-in's entities are not all on one device: {found}")
        return {name: e["entity_id"] for name, e in found.items()}, str(devices.pop())

    async def show_home_connect_dishwasher(self) -> None:
        """Set the home_connect stand-in up through its config flow, then add the Siemens dishwasher (Home Connect
        action, its own delayed start) through "Add appliance" with device control on, and print its plan.

        Report ``home_connect_dishwasher``: ``entities``, ``device_id``, the form's answers, the plan, the planned
        start and ``added`` (the whole minute before the form was sent).
        """
        await self.client.drive_flow("home_connect stand-in config", "/api/config/config_entries/flow",
                                     "home_connect", lambda step: {})
        log("")
        log("home_connect: the demo's stand-in integration (scripts/hems_demo/home_connect_stand_in, linked as "
            "custom_components/home_connect), not Home Assistant's Home Connect, which needs a cloud account")
        for attempt in range(20):
            try:
                entities, device_id = await self.stand_in_entities()
                break
            except DemoError:
                if attempt == 19:
                    raise
                await asyncio.sleep(0.5)
        answers = home_connect_dishwasher(datetime.now(self.tz), entities, device_id)
        added = datetime.now(UTC).replace(second=0, microsecond=0)
        await self.client.drive_flow(
            "appliance subentry", "/api/config/config_entries/subentries/flow", [self.entry_id, "appliance"],
            lambda step: fill_form(step, answers, f"appliance {HC_DW!r}"),
        )
        _, subentries = await self.wait_settled(self.entry_id, [a["name"] for a in APPLIANCES] + [PROGRAM_DW, HC_DW])
        plan = await self.stored_plan(HC_DW)
        planned = datetime.fromisoformat(plan["start"]) if plan.get("feasible") and plan.get("start") else None
        report: dict[str, Any] = {"entities": entities, "device_id": device_id, "subentry": answers, "plan": plan,
                                  "added": added.isoformat(),
                                  "subentry_id": next(s["subentry_id"] for s in subentries if s["title"] == HC_DW)}
        self.report["home_connect_dishwasher"] = report
        log(f"{HC_DW} (Home Connect action {HC_ACTION} on the stand-in's device, its own delayed start), window "
            f"{answers['earliest_start'][:5]} to {answers['deadline'][:5]}, program {HC_PROGRAM}:")
        if planned is None or planned <= datetime.now(UTC):
            self.problems.append(f"{HC_DW}: no planned start ahead: {plan}")
            return
        report["planned_start"] = planned.isoformat()
        log(f"  planned start {at(planned, self.tz)}; the new plan sets its own delayed start at once")
        await self.check_home_connect_dishwasher(report)

    async def check_home_connect_dishwasher(self, report: dict[str, Any]) -> None:
        """Check what the new plan did: one ``home_connect.set_program_and_options`` executed through the gates as the
        scheduler's, its start-in option the time from the minute the plan was made to the planned start, read back
        from the stand-in (operation state ``delayedstart``, the "Start in relative" number) within 30 s.

        Report ``home_connect_dishwasher``: ``states``, ``traces`` (not dry runs), ``delay_s`` (the option sent),
        ``armed_at`` (the planned start less it) and ``issues``: the integration's repair issues about its program
        (``program_*_<subentry id>``: none when it was set as planned; None without the frontend's repairs).
        """
        entities = report["entities"]
        states = await self.client.wait_states(entities, "operation", "delayedstart")
        found = await self.client.call_service("get_traces", {"entity_id": entities["select"], "limit": 5})
        traces = [t for t in found.get("traces") or [] if not t.get("dry_run") and t.get("outcome") != "dry_run"]
        sent = [(t.get("command") or {}).get("data") or {} for t in traces]
        delay = float(sent[0].get(START_IN, 0)) if len(sent) == 1 else 0.0
        armed = datetime.fromisoformat(report["planned_start"]) - timedelta(seconds=delay)
        repairs = (await self.client.ws_replies([{"type": "repairs/list_issues"}]))[0]  # with the frontend only
        program_issues = [i["issue_id"] for i in (repairs.get("result") or {}).get("issues") or []
                          if i.get("domain") == DOMAIN and i["issue_id"].startswith("program_")]
        issues = [i for i in program_issues if i.endswith(report["subentry_id"])] if repairs.get("success") else None
        for other in sorted(set(program_issues) - set(issues or [])):
            log(f"NOTE repair issue {other} (another program appliance's)")
        report |= {"states": states, "traces": traces, "delay_s": delay, "armed_at": armed.isoformat(),
                   "issues": issues}
        acted = [(t.get("source_agent"), (t.get("command") or {}).get("backend_action"), t.get("outcome"))
                 for t in traces]
        log(f"{HC_DW}: " + ", ".join(f"{a} {b} {o}" for a, b, o in acted) + f"; start in {delay:.0f} s (from "
            f"{at(armed, self.tz, '%H:%M:%S')}), operation state {states['operation']}, "
            f"remote start {states['remote']}")
        if acted != [("scheduler", HC_ACTION, "executed")]:
            self.problems.append(f"{HC_DW}: the new plan's delayed start did not act once through the gates: {acted}")
        now = datetime.now(UTC)
        if states["operation"] != "delayedstart" or not datetime.fromisoformat(report["added"]) <= armed <= now:
            self.problems.append(f"{HC_DW}: not waiting for its planned start {report['planned_start']} from the "
                                 f"minute it was planned: {states}, start in {delay} s")
        if issues:
            self.problems.append(f"{HC_DW}: repair issues about its program: {issues}")
        if float(states["start_in"] or -1) != delay:
            self.problems.append(f"{HC_DW}: the appliance's start-in {states['start_in']} s is not the {delay} s sent")
