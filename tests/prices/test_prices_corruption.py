"""Property tests: every reader against generated sources with random corruption, and the plans made on them.

Two consecutive local days (Europe/Brussels, which is also the CET/CEST delivery day of ENTSO-E and Nord Pool;
DST days included) get published prices at 15, 30 or 60 minutes. Each day may be corrupted (truncated, an item
missing, an item beyond the day, the same instant twice, zeros, a non-finite value, a stale copy, a wrong date, the
source's own flag). The oracle below says, independently of the readers, what each slot must be: known with the
published price, doubtful (zeros) or unknown with a given issue. Then the planners run on what was read: no plan may
use a slot the source did not publish for that instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
import math
from typing import Any
from zoneinfo import ZoneInfo

from a44 import period, publication, time_series
from hypothesis import event, given, settings, strategies as st
import numpy as np
import pytest

from custom_components.agentic_hems.prices import (
    SLOT,
    PriceCurve,
    PriceIssue,
    PricesRefused,
    SlotTrust,
    curve_from_attributes,
    curve_from_nordpool,
    parse_day_ahead,
)
from custom_components.agentic_hems.prices.curve import local_day_bounds
from custom_components.agentic_hems.scheduling import LoadSpec, Reason, plan_contiguous, plan_energy, plan_joint

BRUSSELS = ZoneInfo("Europe/Brussels")
# Today and tomorrow: into and out of each DST change, and two ordinary days.
TODAYS = [
    date(2025, 3, 29), date(2025, 3, 30), date(2025, 10, 25), date(2025, 10, 26), date(2026, 1, 14), date(2026, 6, 10)
]  # fmt: skip
ISO = "%Y-%m-%dT%H:%MZ"
BAD = [math.inf, -math.inf, math.nan, "INF", "-INF", "NaN"]

SHAPES = ["entsoe", "raw", "timed", "combined", "plain", "nordpool"]
COMMON = ["none", "none", "truncate", "zeros", "nonfinite"]
CORRUPTIONS: dict[str, list[str]] = {
    "entsoe": [*COMMON, "drop_middle", "extra", "dup_conflict", "dup_same", "series_conflict", "zero_tail"],
    "raw": [*COMMON, "drop_middle", "extra", "dup_conflict", "dup_same", "stale", "flag", "wrong_date", "zero_tail"],
    "timed": [*COMMON, "drop_middle", "extra", "dup_conflict", "dup_same", "stale", "flag", "wrong_date", "zero_tail"],
    "combined": [*COMMON, "drop_middle", "dup_conflict", "dup_same", "flag", "zero_tail"],
    "plain": [*COMMON, "extra", "stale", "flag", "zero_tail"],
    "nordpool": [*COMMON, "drop_middle", "dup_conflict", "dup_same", "zero_tail"],
}
TOMORROW_ONLY = {"stale", "flag", "zero_tail"}
EXPECTED_ISSUE = {
    "truncate": PriceIssue.NOT_WHOLE_DAY,
    "drop_middle": PriceIssue.NOT_WHOLE_DAY,
    "nonfinite": PriceIssue.BAD_VALUE,
    "dup_conflict": PriceIssue.CONFLICT,
    "series_conflict": PriceIssue.CONFLICT,
    "flag": PriceIssue.SOURCE_INVALID,
    "wrong_date": PriceIssue.WRONG_DAY,
}


@dataclass(frozen=True)
class Day:
    """One published day: UTC bounds, step, prices in EUR/MWh (non-zero), and what is done to it."""

    local: date
    start: datetime
    end: datetime
    step: timedelta
    values: tuple[float, ...]
    corruption: str = "none"
    cut: int = 1  # items truncated, or the item index a corruption touches
    bad: object = math.inf

    @property
    def count(self) -> int:
        return len(self.values)

    def moments(self) -> list[datetime]:
        return [self.start + k * self.step for k in range(self.count)]


def expected_issue(shape: str, day: Day) -> PriceIssue | None:
    """The oracle: how a reader must treat ``day`` of ``shape`` (None: accepted)."""
    if day.corruption == "extra":
        return {"entsoe": PriceIssue.OUTSIDE_PERIOD, "plain": PriceIssue.NOT_WHOLE_DAY}.get(shape, PriceIssue.WRONG_DAY)
    if day.corruption == "stale":  # tomorrow still holds today's list
        return PriceIssue.SOURCE_INVALID if shape == "plain" else PriceIssue.WRONG_DAY
    return EXPECTED_ISSUE.get(day.corruption)


def published(day: Day) -> np.ndarray:
    """EUR/kWh per 15-minute slot of an accepted day, zeros where the corruption wrote zeros."""
    values = np.array(day.values, dtype=float) / 1000
    if day.corruption == "zeros":
        values[:] = 0.0
    if day.corruption == "zero_tail":
        values[-day.cut :] = 0.0
    return np.repeat(values, day.step // SLOT)


@st.composite
def days(draw: st.DrawFn, shape: str) -> list[Day]:
    """Today and tomorrow (local Brussels days, DST days included) with their prices and corruptions."""
    today = draw(st.sampled_from(TODAYS))
    out = []
    for offset in (0, 1):
        local = today + timedelta(days=offset)
        start, end = local_day_bounds(local, BRUSSELS)
        step = timedelta(minutes=draw(st.sampled_from([15, 30, 60])))
        count = (end - start) // step
        nonzero = st.integers(-50, -1) | st.integers(1, 300)
        values = tuple(float(v) for v in draw(st.lists(nonzero, min_size=count, max_size=count)))
        corruption = draw(st.sampled_from([c for c in CORRUPTIONS[shape] if offset == 1 or c not in TOMORROW_ONLY]))
        cut = draw(st.integers(1, count - 1))
        if corruption == "truncate" and shape == "plain":  # a plain list cut to another whole-day count is not
            valid = {(end - start) // timedelta(minutes=m) for m in (15, 30, 60)}  # detectable: leave those out
            cut = draw(st.sampled_from([k for k in range(1, count) if count - k not in valid]))
        if corruption == "zero_tail":
            cut = draw(st.integers(timedelta(hours=2) // step, count - 1))
        out.append(Day(local, start, end, step, values, corruption, cut, draw(st.sampled_from(BAD))))
    return out


# --- building each shape ---------------------------------------------------------------------------------------


def corrupted(day: Day, today: Day) -> list[tuple[datetime, Any]]:
    """(start, EUR/MWh value) items of ``day`` as the source hands them over (``today`` for a stale copy)."""
    source = today if day.corruption == "stale" else day
    items: list[tuple[datetime, Any]] = list(zip(source.moments(), source.values, strict=True))
    k = day.cut
    match day.corruption:
        case "truncate":
            items = items[:-k]
        case "drop_middle":
            del items[k]
        case "extra":
            items.append((day.end, 42.0))
        case "dup_conflict":
            items.insert(k, (items[k][0], items[k][1] + 1.0))
        case "dup_same":
            items.insert(k, items[k])
        case "zeros":
            items = [(moment, 0.0) for moment, _ in items]
        case "zero_tail":
            items = [(moment, 0.0 if i >= len(items) - k else v) for i, (moment, v) in enumerate(items)]
        case "nonfinite":
            items[k] = (items[k][0], day.bad)
        case "wrong_date":
            shift = timedelta(days=1 if day is today else -1)
            items = [(moment + shift, v) for moment, v in items]
    return items


def step_of(day: Day, today: Day) -> timedelta:
    return today.step if day.corruption == "stale" else day.step


def entsoe_document(days_: list[Day]) -> str:
    series = []
    for day in days_:
        points: dict[int, Any] = {}
        repeated = ""
        for moment, value in corrupted(day, days_[0]):
            position = (moment - day.start) // day.step + 1
            if position in points:  # the same position twice: written as a second Point
                repeated += f"<Point><position>{position}</position><price.amount>{value}</price.amount></Point>"
            else:
                points[position] = value
        resolution = f"PT{day.step.seconds // 60}M"
        body = period(day.start.strftime(ISO), day.end.strftime(ISO), points, resolution)
        series.append(time_series(body.replace("</Period>", repeated + "</Period>")))
        if day.corruption == "series_conflict":  # a second A01 series for the day, one price different
            other = dict(enumerate(day.values, start=1))
            other[day.cut] += 1.0
            series.append(time_series(period(day.start.strftime(ISO), day.end.strftime(ISO), other, resolution)))
    return publication(*series)


def attributes(shape: str, days_: list[Day]) -> dict[str, Any]:
    today, tomorrow = days_
    lists = [corrupted(today, today), corrupted(tomorrow, today)]
    steps = [today.step, step_of(tomorrow, today)]
    flagged = tomorrow.corruption == "flag" or (tomorrow.corruption == "stale" and shape == "plain")
    flags = {"tomorrow_valid": False} if flagged else {}
    if shape == "raw":
        raw = [[{"start": m, "end": m + step, "value": v} for m, v in items] for items, step in zip(lists, steps)]
        return {"raw_today": raw[0], "raw_tomorrow": raw[1], **flags}
    if shape == "timed":
        timed = [[{"time": m.isoformat(), "price": v} for m, v in items] for items in lists]
        return {"prices_today": timed[0], "prices_tomorrow": timed[1], **flags}
    if shape == "combined":
        return {"prices": [{"time": m.isoformat(), "price": v} for items in lists for m, v in items], **flags}
    return {"today": [v for _, v in lists[0]], "tomorrow": [v for _, v in lists[1]], **flags}


def nordpool_response(days_: list[Day]) -> dict[str, Any]:
    items = [
        {"start": m.isoformat(), "end": (m + day.step).isoformat(), "price": v}
        for day in days_
        for m, v in corrupted(day, days_[0])
    ]
    return {"SE3": items}


def read(shape: str, days_: list[Day]) -> PriceCurve:
    if shape == "entsoe":
        return parse_day_ahead(entsoe_document(days_))
    if shape == "nordpool":
        return curve_from_nordpool(nordpool_response(days_), area="SE3", currency="EUR")
    day_start = datetime.combine(days_[0].local, datetime.min.time(), tzinfo=BRUSSELS)
    return curve_from_attributes(attributes(shape, days_), unit="EUR/MWh", day_start=day_start)


def label(shape: str, day: Day) -> str:
    """The part of a note's detail that names the day."""
    if shape == "entsoe":
        return f"period {day.start:{ISO}}"
    if shape == "nordpool":
        return f"SE3 {day.local.isoformat()}"
    return f"({day.local.isoformat()})"


