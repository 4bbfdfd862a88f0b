"""Time and number formatting of the demo's report (local times, windows, money, PNG sizes)."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta
from datetime import time as dt_time
from typing import Any
from zoneinfo import ZoneInfo

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import SLOT
from .devices import CLOCK_UTC, DATE_UTC, ISO_UTC
from .process import DemoError


def local(iso: str | None, tz: ZoneInfo) -> datetime | None:
    """Parse an ISO datetime and convert it to the home's zone."""
    if not iso:
        return None
    return datetime.fromisoformat(iso).astimezone(tz)


def at(moment: datetime, tz: ZoneInfo, fmt: str = "%a %H:%M") -> str:
    """``moment`` in the home's zone as ``fmt`` with the zone's abbreviation: "Wed 04:00 CET"."""
    here = moment.astimezone(tz)
    return f"{here:{fmt}} {here.tzname()}"


def local_text(text: str, tz: ZoneInfo, after: datetime) -> str:
    """``text`` with the UTC times above in the home's zone, with its abbreviation.

    A bare clock time is the first such UTC time from ``after`` (aware) on: the explanations cover the 24 h from the
    plan's start.
    """

    def bare(clock: str) -> datetime:
        hour, minute = (int(part) for part in clock.split(":"))
        moment = after.astimezone(ZoneInfo("UTC")).replace(hour=hour, minute=minute, second=0, microsecond=0)
        return moment + timedelta(days=1) if moment < after - SLOT else moment

    def clocks(match: re.Match[str]) -> str:
        first = at(bare(match[1]), tz, "%H:%M")
        if match[3] is None:
            return first
        return f"{first.rsplit(' ', 1)[0]}{match[2]}{at(bare(match[3]), tz, '%H:%M')}"

    text = ISO_UTC.sub(lambda m: at(datetime.fromisoformat(m[0].replace("Z", "+00:00")), tz), text)
    text = DATE_UTC.sub(
        lambda m: at(datetime(int(m[3]), int(m[2]), int(m[1]), int(m[4]), int(m[5]), tzinfo=ZoneInfo("UTC")), tz,
                     "%d.%m.%Y %H:%M"),
        text,
    )
    return CLOCK_UTC.sub(clocks, text)


def run_time(appliance: dict[str, Any]) -> timedelta:
    """The load's shortest run, in whole 15-minute slots."""
    if appliance.get("contiguous"):
        minutes = float(appliance["duration_min"])
    else:
        minutes = 60.0 * appliance["energy_kwh"] / appliance["power_kw"]
    return SLOT * math.ceil(minutes / 15.0 - 1e-9)


def next_window(appliance: dict[str, Any], now: datetime, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The appliance's next daily window that can still hold its run, as the integration computes it.

    Only used to label the baseline ("start now" or a later window start); the plan itself comes from the service.
    """
    earliest, deadline = (
        dt_time.fromisoformat(appliance["earliest_start"]),
        dt_time.fromisoformat(appliance["deadline"]),
    )
    for offset in (-1, 0, 1, 2):
        day = now.astimezone(tz).date() + timedelta(days=offset)
        start = datetime.combine(day, earliest, tzinfo=tz)
        end = datetime.combine(day + timedelta(days=1) if deadline <= earliest else day, deadline, tzinfo=tz)
        start = max(start, now)
        if end - start >= max(run_time(appliance), SLOT):
            return start, end
    raise DemoError(f"no window for {appliance['name']}")


def png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, or None when ``data`` is not a PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def fmt_money(value: Any, currency: str) -> str:
    if not isinstance(value, (int, float)):
        return f"{value} {currency}"
    text = f"{float(value):.4f}"
    return f"{'0.0000' if text == '-0.0000' else text} {currency}"
