"""parse_day_ahead against the real ENTSO-E documents and synthetic A44 edge cases."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
import re
from zoneinfo import ZoneInfo

from a44 import HTML_503, NO_DATA_TEXT, acknowledgement, period, publication, real_document, time_series
import numpy as np
import pytest

from custom_components.agentic_hems.prices import SLOT, PricesNotPublished, PriceSourceError, parse_day_ahead

BRUSSELS = ZoneInfo("Europe/Brussels")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_be_60m_real_values() -> None:
    """BE_60M: 24 hourly prices spread over 96 quarter hours, EUR/MWh -> EUR/kWh."""
    curve = parse_day_ahead(real_document("BE_60M.xml"))
    assert curve.start == utc(2024, 10, 7, 22)
    assert len(curve) == 96
    assert curve.resolution == SLOT
    assert (curve.currency, curve.source, curve.sample) == ("EUR", "entsoe", False)
    assert not np.isnan(curve.prices).any()
    # Position 9 = 100 EUR/MWh, delivered 2024-10-08T06:00Z..07:00Z.
    for minute in (0, 15, 30, 45):
        assert curve.price_at(utc(2024, 10, 8, 6, minute)) == pytest.approx(0.1)
    assert curve.price_at(utc(2024, 10, 8, 7)) == pytest.approx(0.08492)  # position 10
    assert curve.prices[:4] == pytest.approx([0.06498] * 4)  # position 1
    assert curve.prices[-4:] == pytest.approx([0.05] * 4)  # position 24
    assert curve.local_day(date(2024, 10, 8), BRUSSELS).prices == pytest.approx(curve.prices)


def test_mixed_real_document_fills_a03_omissions() -> None:
    """BE_60M_15M_mix: two A03 PT15M days with omitted (also trailing) positions, then a PT60M day."""
    curve = parse_day_ahead(real_document("BE_60M_15M_mix.xml").decode())
    assert curve.start == utc(2024, 10, 5, 22)
    assert len(curve) == 3 * 96
    assert not np.isnan(curve.prices).any()
    day1, day2, day3 = curve.prices[:96], curve.prices[96:192], curve.prices[192:]
    assert day1[:4] == pytest.approx([0.05535] * 4)  # position 1 given, 2-4 omitted
    assert day1[4] == pytest.approx(0.04422)  # position 5
    # The negative price: position 53 = -0.01 EUR/MWh, 54-60 omitted, 61 = 0.2.
    assert day1[52:60] == pytest.approx([-0.00001] * 8)
    assert (day1[52:60] < 0).all()
    assert day1[60] == pytest.approx(0.0002)
    assert curve.price_at(utc(2024, 10, 6, 11)) == pytest.approx(-0.00001)  # position 53 starts 13:00 local
    # Trailing omissions: the last Point is position 93; 94-96 repeat it, up to the Period's end.
    assert day1[92:] == pytest.approx([0.05233] * 4)
    assert day2[92:] == pytest.approx([0.07718] * 4)
    assert day2[0] == pytest.approx(0.03458)
    # The PT60M day matches BE_60M.
    assert day3 == pytest.approx(parse_day_ahead(real_document("BE_60M.xml")).prices)
    assert curve.price_at(utc(2024, 10, 8, 6, 45)) == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("day", "start", "slots"),
    [
        (date(2026, 3, 29), utc(2026, 3, 28, 23), 92),  # spring forward: 23 hours
        (date(2025, 10, 26), utc(2025, 10, 25, 22), 100),  # fall back: 25 hours
    ],
)
def test_dst_days(day: date, start: datetime, slots: int) -> None:
    """A 15-minute DST day has 92 or 100 slots, all in UTC and in order."""
    end = start + slots * SLOT
    prices = [float(i) for i in range(slots)]
    iso = "%Y-%m-%dT%H:%MZ"
    document = publication(
        time_series(period(start.strftime(iso), end.strftime(iso), prices)),
        start=start.strftime(iso),
        end=end.strftime(iso),
    )
    curve = parse_day_ahead(document)
    assert (curve.start, len(curve)) == (start, slots)
    local = curve.local_day(day, BRUSSELS)
    assert len(local) == slots
    assert local.prices == pytest.approx(np.arange(slots) / 1000)


def test_a03_trailing_omission() -> None:
    """Positions after the last Point repeat it up to the Period's end; gaps inside repeat the previous one."""
    document = publication(
        time_series(period("2024-10-07T22:00Z", "2024-10-08T00:00Z", {1: 10.0, 3: 30.0, 5: -5.0}), curve_type="A03")
    )
    curve = parse_day_ahead(document)
    assert len(curve) == 8
    assert curve.prices == pytest.approx([0.01, 0.01, 0.03, 0.03, -0.005, -0.005, -0.005, -0.005])


def test_a01_missing_position_is_nan_not_zero() -> None:
    """Under curveType A01 a missing position is unknown: NaN, never zero."""
    document = publication(time_series(period("2024-10-07T22:00Z", "2024-10-07T23:00Z", {1: 10.0, 2: 20.0, 4: 40.0})))
    curve = parse_day_ahead(document)
    assert curve.prices[:2] == pytest.approx([0.01, 0.02])
    assert np.isnan(curve.prices[2])
    assert curve.prices[3] == pytest.approx(0.04)


