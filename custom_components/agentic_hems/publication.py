"""When day-ahead prices are due: the home's local days and the daily publication at 12:45 Europe/Brussels."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from homeassistant.util import dt as dt_util

from .const import PUBLICATION_HOUR, PUBLICATION_MINUTE, PUBLICATION_TZ


def local_days(now: datetime, days: int) -> tuple[datetime, datetime]:
    """UTC bounds of ``days`` local days starting with the local day of ``now``."""
    start = dt_util.start_of_local_day(dt_util.as_local(now).date())
    end = dt_util.start_of_local_day(dt_util.as_local(now).date() + timedelta(days=days))
    return dt_util.as_utc(start), dt_util.as_utc(end)


def publication_passed(now: datetime) -> bool:
    """Return True once today's day-ahead results are due (12:45 Europe/Brussels)."""
    brussels = now.astimezone(ZoneInfo(PUBLICATION_TZ))
    return brussels.time() >= time(PUBLICATION_HOUR, PUBLICATION_MINUTE)


def published_until(now: datetime) -> datetime:
    """UTC end of the day-ahead delivery days published at ``now``.

    The end of tomorrow in Europe/Brussels once today's results are due (12:45 there), else the end of today there.
    """
    brussels = ZoneInfo(PUBLICATION_TZ)
    day = now.astimezone(brussels).date() + timedelta(days=2 if publication_passed(now) else 1)
    return datetime(day.year, day.month, day.day, tzinfo=brussels).astimezone(UTC)


def wanted_window(now: datetime) -> tuple[datetime, datetime]:
    """Return what a day-ahead source should have cached at ``now``: local today and tomorrow, as far as published.

    In Europe/Brussels this is today before 12:45 and today and tomorrow after. West of it (Europe/Lisbon) the last
    local hour of a day belongs to the next market day, so it is only wanted once that day is published.
    """
    start, end = local_days(now, 2)
    return start, min(end, published_until(now))
