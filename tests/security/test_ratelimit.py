"""Rate limits for ask: global day and hour windows, per-user minute window, only accepted requests count."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from custom_components.agentic_hems.security.ratelimit import RateLimiter

T0 = datetime(2026, 11, 30, 8, tzinfo=UTC)


def test_per_user_minute() -> None:
    limiter = RateLimiter(daily=100, hourly=100, per_user_minute=2)
    assert [limiter.check("a", T0 + timedelta(seconds=s)) for s in (0, 1, 2)] == [None, None, "minute"]
    assert limiter.check("b", T0 + timedelta(seconds=3)) is None  # another user
    assert limiter.check("a", T0 + timedelta(seconds=60)) is None  # the first one left the window


def test_hour_and_day() -> None:
    limiter = RateLimiter(daily=5, hourly=3, per_user_minute=100)
    assert [limiter.check(None, T0 + timedelta(minutes=m)) for m in range(4)] == [None, None, None, "hour"]
    assert limiter.check(None, T0 + timedelta(minutes=61)) is None  # an hour later
    assert limiter.check(None, T0 + timedelta(minutes=62)) is None
    assert limiter.check(None, T0 + timedelta(hours=3)) == "day"  # 5 accepted today
    assert limiter.check(None, T0 + timedelta(days=1, minutes=1)) is None
