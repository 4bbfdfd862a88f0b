"""parse_day_ahead against the real ENTSO-E documents and synthetic A44 edge cases."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
import re
from zoneinfo import ZoneInfo

from a44 import HTML_503, NO_DATA_TEXT, acknowledgement, period, publication, real_document, time_series
import numpy as np
import pytest

from custom_components.agentic_hems.prices import (
    SLOT,
    PriceIssue,
    PricesNotPublished,
    PricesRefused,
    PriceSourceError,
    SlotTrust,
    parse_day_ahead,
)

BRUSSELS = ZoneInfo("Europe/Brussels")
ISO = "%Y-%m-%dT%H:%MZ"
DAY1 = datetime(2024, 10, 7, 22, tzinfo=UTC)  # 2024-10-08 in Brussels (CEST)
DAY2 = DAY1 + timedelta(days=1)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def day(start: datetime, points: list[float] | dict[int, float] | list[object], resolution: str = "PT60M") -> str:
    """A <Period> over the 24-hour delivery day from ``start``."""
    end = start + timedelta(days=1)
    return period(start.strftime(ISO), end.strftime(ISO), points, resolution)  # type: ignore[arg-type]


def hourly(start: datetime, values: list[float]) -> np.ndarray:
    """Expected 15-minute EUR/kWh prices of hourly EUR/MWh ``values``."""
    return np.repeat(np.array(values, dtype=float) / 1000, 4)


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
    document = publication(time_series(day(DAY1, {1: 10.0, 3: 30.0, 5: -5.0}), curve_type="A03"))
    curve = parse_day_ahead(document)
    assert len(curve) == 96
    assert curve.prices == pytest.approx(hourly(DAY1, [10, 10, 30, 30] + [-5] * 20))


def test_a01_missing_position_refuses_its_day() -> None:
    """Under curveType A01 a missing position leaves the day incomplete: it is refused, never zero or stretched."""
    document = publication(
        time_series(day(DAY1, [float(i) for i in range(24)]), day(DAY2, {k: 1.0 for k in range(1, 25) if k != 3}))
    )
    curve = parse_day_ahead(document)
    assert curve.prices[:96] == pytest.approx(hourly(DAY1, list(range(24))))
    assert np.isnan(curve.prices[96:]).all()
    (span,) = curve.issues()
    assert (span.start, span.end, span.note.issue) == (DAY2, DAY2 + timedelta(days=1), PriceIssue.NOT_WHOLE_DAY)
    assert span.note.detail == (
        "period 2024-10-08T22:00Z to 2024-10-09T22:00Z: 23 of 24 positions given under curveType A01"
    )


def test_a03_without_position_one_is_refused() -> None:
    with pytest.raises(PricesRefused, match="2 of 24 positions given under curveType A03"):
        parse_day_ahead(publication(time_series(day(DAY1, {2: 1.0, 5: 2.0}), curve_type="A03")))


def test_de_lu_classification_sequences() -> None:
    """DE_LU documents carry SDAC (position 1) and a local auction (position 2); sequence selects one."""
    document = publication(
        time_series(day(DAY1, [10.0] * 24), sequence=2, zone="10Y1001A1001A82H"),
        time_series(day(DAY1, [90.0] * 24), sequence=1, zone="10Y1001A1001A82H"),
    )
    assert parse_day_ahead(document).prices == pytest.approx([0.09] * 96)
    assert parse_day_ahead(document, sequence=1).prices == pytest.approx([0.09] * 96)
    assert parse_day_ahead(document, sequence=2).prices == pytest.approx([0.01] * 96)
    with pytest.raises(PricesNotPublished):
        parse_day_ahead(document, sequence=3)


def test_series_without_sequence_element_is_kept_for_any_sequence() -> None:
    document = publication(time_series(day(DAY1, [42.0] * 24)))
    assert parse_day_ahead(document, sequence=2).prices == pytest.approx([0.042] * 96)


def test_non_day_ahead_contract_is_dropped() -> None:
    """A TimeSeries of contract type A07 (intraday) must not leak into day-ahead prices."""
    document = publication(
        time_series(day(DAY1, [500.0] * 96, "PT15M"), contract="A07"),
        time_series(day(DAY1, [50.0] * 24)),
        time_series(day(DAY2, [700.0] * 24), contract="A07"),
    )
    curve = parse_day_ahead(document)
    assert len(curve) == 96
    assert curve.prices == pytest.approx([0.05] * 96)


def test_only_other_contracts_is_not_published() -> None:
    document = publication(time_series(day(DAY1, [1.0] * 24), contract="A07"))
    with pytest.raises(PricesNotPublished):
        parse_day_ahead(document)


def test_mixed_resolutions_merge_finer_wins() -> None:
    """Hourly, half-hourly and quarter-hourly days merge into one 15-minute curve; the finest day wins."""
    day4 = DAY1 + timedelta(days=3)
    document = publication(
        time_series(day(DAY1, [60.0] * 24), day(DAY2, [61.0] * 24)),
        time_series(day(DAY2, [30.0 + i % 2 for i in range(48)], "PT30M")),
        time_series(day(DAY1, [float(i) for i in range(96)], "PT15M")),
        time_series(day(day4, [99.0] * 96, "PT15M")),  # a later, separate day leaves a gap: NaN, not zero
    )
    curve = parse_day_ahead(document)
    assert curve.start == DAY1 and len(curve) == 4 * 96
    assert curve.prices[:96] == pytest.approx(np.arange(96) / 1000)
    assert curve.prices[96:192] == pytest.approx(np.repeat([0.030, 0.031] * 24, 2))
    assert np.isnan(curve.prices[192:288]).all()
    assert curve.prices[288:] == pytest.approx([0.099] * 96)
    assert not curve.issues()


@pytest.mark.parametrize("bad", ["INF", "-INF", "NaN", "inf", "1e999", "n/a", ""])
def test_non_finite_or_unreadable_prices_refuse_their_day_only(bad: str) -> None:
    document = publication(time_series(day(DAY1, [50.0] * 24), day(DAY2, [40.0] * 20 + [bad] + [40.0] * 3)))
    curve = parse_day_ahead(document)
    assert curve.prices[:96] == pytest.approx([0.05] * 96)  # today's good prices survive tomorrow's bad one
    assert np.isnan(curve.prices[96:]).all() and not np.isinf(curve.prices).any()
    note = curve.note_at(96)
    assert note is not None and note.issue is PriceIssue.BAD_VALUE
    assert note.detail.endswith("at 2024-10-09T18:00Z")


def test_identical_series_merge() -> None:
    document = publication(time_series(day(DAY1, [50.0] * 24)), time_series(day(DAY1, [50.0] * 24)))
    curve = parse_day_ahead(document)
    assert curve.prices == pytest.approx([0.05] * 96) and not curve.issues()


def test_one_position_with_two_prices_is_a_conflict() -> None:
    body = period(DAY1.strftime(ISO), DAY2.strftime(ISO), [50.0] * 24, "PT60M").replace(
        "</Period>", "<Point><position>3</position><price.amount>51</price.amount></Point></Period>"
    )
    with pytest.raises(PricesRefused, match=r"two prices for 2024-10-08T00:00Z: 50 and 51 EUR/MWh"):
        parse_day_ahead(publication(time_series(body)))


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("2024-10-07T22:00Z", "2024-10-07T23:00Z"),  # one hour
        ("2024-10-07T23:00Z", "2024-10-08T23:00Z"),  # 24 hours, but not a CEST delivery day
        ("2024-10-07T22:00Z", "2024-10-09T22:00Z"),  # two days in one Period
    ],
)
def test_a_period_must_be_one_delivery_day(start: str, end: str) -> None:
    with pytest.raises(PricesRefused, match="is not one CET/CEST delivery day"):
        parse_day_ahead(publication(time_series(period(start, end, [1.0] * 48, "PT60M"))))


def test_a_day_of_zeros_is_doubtful() -> None:
    """ENTSO-E fetched before publication answering tomorrow with 0.0 throughout: kept, but doubtful."""
    curve = parse_day_ahead(publication(time_series(day(DAY1, [50.0] * 24), day(DAY2, [0.0] * 24))))
    assert curve.trust().tolist() == [SlotTrust.KNOWN] * 96 + [SlotTrust.DOUBTFUL] * 96
    assert curve.note_at(96).issue is PriceIssue.ZERO_DAY


def test_a_tail_of_zeros_is_doubtful() -> None:
    """The same pattern at the tail: the last day's prices end in two hours of exact zeros."""
    curve = parse_day_ahead(publication(time_series(day(DAY1, [50.0] * 24), day(DAY2, [40.0] * 22 + [0.0] * 2))))
    trust = curve.trust()
    assert (trust[:184] == SlotTrust.KNOWN).all() and (trust[184:] == SlotTrust.DOUBTFUL).all()
    assert curve.note_at(190).issue is PriceIssue.ZERO_TAIL
    assert curve.note_at(190).detail.endswith("from 2024-10-09T20:00Z to the end are exactly 0 (placeholders?)")


