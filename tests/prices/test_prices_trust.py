"""The trust model of a PriceCurve (known, doubtful, unknown with a note) and the day checks every reader shares."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
import math
from zoneinfo import ZoneInfo

from hypothesis import given, strategies as st
import numpy as np
import pytest

from custom_components.agentic_hems.prices import SLOT, PriceCurve, PriceIssue, PriceNote, PriceSourceError, SlotTrust
from custom_components.agentic_hems.prices.curve import MAX_SLOTS, local_day_bounds
from custom_components.agentic_hems.prices.days import Day, assemble, refused_day, whole_day

BRUSSELS = ZoneInfo("Europe/Brussels")
T = datetime(2025, 1, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)
ZERO = PriceNote(PriceIssue.ZERO_DAY, "d: zeros")
GONE = PriceNote(PriceIssue.BAD_VALUE, "d: inf")


def curve(prices: list[float], marks: list[int] | None = None) -> PriceCurve:
    """A curve from T with the notes ZERO (mark 0) and GONE (mark 1) when ``marks`` are given."""
    return PriceCurve(
        start=T,
        resolution=SLOT,
        prices=np.array(prices, dtype=float),
        notes=(ZERO, GONE) if marks else (),
        marks=np.array(marks or [], dtype=np.int16),
    )


def test_trust_per_slot() -> None:
    c = curve([1.0, 0.0, math.nan, math.nan], [-1, 0, 1, -1])
    assert c.trust().tolist() == [SlotTrust.KNOWN, SlotTrust.DOUBTFUL, SlotTrust.UNKNOWN, SlotTrust.UNKNOWN]
    assert (c.note_at(0), c.note_at(1), c.note_at(2), c.note_at(3), c.note_at(9)) == (None, ZERO, GONE, None, None)
    spans = [(s.start, s.end, s.note) for s in c.issues()]
    assert spans == [(T + SLOT, T + 2 * SLOT, ZERO), (T + 2 * SLOT, T + 3 * SLOT, GONE)]


@pytest.mark.parametrize(
    ("prices", "marks"),
    [
        ([math.inf, 1.0], None),  # never infinite
        ([1.0, -math.inf], None),
        ([1.0, 2.0], [-1, 1]),  # a refused slot has a price
        ([math.nan, 2.0], [0, -1]),  # a doubted slot has none
        ([1.0, 2.0], [0]),  # wrong shape
        ([1.0, 2.0], [0, 2]),  # no such note
    ],
)
def test_invalid_curves(prices: list[float], marks: list[int] | None) -> None:
    with pytest.raises(ValueError):
        curve(prices, marks)


def test_window_keeps_notes_and_drops_unused_ones() -> None:
    c = curve([1.0, 0.0, math.nan, 2.0], [-1, 0, 1, -1])
    w = c.window(T + 2 * SLOT, T + 6 * SLOT)
    assert w.notes == (GONE,) and w.marks.tolist() == [0, -1, -1, -1]
    assert w.trust().tolist() == [SlotTrust.UNKNOWN, SlotTrust.KNOWN, SlotTrust.UNKNOWN, SlotTrust.UNKNOWN]


def test_merge_takes_the_more_trusted_slot_and_newer_on_equal_trust() -> None:
    old = curve([1.0, 1.0, 1.0, math.nan, math.nan, 1.0], [-1, 0, -1, 1, -1, -1])
    newer = curve([2.0, 2.0, 0.0, 2.0, math.nan, math.nan], [-1, -1, 0, -1, 1, 1])
    merged = old.merge(newer)
    # known over known: newer; known over doubtful: newer; doubtful never over known; a price fills a refusal;
    # a refusal fills nothing-with-a-reason; an unknown newer slot never erases a price.
    np.testing.assert_array_equal(merged.prices, [2.0, 2.0, 1.0, 2.0, math.nan, 1.0])
    assert [merged.note_at(i) for i in range(6)] == [None, None, None, None, GONE, None]


def test_dict_round_trip_keeps_notes() -> None:
    c = curve([1.0, 0.0, math.nan, math.nan], [-1, 0, 1, -1])
    data = c.as_dict()
    at = "2025-01-01T00:{}:00+00:00".format
    assert data["notes"] == [
        {"start": at(15), "end": at(30), "issue": "zero_day", "trust": "doubtful", "detail": "d: zeros"},
        {"start": at(30), "end": at(45), "issue": "bad_value", "trust": "unknown", "detail": "d: inf"},
    ]
    back = PriceCurve.from_dict(data)
    np.testing.assert_array_equal(back.prices, c.prices)
    assert back.issues() == c.issues()
    older = {k: v for k, v in data.items() if k != "notes"}  # stored before notes existed
    assert not PriceCurve.from_dict(older).issues()


@pytest.mark.parametrize(("day", "hours"), [(date(2026, 3, 29), 23), (date(2026, 1, 14), 24), (date(2025, 10, 26), 25)])
@pytest.mark.parametrize("minutes", [15, 30, 60])
def test_whole_days_at_every_resolution_and_dst(day: date, hours: int, minutes: int) -> None:
    start, end = local_day_bounds(day, BRUSSELS)
    step = timedelta(minutes=minutes)
    count = hours * 60 // minutes
    items = [(start + k * step, None, float(k)) for k in range(count)]
    accepted = whole_day("d", start, end, items, scale=1.0)
    assert accepted.note is None and accepted.step == step
    np.testing.assert_array_equal(accepted.prices, np.repeat(np.arange(count, dtype=float), minutes // 15))
    for wrong in (count - 1, count + 1):  # the count of another day length is refused
        items = [(start + k * (end - start) / wrong, None, 1.0) for k in range(wrong)]
        assert whole_day("d", start, end, items, scale=1.0).note.issue is PriceIssue.NOT_WHOLE_DAY


def test_item_ends_must_tile_the_day() -> None:
    start, end = T, T + 24 * HOUR
    hourly = [(start + k * HOUR, start + (k + 1) * HOUR, 1.0) for k in range(24)]
    assert whole_day("d", start, end, hourly, scale=1.0).note is None
    uneven = [*hourly[:-1], (start + 23 * HOUR, start + 23 * HOUR + SLOT, 1.0)]
    assert whole_day("d", start, end, uneven, scale=1.0).note.issue is PriceIssue.NOT_WHOLE_DAY
    beyond = [*hourly[:-1], (start + 23 * HOUR, end + HOUR, 1.0)]
    assert whole_day("d", start, end, beyond, scale=1.0).note.issue is PriceIssue.WRONG_DAY


def test_none_values_are_unknown_slots_of_an_accepted_day() -> None:
    items = [(T + k * HOUR, None, None if k == 5 else 2.0) for k in range(24)]
    accepted = whole_day("d", T, T + 24 * HOUR, items, scale=0.5)
    assert accepted.note is None
    assert np.isnan(accepted.prices[20:24]).all() and accepted.prices[0] == 1.0


def test_assemble_finer_wins_and_unknown_never_overwrites() -> None:
    hourly = whole_day("h", T, T + 24 * HOUR, [(T + k * HOUR, None, 1.0) for k in range(24)], scale=1.0)
    items = [(T + k * SLOT, None, None if k < 4 else 2.0) for k in range(96)]
    quarter = whole_day("q", T, T + 24 * HOUR, items, scale=1.0)
    c = assemble([quarter, hourly], currency="EUR", source="x")
    np.testing.assert_array_equal(c.prices, [1.0] * 4 + [2.0] * 92)


def test_assemble_refusal_wins_over_another_resolution() -> None:
    hourly = whole_day("h", T, T + 24 * HOUR, [(T + k * HOUR, None, 1.0) for k in range(24)], scale=1.0)
    items = [(T + 24 * HOUR + k * HOUR, None, 3.0) for k in range(24)]
    later = whole_day("n", T + 24 * HOUR, T + 48 * HOUR, items, scale=1.0)
    refused = refused_day("q", T, T + 24 * HOUR, PriceIssue.BAD_VALUE, "inf")
    c = assemble([hourly, refused, later], currency="EUR", source="x")
    assert np.isnan(c.prices[:96]).all() and c.note_at(0) == PriceNote(PriceIssue.BAD_VALUE, "q: inf")


def test_assemble_raises_when_nothing_is_left() -> None:
    with pytest.raises(PriceSourceError, match="no price items"):
        assemble([], currency="EUR", source="x")
    unknown = Day("d", T, T + HOUR, HOUR, np.full(4, np.nan))
    with pytest.raises(PriceSourceError, match="no known price"):
        assemble([unknown], currency="EUR", source="x")
    long = Day("d", T, T + SLOT * (MAX_SLOTS + 1), SLOT, np.ones(MAX_SLOTS + 1))
    with pytest.raises(PriceSourceError, match="exceed"):
        assemble([long], currency="EUR", source="x")


@given(st.lists(st.sampled_from([0.0, 0.0, 1.5, -2.0, math.nan]), min_size=96, max_size=96))
def test_zero_patterns(values: list[float]) -> None:
    """A day whose known prices are all 0 is doubtful; else a trailing run of >= 8 zeros is; else nothing is."""
    day = Day("d", T, T + 24 * HOUR, SLOT, np.array(values))
    c = assemble([day], currency="EUR", source="x") if not all(math.isnan(v) for v in values) else None
    if c is None:
        return
    known = [v for v in values if not math.isnan(v)]
    tail = len(values) - max((k + 1 for k, v in enumerate(values) if v != 0.0), default=0)
    trust = c.trust()
    if not any(known):
        assert {c.note_at(k).issue for k in range(96) if not math.isnan(values[k])} == {PriceIssue.ZERO_DAY}
    elif tail >= 8:
        assert (trust[96 - tail :] == SlotTrust.DOUBTFUL).all() and (trust[: 96 - tail] != SlotTrust.DOUBTFUL).all()
    else:
        assert not (trust == SlotTrust.DOUBTFUL).any()


def test_replace_with_prices_of_another_length_drops_the_notes() -> None:
    c = curve([1.0, 0.0, math.nan, math.nan], [-1, 0, 1, -1])
    assert c.replace(prices=c.prices * 2).issues() == c.issues()  # same slots: the notes still fit
    shorter = c.replace(prices=np.array([1.0, 2.0]))
    assert len(shorter) == 2 and not shorter.issues() and shorter.notes == ()
