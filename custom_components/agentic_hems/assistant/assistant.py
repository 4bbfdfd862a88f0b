"""The assistant in HA: ``ask`` runs the security layer, then the ReAct loop with HA-backed tools (issue 4).

:class:`HassTools` carries out the orchestrator's actions on this site: prices from the coordinator, the EV deadline
from a calendar entity, window sums, SCHEDULE through the planner (stored as the ``schedule`` service does; the
scheduler then issues starts through the gates), and EVALUATE_COMMAND through the gates as the user who asked. No
action can confirm a pending command. :class:`Assistant` keeps the rate limits and the run store (the last
``MAX_RUNS`` runs, redacted) and fires ``agentic_hems_run_step`` per iteration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import cache
from importlib import resources
import math
from typing import TYPE_CHECKING, Any
import uuid

import numpy as np

from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import translation
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..bounds import MAX_ASK_CHARS
from ..const import (
    CONF_CALENDAR_ENTITY,
    CONF_CALENDAR_KEYWORD,
    CONF_DAILY_COST_CAP,
    CONF_LLM_API_KEY,
    CONF_LLM_BASE_URL,
    CONF_LLM_MODEL,
    CONF_LLM_PRICE_INPUT,
    CONF_LLM_PRICE_OUTPUT,
    CONF_SHARE_CALENDAR_TITLES,
    DOMAIN,
    EVENT_RUN_FINISHED,
    EVENT_RUN_STEP,
    LOGGER,
    REAUTH_LLM,
    STORAGE_VERSION,
)
from .llm import OpenAIModel, ProviderHealth
from ..gates.redact import redact
from ..orchestrator.actions import (
    CALCULATE_WINDOW_SUMS,
    CALL_AGENT,
    EVALUATE_COMMAND,
    GET_CALENDAR_CONSTRAINT,
    GET_PRICES,
    SCHEDULE,
    Action,
)
from ..gates.models import SOURCE_ORCHESTRATOR, RequestedAction
from ..orchestrator.agents import AGENT_KINDS, consult
from ..orchestrator.intent import CANCEL_ACTION, SCHEDULE_ACTION, advice_targets, asks_for_grid_action
from ..orchestrator.loop import RunResult, Step, Usage, run_loop
from ..orchestrator.outcomes import (
    authorization_outcome, claims_action, command_outcome, fulfilled, plan_outcome, refused_action, refused_command,
    report,
)
from ..orchestrator.texts import language as text_language, rejection, say, window as window_text
from ..orchestrator.parser import Reply
from ..prices.curve import ceil_slot, floor_slot
from ..orchestrator.offline import TOMORROW, ApplianceRef, OfflinePlanner
from ..scheduling import window_sums
from ..security import assess, clearly_out_of_scope, wrap
from ..security.ratelimit import RateLimiter
from ..listeners import ChangeListeners
from ..storage import async_load_store
from ..grid.contracts import ToolError
from ..service_helpers import invalid
from ..planning.services import build_load, find_appliance
from ..grid_ha.services import async_call_tool

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry

MAX_RUNS = 200


@cache
def prompt(name: str) -> str:
    """A markdown prompt from ``prompts/`` (read once, in the executor; they ship with the integration)."""
    return resources.files(__package__).joinpath("prompts", name).read_text(encoding="utf-8")


def _local(moment: datetime) -> str:
    return f"{dt_util.as_local(moment):%a %H:%M}"


def _money(value: float) -> float:
    """Rounded to 4 decimals, without a negative zero."""
    return round(value, 4) + 0.0


def _deadline(text: str, now: datetime) -> datetime:
    """"HH:MM" (the next such local time after ``now``), "tomorrow HH:MM" (that time on the next local day) or an
    ISO 8601 moment; raises ValueError."""
    if text.startswith(TOMORROW):
        local = dt_util.as_local(now)
        at = time.fromisoformat(text.removeprefix(TOMORROW))
        return dt_util.as_utc(datetime.combine(local.date() + timedelta(days=1), at, tzinfo=local.tzinfo))
    try:
        at = time.fromisoformat(text)
    except ValueError:
        moment = datetime.fromisoformat(text)
        return dt_util.as_utc(moment if moment.tzinfo else moment.replace(tzinfo=dt_util.get_default_time_zone()))
    local = dt_util.as_local(now)
    candidate = datetime.combine(local.date(), at, tzinfo=local.tzinfo)
    if candidate <= local:
        candidate = datetime.combine(local.date() + timedelta(days=1), at, tzinfo=local.tzinfo)
    return dt_util.as_utc(candidate)


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
            "now": None if current is None else _money(current),
            "from_local": _local(ahead.start),
            "to_local": _local(ahead.end),
            "slots": int(known.sum()),
            "min": _money(float(np.nanmin(prices))),
            "max": _money(float(np.nanmax(prices))),
            "mean": _money(float(np.nanmean(prices))),
            "cheapest": {"start_local": _local(ahead.slot_start(best)), "price": _money(float(prices[best]))},
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
            found = {"deadline": deadline.isoformat(), "deadline_local": _local(deadline)}
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
            "start_local": _local(curve.slot_start(first + best)),
            "cost_per_kw": round(float(sums[best]) * hours, 4),
            "unit": curve.currency,
        }

    async def _agent(self, action: Action) -> dict[str, Any]:
        """The appliance's specialist agent, checked against the optimal plan (``orchestrator.agents.consult``).

        Bound to the request: refused (an outcome) for an appliance the request does not name; the agent reads the
        person's own request (``request``), never text the model wrote."""
        appliance = find_appliance(self.entry, str(action.args["appliance"]))
        appliances = [ApplianceRef(a.name, a.kind) for a in self.entry.runtime_data.planner.appliances.values()]
        if appliance.name not in advice_targets(self.request, appliances):
            return self._refuse(action, appliance.name, "agent_not_requested",
                                f"the request does not name {appliance.name}")
        if self.agent_model is None:
            return {"error": "specialist agents need a language model; SCHEDULE uses the optimizer directly"}
        if appliance.kind not in AGENT_KINDS:
            return {"error": f"there is no specialist agent for a {appliance.kind}"}
        planner = self.entry.runtime_data.planner
        now = dt_util.utcnow()
        load = planner.load_for(appliance.appliance_id, now)
        if deadline := action.args.get("deadline"):
            load = dataclasses.replace(load, deadline=_deadline(str(deadline), now))
        curve = self._curve()
        (optimum,) = await planner.async_plan_loads(curve, [load], exclude={appliance.appliance_id}, now=now)
        agent_prompt = await self.hass.async_add_executor_job(prompt, f"{appliance.kind}_agent.md")
        model = self.agent_model
        before = self.agent_usage
        counting = _Counting(model, self)
        result = await consult(counting, agent_prompt, self.request, load, curve, optimum, dt_util.get_default_time_zone())
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
        exact = action.args.get("start_at")
        start_text = exact or action.args.get("earliest_start")
        start = _deadline(str(start_text), now) if start_text else None  # the next such time
        loads = {}
        for appliance in appliances:
            data: dict[str, Any] = {"earliest_start": start} if start else {}
            if deadline := action.args.get("deadline"):
                data["deadline"] = _deadline(str(deadline), start or now)
            elif exact and start:  # "at 10 pm": just long enough for the run
                data["deadline"] = ceil_slot(start + appliance.run_time)
            elif start:  # after a time: until the appliance's usual deadline
                data["deadline"] = _deadline(appliance.deadline.isoformat(timespec="minutes"), start)
            loads[appliance.appliance_id] = build_load(self.entry, data, appliance)
        plans = await planner.async_schedule_many(loads)
        observed = []
        for appliance in appliances:
            plan = plans[appliance.appliance_id]
            self.plans[appliance.name] = {**plan.as_dict(), "appliance": appliance.name, "appliance_id": appliance.appliance_id}
            if not plan.feasible or plan.start is None or plan.end is None:
                observed.append(
                    {"appliance": appliance.name, "feasible": False, "reason": str(plan.reason), "detail": plan.detail}
                )
                continue
            observed.append(
                {
                    "appliance": appliance.name,
                    "feasible": True,
                    "start_local": _local(plan.start),
                    "end_local": _local(plan.end),
                    "cost": None if plan.cost is None else _money(plan.cost),
                    "savings": None if plan.savings is None else _money(plan.savings),
                    "currency": plan.currency,
                }
            )
        self.outcomes.extend(plan_outcome(plan) for plan in observed)
        return {"plans": observed}

    def _bound(self, appliances: Sequence[Any], what: str) -> None:
        """Intent binding: refuse (before anything is planned or cleared) a SCHEDULE or cancel of an appliance the
        person's request does not name; each refused appliance is a ``not_planned`` outcome.

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

    async def _evaluate(self, action: Action) -> dict[str, Any]:
        # raw_input is the person's request: InputGuard screens it and the Policy gate binds the command to it
        record = await self.entry.runtime_data.control.async_evaluate(
            source_agent=SOURCE_ORCHESTRATOR, candidate=dict(action.args), context=self.context,
            raw_input=self.request,
        )
        self.gate_results.append({"trace_id": record["trace_id"], "outcome": record["outcome"]})
        self.outcomes.append(command_outcome(action.args, record))
        gates = record.get("gate_results") or []
        return {
            "outcome": record["outcome"],
            "trace_id": record["trace_id"],
            "entity_id": record.get("entity_id"),
            "failed_gate": record.get("failed_gate"),
            "reason": gates[-1]["reason"] if gates else None,
        }

    async def _grid(self, action: Action) -> dict[str, Any]:
        """A grid tool as the user who asked; ``simulate_action`` takes the plan's signed actions by ``plan_id``.

        ``request_authorization`` (a request for an administrator) is bound to the request: refused (an outcome)
        unless it asks for a grid or battery action (``orchestrator.intent.asks_for_grid_action``); a request it
        creates is an outcome too."""
        name = action.type.lower()
        args = dict(action.args)
        asks_person = name == "request_authorization"
        if asks_person and not asks_for_grid_action(self.request):
            return self._refuse(action, None, "grid_not_requested", "the request asks for no grid or battery action")
        if name == "simulate_action" and "plan_id" in args and "actions" not in args:
            plan = self.entry.runtime_data.grid.artifacts.get(str(args["plan_id"]), "plan")
            args |= {"actions": plan.data["actions"], "signature": plan.data["signature"]}
        result: dict[str, Any] = _compact(await async_call_tool(self.hass, self.entry, name, args, self.context))
        if asks_person:
            self.outcomes.append(authorization_outcome(result))
        return result

    def _refuse(self, action: Action, target: str | None, reason_key: str, reason: str) -> dict[str, Any]:
        """Refuse ``action``, which the request did not ask for: an outcome, and the Observation's error."""
        self.outcomes.append(refused_action(action.type, target, reason_key, reason))
        return {"error": "not_requested", "reason": reason}


