"""The tools of the "Agentic HEMS" LLM API (:mod:`.llm_api`), each on the services the assistant and the actions use.

Reading tools: ``get_energy_prices`` (the assistant's price summary), ``find_cheapest_windows`` (the cheapest
non-overlapping starts for a run of a given length), ``plan_load`` (the ``plan`` action's trial plan of an appliance
or an ad-hoc load; nothing is stored) and ``explain_plan`` (the appliances' stored plans and why they look so).
Acting tools, bound to the person's request (:mod:`.llm_base`): ``schedule_appliance`` and ``cancel_appliance_plan``
(the assistant's SCHEDULE) and ``propose_device_command`` (the assistant's EVALUATE_COMMAND, through the gates).
Without a person's request (an MCP client) they act only once a person confirms: a schedule or cancel becomes a
pending plan change (:mod:`..control.plan_changes`, stored by :func:`apply_plan_change` when confirmed) and a device
command goes through the gates with ``confirm_only`` (it waits for an administrator whatever the policy allows).
Times are local; the model writes them as "HH:MM", "tomorrow HH:MM" or ISO 8601 (:func:`.tool_values.parse_deadline`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.core import Context, HomeAssistant
from homeassistant.util import dt as dt_util

from ..const import CONF_DEADLINE, CONF_DURATION_MIN, CONF_EARLIEST_START, CONF_ENERGY_KWH, CONF_POWER_KW
from ..gates.models import RequestedAction
from ..gates.tables import DOMAINS, INTENTS
from ..orchestrator.actions import EVALUATE_COMMAND, GET_PRICES, SCHEDULE, Action, validate
from ..orchestrator.intent import CANCEL_ACTION, SCHEDULE_ACTION
from ..planning.services import build_load, find_appliance
from ..scheduling import Plan, window_sums
from ..service_helpers import invalid
from ..validation import vol
from .llm_base import PENDING, SOURCE_NO_REQUEST, EnergyTool, pending_result
from .llm_home import GetHomePlan
from .tool_values import money, parse_deadline
from .tools import HassTools

if TYPE_CHECKING:
    from ..planning.manager import PlanManager
    from ..prices.curve import PriceCurve
    from ..runtime import AgenticHemsConfigEntry
    from ..scheduling.appliance import Appliance

MAX_WINDOWS = 5
TIMES = 'Times are local: "HH:MM" (the next such time), "tomorrow HH:MM" or ISO 8601.'
_NAME = vol.All(str, vol.Length(min=1, max=200))
_TIME = vol.All(str, vol.Length(min=1, max=40))


def local_iso(moment: datetime) -> str:
    """Return ``moment`` as local ISO 8601 to the minute, e.g. ``"2026-11-30T02:15+01:00"``."""
    return dt_util.as_local(moment).isoformat(timespec="minutes")


def plan_view(plan: Plan) -> dict[str, Any]:
    """Return what a model needs of ``plan``: feasible, reason and detail, and when it is feasible more.

    That is its local start and end, energy (kWh), cost, baseline cost (starting at the earliest moment) and savings,
    in ``currency``.
    """
    view: dict[str, Any] = {"feasible": plan.feasible, "reason": str(plan.reason), "detail": plan.detail}
    if not plan.feasible or plan.start is None or plan.end is None:
        return view
    return view | {
        "start": local_iso(plan.start),
        "end": local_iso(plan.end),
        "energy_kwh": round(plan.energy_kwh, 3),
        "cost": None if plan.cost is None else money(plan.cost),
        "baseline_cost": None if plan.baseline_cost is None else money(plan.baseline_cost),
        "savings": None if plan.savings is None else money(plan.savings),
        "currency": plan.currency,
    }


def cheapest_windows(curve: PriceCurve, now: datetime, duration_min: float, count: int) -> list[dict[str, Any]]:
    """Return up to ``count`` cheapest runs of ``duration_min`` (rounded up to whole slots), best first.

    They start at the slots after ``now``'s, never overlap and hold only known prices. Each is ``{start, end}`` (local
    ISO 8601), ``mean_price`` (per kWh) and ``cost_per_kw`` (what 1 kW over the run costs), in the curve's currency.
    """
    first = max(curve.index_of(now) + 1, 0)
    width = math.ceil(duration_min / (curve.resolution.total_seconds() / 60))
    sums = window_sums(curve.prices[first:], width) if first < len(curve) else np.empty(0)
    found: list[dict[str, Any]] = []
    while len(found) < count and not np.isnan(sums).all():
        best = int(np.nanargmin(sums))
        start = curve.slot_start(first + best)
        found.append(
            {
                "start": local_iso(start),
                "end": local_iso(start + curve.resolution * width),
                "mean_price": money(float(sums[best]) / width),
                "cost_per_kw": money(float(sums[best]) * curve.resolution.total_seconds() / 3600),
            }
        )
        sums[max(best - width + 1, 0) : best + width] = np.nan  # every window overlapping this one
    return found


def explain(planner: PlanManager, appliance: Appliance, now: datetime) -> dict[str, Any]:
    """Return ``appliance``'s plan (:func:`plan_view`, None without one) and settings.

    The settings: planned automatically, stored by a person (``scheduled_by_person``: automatic planning leaves such
    a plan alone), ready by (local time ``HH:MM``), and whether it runs now.
    """
    state = planner.states.get(appliance.appliance_id)
    plan = state.plan if state else None
    return {
        "appliance": appliance.name,
        "kind": appliance.kind,
        "automatic": state.auto if state else True,
        "scheduled_by_person": state.pinned if state else False,
        "ready_by": planner.deadline_for(appliance.appliance_id).isoformat(timespec="minutes"),
        "running": plan is not None and plan.is_running(now),
        "plan": None if plan is None else plan_view(plan),
    }


async def observe(tools: HassTools, action: Action) -> dict[str, Any]:
    """Run ``action`` with the assistant's tools; return its Observation without the action's type.

    Raises:
        vol.Invalid: the action's arguments are not valid.

    """
    data = await tools.run(validate(action))
    return {key: value for key, value in data.items() if (key, value) != ("action", action.type)}


class GetPrices(EnergyTool):
    """The price summary from the current slot on."""

    name = "get_energy_prices"
    description = (
        "Electricity price summary from now on (per kWh): the price now, min, mean, max, the number of known "
        "15-minute slots and the cheapest slot."
    )
    parameters = vol.Schema({})

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Return the assistant's GET_PRICES Observation."""
        return await observe(tools, Action(GET_PRICES))


