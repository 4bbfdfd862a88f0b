"""curve_from_attributes: the HACS Nord Pool and HACS ENTSO-e attribute shapes, units and resolutions."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, strategies as st
import numpy as np
import pytest

from custom_components.agentic_hems.prices import (
    SLOT,
    PriceCurve,
    PriceIssue,
    PricesRefused,
    PriceSourceError,
    SlotTrust,
    curve_from_attributes,
)

STOCKHOLM = ZoneInfo("Europe/Stockholm")
T0 = datetime(2025, 1, 14, tzinfo=STOCKHOLM)  # local midnight, 2025-01-13T23:00Z
T1 = T0 + timedelta(days=1)
HOUR = timedelta(hours=1)


def raw(start: datetime, values: list[float | None], step: timedelta) -> list[dict[str, object]]:
    """HACS Nord Pool ``raw_today`` items (datetimes, as HA hands attributes over)."""
    return [{"start": start + i * step, "end": start + (i + 1) * step, "value": v} for i, v in enumerate(values)]


def timed(start: datetime, values: list[float], step: timedelta) -> list[dict[str, object]]:
    """HACS ENTSO-e ``prices_today`` items (ISO strings)."""
    return [{"time": (start + i * step).isoformat(), "price": v} for i, v in enumerate(values)]


def test_nordpool_raw_hourly_in_ore() -> None:
    """HACS Nord Pool in öre/kWh: 24 hourly items become 96 slots in SEK/kWh."""
    values = [float(100 + i) for i in range(24)]
    attributes = {"raw_today": raw(T0, values, timedelta(hours=1)), "raw_tomorrow": [], "currency": "SEK"}
    curve = curve_from_attributes(attributes, unit="öre/kWh", day_start=T0)
    assert (curve.start, len(curve), curve.currency, curve.source) == (T0.astimezone(UTC), 96, "SEK", "sensor")
    assert curve.prices == pytest.approx(np.repeat(np.array(values) / 100, 4))


def test_nordpool_raw_quarter_hours_with_tomorrow_and_missing_value() -> None:
    today = [1.0] * 96
    tomorrow = [2.0] * 95 + [None]
    attributes = {
        "raw_today": raw(T0, today, SLOT),
        "raw_tomorrow": [
            {**item, "start": item["start"].isoformat(), "end": item["end"].isoformat()}  # restored: strings
            for item in raw(T0 + timedelta(days=1), tomorrow, SLOT)
        ],
        "unit_of_measurement": "EUR/kWh",
    }
    curve = curve_from_attributes(attributes, unit=None, day_start=T0)
    assert len(curve) == 192
    assert curve.prices[:96] == pytest.approx([1.0] * 96)
    assert curve.prices[96:191] == pytest.approx([2.0] * 95)
    assert np.isnan(curve.prices[191])  # unknown, not zero


def test_raw_mixed_resolutions_per_item() -> None:
    """Each raw item spans its own start..end: an hourly today and a 15-minute tomorrow coexist."""
    attributes = {
        "raw_today": raw(T0, [5.0] * 24, timedelta(hours=1)),
        "raw_tomorrow": raw(T0 + timedelta(days=1), [float(i) for i in range(96)], SLOT),
    }
    curve = curve_from_attributes(attributes, unit="EUR/MWh", day_start=T0)
    assert len(curve) == 192
    assert curve.prices[:96] == pytest.approx([0.005] * 96)
    assert curve.prices[96:] == pytest.approx(np.arange(96) / 1000)


def test_entsoe_prices_today_tomorrow() -> None:
    """HACS ENTSO-e: {time, price} items, resolution from the spacing of all items, € symbol unit."""
    attributes = {
        "prices_today": timed(T0, [0.1] * 96, SLOT),
        "prices_tomorrow": timed(T0 + timedelta(days=1), [0.2] * 24, timedelta(hours=1)),
        "prices": timed(T0, [9.9] * 10, SLOT),  # ignored when the per-day lists exist
    }
    curve = curve_from_attributes(attributes, unit="€/kWh", day_start=T0)
    assert curve.currency == "EUR"
    assert len(curve) == 192
    assert curve.prices[:96] == pytest.approx([0.1] * 96)
    assert curve.prices[96:] == pytest.approx([0.2] * 96)


def test_entsoe_prices_fallback_spans_days_and_a_gap_refuses_its_day() -> None:
    """Only ``prices``: cut into local days; a missing item makes its day unknown, the complete day stays."""
    items = timed(T0, [float(i) for i in range(48)], HOUR)
    del items[30]  # tomorrow's 06:00
    curve = curve_from_attributes({"prices": items}, unit="c/kWh", day_start=T0)
    assert len(curve) == 192
    assert curve.prices[:96] == pytest.approx(np.repeat(np.arange(24) / 100, 4))
    assert np.isnan(curve.prices[96:]).all()
    (span,) = curve.issues()
    assert (span.start, span.end) == (T1.astimezone(UTC), T1.astimezone(UTC) + 24 * HOUR)
    assert span.note.issue is PriceIssue.NOT_WHOLE_DAY
    assert span.note.detail == "prices (2025-01-15): 23 prices do not make the whole day (24, 48 or 96 are accepted)"


def test_entsoe_dst_day_uses_utc_spacing() -> None:
    """A 25-hour day written with local offsets: 100 items 15 minutes apart in UTC."""
    day_start = datetime(2025, 10, 26, tzinfo=STOCKHOLM)
    items = [
        {"time": (day_start.astimezone(UTC) + i * SLOT).astimezone(STOCKHOLM).isoformat(), "price": float(i)}
        for i in range(100)
    ]
    curve = curve_from_attributes({"prices_today": items}, unit="SEK/kWh", day_start=day_start)
    assert len(curve.local_day(date(2025, 10, 26), STOCKHOLM)) == 100
    assert curve.prices == pytest.approx(np.arange(100.0))


@pytest.mark.parametrize(
    ("day", "slots"), [(date(2025, 3, 30), 92), (date(2025, 1, 14), 96), (date(2025, 10, 26), 100)]
)
@pytest.mark.parametrize("per_day", [1, 4])  # hourly or quarter-hourly plain lists
def test_plain_lists_with_day_start(day: date, slots: int, per_day: int) -> None:
    """Plain today/tomorrow lists split their local day; DST days have 23/25 hourly or 92/100 quarter prices."""
    count = slots // 4 * per_day
    attributes = {"today": [float(i) for i in range(count)], "tomorrow": [], "currency": "NOK"}
    day_start = datetime(day.year, day.month, day.day, 7, tzinfo=STOCKHOLM)  # only its date and zone count
    curve = curve_from_attributes(attributes, unit="NOK/kWh", day_start=day_start)
    local = curve.local_day(day, STOCKHOLM)
    assert len(local) == slots
    assert not np.isnan(local.prices).any()
    assert local.prices == pytest.approx(np.repeat(np.arange(count, dtype=float), 4 // per_day))


def test_day_start_must_be_aware() -> None:
    with pytest.raises(PriceSourceError, match="day_start"):
        curve_from_attributes({"today": [1.0] * 24}, unit="EUR/kWh", day_start=datetime(2025, 1, 14))


@pytest.mark.parametrize("count", [1, 7, 23, 25, 47, 95, 97, 192])
def test_plain_list_length_must_be_a_whole_day(count: int) -> None:
    """On a 24-hour day only 24, 48 or 96 plain prices are a day; anything else is refused, never stretched."""
    message = f"today \\(2025-01-14\\): {count} prices do not make the whole day"
    with pytest.raises(PricesRefused, match=message) as raised:
        curve_from_attributes({"today": [1.0] * count}, unit="EUR/kWh", day_start=T0)
    (span,) = raised.value.spans
    assert span.note.issue is PriceIssue.NOT_WHOLE_DAY and span.start == T0.astimezone(UTC)


@pytest.mark.parametrize(
    ("unit", "currency", "attribute_currency", "expected_currency", "factor"),
    [
        ("EUR/kWh", None, None, "EUR", 1.0),
        ("SEK/kWh", None, "SEK", "SEK", 1.0),
        ("EUR/MWh", None, None, "EUR", 0.001),
        ("EUR/Wh", None, None, "EUR", 1000.0),
        ("c/kWh", None, None, "EUR", 0.01),
        ("ct/kWh", None, None, "EUR", 0.01),
        ("öre/kWh", None, None, "SEK", 0.01),
        ("øre/kWh", None, "DKK", "DKK", 0.01),
        ("øre/kWh", "NOK", "DKK", "NOK", 0.01),  # the argument overrides the attribute
        ("kr/kWh", "sek", None, "SEK", 1.0),
        ("€/kWh", None, None, "EUR", 1.0),
        (" EUR / kWh ", None, None, "EUR", 1.0),
    ],
)
def test_units_and_currencies(
    unit: str, currency: str | None, attribute_currency: str | None, expected_currency: str, factor: float
) -> None:
    attributes: dict[str, object] = {"raw_today": raw(T0, [12.5] * 24, HOUR)}
    if attribute_currency:
        attributes["currency"] = attribute_currency
    curve = curve_from_attributes(attributes, unit=unit, currency=currency, day_start=T0)
    assert curve.currency == expected_currency
    assert curve.prices == pytest.approx([12.5 * factor] * 96)


@pytest.mark.parametrize(
    ("unit", "currency"),
    [
        (None, None),
        ("kWh", None),
        ("EUR", None),
        ("EUR/GJ", None),
        ("bananas/kWh", None),
        ("øre/kWh", None),  # NOK or DKK?
        ("kr/kWh", None),
        ("SEK/kWh", "EUR"),  # contradiction
        ("EUR/kWh", "euro"),
    ],
)
def test_unknown_or_ambiguous_units(unit: str | None, currency: str | None) -> None:
    with pytest.raises(PriceSourceError):
        curve_from_attributes({"raw_today": raw(T0, [1.0] * 24, HOUR)}, unit=unit, currency=currency, day_start=T0)


@pytest.mark.parametrize(
    "attributes",
    [
        {},
        {"raw_today": [], "raw_tomorrow": None, "today": [], "prices": []},
        {"raw_today": "not a list"},
        {"raw_today": [{"start": "2025-01-14T00:00+01:00", "value": 1.0}]},  # no end
        {"raw_today": [{"start": "yesterday", "end": "today", "value": 1.0}]},
        {"raw_today": [{"start": "2025-01-14T00:00", "end": "2025-01-14T01:00", "value": 1.0}]},  # naive
        {"raw_today": [{"start": T0, "end": T0 + SLOT, "value": "cheap"}]},
        {"raw_today": [{"start": T0, "end": T0 + SLOT, "value": True}]},
        {"raw_today": [{"start": T0, "end": T0 + SLOT, "value": None}]},  # no known price
        {"raw_today": [{"start": T0 + timedelta(minutes=5), "end": T0 + SLOT, "value": 1.0}]},  # off grid
        {"prices_today": [{"time": T0.isoformat(), "price": 1.0}]},  # one item: no spacing
        {"prices_today": timed(T0, [1.0] * 4, timedelta(minutes=5))},  # 5-minute resolution
        {"prices_today": timed(T0, [1.0] * 2, SLOT) + timed(T0, [1.0], SLOT)},  # repeated time
        {"prices_today": [{"time": T0.isoformat()}, {"time": (T0 + SLOT).isoformat()}]},  # no price
    ],
)
def test_empty_or_invalid(attributes: dict[str, object]) -> None:
    with pytest.raises(PriceSourceError):
        curve_from_attributes(attributes, unit="EUR/kWh", day_start=T0)


def test_inconsistent_spacing_is_not_a_whole_day() -> None:
    """Hourly items with one stray quarter-hour item: no resolution tiles the day, so it is refused."""
    items = timed(T0, [1.0] * 24, HOUR) + timed(T0 + timedelta(minutes=15), [2.0], SLOT)
    with pytest.raises(PricesRefused, match="25 prices do not make the whole day"):
        curve_from_attributes({"prices_today": items}, unit="EUR/kWh", day_start=T0)


@given(
    step=st.sampled_from([15, 30, 60]),
    data=st.data(),
)
def test_a_missing_item_refuses_its_day_only(step: int, data: st.DataObject) -> None:
    """Items missing from a regular day make that day unknown; the other day keeps every price."""
    count = 24 * 60 // step
    missing = data.draw(st.sets(st.integers(min_value=0, max_value=count - 1), min_size=1, max_size=3))
    today = timed(T0, [1.0] * 96, SLOT)
    items = timed(T1, [float(k) for k in range(count)], timedelta(minutes=step))
    tomorrow = [item for k, item in enumerate(items) if k not in missing]
    curve = curve_from_attributes({"prices_today": today, "prices_tomorrow": tomorrow}, unit="EUR/kWh", day_start=T0)
    assert curve.prices[:96] == pytest.approx([1.0] * 96)
    assert np.isnan(curve.prices[96:]).all()
    assert [span.note.issue for span in curve.issues()] == [PriceIssue.NOT_WHOLE_DAY]


# --- days, flags and doubts (the regressions of each failing class are in test_prices_regressions.py) -------------


def _trust(curve: PriceCurve, start: datetime) -> list[int]:
    """Trust of the 96 slots of the 24-hour local day starting at ``start``."""
    return curve.local_day(start.date(), STOCKHOLM).trust().tolist()


def test_identical_repeats_merge() -> None:
    items = raw(T0, [float(i) for i in range(24)], HOUR)
    curve = curve_from_attributes({"raw_today": items + items[5:7]}, unit="EUR/kWh", day_start=T0)
    assert curve.prices == pytest.approx(np.repeat(np.arange(24.0), 4)) and not curve.issues()


def test_a_day_of_zeros_is_doubtful() -> None:
    curve = curve_from_attributes({"today": [1.0] * 24, "tomorrow": [0.0] * 96}, unit="EUR/kWh", day_start=T0)
    assert _trust(curve, T1) == [SlotTrust.DOUBTFUL] * 96
    assert curve.prices[96:] == pytest.approx([0.0] * 96)  # the price is kept, its doubt noted
    assert curve.note_at(96).issue is PriceIssue.ZERO_DAY


def test_tomorrow_flag_true_or_absent_keeps_tomorrow() -> None:
    for flags in ({}, {"tomorrow_valid": True}, {"tomorrow_available": True}):
        attributes = {"today": [1.0] * 24, "tomorrow": [2.0] * 24, **flags}
        curve = curve_from_attributes(attributes, unit="EUR/kWh", day_start=T0)
        assert curve.prices[96:] == pytest.approx([2.0] * 96) and not curve.issues()


@pytest.mark.parametrize("flag", ["tomorrow_valid", "tomorrow_available"])
@pytest.mark.parametrize("value", [False, "false", 0])
def test_tomorrow_flags_refuse_every_shape(flag: str, value: object) -> None:
    shapes = [
        {"raw_today": raw(T0, [1.0] * 24, HOUR), "raw_tomorrow": raw(T1, [2.0] * 24, HOUR)},
        {"prices": timed(T0, [1.0] * 48, HOUR)},
        {"today": [1.0] * 24, "tomorrow": [2.0] * 24},
    ]
    for attributes in shapes:
        curve = curve_from_attributes({**attributes, flag: value}, unit="EUR/kWh", day_start=T0)
        assert curve.prices[:96] == pytest.approx([1.0] * 96)
        assert np.isnan(curve.prices[96:]).all() and curve.note_at(96).issue is PriceIssue.SOURCE_INVALID


def test_a_malformed_tomorrow_list_refuses_tomorrow_only() -> None:
    attributes = {"raw_today": raw(T0, [1.0] * 24, HOUR), "raw_tomorrow": "garbage"}
    curve = curve_from_attributes(attributes, unit="EUR/kWh", day_start=T0)
    assert curve.prices[:96] == pytest.approx([1.0] * 96)
    assert curve.note_at(96).issue is PriceIssue.BAD_VALUE
