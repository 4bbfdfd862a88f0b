"""Rate limits: sliding day, hour and minute windows, shared or per user, and when a refused caller may call again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
import random

import pytest

from custom_components.agentic_hems.security.ratelimit import WINDOWS, RateLimiter, Refusal

T0 = datetime(2026, 11, 30, 8, tzinfo=UTC)


def test_per_user_minute() -> None:
    limiter = RateLimiter(daily=100, hourly=100, per_user_minute=2)
    assert [limiter.check("a", T0 + timedelta(seconds=s)) for s in (0, 1, 2)] == [
        None, None, Refusal("minute", T0 + timedelta(seconds=60))]
    assert limiter.check("b", T0 + timedelta(seconds=3)) is None  # another user
    assert limiter.check("a", T0 + timedelta(seconds=60)) is None  # the first one left the window


def test_hour_and_day() -> None:
    limiter = RateLimiter(daily=5, hourly=3, per_user_minute=100)
    assert [limiter.check(None, T0 + timedelta(minutes=m)) for m in range(4)] == [
        None, None, None, Refusal("hour", T0 + timedelta(hours=1))]
    assert limiter.check(None, T0 + timedelta(minutes=61)) is None  # an hour later
    assert limiter.check(None, T0 + timedelta(minutes=62)) is None
    assert limiter.check(None, T0 + timedelta(hours=3)) == Refusal("day", T0 + timedelta(days=1))  # 5 today
    assert limiter.check(None, T0 + timedelta(days=1, minutes=1)) is None


def test_shared_windows_count_all_users_together() -> None:
    limiter = RateLimiter(daily=100, hourly=3, per_user_minute=100)
    assert [limiter.check(u, T0 + timedelta(minutes=i)) for i, u in enumerate("abc")] == [None] * 3
    assert limiter.check("owner", T0 + timedelta(minutes=5)) == Refusal("hour", T0 + timedelta(hours=1))


def test_an_exempt_caller_passes_full_shared_windows_and_still_counts() -> None:
    """An administrator is not locked out by the others' hour; their calls count toward it for the others."""
    limiter = RateLimiter(daily=100, hourly=2, per_user_minute=100)
    assert [limiter.check("kid", T0 + timedelta(minutes=m)) for m in (0, 1)] == [None, None]
    assert limiter.check("kid", T0 + timedelta(minutes=2)) == Refusal("hour", T0 + timedelta(hours=1))
    assert limiter.check("owner", T0 + timedelta(minutes=3), exempt=True) is None
    assert limiter.check("kid", T0 + timedelta(hours=1, minutes=1)) is None  # the kid's two calls left the hour
    assert limiter.check("kid", T0 + timedelta(hours=1, minutes=2)) == Refusal(
        "hour", T0 + timedelta(hours=1, minutes=3))  # the owner's call at minute 3 counts


def test_per_user_windows_leave_the_others_alone_and_exempt_lifts_day_and_hour() -> None:
    limiter = RateLimiter(daily=4, hourly=2, per_user_minute=3, shared=False)
    assert [limiter.check("kid", T0 + timedelta(minutes=m)) for m in (0, 1, 2)] == [
        None, None, Refusal("hour", T0 + timedelta(hours=1))]
    assert [limiter.check("owner", T0 + timedelta(minutes=3, seconds=s), exempt=True) for s in range(4)] == [
        None, None, None, Refusal("minute", T0 + timedelta(minutes=4))]  # no hour limit, the minute one holds
    assert [limiter.check(None, T0 + timedelta(minutes=m)) for m in (5, 6)] == [None, None]  # automations
    assert limiter.check("kid", T0 + timedelta(hours=1)) is None
    assert limiter.check("kid", T0 + timedelta(hours=1, minutes=1)) is None
    # four today: the day window is full until the first call is a day old
    assert limiter.check("kid", T0 + timedelta(hours=3)) == Refusal("day", T0 + timedelta(days=1))


@pytest.mark.parametrize("shared", [True, False])
def test_decisions_and_retry_times_match_a_brute_force_count(shared: bool) -> None:
    """Each decision is a recount of the admitted calls in each window; a refusal's retry time is the earliest moment
    (searched over every moment a counted call leaves a window) at which the same caller would be admitted."""
    full_seen: set[str] = set()
    for seed in range(6):
        full_seen |= _simulate(random.Random(seed), shared)
    assert full_seen == {"minute", "hour", "day"}  # every window was reached


def _simulate(rng: random.Random, shared: bool) -> set[str]:
    """Run 600 calls at random moments by random callers through a limiter and the brute force; the full windows."""
    limiter = RateLimiter(daily=40, hourly=8, per_user_minute=3, shared=shared)
    admitted: list[tuple[str | None, datetime]] = []
    now = T0
    full_seen: set[str] = set()
    for _ in range(600):
        now += timedelta(seconds=rng.choice([1, 1, 1, 1, 2, 5, 20, 60, 300, 900, 3000]))
        user = rng.choice(["a", "b", None])
        exempt = user == "a" and rng.random() < 0.5
        mine = [t for u, t in admitted if u == user]
        counted = [t for _, t in admitted] if shared else mine
        windows = {"minute": (3, mine)} | ({} if exempt else {"hour": (8, counted), "day": (40, counted)})

        def full(at: datetime) -> set[str]:
            return {
                name
                for name, (limit, stamps) in windows.items()  # noqa: B023
                if sum(1 for s in stamps if at - WINDOWS[name] < s <= at) >= limit
            }

        refusal = limiter.check(user, now, exempt=exempt)
        assert (refusal is None) == (not full(now))
        if refusal is None:
            admitted.append((user, now))
            continue
        full_seen |= full(now)
        candidates = sorted(t + span for t in counted + mine for span in WINDOWS.values() if t + span > now)
        assert refusal.retry_at == next(t for t in candidates if not full(t))
        assert refusal.window in full(refusal.retry_at - timedelta(microseconds=1))
    return full_seen