def test_zeros_inside_a_day_or_a_short_tail_are_trusted() -> None:
    curve = parse_day_ahead(publication(time_series(day(DAY1, [0.0] * 12 + [5.0] * 11 + [0.0]))))
    assert not curve.issues() and (curve.trust() == SlotTrust.KNOWN).all()


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
    ("series", "error", "message"),
    [
        (time_series(day(DAY1, [1.0] * 24), unit="KWH"), PriceSourceError, "per MWh"),
        (time_series(day(DAY1, [1.0], "P1D")), PricesRefused, "resolution 'P1D' is not supported"),
        (
            time_series(day(DAY1, [1.0] * 24)) + time_series(day(DAY2, [1.0] * 24), currency="PLN"),
            PriceSourceError,
            "currencies",
        ),
        (time_series(day(DAY1, {})), PricesRefused, "0 of 24 positions"),
        (time_series(day(DAY1, ["n/a"] * 24)), PricesRefused, "not a price: 'n/a'"),
        (time_series(day(DAY1, [1.0] * 24), curve_type="A02"), PricesRefused, "curveType 'A02'"),
        (time_series(period("soon", "later", [1.0])), PriceSourceError, "timeInterval"),
    ],
)
def test_malformed_publications(series: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_day_ahead(publication(series))


def test_curve_end_matches_documents() -> None:
    curve = parse_day_ahead(real_document("BE_60M_15M_mix.xml"))
    assert curve.end == utc(2024, 10, 8, 22)
    assert curve.known_until() == curve.end
    assert curve.slot_start(96) - curve.start == timedelta(days=1)
