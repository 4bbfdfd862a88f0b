"""Scenario: the gates, value binding, Assist exposure, the confirmation notification and the offline planner."""

from __future__ import annotations

from datetime import datetime
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import ASK_REQUEST, DOMAIN, GARAGE_DOOR, HEAT_PUMP_CLIMATE, OUTCOME_WORDS
from .devices import APPLIANCES, DASHBOARD_TITLE, DASHBOARD_URL_PATH
from .process import log
from .timefmt import at, local, local_text


class GatesMixin:
    """Scenario: the gates, value binding, Assist exposure, the confirmation notification and the offline planner. A mixin of :class:`~.demo.Demo`."""

    async def show_gates(self) -> None:
        """Turn device control on, preview the scheduler's gate decision for each planned start, and ask to open
        the garage door (which waits for an administrator's confirmation)."""
        log("")
        await self.check_assist_exposure()
        await self.client.request("POST", "/api/services/switch/turn_on",
                                  json={"entity_id": f"switch.{DOMAIN}_allow_device_control"})
        log("Device control: ON (switch.agentic_hems_allow_device_control). Gate decisions (the scheduled starts as dry-run previews; they run at their slots):")
        for appliance in APPLIANCES:
            plan = self.report["plans"].get(appliance["name"]) or {}
            start = local(plan.get("start"), self.tz)
            if start is None:
                continue
            decision = await self.client.call_service("evaluate_command", {
                "source_agent": "scheduler", "dry_run": True,
                "raw_input": f"start {appliance['name']} at {start:%H:%M} (preview of the scheduled start)",
                "model_candidate": {"intent": "start", "device_alias": appliance["entity_id"]},
            })
            self.report["gates"][appliance["name"]] = decision
            self._log_decision(f"scheduled start {appliance['name']} {at(start, self.tz)}", decision, "dry_run")
        decision = await self.client.call_service("evaluate_command", {
            "source_agent": "demo", "raw_input": "open the garage door",
            "model_candidate": {"intent": "open", "device_alias": "garage door"},
        })
        self.report["gates"]["garage door"] = decision
        traces = await self.client.call_service("get_traces", {"entity_id": GARAGE_DOOR, "limit": 1})
        self.report["garage_trace"] = (traces.get("traces") or [{}])[0]
        self._log_decision("open the garage door", decision, "pending_confirmation")
        if decision.get("outcome") == "pending_confirmation":
            log(f"     decide it (administrators only) before {at(self.pending_expiry(decision), self.tz)}: the Confirm "
                f"and Reject buttons of the trace card on /{DASHBOARD_URL_PATH} (the notification links there), or "
                f"action agentic_hems.confirm / agentic_hems.reject with trace_id {decision['trace_id']}")
        await self.show_value_refused()

    async def show_value_refused(self) -> None:
        """A value the request did not name is refused with the translated error (report ``gates.value_refused``)."""
        # Over the websocket: HA 2026.4's REST API answers a service's validation error with a bare HTTP 500
        (reply,) = await self.client.ws_replies([{
            "type": "call_service", "domain": DOMAIN, "service": "evaluate_command", "return_response": True,
            "service_data": {
                "source_agent": "orchestrator", "raw_input": "Set the heat pump to 21 degrees", "dry_run": True,
                "model_candidate": {"intent": "set_temperature", "device_alias": HEAT_PUMP_CLIMATE,
                                    "params": {"temperature": 25}}}}])
        message = str((reply.get("error") or {}).get("message")) if not reply.get("success") else f"accepted: {reply}"
        self.report["gates"]["value_refused"] = message
        log(f"GATE a model's 25° for 'Set the heat pump to 21 degrees': {message}")
        if "the request asks for 21° on Heat pump, not 25°" not in message:
            self.problems.append(f"a value nobody asked for was not refused with its translated error: {message}")

    async def hide_from_assist(self) -> None:
        """Hide the garage door from Assist before the integration is set up: HA's own intents ("Prefer handling
        commands locally", on by default) would open it at once, with no gate; the options give it to the gates."""
        await self.client.ws([{"type": "homeassistant/expose_entity", "assistants": ["conversation"],
                               "entity_ids": [GARAGE_DOOR], "should_expose": False}])
        log(f"Assist: {GARAGE_DOOR} hidden (HA's own intents would open it without a gate); the options give it to the gates")

    async def check_assist_exposure(self) -> None:
        """Check that no device the policy protects is exposed to Assist: the garage door is not, and the
        integration raised no ``assist_exposed_*`` repair (report ``assist``; its issues are None without the frontend,
        which loads the repairs integration)."""
        (listed,) = await self.client.ws([{"type": "homeassistant/expose_entity/list"}])
        garage = bool(((listed or {}).get("exposed_entities") or {}).get(GARAGE_DOOR, {}).get("conversation"))
        repairs = (await self.client.ws_replies([{"type": "repairs/list_issues"}]))[0]  # with the frontend only
        issues = [i["issue_id"] for i in (repairs.get("result") or {}).get("issues") or []
                  if i.get("domain") == DOMAIN and i["issue_id"].startswith("assist_exposed_")
                  ] if repairs.get("success") else None
        self.report["assist"] = {"garage_door_exposed": garage, "exposure_issues": issues}
        if garage:
            self.problems.append(f"{GARAGE_DOOR} is exposed to Assist: HA's own intents open it without a gate")
        if issues:
            self.problems.append(f"protected devices exposed to Assist: {issues}")

    @staticmethod
    def pending_expiry(decision: dict[str, Any]) -> datetime:
        """When a pending command expires: the ``expires_at`` its gate results carry."""
        expiry = next(g["evidence"]["expires_at"] for g in decision["gate_results"] if "expires_at" in g["evidence"])
        return datetime.fromisoformat(expiry)

    async def link_notification(self) -> None:
        """Give the garage door's pending-confirmation notification a link to the dashboard whose trace card confirms
        or rejects it (a persistent notification has no buttons; the integration's own names the actions to call).
        It keeps the integration's notification id, so deciding the command dismisses it as before."""
        decision = self.report["gates"].get("garage door") or {}
        if decision.get("outcome") != "pending_confirmation":
            return
        trace_id = decision["trace_id"]
        message = (
            "The demo asks: **Open Garage door**.\n\n"
            f"[Open the {DASHBOARD_TITLE} dashboard](/{DASHBOARD_URL_PATH}) and press *Confirm* or *Reject* on its "
            f"trace card (administrators only) before {at(self.pending_expiry(decision), self.tz)}. Or call the "
            f"action `agentic_hems.confirm` (or `agentic_hems.reject`) with `trace_id: {trace_id}`."
        )
        await self.client.request("POST", "/api/services/persistent_notification/create", json={
            "notification_id": f"{DOMAIN}_confirm_{trace_id}", "title": "Agentic HEMS: confirmation needed",
            "message": message})
        shown = (await self.client.ws([{"type": "persistent_notification/get"}]))[0] or []
        self.report["notifications"] = shown
        log(f"NOTIFY pending garage door: a notification links to /{DASHBOARD_URL_PATH} (its trace card decides it)")
        for note in shown:  # HA's own, on the first page a new user sees
            if note.get("notification_id") == "invalid_config":
                log(f"NOTE Home Assistant shows 'Invalid config': {' '.join(str(note.get('message')).split())} (the "
                    "requirements of the platforms HA sets up by itself are missing: run scripts/bootstrap)")
        if not any(f"](/{DASHBOARD_URL_PATH})" in str(n.get("message")) for n in shown):
            self.problems.append(f"no notification links to the dashboard: {shown}")

    async def show_ask(self) -> None:
        """Answer a typed request through the offline planner (agentic_hems.ask), as a user would in Assist."""
        log("")
        log(f'ASK "{ASK_REQUEST}" (offline planner, no model, no network):')
        answer = await self.client.call_service("ask", {"text": ASK_REQUEST})
        self.report["ask"] = answer
        log(f"     {answer.get('summary')}")
        log(f"     {answer.get('iterations')} iterations, actions: {', '.join(a['type'] for a in answer.get('actions') or [])}")
        if not answer.get("success") or len(answer.get("plans") or []) != len(APPLIANCES):
            self.problems.append(f"ask did not plan every appliance: {answer}")

    def _log_decision(self, what: str, decision: dict[str, Any], wanted: str) -> None:
        """One line per gate decision: what happened in words, each gate's result (the execution gate of a command
        that did not run says so), and the last gate's reason in local time."""
        gates = decision.get("gate_results") or []
        outcome = str(decision.get("outcome"))
        held = outcome in ("dry_run", "pending_confirmation")
        steps = " ".join(
            f"{g['gate']}:{'not run' if held and g['gate'] == 'execution' else 'ok' if g['passed'] else 'FAIL'}"
            for g in gates
        )
        log(f"GATE {what}: {OUTCOME_WORDS.get(outcome, outcome)}  [{steps}]")
        if gates:
            log(f"     {local_text(str(gates[-1]['reason']), self.tz, datetime.now(self.tz))}")
        if decision.get("outcome") != wanted:
            self.problems.append(f"gate decision for {what}: {decision.get('outcome')}, expected {wanted}")
