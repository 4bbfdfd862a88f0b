"""Specialist agents: a markdown prompt, a structured recommendation, and a check against the optimum.

The agent (a model with ``prompts/<kind>_agent.md``) answers ``{"slot": "HH:MM", "duration_min", "cost",
"reasoning"}``. The recommendation's real cost is computed from the prices, never taken from the agent. If it is
more than 20 % worse than the optimal plan, the agent gets one retry with the optimum's figures; after that the
optimum is used and the discrepancy recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo
import json
import math
from typing import Any

import numpy as np

from ..prices import PriceCurve
from ..prices.curve import ceil_slot
from ..scheduling import LoadSpec, Plan
from .loop import Model
from .parser import MAX_REPLY_CHARS, ParseError, bounded_reply, json_objects

TOLERANCE = 0.20
AGENT_KINDS = ("dishwasher", "washing_machine", "ev_charger", "heat_pump")


@dataclass(frozen=True)
class Recommendation:
    """What an agent proposed: the local start ``slot`` ("HH:MM"), its ``duration_min``, ``cost`` and ``reasoning``."""

    slot: str
    duration_min: float | None
    cost: float | None
    reasoning: str

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"slot": self.slot, "duration_min": self.duration_min, "cost": self.cost, "reasoning": self.reasoning}


def parse_recommendation(text: str | None) -> Recommendation:
    """Return the first JSON object with a ``slot`` in ``text``.

    Raises:
        ParseError: none, ``slot`` is not "HH:MM", or ``text`` is longer than ``MAX_REPLY_CHARS`` (refused
            before any parsing).

    """
    if len(text or "") > MAX_REPLY_CHARS:
        raise ParseError(f"the reply is longer than {MAX_REPLY_CHARS} characters")
    for obj in json_objects(text or ""):
        if "slot" in obj:
            slot = str(obj["slot"]).strip()
            try:
                time.fromisoformat(slot)
            except ValueError:
                raise ParseError(f"slot {slot!r} is not HH:MM") from None
            duration = obj.get("duration_min")
            cost = obj.get("cost")
            return Recommendation(
                slot[:5],
                float(duration) if isinstance(duration, int | float) else None,
                float(cost) if isinstance(cost, int | float) else None,
                str(obj.get("reasoning", ""))[:500],
            )
    raise ParseError("no recommendation: answer with a JSON object with slot, duration_min, cost and reasoning")


def start_for(slot: str, load: LoadSpec, tz: tzinfo) -> datetime | None:
    """Return the first local ``slot`` time at or after the load's first slot boundary and before its deadline (UTC)."""
    at = time.fromisoformat(slot)
    first = ceil_slot(load.earliest_start)
    local = first.astimezone(tz)
    for days in range(3):
        candidate = datetime.combine(local.date() + timedelta(days=days), at, tzinfo=tz)
        if first <= candidate < load.deadline:
            return candidate.astimezone(load.earliest_start.tzinfo)
    return None


def run_cost(curve: PriceCurve, load: LoadSpec, start: datetime) -> float | None:
    """Return what running ``load`` from ``start`` costs, or None when it does not fit or a price is unknown.

    The run is a contiguous run of its duration, or charging at full power until its energy is delivered; it must
    end before the deadline.
    """
    step_h = curve.resolution.total_seconds() / 3600
    first = curve.index_of(start)
    if load.contiguous:
        slots = math.ceil((load.duration_min or 0) / (step_h * 60))
        energy = [load.power_kw * step_h] * slots
    else:
        full, rest = divmod(load.energy_kwh or 0.0, load.power_kw * step_h)
        energy = [load.power_kw * step_h] * int(full) + ([rest] if rest > 1e-9 else [])
    last = first + len(energy)
    if first < 0 or last > len(curve) or curve.slot_start(last - 1) + curve.resolution > load.deadline:
        return None
    prices = curve.prices[first:last]
    if np.isnan(prices).any():
        return None
    return float(np.dot(prices, energy))


def acceptable(cost: float, optimum: float) -> bool:
    """At most 20 % worse than the optimum (measured on its magnitude, so negative prices work too)."""
    return cost - optimum <= TOLERANCE * abs(optimum) + 1e-9


def agent_messages(prompt: str, request: str, load: LoadSpec, curve: PriceCurve, tz: tzinfo) -> list[dict[str, Any]]:
    """Return the agent's conversation: its prompt, then the load, the window's prices and the request."""
    window = curve.window(ceil_slot(load.earliest_start), load.deadline)
    prices = [
        [f"{s.astimezone(tz):%H:%M}", round(float(p), 4)]
        for s, p in zip(window.slot_starts(), window.prices, strict=True)
    ]
    facts = {
        "power_kw": load.power_kw,
        "duration_min": load.duration_min,
        "energy_kwh": load.energy_kwh,
        "window": [f"{load.earliest_start.astimezone(tz):%a %H:%M}", f"{load.deadline.astimezone(tz):%a %H:%M}"],
        "prices_per_kwh": prices,
    }
    return [
        {"role": "system", "content": prompt},
        {"role": "user", "content": f"{request}\n{json.dumps(facts, separators=(',', ':'))}"},
    ]


async def consult(
    model: Model, prompt: str, request: str, load: LoadSpec, *, curve: PriceCurve, optimum: Plan, tz: tzinfo
) -> dict[str, Any]:
    """Ask the agent, check its recommendation against ``optimum``, retry once, fall back to the optimum.

    Returns the Observation: ``recommendation``, ``recommended_cost`` (computed), ``optimal`` (start and cost),
    ``retried``, ``used`` ("agent" or "optimum") and ``discrepancy`` (how much worse, when the optimum was used).
    """
    if not optimum.feasible or optimum.cost is None or optimum.start is None:
        return {"error": f"no optimal plan to check against ({optimum.reason})"}
    messages = agent_messages(prompt, request, load, curve, tz)
    optimal = {"start_local": f"{optimum.start.astimezone(tz):%a %H:%M}", "cost": round(optimum.cost, 4)}
    result: dict[str, Any] = {"optimal": optimal, "retried": False}
    for attempt in (1, 2):
        reply = bounded_reply(await model.complete(messages))
        try:
            recommendation = parse_recommendation(reply.content)
            start = start_for(recommendation.slot, load, tz)
            cost = run_cost(curve, load, start) if start is not None else None
        except ParseError as err:
            recommendation, cost, problem = None, None, str(err)
        else:
            problem = "the slot does not fit the window" if cost is None else ""
        if recommendation is not None:
            result |= {
                "recommendation": recommendation.as_dict(),
                "recommended_cost": None if cost is None else round(cost, 4),
            }
        if cost is not None and acceptable(cost, optimum.cost):
            return result | {"used": "agent"}
        if attempt == 1:
            result["retried"] = True
            why = problem or f"it costs {cost:.4f}, more than 20 % above the optimum"
            messages += [
                {"role": "assistant", "content": reply.content or ""},
                {
                    "role": "user",
                    "content": f"Your recommendation is rejected: {why}. The optimal start is "
                    f"{optimal['start_local']} at {optimal['cost']}. Answer again with the JSON object.",
                },
            ]
    worse = None if result.get("recommended_cost") is None else round(result["recommended_cost"] - optimum.cost, 4)
    return result | {"used": "optimum", "discrepancy": worse if worse is not None else "no usable recommendation"}
