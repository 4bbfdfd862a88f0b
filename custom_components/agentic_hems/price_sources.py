"""Where the price curve comes from: thin HA adapters around the pure parsers in ``prices/``."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from homeassistant.const import ATTR_UNIT_OF_MEASUREMENT, CONF_API_KEY
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.util import dt as dt_util

from .const import (
    CONF_AREA,
    CONF_BIDDING_ZONE,
    CONF_NORDPOOL_ENTRY,
    CONF_PRICE_ENTITY,
    CONF_PRICE_SOURCE,
    FETCH_TIMEOUT_S,
    SOURCE_ENTSOE,
    SOURCE_NORDPOOL,
    SOURCE_SENSOR,
)
from .prices import CannotConnect, PriceCurve, PriceError, PriceSourceError, PricesRefused

if TYPE_CHECKING:
    from .runtime import AgenticHemsConfigEntry


class PriceSource(Protocol):
    """Fetches spot prices (per kWh) for ``[start, end)`` in UTC.

    ``daily_publication`` is True for day-ahead markets that publish tomorrow around 12:45 CET (fetch then).
    ``read_every_slot`` is True for a local sensor, whose attributes may change at any time. The bundled sample is
    neither: it is re-dated only when the cache no longer covers the local today and tomorrow.
    """

    daily_publication: bool
    read_every_slot: bool

    async def async_fetch(self, start: datetime, end: datetime) -> PriceCurve:
        """Return the curve; raises a ``PriceError`` subclass on failure."""
        ...


@dataclass
class SampleSource:
    """Bundled real ENTSO-E documents re-dated to the local today and tomorrow."""

    hass: HomeAssistant
    daily_publication: bool = False
    read_every_slot: bool = False

    async def async_fetch(self, start: datetime, end: datetime) -> PriceCurve:
        """Re-date the sample to the local day of ``start`` and the next one."""
        from .prices.sample import sample_curve  # noqa: PLC0415 - parses XML with pandas: keep off start-up

        tz = dt_util.get_default_time_zone()
        today = dt_util.as_local(start).date()
        curve = await self.hass.async_add_executor_job(sample_curve, today, tz)
        return curve.replace(fetched_at=dt_util.utcnow())


@dataclass
class EntsoeSource:
    """ENTSO-E Transparency Platform, document type A44, through HA's shared aiohttp session."""

    hass: HomeAssistant
    api_key: str
    zone: str
    daily_publication: bool = True
    read_every_slot: bool = False

    async def async_fetch(self, start: datetime, end: datetime) -> PriceCurve:
        """Fetch (at most ``FETCH_TIMEOUT_S`` in all) and parse (parsing runs in the executor)."""
        from .prices.entsoe import async_fetch_day_ahead, parse_day_ahead  # noqa: PLC0415

        try:
            # aiohttp's total timeout bounds the request; this bounds the whole download whatever the session does.
            async with asyncio.timeout(FETCH_TIMEOUT_S):
                body = await async_fetch_day_ahead(
                    async_get_clientsession(self.hass), self.api_key, self.zone, start, end, timeout=FETCH_TIMEOUT_S
                )
        except TimeoutError as err:
            raise CannotConnect(f"ENTSO-E did not answer within {FETCH_TIMEOUT_S:.0f} s") from err
        curve = await self.hass.async_add_executor_job(parse_day_ahead, body)
        return curve.replace(fetched_at=dt_util.utcnow())


@dataclass
class NordpoolSource:
    """The core Nord Pool integration's ``nordpool.get_prices_for_date`` service (prices per MWh, UTC)."""

    hass: HomeAssistant
    nordpool_entry: str
    area: str
    daily_publication: bool = True
    read_every_slot: bool = False

    async def async_fetch(self, start: datetime, end: datetime) -> PriceCurve:
        """Call the service once per local day in the window and merge the days.

        A refused day stays in the curve as unknown slots with its note; a day not published yet ends the window
        (today's prices are kept).

        Raises:
            PriceError: the first day is not published or the service fails for it.
            PricesRefused: every day asked for was refused.

        """
        entry = self.hass.config_entries.async_get_entry(self.nordpool_entry)
        if entry is None:
            raise PriceSourceError("the Nord Pool config entry is gone")
        currency = str(entry.data.get("currency", "EUR"))
        curve: PriceCurve | None = None
        day = dt_util.as_local(start).date()
        while dt_util.as_utc(dt_util.start_of_local_day(day)) < end:
            try:
                part = await self._async_day(day, currency)
            except PricesRefused as err:
                part = err.curve
            except PriceError:
                if curve is not None:  # tomorrow not published yet: keep today
                    break
                raise
            curve = part if curve is None else curve.merge(part)
            day += timedelta(days=1)
        if curve is None:
            raise PriceSourceError("Nord Pool returned no prices")
        curve = curve.replace(source=SOURCE_NORDPOOL, fetched_at=dt_util.utcnow())
        if curve.known_until() is None:
            raise PricesRefused(curve.issues(), curve)
        return curve

    async def _async_day(self, day: date, currency: str) -> PriceCurve:
        """One delivery day from the service, refused unless every item lies in ``day``.

        A service error becomes a PriceSourceError.
        """
        from .prices.nordpool import curve_from_nordpool  # noqa: PLC0415

        try:
            response: Any = await self.hass.services.async_call(
                "nordpool",
                "get_prices_for_date",
                {"config_entry": self.nordpool_entry, "date": day.isoformat(), "areas": [self.area]},
                blocking=True,
                return_response=True,
            )
        except HomeAssistantError as err:
            raise PriceSourceError(str(err)) from err
        return curve_from_nordpool(response, area=self.area, currency=currency, day=day)


@dataclass
class SensorSource:
    """Another HA price sensor's today/tomorrow attributes."""

    hass: HomeAssistant
    entity_id: str
    daily_publication: bool = False
    read_every_slot: bool = True

    async def async_fetch(self, start: datetime, end: datetime) -> PriceCurve:
        """Read the sensor's current attributes (plain ``today`` lists are taken as HA's local today)."""
        from .prices.attributes import curve_from_attributes  # noqa: PLC0415

        state = self.hass.states.get(self.entity_id)
        if state is None:
            raise PriceSourceError(f"{self.entity_id} does not exist")
        curve = curve_from_attributes(
            state.attributes,
            unit=state.attributes.get(ATTR_UNIT_OF_MEASUREMENT),
            day_start=dt_util.start_of_local_day(),
        )
        return curve.replace(source=SOURCE_SENSOR, fetched_at=dt_util.utcnow())


def source_for_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> PriceSource:
    """Return the price source configured in ``entry.data``."""
    data = entry.data
    source = data[CONF_PRICE_SOURCE]
    if source == SOURCE_ENTSOE:
        return EntsoeSource(hass, data[CONF_API_KEY], data[CONF_BIDDING_ZONE])
    if source == SOURCE_NORDPOOL:
        return NordpoolSource(hass, data[CONF_NORDPOOL_ENTRY], data[CONF_AREA])
    if source == SOURCE_SENSOR:
        return SensorSource(hass, data[CONF_PRICE_ENTITY])
    return SampleSource(hass)
