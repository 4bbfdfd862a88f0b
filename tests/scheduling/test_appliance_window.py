"""Appliance daily windows: midnight crossing, skipping windows that can no longer hold the run, DST days."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from custom_components.agentic_hems.scheduling.appliance import Appliance, next_window

BRU = ZoneInfo("Europe/Brussels")


def local(*args: int) -> datetime:
    return datetime(*args, tzinfo=BRU).astimezone(UTC)


@pytest.mark.parametrize(
    ("now", "earliest", "deadline", "run", "expected"),
    [
        # inside tonight's window: starts now, ends tomorrow 07:00
        (local(2026, 11, 29, 20, 5), time(18), time(7), timedelta(hours=2), (local(2026, 11, 29, 20, 5), local(2026, 11, 30, 7))),
        # after midnight, still inside the window that opened yesterday evening
        (local(2026, 11, 30, 1, 0), time(18), time(7), timedelta(hours=2), (local(2026, 11, 30, 1, 0), local(2026, 11, 30, 7))),
        # too late for this morning's deadline: the next evening's window
        (local(2026, 11, 30, 6, 0), time(18), time(7), timedelta(hours=2), (local(2026, 11, 30, 18), local(2026, 12, 1, 7))),
        # before the window opens: it starts at the earliest start
        (local(2026, 11, 29, 10, 0), time(18), time(7), timedelta(hours=2), (local(2026, 11, 29, 18), local(2026, 11, 30, 7))),
        # same-day window, already closed: tomorrow's
        (local(2026, 11, 29, 21, 0), time(8), time(20), timedelta(hours=1), (local(2026, 11, 30, 8), local(2026, 11, 30, 20))),
        # equal times mean a 24-hour window
        (local(2026, 11, 29, 9, 0), time(7), time(7), timedelta(hours=1), (local(2026, 11, 29, 9, 0), local(2026, 11, 30, 7))),
        # the spring-forward night is an hour shorter (22:00 to 07:00 is 8 h)
        (local(2026, 3, 28, 21, 0), time(22), time(7), timedelta(hours=1), (local(2026, 3, 28, 22), local(2026, 3, 29, 7))),
    ],
)
def test_next_window(
    now: datetime, earliest: time, deadline: time, run: timedelta, expected: tuple[datetime, datetime]
) -> None:
    assert next_window(earliest, deadline, now=now, tz=BRU, run_time=run) == expected


def test_spring_forward_window_length() -> None:
    start, end = next_window(time(22), time(7), now=local(2026, 3, 28, 21), tz=BRU)
    assert end - start == timedelta(hours=8)


def test_run_time_rounds_up_to_slots() -> None:
    data = {"name": "EV", "kind": "ev_charger", "entity_id": "switch.ev", "power_kw": 11.0, "energy_kwh": 30.0,
            "contiguous": False, "earliest_start": "18:00", "deadline": "07:00"}
    ev = Appliance.from_config("ev", data)
    assert ev.run_time == timedelta(minutes=165)  # 30 / 11 h = 163.6 min → 11 slots
    washer = Appliance.from_config("w", {**data, "contiguous": True, "duration_min": 100, "energy_kwh": None})
    assert washer.run_time == timedelta(minutes=105)


def test_from_config_needs_the_amount() -> None:
    data = {"name": "Dishwasher", "kind": "dishwasher", "entity_id": "switch.dw", "power_kw": 1.8,
            "contiguous": True, "earliest_start": "18:00", "deadline": "07:00"}
    with pytest.raises(ValueError, match="duration_min"):
        Appliance.from_config("dw", data)


def test_run_longer_than_the_window_gives_the_current_window() -> None:
    """A 25-hour run never fits a daily window: the current window comes back, for the planner to refuse."""
    assert next_window(time(8), time(9), now=local(2026, 11, 29, 8, 30), tz=BRU, run_time=timedelta(hours=25)) == (
        local(2026, 11, 29, 8, 30),
        local(2026, 11, 29, 9),
    )
    assert next_window(time(8), time(9), now=local(2026, 11, 29, 10), tz=BRU, run_time=timedelta(hours=25)) == (
        local(2026, 11, 30, 8),
        local(2026, 11, 30, 9),
    )


@pytest.mark.parametrize(
    ("earliest", "deadline", "length"),
    [(time(18), time(7), timedelta(hours=13)), (time(8), time(20), timedelta(hours=12)), (time(7), time(7), timedelta(hours=24))],
)
def test_window_length(earliest: time, deadline: time, length: timedelta) -> None:
    from custom_components.agentic_hems.scheduling.appliance import window_length

    assert window_length(earliest, deadline) == length


def test_off_grid_deadline_is_compared_after_rounding() -> None:
    """06:10 rounds down to 06:00: a 2-hour run from 04:05 (rounds up to 04:15) no longer fits, so tomorrow's window."""
    start, end = next_window(time(4), time(6, 10), now=local(2026, 11, 29, 4, 5), tz=BRU, run_time=timedelta(hours=2))
    assert (start, end) == (local(2026, 11, 30, 4), local(2026, 11, 30, 6, 10))
