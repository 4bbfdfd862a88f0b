"""curve_from_nordpool: the response of HA core's ``nordpool.get_prices_for_date`` (HA 2025.4)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from custom_components.agentic_hems.prices import (
    SLOT,
    PricesNotPublished,
    PriceSourceError,
    curve_from_nordpool,
)

START = datetime(2025, 4, 9, 22, tzinfo=UTC)  # 2025-04-10 in Stockholm


def entries(values: list[float | None], step: timedelta) -> list[dict[str, object]]:
    """Items as services.py builds them: ISO start/end strings and the area's price per MWh."""
    return [
        {"start": (START + i * step).isoformat(), "end": (START + (i + 1) * step).isoformat(), "price": value}
        for i, value in enumerate(values)
    ]


def test_hourly_per_mwh_to_quarter_hours_per_kwh() -> None:
    values = [float(400 + i) for i in range(24)]
    response = {"SE3": entries(values, timedelta(hours=1)), "SE4": entries([1.0] * 24, timedelta(hours=1))}
    curve = curve_from_nordpool(response, area="se3", currency="SEK")
    assert (curve.start, len(curve), curve.currency, curve.source) == (START, 96, "SEK", "nordpool")
    assert curve.prices == pytest.approx(np.repeat(np.array(values) / 1000, 4))


def test_quarter_hours_negative_and_missing() -> None:
    curve = curve_from_nordpool({"FI": entries([-5.0, 12.0, None, 7.5], SLOT)}, area="FI", currency="EUR")
    assert curve.prices[:2] == pytest.approx([-0.005, 0.012])
    assert np.isnan(curve.prices[2])
    assert curve.prices[3] == pytest.approx(0.0075)


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
