"""Specialist agents: recommendations parsed, their real cost computed from the prices, checked against the
optimum with one retry, and the optimum used when they stay more than 20 % worse."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from custom_components.agentic_hems.orchestrator.agents import (
    acceptable,
    consult,
    parse_recommendation,
    run_cost,
    start_for,
)
from custom_components.agentic_hems.orchestrator.parser import ParseError, Reply
from custom_components.agentic_hems.prices import PriceCurve
from custom_components.agentic_hems.scheduling import LoadSpec, plan_contiguous, plan_energy

TZ = ZoneInfo("Europe/Brussels")
T0 = datetime(2026, 11, 29, 23, tzinfo=UTC)  # local midnight
Q = timedelta(minutes=15)
PRICES = np.array([0.30] * 8 + [0.05] * 12 + [0.20] * 76)  # cheap 02:00-05:00 local
CURVE = PriceCurve(start=T0, resolution=Q, prices=PRICES, source="test")
DISHWASHER = LoadSpec("Dishwasher", power_kw=2.0, duration_min=120, earliest_start=T0, deadline=T0 + timedelta(hours=8))
EV = LoadSpec("EV", power_kw=10.0, energy_kwh=12.5, earliest_start=T0, deadline=T0 + timedelta(hours=8),
              contiguous=False)


@dataclass
class Agent:
    replies: list[str]
    name: str = "agent"
    seen: list[list[dict[str, Any]]] = field(default_factory=list)

    async def complete(self, messages: Sequence[dict[str, Any]]) -> Reply:
        self.seen.append(list(messages))
        return Reply(self.replies.pop(0))


def test_parse_recommendation() -> None:
    rec = parse_recommendation('Sure!\n```json\n{"slot": "02:00", "duration_min": 120, "cost": 0.2, "reasoning": "cheap"}\n```')
    assert rec.as_dict() == {"slot": "02:00", "duration_min": 120.0, "cost": 0.2, "reasoning": "cheap"}
    with pytest.raises(ParseError):
        parse_recommendation('{"slot": "25:99"}')
    with pytest.raises(ParseError):
        parse_recommendation("run it at night")


def test_run_cost_against_hand_sums() -> None:
    start = T0 + timedelta(hours=2)
    assert run_cost(CURVE, DISHWASHER, start) == pytest.approx(2.0 * 0.25 * 0.05 * 8)  # 8 slots at 0.05
    assert run_cost(CURVE, DISHWASHER, T0 + timedelta(hours=7)) is None  # ends after the deadline
    # EV: 12.5 kWh at 10 kW = 5 full quarter-hours (2.5 kWh each)
    assert run_cost(CURVE, EV, start) == pytest.approx(12.5 * 0.05)
    assert start_for("02:00", DISHWASHER, TZ) == start
    assert start_for("09:00", DISHWASHER, TZ) is None  # outside the window


def test_acceptable_is_twenty_percent() -> None:
    assert acceptable(1.2, 1.0) and not acceptable(1.21, 1.0)
    assert acceptable(-0.8, -1.0) and not acceptable(-0.79, -1.0)  # negative prices: on the magnitude


async def test_good_recommendation_is_used() -> None:
    optimum = plan_contiguous(CURVE, power_kw=2.0, duration_min=120, earliest_start=T0, deadline=DISHWASHER.deadline)
    agent = Agent(['{"slot": "02:00", "duration_min": 120, "cost": 0.2, "reasoning": "cheapest"}'])
    result = await consult(agent, "prompt", "run the dishwasher", DISHWASHER, curve=CURVE, optimum=optimum, tz=TZ)
    assert result["used"] == "agent" and not result["retried"]
    assert result["recommended_cost"] == pytest.approx(optimum.cost)
    facts = agent.seen[0][1]["content"]
    assert '"power_kw":2.0' in facts and '["02:00",0.05]' in facts


async def test_bad_recommendation_retries_then_falls_back() -> None:
    optimum = plan_energy(CURVE, max_power_kw=10.0, energy_kwh=12.5, earliest_start=T0, deadline=EV.deadline)
    agent = Agent(['{"slot": "00:00", "cost": 0.1}', '{"slot": "00:30", "cost": 0.1}'])
    result = await consult(agent, "prompt", "charge the car", EV, curve=CURVE, optimum=optimum, tz=TZ)
    assert result["retried"] and result["used"] == "optimum"
    assert result["recommended_cost"] == pytest.approx(12.5 * 0.30)  # the retry at 00:30: five slots at 0.30
    assert optimum.cost == pytest.approx(12.5 * 0.05)
    assert result["discrepancy"] == pytest.approx(result["recommended_cost"] - optimum.cost, abs=1e-4)
    retry = agent.seen[1][-1]["content"]
    assert retry.startswith("Your recommendation is rejected: it costs") and "The optimal start is Mon 02:00" in retry


async def test_retry_can_succeed() -> None:
    optimum = plan_contiguous(CURVE, power_kw=2.0, duration_min=120, earliest_start=T0, deadline=DISHWASHER.deadline)
    agent = Agent(["at night please", '{"slot": "02:15", "duration_min": 120, "cost": 0.2, "reasoning": "ok"}'])
    result = await consult(agent, "prompt", "run the dishwasher", DISHWASHER, curve=CURVE, optimum=optimum, tz=TZ)
    assert result["retried"] and result["used"] == "agent"
    assert "no recommendation" in agent.seen[1][-1]["content"]