MAX_LIST_ITEMS = 6


async def async_exception_text(
    hass: HomeAssistant, language: str, key: str, placeholders: dict[str, str] | None = None
) -> str | None:
    """The integration's ``exceptions.<key>`` message in ``language`` (HA falls back to English), filled in; None
    when there is no such string."""
    strings = await translation.async_get_translations(hass, language, "exceptions", [DOMAIN])
    template = strings.get(f"component.{DOMAIN}.exceptions.{key}.message")
    if template is None:
        return None
    try:
        return template.format(**(placeholders or {}))
    except (KeyError, IndexError, ValueError):
        return None


def _compact(value: Any, depth: int = 0) -> Any:
    """A tool result for the model: long lists cut to their first items, provenance reduced to its audit record."""
    if isinstance(value, dict):
        return {k: (v.get("audit_record_id") if k == "provenance" else _compact(v, depth + 1))
                for k, v in value.items() if k not in ("signature", "actions") or depth}
    if isinstance(value, list) and len(value) > MAX_LIST_ITEMS:
        return [_compact(v, depth + 1) for v in value[:MAX_LIST_ITEMS]] + [f"... {len(value) - MAX_LIST_ITEMS} more"]
    if isinstance(value, list):
        return [_compact(v, depth + 1) for v in value]
    return value



