"""What the grid tariff reads from Home Assistant: the month's peak so far and the public holidays.

:func:`async_month_peak` takes the recorder's 5-minute statistics (mean, in kW) of the import power sensor over the
current local month and returns its highest 15-minute average (:func:`..prices.tariffs.quarter_hour_peak`).
:func:`async_holidays` reads the local dates of a holiday calendar's events (HA's Holiday integration) through
``calendar.get_events``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from homeassistant.const import UnitOfPower
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.recorder import get_instance
from homeassistant.util import dt as dt_util

from ..const import LOGGER
from ..prices.tariffs import quarter_hour_peak


def month_start(now: datetime) -> datetime:
    """Return the UTC start of the local calendar month (HA's time zone) that ``now`` lies in."""
    local = dt_util.as_local(now)
    return local.replace(day=1, hour=0, minute=0, second=0, microsecond=0).astimezone(UTC)


async def async_month_peak(hass: HomeAssistant, entity_id: str, now: datetime) -> float | None:
    """Return the highest 15-minute average import (kW) of ``entity_id`` this local month up to ``now``.

    None without a recorder or without 5-minute statistics (the sensor needs a state class and a power unit).
    """
    if "recorder" not in hass.config.components:
        return None
    from homeassistant.components.recorder.statistics import statistics_during_period  # noqa: PLC0415 - recorder only

    stats = await get_instance(hass).async_add_executor_job(
        statistics_during_period,
        hass,
        month_start(now),
        now,
        {entity_id},
        "5minute",
        {"power": UnitOfPower.KILO_WATT},
        {"mean"},
    )
    rows = [row for row in stats.get(entity_id, []) if row.get("mean") is not None]
    if not rows:
        return None
    starts = [datetime.fromtimestamp(row["start"], UTC) for row in rows]
    return quarter_hour_peak(starts, [float(row["mean"] or 0.0) for row in rows])


async def async_holidays(hass: HomeAssistant, entity_id: str, start: datetime, end: datetime) -> set[date]:
    """Return the local dates from ``start`` to ``end`` the calendar's events cover (empty when unreadable).

    Each event is clipped to the local dates of ``start`` to ``end``, so an event spanning centuries costs no more
    than the horizon's days.
    """
    try:
        response = await hass.services.async_call(
            "calendar",
            "get_events",
            {"entity_id": entity_id, "start_date_time": start, "end_date_time": end},
            blocking=True,
            return_response=True,
        )
    except HomeAssistantError as err:
        LOGGER.warning("Grid tariff: cannot read the holidays of %s: %s", entity_id, err)
        return set()
    calendar = (response or {}).get(entity_id)
    events = calendar.get("events") if isinstance(calendar, dict) else None
    low, high = dt_util.as_local(start).date(), dt_util.as_local(end).date()
    days: set[date] = set()
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict):
            first, last = _day(str(event["start"])), _day(str(event["end"]))
            if first > high:
                continue
            begin, stop = max(first, low), min(max(last, first + timedelta(days=1)), high + timedelta(days=1))
            days.update(begin + timedelta(days=i) for i in range((stop - begin).days))
    return days


def _day(value: str) -> date:
    """Return the local date of an event bound (an all-day date or a datetime)."""
    return date.fromisoformat(value) if len(value) == 10 else dt_util.as_local(datetime.fromisoformat(value)).date()