class FindCheapestWindows(EnergyTool):
    """The cheapest non-overlapping runs of a given length."""

    name = "find_cheapest_windows"
    description = (
        "The cheapest times to run something for duration_min minutes, best first and not overlapping: start, end, "
        "mean price per kWh and the cost of 1 kW over the run."
    )
    parameters = vol.Schema(
        {
            vol.Required("duration_min", description="run length in minutes"): vol.All(
                vol.Coerce(float), vol.Range(min=15, max=2880)
            ),
            vol.Optional("count", default=3, description="how many windows"): vol.All(
                vol.Coerce(int), vol.Range(min=1, max=MAX_WINDOWS)
            ),
        }
    )

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Return ``{windows, currency}``; ``windows`` is empty when no run of that length has known prices."""
        if (data := self.entry.runtime_data.coordinator.data) is None:
            raise invalid("no_prices")
        windows = cheapest_windows(data.total, dt_util.utcnow(), float(args["duration_min"]), int(args["count"]))
        return {"windows": windows, "currency": data.total.currency}


class PlanLoad(EnergyTool):
    """A trial plan of an appliance or an ad-hoc load, as the ``plan`` action makes it; nothing is stored."""

    name = "plan_load"
    description = (
        "Plan, without storing anything, the cheapest run of an appliance (its usual window unless given), or of an "
        "ad-hoc load with power_kw, duration_min (one uninterrupted run) or energy_kwh (may be split) and a deadline, "
        "under the household power limit and around the stored plans. " + TIMES
    )
    parameters = vol.Schema(
        {
            vol.Optional("appliance", description="an appliance's name; leave out for an ad-hoc load"): _NAME,
            vol.Optional(CONF_POWER_KW): vol.All(vol.Coerce(float), vol.Range(min=0.01, max=1000)),
            vol.Exclusive(CONF_DURATION_MIN, "amount"): vol.All(vol.Coerce(float), vol.Range(min=1, max=10080)),
            vol.Exclusive(CONF_ENERGY_KWH, "amount"): vol.All(vol.Coerce(float), vol.Range(min=0.001, max=10000)),
            vol.Optional(CONF_EARLIEST_START): _TIME,
            vol.Optional(CONF_DEADLINE): _TIME,
        }
    )

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Return ``{appliance, **plan_view}`` (appliance None for an ad-hoc load).

        Raises:
            ServiceValidationError: no prices, an unknown appliance, or a load the ``plan`` action refuses.
            ValueError: a time it cannot read.

        """
        entry = self.entry
        if (prices := entry.runtime_data.coordinator.data) is None:
            raise invalid("no_prices")
        appliance = find_appliance(entry, args["appliance"]) if "appliance" in args else None
        now = dt_util.utcnow()
        amounts = (CONF_POWER_KW, CONF_DURATION_MIN, CONF_ENERGY_KWH)
        data: dict[str, Any] = {key: args[key] for key in amounts if key in args}
        start = parse_deadline(args[CONF_EARLIEST_START], now) if CONF_EARLIEST_START in args else None
        if start is not None:
            data[CONF_EARLIEST_START] = start
        if CONF_DEADLINE in args:
            data[CONF_DEADLINE] = parse_deadline(args[CONF_DEADLINE], start or now)
        load = build_load(entry, data, appliance)
        exclude = {appliance.appliance_id} if appliance else set()
        (plan,) = await entry.runtime_data.planner.async_plan_loads(prices.total, [load], exclude=exclude, now=now)
        return {"appliance": appliance.name if appliance else None, **plan_view(plan)}


