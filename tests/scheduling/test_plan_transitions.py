"""Plan.transition_at: the slot boundaries where the scheduler issues start and stop."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.plan import Plan, Reason

T0 = datetime(2026, 3, 1, tzinfo=UTC)
Q = timedelta(minutes=15)


def plan(power: list[float], resolution: timedelta = Q, feasible: bool = True) -> Plan:
    return Plan(name="x", feasible=feasible, start=None, end=None, power_kw=np.array(power), curve_start=T0,
                resolution=resolution, energy_kwh=0.0, cost=0.0, baseline_cost=0.0, currency="EUR", method="t",
                reason=Reason.OPTIMAL)


@pytest.mark.parametrize(
    ("power", "resolution"),
    [([0, 2, 2, 0, 0, 1, 0], Q), ([3, 0, 3, 3], Q), ([0, 0, 1], timedelta(hours=1)), ([1, 1], Q), ([0, 0], Q)],
)
def test_transitions_match_a_slot_by_slot_walk(power: list[float], resolution: timedelta) -> None:
    p = plan(power, resolution)
    seen = {}
    for minutes in range(-30, 15 * 4 * (len(power) + 2), 15):
        moment = T0 + timedelta(minutes=minutes)
        if (found := p.transition_at(moment)) is not None:
            seen[moment] = found
    expected = {}
    padded = [0.0, *power, 0.0]
    for i in range(len(power) + 1):  # boundary i: slot i-1 -> slot i
        if padded[i] == 0 and padded[i + 1] > 0:
            expected[T0 + resolution * i] = "start"
        elif padded[i] > 0 and padded[i + 1] == 0:
            expected[T0 + resolution * i] = "stop"
    assert seen == expected


def test_infeasible_plan_has_no_transitions() -> None:
    assert plan([0, 0], feasible=False).transition_at(T0) is None
