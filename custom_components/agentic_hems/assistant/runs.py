"""The assistant's run records: what a run did, redacted, what ``ask`` answers, and analytics over stored runs.

The run store keeps the last :data:`MAX_RUNS` records; a request refused before any model call is recorded without
its text.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any
import uuid

from homeassistant.util import dt as dt_util

from ..gates.redact import redact
from ..orchestrator.loop import RunResult

if TYPE_CHECKING:
    from ..prices.curve import PriceCurve
    from .tools import HassTools

MAX_RUNS = 200


def refused_record(flags: tuple[str, ...], reason: str, user_id: str | None) -> dict[str, Any]:
    """Return the record of a request refused before any model call (the text itself is not kept)."""
    return {
        "run_id": uuid.uuid4().hex,
        "timestamp": dt_util.utcnow().isoformat(),
        "model": None,
        "user_request": None,
        "user_id": user_id,
        "success": False,
        "refused": True,
        "flags": list(flags),
        "iterations": 0,
        "total_tokens": 0,
        "total_cost": 0.0,
        "error": reason,
    }


def run_record(
    result: RunResult, tools: HassTools, *, request: str, started: datetime, cost: float, curve: PriceCurve | None
) -> dict[str, Any]:
    """Return the redacted record of one run.

    ``request`` is the sanitized request, ``started`` when the run began, ``cost`` what its model calls cost and
    ``curve`` the prices it saw (recorded as source, start and slot count; None when there were none).
    """
    snapshot = (
        None if curve is None else {"source": curve.source, "start": curve.start.isoformat(), "slots": len(curve)}
    )
    record: dict[str, Any] = redact(
        {
            "run_id": result.run_id,
            "timestamp": started.isoformat(),
            "model": result.model,
            "user_request": request,
            "user_id": tools.context.user_id,
            "success": result.success,
            "iterations": result.iterations,
            "round_trips": result.round_trips,
            "duration_s": result.duration_s,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "total_tokens": result.tokens,
            "total_cost": cost,
            "prices_snapshot": snapshot,
            "calendar_constraint": tools.calendar_constraint,
            "agent_results": tools.agent_results,
            "executed_schedules": [{k: v for k, v in plan.items() if k != "power_kw"} for plan in tools.plans.values()],
            "gate_decisions": tools.gate_results,
            "actions_taken": [s.as_dict() for s in result.steps],
            "final_summary": result.summary,
            "error": result.error,
        }
    )
    return record


def ask_response(result: RunResult, tools: HassTools, *, success: bool) -> dict[str, Any]:
    """Return what the ``ask`` service answers for a finished run."""
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


def cost_since(runs: list[dict[str, Any]], since: datetime) -> float:
    """Return what the runs from ``since`` on cost (in the currency of the model's price table)."""
    return sum(
        float(run.get("total_cost") or 0.0)
        for run in runs
        if (at := dt_util.parse_datetime(str(run.get("timestamp")))) is not None and at >= since
    )


def run_stats(runs: list[dict[str, Any]]) -> dict[str, float | int | None]:
    """Return analytics over ``runs``.

    The count, the success rate (%), mean iterations and tokens (None without runs) and the total cost.
    """
    if not runs:
        return {"runs": 0, "success_rate": None, "mean_iterations": None, "mean_tokens": None, "total_cost": 0.0}
    return {
        "runs": len(runs),
        "success_rate": round(100 * sum(bool(r.get("success")) for r in runs) / len(runs), 1),
        "mean_iterations": round(sum(int(r.get("iterations") or 0) for r in runs) / len(runs), 2),
        "mean_tokens": round(sum(int(r.get("total_tokens") or 0) for r in runs) / len(runs), 1),
        "total_cost": round(sum(float(r.get("total_cost") or 0.0) for r in runs), 6),
    }