class ExplainPlan(EnergyTool):
    """The appliances' stored plans and why they look as they do."""

    name = "explain_plan"
    description = (
        "Each appliance's current plan (or one appliance's) and why: start, end, cost, baseline_cost (starting at the "
        "earliest moment) and savings, reason (optimal; partial_prices: planned on the known prices; doubtful_prices; "
        "window_too_short; no_prices; power_limit: the household limit leaves no room), whether it plans "
        "automatically, whether a person scheduled it, its ready-by time and whether it runs now."
    )
    parameters = vol.Schema({vol.Optional("appliance", description="leave out for every appliance"): _NAME})

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Return ``{appliances: [explain(...), ...]}``; raises ServiceValidationError for an unknown appliance."""
        planner = self.entry.runtime_data.planner
        if "appliance" in args:
            chosen = [find_appliance(self.entry, args["appliance"])]
        else:
            chosen = list(planner.appliances.values())
        now = dt_util.utcnow()
        return {"appliances": [explain(planner, appliance, now) for appliance in chosen]}


def hold_plan_change(tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
    """Hold a schedule or cancel (``args``, ``cancel`` True for a cancel) for a person's confirmation.

    The appliances and times are checked first; returns :func:`.llm_base.pending_result`.

    Raises:
        ServiceValidationError: an unknown appliance, or too many pending items (``pending_limit_*``).
        ValueError: a time it cannot read.

    """
    appliances = [find_appliance(tools.entry, name.strip()) for name in str(args["appliance"]).split(",")]
    now = dt_util.utcnow()
    for key in ("deadline", "earliest_start", "start_at"):
        if key in args:
            parse_deadline(str(args[key]), now)
    entity_id = appliances[0].entity_id if len(appliances) == 1 else None
    record = tools.entry.runtime_data.control.hold_plan_change(
        args, tools.context, source_agent=SOURCE_NO_REQUEST, entity_id=entity_id
    )
    return pending_result(record)


async def apply_plan_change(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, args: Mapping[str, Any], context: Context
) -> dict[str, Any]:
    """Store or clear a confirmed plan change (``args``) as the administrator who confirmed it (``context``).

    The confirmation is the person's request: it asks for exactly the appliances and the action held. Returns the
    SCHEDULE Observation: ``{plans: [...]}``, or ``{"error": ...}``.

    Raises:
        ServiceValidationError: an appliance is no longer known.

    """
    what = CANCEL_ACTION if args.get("cancel") else SCHEDULE_ACTION
    names = [find_appliance(entry, name.strip()).name for name in str(args["appliance"]).split(",")]
    tools = HassTools(hass, entry, context, requested=frozenset(RequestedAction(name, what) for name in names))
    return await observe(tools, Action(SCHEDULE, dict(args)))


class ScheduleAppliance(EnergyTool):
    """Plan and store appliances' runs: the assistant's SCHEDULE, bound to the person's request."""

    name = "schedule_appliance"
    acts = True
    description = (
        "Plan and store the cheapest run of the appliances the person asked to schedule (several: comma-separated, "
        "planned together under the household power limit); the scheduler later starts them through the safety "
        "gates. Optional: deadline, earliest_start, or start_at for an exact start. " + TIMES
    )
    parameters = vol.Schema(
        {
            vol.Required("appliance", description="appliance names, comma-separated"): _NAME,
            vol.Optional("deadline"): _TIME,
            vol.Optional("earliest_start"): _TIME,
            vol.Optional("start_at"): _TIME,
        }
    )

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Return the SCHEDULE Observation: ``{plans: [...]}``, or ``not_requested`` for an appliance not asked for."""
        return await observe(tools, Action(SCHEDULE, args))

    async def async_hold(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Hold the schedule for a person's confirmation (:func:`hold_plan_change`)."""
        return hold_plan_change(tools, args)