class Assistant(ChangeListeners):
    """Rate limits, runs and their store for one site."""

    def __init__(self, hass: HomeAssistant, entry: AgenticHemsConfigEntry, limiter: RateLimiter, options: dict[str, Any]):
        self.hass = hass
        self.entry = entry
        self.limiter = limiter
        self.options = options
        self.runs: list[dict[str, Any]] = []
        self.provider_health = ProviderHealth()  # the site's provider outage, logged once
        self._store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry.entry_id}.runs")

    async def async_load(self) -> None:
        """Restore the stored runs (unreadable data is dropped)."""
        data = await async_load_store(self._store, "stored runs")
        if data is not None and isinstance(data.get("runs"), list):
            self.runs = [r for r in data["runs"] if isinstance(r, dict)][-MAX_RUNS:]

    def _llm(self) -> bool:
        return bool(self.entry.data.get(CONF_LLM_BASE_URL) and self.options.get(CONF_LLM_MODEL))

    def model(self, lang: str = "en") -> OpenAIModel | OfflinePlanner:
        """The configured OpenAI-compatible model, else the offline planner (answering in ``lang``)."""
        if self._llm():
            return OpenAIModel(
                self.hass,
                str(self.entry.data[CONF_LLM_BASE_URL]),
                self.entry.data.get(CONF_LLM_API_KEY),
                str(self.options[CONF_LLM_MODEL]),
                self.provider_health,
            )
        appliances = self.entry.runtime_data.planner.appliances.values()
        return OfflinePlanner(
            [ApplianceRef(a.name, a.kind) for a in appliances], calendar=bool(self.options.get(CONF_CALENDAR_ENTITY)),
            lang=lang,
        )

    def price(self, result: RunResult) -> float:
        """The run's cost from the per-model price table (per million prompt and completion tokens)."""
        per_in, per_out = float(self.options[CONF_LLM_PRICE_INPUT]), float(self.options[CONF_LLM_PRICE_OUTPUT])
        return round((result.prompt_tokens * per_in + result.completion_tokens * per_out) / 1e6, 6)

    def cost_today(self, now: datetime) -> float:
        """What the runs of the last 24 hours cost."""
        since = now - timedelta(days=1)
        return sum(
            float(run.get("total_cost") or 0.0)
            for run in self.runs
            if (at := dt_util.parse_datetime(str(run.get("timestamp")))) is not None and at >= since
        )

    def stats(self, runs: list[dict[str, Any]] | None = None) -> dict[str, float | int | None]:
        """Analytics over the stored runs (or ``runs``, a selection of them): count, success rate (%), mean
        iterations and tokens, total cost."""
        runs = self.runs if runs is None else runs
        if not runs:
            return {"runs": 0, "success_rate": None, "mean_iterations": None, "mean_tokens": None, "total_cost": 0.0}
        return {
            "runs": len(runs),
            "success_rate": round(100 * sum(bool(r.get("success")) for r in runs) / len(runs), 1),
            "mean_iterations": round(sum(int(r.get("iterations") or 0) for r in runs) / len(runs), 2),
            "mean_tokens": round(sum(int(r.get("total_tokens") or 0) for r in runs) / len(runs), 1),
            "total_cost": round(sum(float(r.get("total_cost") or 0.0) for r in runs), 6),
        }

    def _refused(self, flags: tuple[str, ...], reason: str, context: Context) -> None:
        """Record a request refused before any model call (the text itself is not kept)."""
        self._add(
            {
                "run_id": uuid.uuid4().hex,
                "timestamp": dt_util.utcnow().isoformat(),
                "model": None,
                "user_request": None,
                "user_id": context.user_id,
                "success": False,
                "refused": True,
                "flags": list(flags),
                "iterations": 0,
                "total_tokens": 0,
                "total_cost": 0.0,
                "error": reason,
            }
        )

    def _add(self, record: dict[str, Any]) -> None:
        self.runs.append(record)
        del self.runs[:-MAX_RUNS]
        self._store.async_delay_save(lambda: {"runs": self.runs}, 1.0)
        self.async_notify_listeners()

    async def async_flush(self) -> None:
        """Write the runs now (unload)."""
        await self._store.async_save({"runs": self.runs})

    async def async_ask(self, text: str, context: Context, language: str | None = None) -> dict[str, Any]:
        """One request: security layer, rate limits, then the loop. Returns the service response.

        ``language`` (Assist's; HA's configured language when None) chooses the language of the summary, English
        or German: outcome sentences, the offline planner's answer, the out-of-scope refusal and why a run stopped
        (a provider failure, the time budget, the iteration limit), and of the rejection's reason and the rate
        limit's window in the errors; the run record keeps the English reason in ``error``.

        Raises:
            ServiceValidationError: the request is longer than ``MAX_ASK_CHARS`` (``input_too_large_chars``,
                checked before anything reads it), it was rejected (``request_rejected``), a rate limit is reached
                (``rate_limited``) or today's model cost reached the cap (``cost_cap_reached``); nothing ran.
        """
        if len(text) > MAX_ASK_CHARS:
            self._refused(("too_large",), f"longer than {MAX_ASK_CHARS} characters", context)
            raise invalid("input_too_large_chars", maximum=str(MAX_ASK_CHARS), path="text")
        lang = text_language(language or self.hass.config.language)
        assessment = assess(text)
        if not assessment.accepted:
            self._refused(assessment.flags, assessment.reason, context)
            raise invalid("request_rejected", reason=rejection(assessment, lang))
        if (window := self.limiter.check(context.user_id, dt_util.utcnow())) is not None:
            self._refused(("rate_limited",), f"limit per {window}", context)
            raise invalid("rate_limited", window=window_text(window, lang))
        if not assessment.in_scope:
            LOGGER.info("A request without home-energy keywords; the planner decides (seed 000 scope check)")
        started = dt_util.utcnow()
        if (spent := self.cost_today(started)) >= float(self.options[CONF_DAILY_COST_CAP]) > 0 and self._llm():
            raise invalid("cost_cap_reached", cost=f"{spent:.4f}")
        model = self.model(lang)
        out_of_scope = clearly_out_of_scope(assessment.sanitized)
        control = self.entry.runtime_data.control
        tools = HassTools(
            self.hass,
            self.entry,
            context,
            calendar_entity=self.options.get(CONF_CALENDAR_ENTITY) or None,
            calendar_keyword=str(self.options.get(CONF_CALENDAR_KEYWORD) or "car"),
            share_calendar_titles=bool(self.options.get(CONF_SHARE_CALENDAR_TITLES, False)),
            agent_model=model if isinstance(model, OpenAIModel) else None,
            request=assessment.sanitized,
            # an out-of-scope request is answered with the refusal alone: it asks for nothing here
            requested=frozenset() if out_of_scope else control.read_request(assessment.sanitized),
        )
        run_id = uuid.uuid4().hex
        if out_of_scope:  # the seed's rejection, before any model call
            result = RunResult(run_id, model.name, True, say("out_of_scope", lang), [])
        else:
            system = await self.hass.async_add_executor_job(prompt, "hems_orchestrator.md")

            def _step(step: Step) -> None:
                self.hass.bus.async_fire(
                    EVENT_RUN_STEP,
                    {
                        "config_entry_id": self.entry.entry_id,
                        "run_id": run_id,
                        "iteration": step.iteration,
                        "action": (step.action or {}).get("type"),
                        "status": step.status,
                    },
                    context=context,
                )

            result = await run_loop(
                wrap(assessment.sanitized),
                model,
                tools,
                system_prompt=system,
                on_step=_step,
                run_id=run_id,
                usage=model.usage if isinstance(model, OpenAIModel) else None,
            )
            result.prompt_tokens += tools.agent_usage.prompt_tokens
            result.completion_tokens += tools.agent_usage.completion_tokens
            if result.auth_failed:
                self.entry.async_start_reauth(self.hass, data={REAUTH_LLM: True})
        tools.outcomes.extend(  # commands that never reached the gates (invalid) are outcomes too
            refused_command(s.action, str(s.observation.get("error")))
            for s in result.steps if not s.executed and (s.action or {}).get("type") == EVALUATE_COMMAND)
        llm = isinstance(model, OpenAIModel)
        made_up = llm and result.success and not tools.outcomes and claims_action(result.summary)
        success = (result.success and all(p.get("feasible", True) for p in tools.plans.values())
                   and fulfilled(tools.outcomes, asked=bool(tools.requested)) and not made_up)
        model_summary = result.summary
        result.summary = await self._summary(result, tools, llm, lang)
        record = self._record(result, assessment.sanitized, context, started, tools)
        record |= {"success": success, "outcomes": redact(tools.outcomes), "model_summary": redact(model_summary)}
        self._add(record)
        self.hass.bus.async_fire(
            EVENT_RUN_FINISHED,
            {"config_entry_id": self.entry.entry_id, "run_id": result.run_id, "success": success,
             "summary": result.summary},
            context=context,
        )
        return {
            "run_id": result.run_id,
            "success": success,
            "summary": result.summary,
            "outcomes": tools.outcomes,
            "plans": list(tools.plans.values()),
            "actions": [s.action for s in result.steps if s.executed],
            "iterations": result.iterations,
            "tokens": result.tokens,
            "model": result.model,
            "error": result.error,
        }

    async def _summary(self, result: RunResult, tools: HassTools, llm: bool, lang: str) -> str:
        """What ``ask`` returns and Assist speaks, in ``lang``. Outcomes, not claims: the outcome report (and why the
        run stopped) after a run that stopped (a provider failure, the budget, the iteration limit) and after a
        model's run that did anything, or did nothing although the request asked for something or its closing text
        claims an action ("Nothing was done."). Else the run's own summary: a model's answer to a question, or the
        offline planner's (built from the observations)."""
        stopped = None
        if result.error_key is not None:  # a provider failure: the integration's translated message
            stopped = await async_exception_text(self.hass, lang, result.error_key)
        elif result.stop_key is not None:
            stopped = say(result.stop_key, lang, **result.stop_args)
        claim = result.success and (bool(tools.requested) or claims_action(result.summary))
        if (llm and (tools.outcomes or claim)) or stopped is not None:
            return report(tools.outcomes, lang, stopped)
        return result.summary

    def _record(
        self, result: RunResult, request: str, context: Context, started: datetime, tools: HassTools
    ) -> dict[str, Any]:
        data = self.entry.runtime_data.coordinator.data
        snapshot = None if data is None else {"source": data.total.source, "start": data.total.start.isoformat(), "slots": len(data.total)}
        record: dict[str, Any] = redact(
            {
                "run_id": result.run_id,
                "timestamp": started.isoformat(),
                "model": result.model,
                "user_request": request,
                "user_id": context.user_id,
                "success": result.success,
                "iterations": result.iterations,
                "round_trips": result.round_trips,
                "duration_s": result.duration_s,
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "total_tokens": result.tokens,
                "total_cost": self.price(result),
                "prices_snapshot": snapshot,
                "calendar_constraint": tools.calendar_constraint,
                "agent_results": tools.agent_results,
                "executed_schedules": [
                    {k: v for k, v in plan.items() if k != "power_kw"} for plan in tools.plans.values()
                ],
                "gate_decisions": tools.gate_results,
                "actions_taken": [s.as_dict() for s in result.steps],
                "final_summary": result.summary,
                "error": result.error,
            }
        )
        return record
