"""Values as the assistant's tools read them from the model and show them in Observations.

The model writes a time as "HH:MM", "tomorrow HH:MM" or ISO 8601 (:func:`parse_deadline`); Observations show local
times as weekday and clock (:func:`local_text`), money rounded to 4 decimals (:func:`money`), a plan as SCHEDULE
observes it (:func:`observed`, :func:`run_window`) and grid tool results cut to what the model needs (:func:`compact`).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from homeassistant.util import dt as dt_util

from ..orchestrator.offline import TOMORROW
from ..scheduling.plan import Plan

MAX_LIST_ITEMS = 6


def local_text(moment: datetime) -> str:
    """Return ``moment`` in local time as weekday and clock, e.g. ``"Mon 22:00"``."""
    return f"{dt_util.as_local(moment):%a %H:%M}"


def run_window(plan: Plan) -> dict[str, str | None]:
    """Return the local start and end of ``plan`` as the tools write them ("Mon 03:15"); None where it has none."""
    return {
        "start_local": None if plan.start is None else local_text(plan.start),
        "end_local": None if plan.end is None else local_text(plan.end),
    }


def money(value: float) -> float:
    """Return ``value`` rounded to 4 decimals, without a negative zero."""
    return round(value, 4) + 0.0


def parse_deadline(text: str, now: datetime) -> datetime:
    """Return the UTC moment ``text`` names.

    ``text`` is "HH:MM" (the next such local time after ``now``), "tomorrow HH:MM" (that time on the next local day)
    or an ISO 8601 moment (local time when it has no offset).

    Raises:
        ValueError: ``text`` is none of these.

    """
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


def compact(value: Any, depth: int = 0) -> Any:
    """Return a tool result for the model: long lists cut to their first items, provenance reduced to its audit record.

    Signatures and signed actions at the top level are left out (the plan is referred to by its ``plan_id``).
    """
    if isinstance(value, dict):
        return {
            k: (v.get("audit_record_id") if k == "provenance" else compact(v, depth + 1))
            for k, v in value.items()
            if k not in {"signature", "actions"} or depth
        }
    if isinstance(value, list) and len(value) > MAX_LIST_ITEMS:
        return [compact(v, depth + 1) for v in value[:MAX_LIST_ITEMS]] + [f"... {len(value) - MAX_LIST_ITEMS} more"]
    if isinstance(value, list):
        return [compact(v, depth + 1) for v in value]
    return value


def observed(name: str, plan: Plan) -> dict[str, Any]:
    """Return appliance ``name``'s ``plan`` as SCHEDULE observes it: feasible, local start and end, cost, savings."""
    if not plan.feasible or plan.start is None or plan.end is None:
        return {"appliance": name, "feasible": False, "reason": str(plan.reason), "detail": plan.detail}
    return {
        "appliance": name,
        "feasible": True,
        "start_local": local_text(plan.start),
        "end_local": local_text(plan.end),
        "cost": None if plan.cost is None else money(plan.cost),
        "savings": None if plan.savings is None else money(plan.savings),
        "currency": plan.currency,
        "reason": str(plan.reason),
        "detail": plan.detail,
    }
