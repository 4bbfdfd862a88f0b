"""curve_from_intervals: the one place prices of any resolution become 15-minute slots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
import math
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from custom_components.agentic_hems.prices import SLOT, curve_from_intervals
from custom_components.agentic_hems.prices.curve import MAX_SLOTS

T = datetime(2025, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


def test_finer_wins_nan_never_overwrites_and_gaps_are_nan() -> None:
    curve = curve_from_intervals(
        [
            (T + SLOT, T + 2 * SLOT, 9.0),  # finer, listed first
            (T, T + HOUR, 1.0),
            (T + 2 * SLOT, T + 3 * SLOT, math.nan),  # unknown finer price keeps the hourly one
            (T + 2 * HOUR, T + 2 * HOUR + SLOT, 3.0),
        ],
        currency="EUR",
        source="x",
    )
    assert curve.start == T
    assert curve.prices == pytest.approx([1, 9, 1, 1, *[math.nan] * 4, 3], nan_ok=True)


@pytest.mark.parametrize(
    "intervals",
    [
        [],
        [(T, T, 1.0)],
        [(T + HOUR, T, 1.0)],
        [(T + timedelta(minutes=1), T + SLOT, 1.0)],
        [(T.replace(tzinfo=None), T + SLOT, 1.0)],
        [(T, T + SLOT * (MAX_SLOTS + 1), 1.0)],
    ],
)
def test_rejects(intervals: list[tuple[datetime, datetime, float]]) -> None:
    with pytest.raises(ValueError):
        curve_from_intervals(intervals, currency="EUR", source="x")


def test_local_offsets_are_converted() -> None:
    start = datetime(2025, 1, 1, 1, tzinfo=ZoneInfo("Europe/Paris"))  # 00:00 UTC
    curve = curve_from_intervals([(start, start + HOUR, 2.0)], currency="EUR", source="x")
    assert curve.start == T
    assert not np.isnan(curve.prices).any()
