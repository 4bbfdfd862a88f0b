"""The price coordinator: cached curve, slot-boundary refresh, publication-time fetches with backoff."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryAuthFailed
from homeassistant.helpers.event import async_call_later, async_track_time_change
from homeassistant.helpers.storage import Store
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator, UpdateFailed
from homeassistant.util import dt as dt_util

from .const import (
    BACKOFF_MIN,
    CONF_GRID_FEE,
    CONF_MARKUP,
    CONF_VAT_ON_NEGATIVE,
    CONF_VAT_PERCENT,
    DEFAULT_OPTIONS,
    DOMAIN,
    LOGGER,
    PUBLICATION_HOUR,
    PUBLICATION_MINUTE,
    PUBLICATION_TZ,
    STORAGE_VERSION,
)
from .price_sources import PriceSource
from .prices import PriceCurve, PriceError
from .prices.errors import InvalidAuth
from .prices.formula import PriceFormula

if TYPE_CHECKING:
    from . import AgenticHemsConfigEntry


@dataclass(frozen=True)
class PriceData:
    """What the entities see: the spot curve as fetched and the total after the price formula (per kWh)."""

    spot: PriceCurve
    total: PriceCurve

    @property
    def sample(self) -> bool:
        """True when the prices are the bundled sample."""
        return self.spot.sample


def formula_from_options(options: dict[str, Any]) -> PriceFormula:
    """The price formula from entry options (VAT typed in percent)."""
    values = {**DEFAULT_OPTIONS, **options}
    return PriceFormula(
        markup=float(values[CONF_MARKUP]),
        vat=float(values[CONF_VAT_PERCENT]) / 100.0,
        grid_fee=float(values[CONF_GRID_FEE]),
        vat_on_negative=bool(values[CONF_VAT_ON_NEGATIVE]),
    )


def local_days(now: datetime, days: int) -> tuple[datetime, datetime]:
    """UTC bounds of ``days`` local days starting with the local day of ``now``."""
    start = dt_util.start_of_local_day(dt_util.as_local(now).date())
    end = dt_util.start_of_local_day(dt_util.as_local(now).date() + timedelta(days=days))
    return dt_util.as_utc(start), dt_util.as_utc(end)


def publication_passed(now: datetime) -> bool:
    """True once today's day-ahead results are due (12:45 Europe/Brussels)."""
    brussels = now.astimezone(ZoneInfo(PUBLICATION_TZ))
    return brussels.time() >= time(PUBLICATION_HOUR, PUBLICATION_MINUTE)


def covers(curve: PriceCurve | None, start: datetime, end: datetime) -> bool:
    """True when ``curve`` has a known price for every slot of ``[start, end)``."""
    if curve is None or curve.start > start or curve.end < end:
        return False
    window = curve.window(start, end).prices
    return bool(window.size) and not bool((window != window).any())