def test_de_lu_classification_sequences() -> None:
    """DE_LU documents carry SDAC (position 1) and a local auction (position 2); sequence selects one."""
    window = ("2025-10-01T22:00Z", "2025-10-01T23:00Z")
    document = publication(
        time_series(period(*window, [10.0, 11.0, 12.0, 13.0]), sequence=2, zone="10Y1001A1001A82H"),
        time_series(period(*window, [90.0, 91.0, 92.0, 93.0]), sequence=1, zone="10Y1001A1001A82H"),
    )
    assert parse_day_ahead(document).prices == pytest.approx([0.09, 0.091, 0.092, 0.093])
    assert parse_day_ahead(document, sequence=1).prices == pytest.approx([0.09, 0.091, 0.092, 0.093])
    assert parse_day_ahead(document, sequence=2).prices == pytest.approx([0.01, 0.011, 0.012, 0.013])
    with pytest.raises(PricesNotPublished):
        parse_day_ahead(document, sequence=3)


def test_series_without_sequence_element_is_kept_for_any_sequence() -> None:
    document = publication(time_series(period("2024-10-07T22:00Z", "2024-10-07T22:15Z", [42.0])))
    assert parse_day_ahead(document, sequence=2).prices == pytest.approx([0.042])


def test_non_day_ahead_contract_is_dropped() -> None:
    """A TimeSeries of contract type A07 (intraday) must not leak into day-ahead prices."""
    window = ("2024-10-07T22:00Z", "2024-10-07T23:00Z")
    document = publication(
        time_series(period(*window, [500.0] * 4), contract="A07"),
        time_series(period(*window, [50.0] * 4)),
        time_series(period("2024-10-07T23:00Z", "2024-10-08T00:00Z", [700.0], "PT60M"), contract="A07"),
    )
    curve = parse_day_ahead(document)
    assert len(curve) == 4
    assert curve.prices == pytest.approx([0.05] * 4)


def test_only_other_contracts_is_not_published() -> None:
    document = publication(time_series(period("2024-10-07T22:00Z", "2024-10-07T23:00Z", [1.0] * 4), contract="A07"))
    with pytest.raises(PricesNotPublished):
        parse_day_ahead(document)


def test_mixed_resolutions_merge_finer_wins() -> None:
    """Hourly, half-hourly and quarter-hourly series merge into one 15-minute curve; the finest known price wins."""
    document = publication(
        time_series(period("2024-10-07T22:00Z", "2024-10-08T01:00Z", [60.0, 61.0, 62.0], "PT60M")),
        time_series(period("2024-10-07T23:00Z", "2024-10-08T00:00Z", [30.0, 31.0], "PT30M")),
        time_series(period("2024-10-07T23:30Z", "2024-10-07T23:45Z", [15.0])),
        # A later, separate quarter hour leaves a gap: NaN, not zero.
        time_series(period("2024-10-08T01:30Z", "2024-10-08T01:45Z", [99.0])),
    )
    curve = parse_day_ahead(document)
    assert curve.start == utc(2024, 10, 7, 22)
    assert len(curve) == 15
    expected = [60, 60, 60, 60, 30, 30, 15, 31, 62, 62, 62, 62, np.nan, np.nan, 99]
    assert curve.prices == pytest.approx(np.array(expected) / 1000, nan_ok=True)


def test_no_matching_data_acknowledgement() -> None:
    with pytest.raises(PricesNotPublished, match="No matching data found"):
        parse_day_ahead(acknowledgement("999", NO_DATA_TEXT).encode())


@pytest.mark.parametrize(
    ("code", "text"),
    [
        ("999", "The amount of requested data exceeds allowed limit. Requested 400 documents, allowed 100."),
        ("A59", "Unknown request parameter"),
    ],
)
def test_other_acknowledgements(code: str, text: str) -> None:
    with pytest.raises(PriceSourceError, match=re.escape(f"{code}: {text}")) as raised:
        parse_day_ahead(acknowledgement(code, text))
    assert not isinstance(raised.value, PricesNotPublished)


@pytest.mark.parametrize(
    "body",
    [
        HTML_503,
        HTML_503.encode(),
        b"",
        "   \n",
        b"\x00\xff garbage",
        "Service Unavailable",
        "<html><body><h1>503</h1></body></html>",  # well-formed, but not a price document
        '<?xml version="1.0"?><GL_MarketDocument xmlns="urn:x"><type>A65</type></GL_MarketDocument>',
    ],
)
def test_not_a_price_document(body: str | bytes) -> None:
    with pytest.raises(PriceSourceError) as raised:
        parse_day_ahead(body)
    assert not isinstance(raised.value, PricesNotPublished)


@pytest.mark.parametrize(
    ("series", "message"),
    [
        (time_series(period("2024-10-07T22:00Z", "2024-10-07T23:00Z", [1.0] * 4), unit="KWH"), "per MWh"),
        (time_series(period("2024-10-07T22:00Z", "2024-10-08T22:00Z", [1.0], "P1D")), "resolution"),
        (
            time_series(period("2024-10-07T22:00Z", "2024-10-07T23:00Z", [1.0] * 4))
            + time_series(period("2024-10-07T23:00Z", "2024-10-08T00:00Z", [1.0] * 4), currency="PLN"),
            "currencies",
        ),
        (time_series(period("2024-10-07T22:00Z", "2024-10-07T23:00Z", {})), "no intervals"),
        (time_series(period("2024-10-07T22:00Z", "2024-10-07T23:00Z", ["n/a"] * 4)), "malformed"),
    ],
)
def test_malformed_publications(series: str, message: str) -> None:
    with pytest.raises(PriceSourceError, match=message):
        parse_day_ahead(publication(series))


def test_curve_end_matches_documents() -> None:
    curve = parse_day_ahead(real_document("BE_60M_15M_mix.xml"))
    assert curve.end == utc(2024, 10, 8, 22)
    assert curve.known_until() == curve.end
    assert curve.slot_start(96) - curve.start == timedelta(days=1)
