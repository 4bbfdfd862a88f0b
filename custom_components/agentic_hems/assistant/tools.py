"""The orchestrator's tools on one site: each action the model chooses, carried out through Home Assistant.

:class:`HassTools` runs as the user who asked: prices from the coordinator, the EV deadline from a calendar entity,
window sums, CALL_AGENT through the appliance's specialist agent, SCHEDULE through the planner (stored as the
``schedule`` service does; the scheduler then issues starts through the gates), EVALUATE_COMMAND through the gates,
and the grid tools. No action can confirm a pending command. Actions the person's request does not ask for are
refused and become outcomes (intent binding).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass, field
from datetime import date, datetime
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.util import dt as dt_util

from ..const import DOMAIN
from ..gates.models import SOURCE_ORCHESTRATOR, RequestedAction
from ..grid.contracts import ToolError
from ..grid_ha.services import async_call_tool
from ..orchestrator.actions import (
    CALCULATE_WINDOW_SUMS,
    CALL_AGENT,
    EVALUATE_COMMAND,
    EXPLAIN_DEVICE,
    GET_CALENDAR_CONSTRAINT,
    GET_PRICES,
    SCHEDULE,
    Action,
)
from ..orchestrator.agents import AGENT_KINDS, consult
from ..orchestrator.intent import (
    CANCEL_ACTION,
    SCHEDULE_ACTION,
    advice_targets,
    asks_for_grid_action,
    asks_for_incident,
)
from ..orchestrator.loop import Usage
from ..orchestrator.offline import ApplianceRef, named_in
from ..orchestrator.outcomes import authorization_outcome, command_outcome, plan_outcome, refused_action
from ..orchestrator.parser import Reply
from ..planning.home_view import why_now
from ..planning.services import build_load, find_appliance
from ..planning.switch_ons import async_switched_on
from ..prices.curve import ceil_slot, floor_slot
from ..scheduling import window_sums
from ..service_helpers import invalid
from .llm import OpenAIModel, prompt
from .tool_values import compact, local_text, money, observed, parse_deadline, run_window

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry


@dataclass
class _Counting:
    """The agent model, adding each call's tokens to the tools' ``agent_usage``."""

    model: OpenAIModel
    tools: HassTools

    @property
    def name(self) -> str:
        return self.model.name

    async def complete(self, messages: Sequence[dict[str, Any]]) -> Reply:
        reply = await self.model.complete(messages)
        used, total = self.model.last_usage, self.tools.agent_usage
        self.tools.agent_usage = Usage(
            total.prompt_tokens + used.prompt_tokens, total.completion_tokens + used.completion_tokens
        )
        return reply


@dataclass
class HassTools:
    """The orchestrator's tools on one site, run as ``context`` (the user who asked)."""

    hass: HomeAssistant
    entry: AgenticHemsConfigEntry
    context: Context
    calendar_entity: str | None = None
    calendar_keyword: str = "car"
    share_calendar_titles: bool = False
    agent_model: OpenAIModel | None = None
    request: str = ""
    requested: frozenset[RequestedAction] = frozenset()  # what ``request`` asks for (intent binding)
    plans: dict[str, dict[str, Any]] = field(default_factory=dict)
    calendar_constraint: dict[str, Any] | None = None
    gate_results: list[dict[str, Any]] = field(default_factory=list)
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # what happened: commands and plans, in order
    agent_results: dict[str, dict[str, Any]] = field(default_factory=dict)
    agent_usage: Usage = field(default_factory=Usage)

    async def run(self, action: Action) -> dict[str, Any]:
        """Carry out one validated action; errors come back as ``{"error": ...}`` Observations."""
        handlers: dict[str, Callable[[Action], Any]] = {
            GET_PRICES: self._prices,
            GET_CALENDAR_CONSTRAINT: self._calendar,
            CALCULATE_WINDOW_SUMS: self._window_sums,
            CALL_AGENT: self._agent,
            SCHEDULE: self._schedule,
            EVALUATE_COMMAND: self._evaluate,
            EXPLAIN_DEVICE: self._why,
        }
        try:
            handler = handlers.get(action.type)
            result: dict[str, Any] = await (handler(action) if handler else self._grid(action))
        except ToolError as err:
            result = {"error": err.key, **err.placeholders}
        except ServiceValidationError as err:
            result = {"error": err.translation_key or str(err), **(err.translation_placeholders or {})}
        except (HomeAssistantError, ValueError) as err:
            result = {"error": str(err) or type(err).__name__}
        return {"action": action.type, **result}

    def _curve(self) -> Any:
        data = self.entry.runtime_data.coordinator.data
        if data is None:
            raise ServiceValidationError(translation_domain=DOMAIN, translation_key="no_prices")
        return data.total

    async def _prices(self, action: Action) -> dict[str, Any]:
        curve = self._curve()
        now = dt_util.utcnow()
        ahead = curve.window(max(curve.start, floor_slot(now)), curve.end)
        prices = ahead.prices
        known = ~np.isnan(prices)
        if not known.any():
            return {"error": "no_prices"}
        best = int(np.nanargmin(prices))
        current = curve.price_at(now)
        return {
            "unit": f"{curve.currency}/kWh",
            "now": None if current is None else money(current),
            "from_local": local_text(ahead.start),
            "to_local": local_text(ahead.end),
            "slots": int(known.sum()),
            "min": money(float(np.nanmin(prices))),
            "max": money(float(np.nanmax(prices))),
            "mean": money(float(np.nanmean(prices))),
            "cheapest": {"start_local": local_text(ahead.slot_start(best)), "price": money(float(prices[best]))},
        }

    async def _calendar(self, action: Action) -> dict[str, Any]:
        if not self.calendar_entity:
            return {"deadline": None, "reason": "no calendar is configured"}
        now = dt_util.now()
        response = await self.hass.services.async_call(
            "calendar",
            "get_events",
            {"entity_id": self.calendar_entity, "start_date_time": now, "duration": {"days": 7}},
            blocking=True,
            context=self.context,
            return_response=True,
        )
        found_events: Any = (response or {}).get(self.calendar_entity) or {}
        events: list[dict[str, Any]] = found_events.get("events", []) if isinstance(found_events, dict) else []
        for event in events:
            summary = str(event.get("summary", ""))
            if self.calendar_keyword.casefold() not in summary.casefold():
                continue
            start = str(event["start"])
            if "T" in start:
                deadline = dt_util.as_utc(datetime.fromisoformat(start))
            else:  # an all-day event: local 00:00 of that day
                deadline = dt_util.as_utc(dt_util.start_of_local_day(date.fromisoformat(start)))
            self.calendar_constraint = {"deadline": deadline.isoformat(), "summary": summary}
            found = {"deadline": deadline.isoformat(), "deadline_local": local_text(deadline)}
            return found | ({"event": summary} if self.share_calendar_titles else {})
        return {"deadline": None, "reason": f"no event with '{self.calendar_keyword}' in the next 7 days"}

    async def _window_sums(self, action: Action) -> dict[str, Any]:
        curve = self._curve()
        now = dt_util.utcnow()
        first = max(curve.index_of(now) + 1, 0) if now > curve.start else 0
        width = math.ceil(float(action.args["duration_min"]) / (curve.resolution.total_seconds() / 60))
        sums = window_sums(curve.prices[first:], width)
        if sums.size == 0 or np.isnan(sums).all():
            return {"error": "no window of that length with known prices"}
        best = int(np.nanargmin(sums))
        hours = curve.resolution.total_seconds() / 3600
        return {
            "start_local": local_text(curve.slot_start(first + best)),
            "cost_per_kw": round(float(sums[best]) * hours, 4),
            "unit": curve.currency,
        }

    async def _agent(self, action: Action) -> dict[str, Any]:
        """Consult the appliance's specialist agent, checked against the optimal plan (``orchestrator.agents.consult``).

        Bound to the request: refused (an outcome) for an appliance the request does not name; the agent reads the
        person's own request (``request``), never text the model wrote.
        """
        appliance = find_appliance(self.entry, str(action.args["appliance"]))
        appliances = [ApplianceRef(a.name, a.kind) for a in self.entry.runtime_data.planner.appliances.values()]
        if appliance.name not in advice_targets(self.request, appliances):
            return self._refuse(
                action, appliance.name, "agent_not_requested", f"the request does not name {appliance.name}"
            )
        if self.agent_model is None:
            return {"error": "specialist agents need a language model; SCHEDULE uses the optimizer directly"}
        if appliance.kind not in AGENT_KINDS:
            return {"error": f"there is no specialist agent for a {appliance.kind}"}
        planner = self.entry.runtime_data.planner
        now = dt_util.utcnow()
        load = planner.load_for(appliance.appliance_id, now)
        if deadline := action.args.get("deadline"):
            load = dataclasses.replace(load, deadline=parse_deadline(str(deadline), now))
        curve = self._curve()
        (optimum,) = await planner.async_plan_loads(curve, [load], exclude={appliance.appliance_id}, now=now)
        agent_prompt = await self.hass.async_add_executor_job(prompt, f"{appliance.kind}_agent.md")
        model = self.agent_model
        before = self.agent_usage
        counting = _Counting(model, self)
        result = await consult(
            counting, agent_prompt, self.request, load, curve=curve, optimum=optimum, tz=dt_util.get_default_time_zone()
        )
        self.agent_results[appliance.name] = result | {"tokens": self.agent_usage.prompt_tokens - before.prompt_tokens}
        return {"appliance": appliance.name, **result}

    async def _schedule(self, action: Action) -> dict[str, Any]:
        """One appliance, or several separated by commas: those are planned jointly under the fuse."""
        appliances = [find_appliance(self.entry, name.strip()) for name in str(action.args["appliance"]).split(",")]
        self._bound(appliances, CANCEL_ACTION if action.args.get("cancel") else SCHEDULE_ACTION)
        planner = self.entry.runtime_data.planner
        if action.args.get("cancel"):
            for appliance in appliances:
                await planner.async_clear_plan(appliance.appliance_id)
                self.plans[appliance.name] = {"appliance": appliance.name, "cancelled": True}
            self.outcomes.extend(plan_outcome({"appliance": a.name, "cancelled": True}) for a in appliances)
            return {"plans": [{"appliance": a.name, "cancelled": True} for a in appliances]}
        now = dt_util.utcnow()
        kept = self._kept(appliances, now)
        exact = action.args.get("start_at")
        start_text = exact or action.args.get("earliest_start")
        start = parse_deadline(str(start_text), now) if start_text else None  # the next such time
        loads = {}
        for appliance in (a for a in appliances if a.name not in kept):
            data: dict[str, Any] = {"earliest_start": start} if start else {}
            if deadline := action.args.get("deadline"):
                data["deadline"] = parse_deadline(str(deadline), start or now)
            elif exact and start:  # "at 10 pm": just long enough for the run
                data["deadline"] = ceil_slot(start + appliance.run_time)
            elif start:  # after a time: until the appliance's usual deadline
                data["deadline"] = parse_deadline(appliance.deadline.isoformat(timespec="minutes"), start)
            loads[appliance.appliance_id] = build_load(self.entry, data, appliance)
        plans = await planner.async_schedule_many(loads) if loads else {}
        seen = []
        for appliance in appliances:
            if appliance.name in kept:
                seen.append(kept[appliance.name])
                continue
            plan = plans[appliance.appliance_id]
            self.plans[appliance.name] = {
                **plan.as_dict(),
                "appliance": appliance.name,
                "appliance_id": appliance.appliance_id,
            }
            seen.append(observed(appliance.name, plan))
        self.outcomes.extend(plan_outcome(plan) for plan in seen)
        return {"plans": seen}

    def _kept(self, appliances: Sequence[Any], now: datetime) -> dict[str, dict[str, Any]]:
        """Return the plans a person set that this SCHEDULE leaves alone, as SCHEDULE observes them (``kept``).

        Those are the plans a person set that have not ended (:meth:`..planning.manager.PlanManager.set_plan`) of
        the appliances the request does not name one by one: "schedule everything" never replaces them.
        """
        planner = self.entry.runtime_data.planner
        named = named_in(self.request, [ApplianceRef(a.name, a.kind) for a in planner.appliances.values()])
        return {
            a.name: observed(a.name, plan) | {"kept": True}
            for a in appliances
            if a.name not in named and (plan := planner.set_plan(a.appliance_id, now)) is not None
        }

    def _bound(self, appliances: Sequence[Any], what: str) -> None:
        """Refuse a SCHEDULE or cancel of an appliance the person's request does not name (intent binding).

        This runs before anything is planned or cleared; each refused appliance is a ``not_planned`` outcome.

        Raises:
            ServiceValidationError: ``not_requested`` with the appliance and the action.

        """
        refused = [a.name for a in appliances if RequestedAction(a.name, what) not in self.requested]
        if not refused:
            return
        reason = f"the request does not ask to {what} it"
        self.outcomes.extend(
            plan_outcome({"appliance": name, "feasible": False, "reason": "not_requested", "detail": reason})
            for name in refused
        )
        raise invalid("not_requested", appliance=", ".join(refused), action=what, request=self.request)

    async def _why(self, action: Action) -> dict[str, Any]:
        """Why a battery or heat pump does what the whole-home plan has it do now, or an appliance's stored plan.

        It reads the plans and sets nothing. An appliance answers ``{"plans": [its plan as SCHEDULE observes it]}``.
        """
        home, device = self.entry.runtime_data.home, str(action.args["device"])
        try:
            appliance = find_appliance(self.entry, device)
        except ServiceValidationError:  # not an appliance: a battery or heat pump, or unknown
            appliance = None
        if appliance is not None:
            state = self.entry.runtime_data.planner.states.get(appliance.appliance_id)
            plan = state.plan if state is not None else None
            return {"plans": [observed(appliance.name, plan) if plan else {"appliance": device, "feasible": False}]}
        if home is None:
            return {"error": "home_plan_not_configured", "device": device}
        answer = why_now(home, device, str(action.args["lang"]), dt_util.utcnow())
        if answer.get("until"):
            answer["until_local"] = local_text(datetime.fromisoformat(answer["until"]))
        return answer

    async def _evaluate(self, action: Action) -> dict[str, Any]:
        # raw_input is the person's request: InputGuard screens it and the Policy gate binds the command to it
        record = await self.entry.runtime_data.control.async_evaluate(
            source_agent=SOURCE_ORCHESTRATOR,
            candidate=dict(action.args),
            context=self.context,
            raw_input=self.request,
        )
        self.gate_results.append({"trace_id": record["trace_id"], "outcome": record["outcome"]})
        state = self.hass.states.get(record["entity_id"]) if record.get("entity_id") else None
        effect = await self._switched_on(record)
        self.outcomes.append(command_outcome(action.args, record, state.name if state else None) | effect)
        gates = record.get("gate_results") or []
        return {
            "outcome": record["outcome"],
            "trace_id": record["trace_id"],
            "entity_id": record.get("entity_id"),
            "failed_gate": record.get("failed_gate"),
            "reason": gates[-1]["reason"] if gates else None,
            **effect,
        }

    async def _switched_on(self, record: dict[str, Any]) -> dict[str, Any]:
        """For a switch-on of an appliance (:func:`..planning.switch_ons.async_switched_on`): what became of its plan.

        ``{"appliance": name}``, with ``already_on`` (it was on: nothing ran), ``withdrawn`` (the plan this run
        replaces) and ``plan`` (the plan that stands), as local start and end; ``{}`` for any other command.
        """
        switched = await async_switched_on(self.entry.runtime_data.planner, record)
        if switched is None:
            return {}
        effect: dict[str, Any] = {"appliance": switched.name}
        if switched.already_on:
            effect["already_on"] = True
        if switched.withdrawn is not None:
            effect["withdrawn"] = run_window(switched.withdrawn)
        if switched.plan is not None:
            effect["plan"] = run_window(switched.plan)
        return effect

    async def _grid(self, action: Action) -> dict[str, Any]:
        """Run a grid tool as the user who asked; ``simulate_action`` takes the plan's signed actions by ``plan_id``.

        ``create_incident`` (it notifies an administrator) is refused unless the request asks to report an incident
        (``orchestrator.intent.asks_for_incident``). ``request_authorization`` (a request for an administrator) is
        bound to the request: refused (an outcome) unless it asks for a grid or battery action
        (``orchestrator.intent.asks_for_grid_action``); a request it
        creates is an outcome too.
        """
        name = action.type.lower()
        args = dict(action.args)
        asks_person = name == "request_authorization"
        if asks_person and not asks_for_grid_action(self.request):
            return self._refuse(action, None, "grid_not_requested", "the request asks for no grid or battery action")
        if name == "create_incident" and not asks_for_incident(self.request):
            return self._refuse(action, None, "incident_not_requested", "the request asks to report no incident")
        if name == "simulate_action" and "plan_id" in args and "actions" not in args:
            plan = self.entry.runtime_data.grid.artifacts.get(str(args["plan_id"]), "plan")
            args |= {"actions": plan.data["actions"], "signature": plan.data["signature"]}
        result: dict[str, Any] = compact(await async_call_tool(self.hass, self.entry, name, args, self.context))
        if asks_person:
            self.outcomes.append(authorization_outcome(result))
        return result

    def _refuse(self, action: Action, target: str | None, reason_key: str, reason: str) -> dict[str, Any]:
        """Refuse ``action``, which the request did not ask for: an outcome, and the Observation's error."""
        self.outcomes.append(refused_action(action.type, target, reason_key, reason))
        return {"error": "not_requested", "reason": reason}
