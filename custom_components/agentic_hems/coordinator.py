"""The price coordinator: cached curve, slot-boundary refresh, publication-time fetches with backoff.

It leans on ``DataUpdateCoordinator`` for what the helper does: the set-up's first refresh
(``async_config_entry_first_refresh``: ``ConfigEntryNotReady`` with the failure's translated message, or
``ConfigEntryAuthFailed`` and reauth), the retry timer (``update_interval``, set to the backoff's delay while it
backs off) and the logging (a failure logged once, its recovery once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import ConfigEntryAuthFailed, ConfigEntryNotReady, HomeAssistantError
from homeassistant.helpers.event import async_track_time_change
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
    STORAGE_VERSION,
)
from .price_sources import PriceSource
from .price_trust import PriceDayIssues, covers, refusal_at, refusal_placeholders
from .prices import SLOT, PriceCurve, PriceError, PricesRefused
from .prices.errors import InvalidAuth
from .prices.formula import PriceFormula
from .publication import local_days, publication_passed, published_until, wanted_window

if TYPE_CHECKING:
    from .runtime import AgenticHemsConfigEntry


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
    """Return the price formula from entry options (VAT typed in percent)."""
    values = {**DEFAULT_OPTIONS, **options}
    return PriceFormula(
        markup=float(values[CONF_MARKUP]),
        vat=float(values[CONF_VAT_PERCENT]) / 100.0,
        grid_fee=float(values[CONF_GRID_FEE]),
        vat_on_negative=bool(values[CONF_VAT_ON_NEGATIVE]),
    )


def _cached_spot(stored: Any) -> PriceCurve:
    """Return the spot curve of the stored cache ``{"spot": {...}, "source": ...}``.

    Raises KeyError, TypeError or ValueError for a cache that is not such a mapping, a curve that does not read, a
    resolution other than ``SLOT`` or an infinite price.
    """
    if not isinstance(stored, dict) or not isinstance(stored.get("spot"), dict):
        raise TypeError(f"expected {{'spot': {{...}}}}, got {type(stored).__name__}")
    spot = PriceCurve.from_dict(stored["spot"])
    if spot.resolution != SLOT:
        raise ValueError(f"resolution {spot.resolution} is not {SLOT}")
    if np.isinf(spot.prices).any():
        raise ValueError("infinite price")
    return spot


def tomorrow_available(curve: PriceCurve, now: datetime, *, daily_publication: bool) -> bool:
    """Return True when every slot of the local tomorrow has a known price (none doubtful or unknown).

    For a day-ahead market (``daily_publication``) tomorrow counts once its results are due (12:45 Brussels) and is
    required only as far as published: west of Brussels (Europe/Lisbon) the last local hour of tomorrow belongs to
    the next market day.
    """
    start = local_days(now, 1)[1]
    end = local_days(start, 1)[1]
    if daily_publication:
        if not publication_passed(now):
            return False
        end = min(end, published_until(now))
    return covers(curve, start, end)


def _same_prices(a: PriceCurve, b: PriceCurve) -> bool:
    """Return True when both curves have the same prices and notes (what the cache stores)."""
    return (
        a.start == b.start
        and a.currency == b.currency
        and np.array_equal(a.prices, b.prices, equal_nan=True)
        and a.notes == b.notes
        and np.array_equal(a.marks, b.marks)
    )


class PriceCoordinator(DataUpdateCoordinator[PriceData]):
    """Keeps today's and tomorrow's prices.

    - recomputes from its cache at every slot boundary, with no HTTP;
    - fetches when a slot of today, or of tomorrow after 12:45 Europe/Brussels (``wanted_window``), is not known
      (missing, refused or doubtful, such as a day of zeros), backing off 5, 10, 20, 40 then 60 minutes until every
      slot is known; a success that makes them known resets the backoff, and the listeners (the planner) replan;
    - keeps the days a source refused as unknown slots with their notes, and raises a repair issue per local day and
      reason while the source keeps delivering a day unusable (:class:`.price_trust.PriceDayIssues`);
    - keeps the last good curve when a fetch fails, so entities stay available while it covers now
      (:meth:`has_price_now`, not ``last_update_success``): a failed fetch is an ``UpdateFailed``, which the helper
      logs once, and its recovery once;
    - at set-up (:meth:`async_load`), a market source without a cached price for now fetches before the
      entities start, through the helper's first refresh: ``ConfigEntryNotReady`` when that fails (Home Assistant
      retries the set-up), ``ConfigEntryAuthFailed`` when the key is rejected;
    - persists the spot curve with ``Store`` so a restart without network still has today's prices;
    - runs one fetch at a time: a refresh that finds a fetch running serves the cache instead of waiting for it;
    - after a rejected API key (``ConfigEntryAuthFailed``: the helper starts reauth) stops fetching (reauth reloads
      the entry).

    A slot boundary publishes the cache at once; fetches run as the entry's background tasks (as HA's own scheduled
    refreshes do), so a slow fetch never holds up a slot, start-up or unload.
    """

    config_entry: AgenticHemsConfigEntry

    def __init__(self, hass: HomeAssistant, entry: AgenticHemsConfigEntry, source: PriceSource) -> None:
        """Set up with an empty cache; call :meth:`async_load` before the first refresh."""
        super().__init__(hass, LOGGER, config_entry=entry, name=f"{entry.title} prices", update_interval=None)
        self.source = source
        # Which source the cache belongs to: a reconfigured zone, area or sensor must not reuse the old prices.
        self.source_id = entry.unique_id or ""
        self.formula = formula_from_options(dict(entry.options))
        self.store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry.entry_id}.prices")
        self.spot: PriceCurve | None = None
        self.last_error: PriceError | None = None
        self._attempts = 0  # failed or incomplete fetches in a row (the backoff's step)
        self._fetch_lock = asyncio.Lock()
        self._auth_failed = False
        self._stopped = False
        self.day_issues = PriceDayIssues(hass, entry.entry_id, entry.title)

    async def async_load(self) -> None:
        """Load the cached spot curve, if any (a corrupt cache is dropped with a warning, never trusted), then refresh.

        Call it while the entry sets up, before the entities start; see :meth:`_async_first_refresh` for what it raises.
        """
        await self._async_load_cache()
        await self._async_first_refresh()

    async def _async_load_cache(self) -> None:
        try:
            stored = await self.store.async_load()
        except (HomeAssistantError, NotImplementedError, KeyError, TypeError, ValueError) as err:
            # Unreadable JSON, a newer storage version, a file without "version" or "data".
            LOGGER.warning("Dropping unreadable cached prices: %s", err)
            return
        if stored is None:
            return
        try:
            spot = _cached_spot(stored)
        except (KeyError, TypeError, ValueError) as err:
            LOGGER.warning("Dropping unreadable cached prices: %s", err)
            return
        if stored.get("source") != self.source_id:
            LOGGER.info("Dropping cached prices of a previous price source (%s)", stored.get("source"))
            return
        self.spot = spot

    async def _async_first_refresh(self) -> None:
        """Refresh before the entities start.

        A market source (ENTSO-E, Nord Pool) goes through the helper's first refresh: with a price for now cached it
        does not wait for the network (the fetch then runs in the background); without one it fetches, and a failure
        fails the set-up (``ConfigEntryNotReady``, translated, retried and logged by Home Assistant) or starts reauth
        (``ConfigEntryAuthFailed``). A local sensor or the bundled sample is read by a plain refresh: a sensor that
        appears after set-up must not hold the entry back.
        """
        if not self.source.daily_publication:
            await self.async_refresh()
            return
        try:
            await self.async_config_entry_first_refresh()
        except ConfigEntryNotReady as err:
            self._reset_backoff()  # Home Assistant retries the set-up with a new coordinator
            cause = self.last_exception
            if err.translation_key is None and isinstance(cause, HomeAssistantError) and cause.translation_key:
                # Version-specific: HA 2026.4's helper raises it without the failure's translation; newer ones copy it
                raise ConfigEntryNotReady(
                    translation_domain=cause.translation_domain,
                    translation_key=cause.translation_key,
                    translation_placeholders=cause.translation_placeholders,
                ) from cause
            raise

    @callback
    def async_start(self) -> Callable[[], None]:
        """Refresh at every 15-minute boundary; returns the callback that stops the slot timer and any retry."""

        @callback
        def _on_slot(now: datetime) -> None:
            # The new slot's price from the cache at once, and a fetch in the background when one is due. A sensor
            # is read at every slot instead, and that refresh publishes.
            self.day_issues.async_prune(dt_util.utcnow())
            # The helper's retry timer fetches next; it never runs with polling disabled, so then slots retry.
            backing_off = self.update_interval is not None and not self.config_entry.pref_disable_polling
            due = not (self._stopped or backing_off or self._fetch_lock.locked()) and self._fetch_due(dt_util.utcnow())
            if not (due and self.source.read_every_slot):
                self._async_serve_cache()
            if due:
                self._async_spawn_refresh()

        unsub_slots = async_track_time_change(self.hass, _on_slot, minute=(0, 15, 30, 45), second=0)

        def _stop() -> None:  # the helper's retry timer stops with the entry (async_shutdown)
            self._stopped = True
            unsub_slots()
            self.day_issues.async_clear()

        return _stop

    @callback
    def _async_serve_cache(self) -> None:
        """Tell the listeners that the slot changed (no I/O), or set the error when the cache does not cover now.

        The data (whole curves) is unchanged, and so is the last update's outcome: a failed fetch stays logged once.
        """
        if not self.has_price_now():
            self.async_set_update_error(self._no_prices_error())  # the helper logs it unless an error is logged
        self.async_update_listeners()

    def has_price_now(self) -> bool:
        """Tell whether the published prices know the price of now (entities that show prices are available)."""
        return self.data is not None and self.data.spot.price_at(dt_util.utcnow()) is not None

    def _no_prices_error(self) -> UpdateFailed:
        """Why there is no price for now, translated (see :meth:`_no_prices_cause`; ``no_prices`` without one)."""
        cause = self._no_prices_cause()
        return UpdateFailed(
            translation_domain=DOMAIN,
            translation_key=cause.translation_key if cause else "no_prices",
            translation_placeholders=self._placeholders(cause),
        )

    def _no_prices_cause(self) -> PriceError | None:
        """Return the last fetch's error, else the refusal of the day of now in the cache, else None."""
        if self.last_error is not None or self.spot is None:
            return self.last_error
        return refusal_at(self.spot, dt_util.utcnow())

    def _placeholders(self, cause: PriceError | None) -> dict[str, str] | None:
        """Return the placeholders of ``cause``'s message: the source, local days and reason of a refusal."""
        return refusal_placeholders(self.config_entry.title, cause.spans) if isinstance(cause, PricesRefused) else None

    @callback
    def _async_spawn_refresh(self) -> None:
        """Refresh in an entry background task (cancelled on unload, not awaited by start-up)."""
        if self._stopped:
            return
        self.config_entry.async_create_background_task(self.hass, self.async_refresh(), f"{DOMAIN} price refresh")

    def _reset_backoff(self) -> None:
        self._attempts = 0
        self.update_interval = None

    def _fetch_due(self, now: datetime) -> bool:
        if self._auth_failed:
            return False  # the key was rejected: wait for reauth (it reloads the entry) or async_fetch_now
        if self.source.read_every_slot:
            return True  # a local sensor: reading is cheap and its attributes may have changed
        if self.source.daily_publication:
            return not covers(self.spot, *wanted_window(now))
        return not covers(self.spot, *local_days(now, 2))  # the sample: re-date when the local day turns

    def _back_off(self) -> None:
        """Try again after 5, 10, 20, 40, then every 60 minutes.

        The helper's refresh timer fetches then; it starts when the refresh ends (the delay is counted from then).
        """
        self.update_interval = timedelta(minutes=BACKOFF_MIN[min(self._attempts, len(BACKOFF_MIN) - 1)])
        self._attempts += 1

    async def _async_fetch(self, now: datetime) -> None:
        """Fetch the local today and tomorrow and merge them into the cache; a failure is kept in ``last_error``."""
        start, end = local_days(now, 2)
        try:
            fresh = await self.source.async_fetch(start, end)
        except InvalidAuth as err:
            # Keep the cached curve (entities stay available while it covers now); the update raises for reauth.
            self.last_error = err
            self._auth_failed = True
            self._reset_backoff()
            return
        except PriceError as err:
            if isinstance(err, PricesRefused):  # keep why the days are unknown; cached prices stay
                await self._async_keep(err.curve, now, whole=False)
            self.last_error = err
            self._back_off()
            return
        self.last_error = None
        # A market's publications add up; a sensor or the sample is read whole each time (a stale "tomorrow" of a
        # sensor that had not rolled over yet must not survive).
        await self._async_keep(fresh, now, whole=not self.source.daily_publication)
        if not self.source.daily_publication or covers(self.spot, *wanted_window(now)):
            self._reset_backoff()
        else:
            self._back_off()  # not everything published is there yet (tomorrow is late): keep asking

    async def _async_keep(self, fresh: PriceCurve, now: datetime, *, whole: bool) -> None:
        """Merge ``fresh`` into the cache (``whole``: replace it), keep from yesterday on, store it, count issues."""
        if self.spot is None or self.spot.currency != fresh.currency or whole:
            merged = fresh
        else:
            merged = self.spot.merge(fresh)
        keep_from = local_days(now - timedelta(days=1), 1)[0]
        previous, self.spot = self.spot, merged.window(max(keep_from, merged.start), merged.end)
        self.day_issues.async_observe(fresh, self.spot, now)
        if previous is None or not _same_prices(previous, self.spot):
            try:
                await self.store.async_save({"source": self.source_id, "spot": self.spot.as_dict()})
            except (HomeAssistantError, OSError) as err:  # the curve in memory is still good
                LOGGER.warning("Could not store the price cache: %s", err)

    def cached_data(self) -> PriceData | None:
        """Prices from the cache alone (no I/O), or None when the cache does not cover now."""
        if self.spot is None or self.spot.price_at(dt_util.utcnow()) is None:
            return None
        return PriceData(spot=self.spot, total=self.formula.apply(self.spot))

    async def async_fetch_now(self) -> None:
        """Forget any backoff (and a rejected key) and refresh (the price sensor changed, or a user asked)."""
        self._auth_failed = False
        self._reset_backoff()
        await self.async_refresh()

    async def _async_update_data(self) -> PriceData:
        """Fetch when due and return the cached prices; raise when the fetch failed or nothing covers now.

        A failed fetch raises ``UpdateFailed`` (translated; the helper logs it once) or ``ConfigEntryAuthFailed``
        (reauth) even while the cache covers now: the cached prices stay published (:meth:`has_price_now`). At the
        first refresh a market source with a price for now cached does not fetch (the fetch runs in the background).
        """
        now = dt_util.utcnow()
        first = self.data is None and self.source.daily_publication and self.cached_data() is not None
        # One fetch at a time. A refresh that finds one running (a slot boundary during a slow download) serves
        # the cache at once; the running fetch settles the backoff. Acquiring a free lock does not yield.
        fetched = not first and not self._fetch_lock.locked() and self._fetch_due(now)
        if fetched:
            async with self._fetch_lock:
                await self._async_fetch(now)
        data = self.cached_data()
        if fetched and self.last_error is not None and data is not None:
            self.data = data  # what the fetch kept (a refusal's unknown days) is published with the error
        if self._auth_failed:
            raise ConfigEntryAuthFailed(translation_domain=DOMAIN, translation_key="invalid_auth")
        if data is None:
            raise self._no_prices_error()
        if fetched and self.last_error is not None:
            raise self._fetch_error(self.last_error)
        return data

    def _fetch_error(self, err: PriceError) -> UpdateFailed:
        """Return the failed fetch's error while the cache still covers now, translated (caused by ``err``)."""
        failed = UpdateFailed(
            translation_domain=DOMAIN,
            translation_key=err.translation_key,
            translation_placeholders=self._placeholders(err),
        )
        failed.__cause__ = err
        return failed