class CancelPlan(EnergyTool):
    """Clear appliances' plans: the assistant's SCHEDULE with cancel, bound to the person's request."""

    name = "cancel_appliance_plan"
    acts = True
    description = "Clear the plan of the appliances the person asked to cancel (several: comma-separated)."
    parameters = vol.Schema({vol.Required("appliance", description="appliance names, comma-separated"): _NAME})

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Return the SCHEDULE Observation: ``{plans: [{appliance, cancelled}]}``, or ``not_requested``."""
        return await observe(tools, Action(SCHEDULE, {**args, "cancel": True}))

    async def async_hold(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Hold the cancel for a person's confirmation (:func:`hold_plan_change`)."""
        return hold_plan_change(tools, {**args, "cancel": True})


class ProposeCommand(EnergyTool):
    """A device command through the gates: the assistant's EVALUATE_COMMAND, bound to the person's request."""

    name = "propose_device_command"
    acts = True
    description = (
        "Propose a device command the person asked for. It passes safety gates (the device must resolve and be "
        "exposed, its state fresh, the policy must allow the action, and the person's request must ask for this "
        "action on this device) and is executed, waits for an administrator's confirmation, or is blocked: the "
        "result gives the outcome, the failed gate and its reason."
    )
    parameters = vol.Schema(
        {
            vol.Required("intent"): vol.In(sorted(INTENTS)),
            vol.Optional("device_alias", description="the device's name"): _NAME,
            vol.Optional("room"): _NAME,
            vol.Optional("device_type"): vol.In(sorted(DOMAINS)),
            vol.Optional(
                "params",
                description="brightness (0-100) for set_brightness, temperature, hvac_mode, value for set_value",
            ): dict,
        }
    )

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Return the EVALUATE_COMMAND Observation: ``{outcome, trace_id, entity_id, failed_gate, reason}``."""
        return await observe(tools, Action(EVALUATE_COMMAND, args))

    async def async_hold(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Run the command through the gates with ``confirm_only``.

        Returns :func:`.llm_base.pending_result` when it waits for an administrator, else the gates' decision
        ``{outcome, trace_id, entity_id, failed_gate, reason}`` (a denied command is denied, not pending).
        """
        record = await self.entry.runtime_data.control.async_evaluate(
            source_agent=SOURCE_NO_REQUEST,
            candidate=validate(Action(EVALUATE_COMMAND, args)).args,
            context=tools.context,
            confirm_only=True,
        )
        if record["outcome"] == PENDING:
            return pending_result(record)
        gates = record.get("gate_results") or []
        return {
            "outcome": record["outcome"],
            "trace_id": record["trace_id"],
            "entity_id": record.get("entity_id"),
            "failed_gate": record.get("failed_gate"),
            "reason": gates[-1]["reason"] if gates else None,
        }


TOOLS: tuple[type[EnergyTool], ...] = (
    GetPrices,
    FindCheapestWindows,
    PlanLoad,
    ExplainPlan,
    GetHomePlan,
    ScheduleAppliance,
    CancelPlan,
    ProposeCommand,
)
