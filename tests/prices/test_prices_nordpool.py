"""curve_from_nordpool: the response of HA core's ``nordpool.get_prices_for_date`` (HA 2025.4)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from custom_components.agentic_hems.prices import (
    SLOT,
    PriceIssue,
    PricesNotPublished,
    PricesRefused,
    PriceSourceError,
    SlotTrust,
    curve_from_nordpool,
)

START = datetime(2025, 4, 9, 22, tzinfo=UTC)  # the delivery day 2025-04-10 (CEST)
DAY = timedelta(days=1)


def entries(values: list[object], step: timedelta, start: datetime = START) -> list[dict[str, object]]:
    """Items as services.py builds them: ISO start/end strings and the area's price per MWh."""
    return [
        {"start": (start + i * step).isoformat(), "end": (start + (i + 1) * step).isoformat(), "price": value}
        for i, value in enumerate(values)
    ]


def test_hourly_per_mwh_to_quarter_hours_per_kwh() -> None:
    values = [float(400 + i) for i in range(24)]
    response = {"SE3": entries(values, timedelta(hours=1)), "SE4": entries([1.0] * 24, timedelta(hours=1))}
    curve = curve_from_nordpool(response, area="se3", currency="SEK")
    assert (curve.start, len(curve), curve.currency, curve.source) == (START, 96, "SEK", "nordpool")
    assert curve.prices == pytest.approx(np.repeat(np.array(values) / 1000, 4))


def test_quarter_hours_negative_and_missing() -> None:
    values: list[object] = [-5.0, 12.0, None, 7.5] * 24
    curve = curve_from_nordpool({"FI": entries(values, SLOT)}, area="FI", currency="EUR")
    assert curve.prices[:2] == pytest.approx([-0.005, 0.012])
    assert np.isnan(curve.prices[2])
    assert curve.prices[3] == pytest.approx(0.0075)
    assert not curve.issues()


def test_two_days_and_a_bad_second_day() -> None:
    """Items are cut into delivery days; an INF tomorrow is refused while today stays."""
    today = entries([400.0] * 96, SLOT)
    tomorrow = entries([300.0] * 95 + ["INF"], SLOT, START + DAY)
    curve = curve_from_nordpool({"SE3": today + tomorrow}, area="SE3", currency="SEK")
    assert curve.prices[:96] == pytest.approx([0.4] * 96)
    assert np.isnan(curve.prices[96:]).all()
    assert curve.note_at(96).issue is PriceIssue.BAD_VALUE
    assert curve.note_at(96).detail == "SE3 2025-04-11: not a finite price: 'INF' at 2025-04-11T21:45Z"


def test_a_short_day_is_refused() -> None:
    with pytest.raises(PricesRefused, match="SE3 2025-04-10: 20 prices do not make the whole day"):
        curve_from_nordpool({"SE3": entries([1.0] * 20, timedelta(hours=1))}, area="SE3", currency="SEK")


def test_items_of_another_day_than_asked_for_are_refused() -> None:
    """Asked for 2025-04-11, the answer still holds 2025-04-10: refused, not read as prices."""
    response = {"SE3": entries([1.0] * 24, timedelta(hours=1))}
    with pytest.raises(PricesRefused, match="SE3 2025-04-11: holds an item at 2025-04-09T22:00Z"):
        curve_from_nordpool(response, area="SE3", currency="SEK", day=date(2025, 4, 11))
    assert not curve_from_nordpool(response, area="SE3", currency="SEK", day=date(2025, 4, 10)).issues()


def test_a_day_of_zeros_is_doubtful() -> None:
    curve = curve_from_nordpool({"SE3": entries([0.0] * 24, timedelta(hours=1))}, area="SE3", currency="SEK")
    assert (curve.trust() == SlotTrust.DOUBTFUL).all()


def test_empty_area_is_not_published() -> None:
    with pytest.raises(PricesNotPublished):
        curve_from_nordpool({"SE3": []}, area="SE3", currency="SEK")


@pytest.mark.parametrize(
    "response",
    [
        {"SE4": entries([1.0], SLOT)},  # area missing
        {"SE3": "nope"},
        {"SE3": [{"start": START.isoformat(), "price": 1.0}]},
        {"SE3": [{"start": START.isoformat(), "end": "soon", "price": 1.0}]},
    ],
)
def test_malformed(response: dict[str, object]) -> None:
    with pytest.raises(PriceSourceError):
        curve_from_nordpool(response, area="SE3", currency="SEK")