# --- the properties --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    prices: np.ndarray  # EUR/kWh, NaN where unknown
    trust: np.ndarray
    issues: list[tuple[int, int, PriceIssue, str]]  # refused slot ranges, the issue, the label


def oracle(shape: str, days_: list[Day]) -> Expected:
    origin = days_[0].start
    n = (days_[-1].end - origin) // SLOT
    prices, trust, issues = np.full(n, np.nan), np.full(n, SlotTrust.UNKNOWN, dtype=np.int8), []
    for day in days_:
        lo, hi = (day.start - origin) // SLOT, (day.end - origin) // SLOT
        if (issue := expected_issue(shape, day)) is not None:
            issues.append((lo, hi, issue, label(shape, day)))
            continue
        prices[lo:hi] = published(day)
        trust[lo:hi] = SlotTrust.DOUBTFUL if day.corruption == "zeros" else SlotTrust.KNOWN
        if day.corruption == "zero_tail":
            trust[hi - day.cut * (day.step // SLOT) : hi] = SlotTrust.DOUBTFUL
    return Expected(prices, trust, issues)


def check_curve(curve: PriceCurve, expected: Expected) -> None:
    """Slot by slot: the published price or unknown, the trust, and every refusal with its issue and day."""
    np.testing.assert_array_equal(curve.trust(), expected.trust)
    known = expected.trust != SlotTrust.UNKNOWN
    np.testing.assert_allclose(curve.prices[known], expected.prices[known], rtol=1e-12, atol=0)
    for lo, hi, issue, name in expected.issues:
        for i in (lo, hi - 1):
            note = curve.note_at(i)
            assert note is not None and note.issue is issue and name in note.detail, (i, note, issue)


def check_plans(curve: PriceCurve, expected: Expected, energy: float, minutes: int) -> None:
    """No plan uses a slot the source did not publish for that instant; a plan on doubtful slots says so."""
    window = {"earliest_start": curve.start, "deadline": curve.end}
    loads = [
        LoadSpec("dw", power_kw=2.0, duration_min=minutes, **window),
        LoadSpec("ev", power_kw=11.0, energy_kwh=energy, contiguous=False, **window),
    ]
    plans = [
        plan_energy(curve, max_power_kw=11.0, energy_kwh=energy, **window),
        plan_contiguous(curve, power_kw=2.0, duration_min=minutes, **window),
        *plan_joint(curve, loads, power_limit_kw=12.0),
    ]
    for plan in plans:
        used = plan.power_kw > 0
        assert (expected.trust[used] != SlotTrust.UNKNOWN).all()
        np.testing.assert_allclose(curve.prices[used], expected.prices[used], rtol=1e-12, atol=0)
        if not plan.feasible:
            continue
        if (expected.trust[used] == SlotTrust.DOUBTFUL).any():
            assert plan.reason is Reason.DOUBTFUL_PRICES and "planned on doubtful prices" in plan.detail
        else:
            assert plan.reason is (Reason.PARTIAL_PRICES if expected.issues else Reason.OPTIMAL)
        for _, _, _, name in expected.issues:  # the refusals in the window are named
            assert name in plan.detail


@pytest.mark.parametrize("shape", SHAPES)
@settings(derandomize=True, max_examples=150, deadline=None)
@given(data=st.data())
def test_readers_never_invent_a_price_and_plans_stand_on_published_ones(shape: str, data: st.DataObject) -> None:
    days_ = data.draw(days(shape))
    expected = oracle(shape, days_)
    event(f"today {days_[0].corruption}, tomorrow {days_[1].corruption}")
    if not expected.issues or len(expected.issues) < len(days_):
        curve = read(shape, days_).window(days_[0].start, days_[-1].end)
        check_curve(curve, expected)
        check_plans(curve, expected, data.draw(st.sampled_from([1.5, 7.0, 30.0])), data.draw(st.integers(15, 240)))
        return
    with pytest.raises(PricesRefused) as raised:  # nothing usable is left: the refusals say why
        read(shape, days_)
    spans = raised.value.spans
    assert [span.note.issue for span in spans] == [issue for _, _, issue, _ in expected.issues]
    assert all(name in span.note.detail for span, (*_, name) in zip(spans, expected.issues, strict=True))