class PriceCoordinator(DataUpdateCoordinator[PriceData]):
    """Keeps today's and tomorrow's prices.

    - recomputes from its cache at every slot boundary, with no HTTP;
    - fetches when today is missing, or when tomorrow is missing after 12:45 Europe/Brussels, backing off
      5, 10, 20, 40 then 60 minutes until published;
    - keeps the last good curve when a fetch fails, so entities stay available while it covers now;
    - persists the spot curve with ``Store`` so a restart without network still has today's prices.
    """

    config_entry: AgenticHemsConfigEntry

    def __init__(self, hass: HomeAssistant, entry: AgenticHemsConfigEntry, source: PriceSource) -> None:
        """Set up with an empty cache; call :meth:`async_load` before the first refresh."""
        super().__init__(hass, LOGGER, config_entry=entry, name=DOMAIN, update_interval=None, always_update=False)
        self.source = source
        self.formula = formula_from_options(dict(entry.options))
        self.store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry.entry_id}.prices")
        self.spot: PriceCurve | None = None
        self.last_error: PriceError | None = None
        self._attempts = 0
        self._next_attempt: datetime | None = None
        self._retry_unsub: CALLBACK_TYPE | None = None

    async def async_load(self) -> None:
        """Load the cached spot curve, if any (a corrupt cache is dropped, never trusted)."""
        stored = await self.store.async_load()
        if stored and "spot" in stored:
            try:
                self.spot = PriceCurve.from_dict(stored["spot"])
            except (KeyError, TypeError, ValueError) as err:
                LOGGER.warning("Dropping unreadable cached prices: %s", err)

    @callback
    def async_start(self) -> Callable[[], None]:
        """Refresh at every 15-minute boundary; returns the unsubscribe callback."""

        async def _on_slot(now: datetime) -> None:
            await self.async_refresh()

        unsub_slots = async_track_time_change(self.hass, _on_slot, minute=(0, 15, 30, 45), second=0)

        def _stop() -> None:
            unsub_slots()
            if self._retry_unsub:
                self._retry_unsub()

        return _stop

    def _fetch_due(self, now: datetime) -> bool:
        if self._next_attempt is not None and now < self._next_attempt:
            return False
        if not self.source.daily_publication:
            return True  # a local sensor or the sample: reading is cheap
        today = local_days(now, 1)
        if not covers(self.spot, *today):
            return True
        tomorrow = (today[1], local_days(today[1], 1)[1])
        if covers(self.spot, *tomorrow):
            return False
        return publication_passed(now)

    def _back_off(self, now: datetime) -> None:
        delay = timedelta(minutes=BACKOFF_MIN[min(self._attempts, len(BACKOFF_MIN) - 1)])
        self._attempts += 1
        self._next_attempt = now + delay
        if self._retry_unsub:
            self._retry_unsub()

        async def _retry(_: datetime) -> None:
            self._retry_unsub = None
            await self.async_refresh()

        self._retry_unsub = async_call_later(self.hass, delay, _retry)

    async def _async_fetch(self, now: datetime) -> None:
        start, end = local_days(now, 2)
        try:
            fresh = await self.source.async_fetch(start, end)
        except InvalidAuth as err:
            raise ConfigEntryAuthFailed(translation_domain=DOMAIN, translation_key="invalid_auth") from err
        except PriceError as err:
            self.last_error = err
            LOGGER.info("Price fetch failed (%s); keeping the cached curve", err)
            self._back_off(now)
            return
        self.last_error = None
        keep_from = local_days(now - timedelta(days=1), 1)[0]
        merged = fresh if self.spot is None or self.spot.currency != fresh.currency else self.spot.merge(fresh)
        self.spot = merged.window(max(keep_from, merged.start), merged.end)
        await self.store.async_save({"spot": self.spot.as_dict()})
        tomorrow = local_days(now, 2)
        if covers(self.spot, *tomorrow):
            self._attempts, self._next_attempt = 0, None
        elif self.source.daily_publication and publication_passed(now):
            self._back_off(now)  # published late: keep asking
        else:
            self._attempts, self._next_attempt = 0, None

    def cached_data(self) -> PriceData | None:
        """Prices from the cache alone (no I/O), or None when the cache does not cover now."""
        if self.spot is None or self.spot.price_at(dt_util.utcnow()) is None:
            return None
        return PriceData(spot=self.spot, total=self.formula.apply(self.spot))

    async def async_fetch_now(self) -> None:
        """Forget any backoff and refresh (the price sensor changed, or a user asked)."""
        self._attempts, self._next_attempt = 0, None
        await self.async_refresh()

    async def _async_update_data(self) -> PriceData:
        now = dt_util.utcnow()
        if self._fetch_due(now):
            await self._async_fetch(now)
        if (data := self.cached_data()) is None:
            key = self.last_error.translation_key if self.last_error else "no_prices"
            raise UpdateFailed(translation_domain=DOMAIN, translation_key=key)
        return data
