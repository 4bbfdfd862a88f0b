"""What the planners make of what the readers trust: never an unknown slot, and a word when a slot is doubtful.

The regressions of each failing class are in test_prices_regressions.py; the properties in test_prices_corruption.py.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from a44 import period, publication, time_series

from custom_components.agentic_hems.prices import SlotTrust, curve_from_attributes, parse_day_ahead
from custom_components.agentic_hems.scheduling import LoadSpec, Reason, plan_contiguous, plan_energy, plan_joint

ISO = "%Y-%m-%dT%H:%MZ"
DAY1 = datetime(2024, 10, 7, 22, tzinfo=UTC)  # 2024-10-08 in Brussels
DAY2 = DAY1 + timedelta(days=1)
END = DAY2 + timedelta(days=1)
STOCKHOLM = ZoneInfo("Europe/Stockholm")


def day(start: datetime, values: list[object]) -> str:
    end = start + timedelta(days=1)
    return period(start.strftime(ISO), end.strftime(ISO), values, "PT60M")  # type: ignore[arg-type]


def plans(curve, start: datetime = DAY1, end: datetime = END) -> list:  # type: ignore[no-untyped-def]
    """An EV, a dishwasher, and both together, over ``[start, end)``."""
    window = {"earliest_start": start, "deadline": end}
    return [
        plan_energy(curve, max_power_kw=11.0, energy_kwh=20.0, **window),
        plan_contiguous(curve, power_kw=2.0, duration_min=120, **window),
        *plan_joint(
            curve,
            [
                LoadSpec("dw", power_kw=2.0, duration_min=120, **window),
                LoadSpec("ev", power_kw=11.0, energy_kwh=20.0, contiguous=False, **window),
            ],
            power_limit_kw=12.0,
        ),
    ]


def test_a_plan_that_avoids_doubtful_slots_is_optimal() -> None:
    curve = parse_day_ahead(publication(time_series(day(DAY1, [-5.0] * 24), day(DAY2, [0.0] * 24))))
    for plan in plans(curve):
        assert plan.reason is Reason.OPTIMAL and plan.end <= DAY2


def test_a_window_of_refused_prices_says_why_nothing_was_planned() -> None:
    attributes = {"today": [0.3] * 24, "tomorrow": [0.1, 0.2, 0.3, 0.4]}
    today = datetime(2025, 1, 14, tzinfo=STOCKHOLM)
    curve = curve_from_attributes(attributes, unit="EUR/kWh", day_start=today)
    tomorrow = today + timedelta(days=1)
    for plan in plans(curve, tomorrow, tomorrow + timedelta(days=1)):
        assert not plan.feasible and plan.reason is Reason.NO_PRICES
        refusal = "tomorrow (2025-01-15): 4 prices do not make the whole day (24, 48 or 96 are accepted)"
        assert plan.detail.endswith(refusal)


def test_stretched_short_lists_are_never_planned_on() -> None:
    """The short tomorrow list is unknown: a window over both days plans on today only and names the refusal."""
    attributes = {"today": [0.3] * 24, "tomorrow": [0.1, 0.2, 0.3, 0.4]}
    today = datetime(2025, 1, 14, tzinfo=STOCKHOLM)
    curve = curve_from_attributes(attributes, unit="EUR/kWh", day_start=today)
    assert (curve.trust()[96:] == SlotTrust.UNKNOWN).all()
    for plan in plans(curve, today, today + timedelta(days=2)):
        assert plan.feasible and not plan.power_kw[96:].any() and plan.reason is Reason.PARTIAL_PRICES
        assert "tomorrow (2025-01-15): 4 prices do not make the whole day" in plan.detail
