"""sample_curve: real ENTSO-E days re-dated to local today and tomorrow."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from a44 import real_document
import numpy as np
import pytest

from custom_components.agentic_hems.prices import SLOT, local_day_bounds, parse_day_ahead, sample_curve

BRUSSELS = ZoneInfo("Europe/Brussels")
# The source days sample.py uses, straight from the documents.
TODAY_SOURCE = parse_day_ahead(real_document("BE_60M.xml")).prices
TOMORROW_SOURCE = parse_day_ahead(real_document("BE_60M_15M_mix.xml")).prices[:96]


def expected(source: np.ndarray, slots: int) -> np.ndarray:
    """Slot k maps to source slot k; a long day repeats the source's last hour."""
    return np.concatenate([source, source[-4:]])[:slots]


@pytest.mark.parametrize(
    ("today", "today_slots", "tomorrow_slots"),
    [
        (date(2026, 3, 29), 92, 96),  # today springs forward
        (date(2026, 3, 28), 96, 92),  # tomorrow springs forward
        (date(2025, 10, 26), 100, 96),  # today falls back
        (date(2025, 10, 25), 96, 100),
        (date(2025, 6, 1), 96, 96),
    ],
)
def test_redated_days(today: date, today_slots: int, tomorrow_slots: int) -> None:
    curve = sample_curve(today, BRUSSELS)
    assert curve.sample is True
    assert (curve.source, curve.currency) == ("sample", "EUR")
    assert curve.start == local_day_bounds(today, BRUSSELS)[0]
    assert len(curve) == today_slots + tomorrow_slots
    assert not np.isnan(curve.prices).any()
    first = curve.local_day(today, BRUSSELS)
    second = curve.local_day(today + timedelta(days=1), BRUSSELS)
    assert (len(first), len(second)) == (today_slots, tomorrow_slots)
    assert first.prices == pytest.approx(expected(TODAY_SOURCE, today_slots))
    assert second.prices == pytest.approx(expected(TOMORROW_SOURCE, tomorrow_slots))


def test_values_at_mapped_offsets() -> None:
    """BE_60M position 9 (100 EUR/MWh) is 08:00 local in the source: it stays at 08:00 local after re-dating."""
    curve = sample_curve(date(2025, 6, 1), BRUSSELS)
    eight = datetime(2025, 6, 1, 8, tzinfo=BRUSSELS)
    assert curve.price_at(eight) == pytest.approx(0.1)
    assert curve.price_at(eight + 3 * SLOT) == pytest.approx(0.1)
    # Tomorrow carries the mix document's negative price (position 53 = -0.01 EUR/MWh, 13:00 local).
    assert curve.price_at(datetime(2025, 6, 2, 13, 0, tzinfo=BRUSSELS)) == pytest.approx(-0.00001)
    assert curve.prices.min() < 0


def test_other_time_zone_and_offset_mapping() -> None:
    """Mapping is by offset from local midnight, wherever that is in UTC."""
    tz = ZoneInfo("America/New_York")
    curve = sample_curve(date(2025, 3, 9), tz)  # 23-hour day in New York
    assert curve.start == datetime(2025, 3, 9, 5, tzinfo=UTC)
    assert len(curve.local_day(date(2025, 3, 9), tz)) == 92
    assert curve.prices[:92] == pytest.approx(TODAY_SOURCE[:92])
