"""The price coordinator of an ENTSO-E entry against a mocked API (aioclient_mock), at frozen Brussels times.

Documents are the real ENTSO-E answers in tests/fixtures/entsoe, re-dated to the test days:

- today, 2026-11-29 (23:00Z .. 23:00Z, CET): BE_60M.xml, 24 hourly prices;
- tomorrow, 2026-11-30: the second (PT15M, curveType A03) Period of BE_60M_15M_mix.xml.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
import logging
from pathlib import Path
import re
from typing import Any
from zoneinfo import ZoneInfo

import aiohttp
from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed
from pytest_homeassistant_custom_component.test_util.aiohttp import (
    AiohttpClientMocker,
    AiohttpClientMockResponse,
)
from yarl import URL

from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntryState
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN, FETCH_TIMEOUT_S
from custom_components.agentic_hems.prices import CannotConnect, InvalidAuth, PricesNotPublished, PriceSourceError
from custom_components.agentic_hems.prices.entsoe import API_URL

from .conftest import NOW

BRUSSELS = ZoneInfo("Europe/Brussels")
PRICE = "sensor.agentic_hems_electricity_price"
TOMORROW_KNOWN = "binary_sensor.agentic_hems_tomorrow_s_prices_available"
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "entsoe"

# UTC bounds of the local days (CET, UTC+1 in November).
TODAY_START, TOMORROW_START, TOMORROW_END = "2026-11-28T23:00Z", "2026-11-29T23:00Z", "2026-11-30T23:00Z"

# Real prices of the re-dated documents, EUR/MWh, by local hour (BE_60M.xml positions 1..24; mix Period 2).
BE_60M_EUR_MWH = [
    64.98, 57.86, 53.73, 47.52, 47.05, 56.89, 77.77, 88.24, 100.0, 84.92, 74.6, 68.82,
    60.56, 63.86, 68.1, 68.37, 76.35, 54.04, 98.97, 115.47, 86.85, 69.59, 57.42, 50.0,
]  # fmt: skip
TODAY_EUR_MWH = dict(enumerate(BE_60M_EUR_MWH))
TOMORROW_EUR_MWH = {0: 34.58, 1: 35.34, 12: 56.02, 13: 43.29, 20: 121.49}


def kwh(eur_mwh: float) -> float:
    """EUR/MWh as the sensor shows it (EUR/kWh; the default options add nothing)."""
    return eur_mwh / 1000.0


def local(hour: int, minute: int = 0, day: int = 29, second: int = 0) -> datetime:
    """A Brussels wall-clock time in the test month."""
    return datetime(2026, 11, day, hour, minute, second, tzinfo=BRUSSELS)


# --- documents ---------------------------------------------------------------------------------------------------

_BE = (FIXTURES / "BE_60M.xml").read_text()
_MIX = (FIXTURES / "BE_60M_15M_mix.xml").read_text()
_SERIES = re.search(r"<TimeSeries>.*</TimeSeries>", _BE, re.S)
assert _SERIES is not None
_HEAD, _TAIL = _BE[: _SERIES.start()], _BE[_SERIES.end() :]

TODAY_SERIES = _SERIES.group(0).replace("2024-10-07T22:00Z", TODAY_START).replace("2024-10-08T22:00Z", TOMORROW_START)
_MIX_PERIOD_2 = re.findall(r"<Period>.*?</Period>", _MIX, re.S)[1]
TOMORROW_SERIES = re.sub(
    r"<Period>.*</Period>",
    lambda _: _MIX_PERIOD_2.replace("2024-10-06T22:00Z", TOMORROW_START).replace("2024-10-07T22:00Z", TOMORROW_END),
    _SERIES.group(0),
    flags=re.S,
)


def document(*series: str) -> str:
    """A Publication_MarketDocument holding ``series`` (the head of BE_60M.xml, re-dated)."""
    head = _HEAD.replace("2024-10-07T22:00Z", TODAY_START).replace("2024-10-08T22:00Z", TOMORROW_END)
    return head + "".join(series) + _TAIL


BOTH_DAYS = document(TODAY_SERIES, TOMORROW_SERIES)
TODAY_ONLY = document(TODAY_SERIES)
NOT_PUBLISHED = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<Acknowledgement_MarketDocument '
    'xmlns="urn:iec62325.351:tc57wg16:451-1:acknowledgementdocument:7:0"><mRID>ack</mRID>'
    "<createdDateTime>2026-11-29T11:45:00Z</createdDateTime><Reason><code>999</code><text>No matching data found "
    "for Data item Day-ahead Prices [12.1.D] (10YBE----------2, 10YBE----------2) and interval "
    "2026-11-28T23:00:00.000Z/2026-11-30T23:00:00.000Z.</text></Reason></Acknowledgement_MarketDocument>"
)
HTML_503 = (
    "<!DOCTYPE html>\n<html><head><title>503 Service Temporarily Unavailable</title></head>"
    "<body><h1>Service Temporarily Unavailable</h1><p>The Transparency Platform is under maintenance.</p></body></html>"
)


class FakeEntsoe:
    """The ENTSO-E API on aioclient_mock: answers with ``serve``/``fail`` and records each request's local time."""

    def __init__(self, aioclient_mock: AiohttpClientMocker) -> None:
        self.mock = aioclient_mock
        self.calls: list[datetime] = []
        self.params: list[dict[str, str]] = []
        self.gate: asyncio.Event | None = None
        self.response: AiohttpClientMockResponse | None = None
        aioclient_mock.get(API_URL, side_effect=self._answer)

    def serve(self, body: str, status: int = 200) -> None:
        self.response = AiohttpClientMockResponse("get", URL(API_URL), status=status, text=body)

    def fail(self, exc: Exception) -> None:
        self.response = AiohttpClientMockResponse("get", URL(API_URL), exc=exc)

    async def _answer(self, method: str, url: URL, data: Any) -> AiohttpClientMockResponse:
        self.calls.append(dt_util.as_local(dt_util.utcnow()))
        self.params.append(dict(url.query))
        if self.gate is not None:
            await self.gate.wait()
        assert self.response is not None
        return self.response


@pytest.fixture
def api(aioclient_mock: AiohttpClientMocker) -> FakeEntsoe:
    return FakeEntsoe(aioclient_mock)


def entsoe_entry() -> MockConfigEntry:
    return MockConfigEntry(
        domain=DOMAIN,
        title="ENTSO-E BE",
        unique_id="entsoe_BE",
        data={"price_source": "entsoe", "api_key": "k", "bidding_zone": "BE"},
        options=dict(DEFAULT_OPTIONS),
        version=1,
        minor_version=1,
    )


async def set_up(hass: HomeAssistant, entry: MockConfigEntry | None = None) -> MockConfigEntry:
    entry = entry or entsoe_entry()
    if hass.config_entries.async_get_entry(entry.entry_id) is None:
        entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert entry.state is ConfigEntryState.LOADED
    return entry


async def advance(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, until: datetime, step: timedelta, *, wait: bool = True
) -> None:
    """Move the clock to ``until`` in ``step``s, firing timers at each step.

    ``wait`` lets every task finish at each step, the fetches too (they run as the entry's background tasks);
    without it a hanging fetch is left hanging.
    """
    while dt_util.utcnow() < until:
        freezer.tick(min(step, until - dt_util.utcnow()))
        async_fire_time_changed(hass)
        await hass.async_block_till_done(wait_background_tasks=wait)


def price(hass: HomeAssistant) -> float | str:
    """The price sensor's state: a float, or the state string when it is not a number."""
    state = hass.states.get(PRICE)
    assert state is not None, f"{PRICE} does not exist"
    try:
        return float(state.state)
    except ValueError:
        return state.state


def prices_key(entry: MockConfigEntry) -> str:
    return f"{DOMAIN}.{entry.entry_id}.prices"


# --- 1. start-up -------------------------------------------------------------------------------------------------


async def test_setup_without_cached_prices_fetches_first(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """Nothing cached covers now: set-up waits for the first fetch, so the entities start with prices."""
    freezer.move_to(NOW)
    api.serve(BOTH_DAYS)
    entry = entsoe_entry()
    entry.add_to_hass(hass)

    assert await hass.config_entries.async_setup(entry.entry_id)

    assert entry.state is ConfigEntryState.LOADED
    assert api.calls == [NOW]
    assert api.params[0]["periodStart"] == "202611282300"  # local today and tomorrow, in UTC
    assert api.params[0]["periodEnd"] == "202611302300"
    assert api.params[0]["securityToken"] == "k"
    state = hass.states.get(PRICE)  # before any background task has run
    assert float(state.state) == pytest.approx(kwh(TODAY_EUR_MWH[20]))  # 86.85 EUR/MWh at 20:00
    assert state.attributes["unit_of_measurement"] == "EUR/kWh"
    assert state.attributes["source"] == "entsoe"
    assert state.attributes["spot_price"] == pytest.approx(0.08685)
    tomorrow = state.attributes["tomorrow"]
    assert len(tomorrow) == 96
    assert tomorrow[0] == {"start": "2026-11-29T23:00:00+00:00", "price": pytest.approx(kwh(TOMORROW_EUR_MWH[0]))}
    assert tomorrow[80]["price"] == pytest.approx(kwh(TOMORROW_EUR_MWH[20]))
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON

    await hass.async_block_till_done(wait_background_tasks=True)
    assert api.mock.call_count == 1  # the background refresh found nothing due


async def test_setup_with_cached_prices_does_not_wait_for_the_fetch(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """Today is cached and tomorrow is due: set-up serves the cache and fetches tomorrow in the background."""
    freezer.move_to(local(12, 0))
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    assert await hass.config_entries.async_unload(entry.entry_id)
    freezer.move_to(local(13, 0))  # tomorrow is published at 12:45
    api.serve(BOTH_DAYS)
    api.gate = asyncio.Event()  # the server has not answered yet

    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()

    assert entry.state is ConfigEntryState.LOADED
    assert api.calls == [local(12, 0), local(13, 0)]
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[13]))
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_OFF

    api.gate.set()
    await hass.async_block_till_done(wait_background_tasks=True)
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON


async def test_setup_is_retried_while_the_source_is_down(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe, caplog: pytest.LogCaptureFixture
) -> None:
    """No cached price and no answer: ConfigEntryNotReady with the failure's translated message, logged by Home
    Assistant's retry and not by the coordinator; the next set-up attempt after the outage loads the prices."""
    freezer.move_to(NOW)
    api.fail(aiohttp.ClientConnectionError("refused"))
    entry = entsoe_entry()
    entry.add_to_hass(hass)

    with caplog.at_level(logging.DEBUG):
        assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert entry.error_reason_translation_key == "cannot_connect"
    assert entry.reason == "Could not reach the price source"  # the translated message (HA drops its full stop)
    assert hass.states.get(PRICE) is None  # no entity shows a price it does not have
    retries = [r.getMessage() for r in caplog.records if r.name == "homeassistant.config_entries"]
    assert any("not ready yet: Could not reach the price source" in message for message in retries), retries
    assert not [r for r in caplog.records if r.name.startswith("custom_components") and r.levelno >= logging.WARNING]

    api.serve(BOTH_DAYS)
    await advance(hass, freezer, local(20, 5, second=10), timedelta(seconds=1))
    assert entry.state is ConfigEntryState.LOADED
    assert len(api.calls) == 2 and NOW < api.calls[1] <= NOW + timedelta(seconds=6)  # HA retries after 5 s
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[20]))

    # The failed attempt's coordinator left no retry timer behind (its backoff would fetch at 20:10).
    await advance(hass, freezer, local(20, 20), timedelta(minutes=1))
    assert len(api.calls) == 2


# --- 2. slot boundaries ------------------------------------------------------------------------------------------


async def test_slot_boundaries_recompute_from_the_cache_without_http(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    freezer.move_to(NOW)
    api.serve(BOTH_DAYS)
    await set_up(hass)
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[20]))
    assert api.mock.call_count == 1

    seen: list[tuple[str, float | str]] = []
    moment = local(20, 15)
    while moment <= local(0, 15, day=30):
        freezer.move_to(moment)
        async_fire_time_changed(hass)
        await hass.async_block_till_done(wait_background_tasks=True)
        seen.append((dt_util.as_local(dt_util.utcnow()).strftime("%H:%M"), price(hass)))
        moment += timedelta(minutes=15)

    expected = [
        *[(f"20:{m}", kwh(TODAY_EUR_MWH[20])) for m in ("15", "30", "45")],
        *[(f"{h}:{m:02}", kwh(TODAY_EUR_MWH[h])) for h in (21, 22, 23) for m in (0, 15, 30, 45)],
        ("00:00", kwh(TOMORROW_EUR_MWH[0])),  # the new day's first slot, from the mix document's Period
        ("00:15", kwh(TOMORROW_EUR_MWH[0])),
    ]
    assert [time for time, _ in seen] == [time for time, _ in expected]
    assert [value for _, value in seen] == pytest.approx([value for _, value in expected])
    assert api.mock.call_count == 1  # no HTTP: Nov 30 is cached and Dec 1 is not due before 12:45
    # The new local day has no tomorrow yet.
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_OFF


async def test_first_slot_refresh_is_the_boundary_itself(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """From 20:50, a tick onto 21:00 changes the sensor at that boundary."""
    freezer.move_to(local(20, 50))
    api.serve(BOTH_DAYS)
    await set_up(hass)
    assert price(hass) == pytest.approx(0.08685)

    freezer.tick(timedelta(minutes=10))
    async_fire_time_changed(hass)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))
    assert api.mock.call_count == 1


# --- 3. publication rule and backoff -----------------------------------------------------------------------------


async def test_fetches_tomorrow_after_publication_with_backoff(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    freezer.move_to(local(12, 0))
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    coordinator = entry.runtime_data.coordinator
    assert api.calls == [local(12, 0)]  # today was missing: fetched at once
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[12]))
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_OFF

    # Before 12:45 Brussels, tomorrow missing is normal: slot boundaries (12:15, 12:30) do not fetch.
    api.serve(NOT_PUBLISHED)
    await advance(hass, freezer, local(12, 44), timedelta(minutes=1))
    assert api.calls == [local(12, 0)]

    # 12:45: due. ENTSO-E answers "no matching data" until tomorrow is published.
    await advance(hass, freezer, local(13, 19), timedelta(minutes=1))
    assert api.calls[1:] == [local(12, 45), local(12, 50), local(13, 0)]  # +5, +10
    assert isinstance(coordinator.last_error, PricesNotPublished)
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[13]))  # today stays available throughout

    api.serve(NOT_PUBLISHED, status=400)  # the same acknowledgement with HTTP 400, as ENTSO-E also sends it
    await advance(hass, freezer, local(15, 30), timedelta(minutes=1))
    assert api.calls[4:] == [local(13, 20), local(14, 0), local(15, 0)]  # +20, +40, +60
    assert isinstance(coordinator.last_error, PricesNotPublished)

    api.serve(BOTH_DAYS)  # published
    await advance(hass, freezer, local(23, 59), timedelta(minutes=1))
    assert api.calls[7:] == [local(16, 0)]  # +60 (the cap), then never again today
    assert coordinator.last_error is None
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON
    assert hass.states.get(PRICE).attributes["tomorrow"][48]["price"] == pytest.approx(kwh(TOMORROW_EUR_MWH[12]))
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[23]))
    assert api.mock.call_count == 8


async def test_backoff_restarts_at_five_minutes_after_a_success(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """A fetch that brings today but not tomorrow counts as "not published": the backoff goes on; success resets it.

    The retries are DataUpdateCoordinator's own refresh timer: its update_interval is the backoff's next delay while
    it backs off, and None (no polling) once everything is there.
    """
    freezer.move_to(local(13, 1))
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    coordinator = entry.runtime_data.coordinator
    assert coordinator.update_interval == timedelta(minutes=5)
    await advance(hass, freezer, local(13, 31), timedelta(minutes=1))
    # 13:01 brought today only (tomorrow late): 13:06, 13:16 keep asking.
    assert api.calls == [local(13, 1), local(13, 6), local(13, 16)]
    assert coordinator.update_interval == timedelta(minutes=20)

    api.serve(BOTH_DAYS)
    await advance(hass, freezer, local(23, 59), timedelta(minutes=5))
    assert api.calls[3:] == [local(13, 36)]  # +20, then tomorrow is there
    assert coordinator.update_interval is None

    # The next day's publication starts the backoff from 5 minutes again.
    api.serve(NOT_PUBLISHED)
    await advance(hass, freezer, local(12, 40, day=30), timedelta(minutes=5))
    assert len(api.calls) == 4
    await advance(hass, freezer, local(13, 6, day=30), timedelta(minutes=1))
    assert api.calls[4:] == [local(12, 45, day=30), local(12, 50, day=30), local(13, 0, day=30)]
    assert price(hass) == pytest.approx(kwh(TOMORROW_EUR_MWH[13]))  # Nov 30 13:00, cached since yesterday
    assert isinstance(entry.runtime_data.coordinator.last_error, PricesNotPublished)


async def test_with_polling_disabled_the_slot_boundaries_retry(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """The backoff's retries are the helper's refresh timer, which never runs when the user disables polling for the
    entry: then each slot boundary retries, and tomorrow's prices still come."""
    freezer.move_to(local(13, 1))
    api.serve(TODAY_ONLY)
    entry = entsoe_entry()
    entry.add_to_hass(hass)
    hass.config_entries.async_update_entry(entry, pref_disable_polling=True)
    await set_up(hass, entry)
    await advance(hass, freezer, local(13, 50), timedelta(minutes=1))
    assert api.calls == [local(13, 1), local(13, 15), local(13, 30), local(13, 45)]

    api.serve(BOTH_DAYS)
    await advance(hass, freezer, local(15, 0), timedelta(minutes=1))
    assert api.calls[4:] == [local(14, 0)]
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON


# --- 4. failures keep the last good curve ------------------------------------------------------------------------


async def test_failures_keep_the_cached_curve_until_it_runs_out(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    freezer.move_to(NOW)
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    coordinator = entry.runtime_data.coordinator
    assert price(hass) == pytest.approx(0.08685)

    api.serve(HTML_503, status=503)
    await advance(hass, freezer, local(20, 10), timedelta(minutes=1))
    assert api.calls == [NOW, local(20, 10)]
    assert isinstance(coordinator.last_error, CannotConnect)
    assert price(hass) == pytest.approx(0.08685)

    api.fail(TimeoutError())
    await advance(hass, freezer, local(20, 20), timedelta(minutes=1))
    assert api.calls[2:] == [local(20, 20)]
    assert isinstance(coordinator.last_error, CannotConnect)
    assert price(hass) == pytest.approx(0.08685)

    api.serve(HTML_503)  # a maintenance page with HTTP 200
    await advance(hass, freezer, local(20, 40), timedelta(minutes=1))
    assert api.calls[3:] == [local(20, 40)]
    assert isinstance(coordinator.last_error, PriceSourceError)

    api.fail(aiohttp.ClientConnectionError("refused"))
    await advance(hass, freezer, local(23, 59), timedelta(minutes=1))
    assert api.calls[4:] == [local(21, 20), local(22, 20), local(23, 20)]  # +40, +60, +60
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[23]))

    # Midnight: the cache ends where Nov 29 ends. Unknown is unavailable, never 0.
    await advance(hass, freezer, local(0, 0, day=30), timedelta(minutes=1))
    state = hass.states.get(PRICE)
    assert state.state == STATE_UNAVAILABLE
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_UNAVAILABLE

    # The server comes back: the next retry brings the prices back.
    api.serve(BOTH_DAYS)
    await advance(hass, freezer, local(0, 30, day=30), timedelta(minutes=1))
    assert api.calls[-1] == local(0, 20, day=30)
    assert price(hass) == pytest.approx(kwh(TOMORROW_EUR_MWH[0]))


async def test_a_server_that_never_answers_is_given_up_after_the_timeout(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """The fetch has a total timeout (FETCH_TIMEOUT_S); while it hangs, slot boundaries still update the sensor."""
    freezer.move_to(local(20, 54))
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    coordinator = entry.runtime_data.coordinator
    api.gate = asyncio.Event()  # from now on the server never answers

    await advance(hass, freezer, local(20, 59), timedelta(seconds=30), wait=False)
    assert api.calls == [local(20, 54), local(20, 59)]
    assert coordinator.last_error is None  # still waiting

    await advance(hass, freezer, local(21, 0), timedelta(seconds=30), wait=False)
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))  # the boundary did not wait for the fetch
    assert len(api.calls) == 2  # and did not start a second one

    at_timeout = local(20, 59) + timedelta(seconds=FETCH_TIMEOUT_S)
    await advance(hass, freezer, at_timeout - timedelta(seconds=1), timedelta(seconds=30), wait=False)
    assert coordinator.last_error is None  # 119 s: still waiting
    await advance(hass, freezer, at_timeout, timedelta(seconds=1), wait=False)
    await hass.async_block_till_done(wait_background_tasks=True)  # the fetch has ended
    assert isinstance(coordinator.last_error, CannotConnect)
    assert "did not answer within 120 s" in str(coordinator.last_error)
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))

    api.gate = None
    api.serve(BOTH_DAYS)
    await advance(hass, freezer, local(21, 15), timedelta(minutes=1))
    # Backoff counts from the end of the failed attempt: 21:01 + 10 min.
    assert api.calls[2:] == [local(21, 11)]
    assert coordinator.last_error is None
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON


async def test_a_retry_timer_fetches_even_when_the_wall_clock_lags(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """The retry runs on the loop's monotonic clock; utcnow() may be a hair before the deadline when it fires."""
    freezer.move_to(NOW)
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    assert api.calls == [NOW]  # today only: tomorrow is late, retry at 20:10

    api.serve(BOTH_DAYS)
    freezer.move_to(local(20, 9, second=59) + timedelta(milliseconds=500))
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=1))  # the loop is 1 s ahead of the wall
    await hass.async_block_till_done(wait_background_tasks=True)
    assert len(api.calls) == 2
    assert entry.runtime_data.coordinator.last_error is None
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON


async def test_unload_cancels_a_hanging_fetch_and_the_retries(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    freezer.move_to(local(20, 54))
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    api.gate = asyncio.Event()
    await advance(hass, freezer, local(21, 0), timedelta(minutes=1), wait=False)
    assert api.calls == [local(20, 54), local(20, 59)]  # the 20:59 retry hangs

    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert entry.state is ConfigEntryState.NOT_LOADED

    api.gate = None
    await advance(hass, freezer, local(23, 0), timedelta(minutes=5))
    assert api.calls == [local(20, 54), local(20, 59)]  # no slot refresh, no retry after unload


async def test_west_of_brussels_the_unpublished_last_hour_is_not_chased(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """In Europe/Lisbon the local day's last hour belongs to the next market day: before 12:45 Brussels it is not
    published, so it must not be fetched at every slot; after publication both local days are complete."""
    await hass.config.async_set_time_zone("Europe/Lisbon")
    freezer.move_to(local(10, 0))  # 09:00 in Lisbon
    api.serve(TODAY_ONLY)  # the market day Nov 29: 23:00Z Nov 28 .. 23:00Z Nov 29
    entry = await set_up(hass)
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[10]))  # 09:00 Lisbon is 10:00 Brussels

    await advance(hass, freezer, local(12, 40), timedelta(minutes=5))
    assert api.calls == [local(10, 0)]  # not at every slot for the last local hour

    api.serve(BOTH_DAYS)
    await advance(hass, freezer, local(0, 30, day=30), timedelta(minutes=5))
    assert api.calls == [local(10, 0), local(12, 45)]  # once published, once fetched
    assert entry.runtime_data.coordinator.last_error is None
    assert price(hass) == pytest.approx(kwh(TOMORROW_EUR_MWH[0]))  # 23:30 Lisbon is 00:30 of the market day Nov 30

    await advance(hass, freezer, local(12, 40, day=30), timedelta(minutes=5))
    assert api.calls == [local(10, 0), local(12, 45)]  # across the Lisbon midnight too


async def test_an_outage_is_logged_once_and_its_end_once(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe, caplog: pytest.LogCaptureFixture
) -> None:
    """DataUpdateCoordinator's own logging: one error when fetching starts to fail (translated, while the cached
    price stays shown), none at the retries, one info line when it works again; the next outage is logged again."""
    freezer.move_to(NOW)
    api.serve(TODAY_ONLY)  # tomorrow is late: retries at 20:10, 20:20, 20:40, 21:20, 22:20
    entry = await set_up(hass)

    def ours(level: int) -> list[str]:
        return [r.getMessage() for r in caplog.records if r.name == "custom_components.agentic_hems" and r.levelno == level]

    caplog.set_level(logging.DEBUG, logger="custom_components.agentic_hems")
    api.serve(HTML_503, status=503)
    await advance(hass, freezer, local(21, 30), timedelta(minutes=5))
    assert api.calls[1:] == [local(20, 10), local(20, 20), local(20, 40), local(21, 20)]
    assert ours(logging.ERROR) == ["Error fetching ENTSO-E BE prices data: Could not reach the price source"]
    assert ours(logging.WARNING) == [] and ours(logging.INFO) == []
    assert not entry.runtime_data.coordinator.last_update_success
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))  # the cached price, still available

    api.serve(BOTH_DAYS)
    await advance(hass, freezer, local(22, 30), timedelta(minutes=5))
    assert api.calls[5:] == [local(22, 20)]
    assert ours(logging.INFO) == ["Fetching ENTSO-E BE prices data recovered"]
    assert len(ours(logging.ERROR)) == 1

    api.serve(HTML_503, status=503)  # the next day's publication fails again: a new outage
    await advance(hass, freezer, local(12, 45, day=30), timedelta(minutes=5))
    assert api.calls[6:] == [local(12, 45, day=30)]
    assert len(ours(logging.ERROR)) == 2 and len(ours(logging.INFO)) == 1
    assert entry.state is ConfigEntryState.LOADED


# --- 5. reauth ---------------------------------------------------------------------------------------------------


async def test_401_starts_reauth(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """A rejected key and nothing cached: set-up fails (ConfigEntryAuthFailed) and reauth starts; the new key loads
    the entry."""
    freezer.move_to(NOW)
    api.serve("<html><body>Unauthorized</body></html>", status=401)
    entry = entsoe_entry()
    entry.add_to_hass(hass)
    assert not await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()

    flows = hass.config_entries.flow.async_progress()
    assert [(f["handler"], f["context"]["source"], f["context"]["entry_id"]) for f in flows] == [
        (DOMAIN, SOURCE_REAUTH, entry.entry_id)
    ]
    assert flows[0]["step_id"] == "reauth_confirm"
    assert entry.state is ConfigEntryState.SETUP_ERROR
    assert entry.error_reason_translation_key == "invalid_auth"
    assert hass.states.get(PRICE) is None

    # A rejected key is not retried every slot: the user has to re-enter it (reauth reloads the entry).
    await advance(hass, freezer, local(22, 0), timedelta(minutes=5))
    assert api.calls == [NOW]
    assert len(hass.config_entries.flow.async_progress()) == 1

    api.serve(BOTH_DAYS)
    result = await hass.config_entries.flow.async_configure(flows[0]["flow_id"], {"api_key": "new-key"})
    assert result["reason"] == "reauth_successful"
    await hass.async_block_till_done(wait_background_tasks=True)
    assert entry.state is ConfigEntryState.LOADED and entry.data["api_key"] == "new-key"
    assert [p["securityToken"] for p in api.params] == ["k", "new-key", "new-key"]  # the flow's check, the set-up
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[22]))


async def test_401_with_a_cached_curve_keeps_the_price(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    freezer.move_to(NOW)
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    assert price(hass) == pytest.approx(0.08685)

    api.serve("Unauthorized", status=401)  # the key was revoked
    await advance(hass, freezer, local(20, 10), timedelta(minutes=1))
    assert api.calls == [NOW, local(20, 10)]
    flows = hass.config_entries.flow.async_progress()
    assert [(f["context"]["source"], f["context"]["entry_id"]) for f in flows] == [(SOURCE_REAUTH, entry.entry_id)]
    assert price(hass) == pytest.approx(0.08685)  # the cached curve still covers now


# --- 6. restart --------------------------------------------------------------------------------------------------


async def test_restart_without_network_has_todays_prices_from_the_store(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe, hass_storage: dict[str, Any]
) -> None:
    freezer.move_to(NOW)
    api.serve(BOTH_DAYS)
    entry = await set_up(hass)
    assert price(hass) == pytest.approx(0.08685)

    stored = hass_storage[prices_key(entry)]["data"]["spot"]
    assert stored["start"] == "2026-11-28T23:00:00+00:00"
    assert len(stored["prices"]) == 192
    assert stored["prices"][0] == pytest.approx(0.06498)  # BE_60M position 1 (64.98 EUR/MWh)
    assert stored["prices"][96] == pytest.approx(kwh(TOMORROW_EUR_MWH[0]))

    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()
    assert hass.states.get(PRICE).state == STATE_UNAVAILABLE

    freezer.move_to(local(21, 40))
    api.fail(aiohttp.ClientConnectionError("no network"))
    assert await hass.config_entries.async_setup(entry.entry_id)
    # Right away, before the (failing) background fetch has finished:
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON
    # Both days are cached, so nothing was due: no request after the restart.
    assert api.calls == [NOW]


async def test_restart_with_today_cached_fetches_only_tomorrow_when_due(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe, hass_storage: dict[str, Any]
) -> None:
    freezer.move_to(local(9, 0))
    api.serve(TODAY_ONLY)
    entry = await set_up(hass)
    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()

    freezer.move_to(NOW)
    api.fail(aiohttp.ClientConnectionError("no network"))
    assert await hass.config_entries.async_setup(entry.entry_id)
    assert price(hass) == pytest.approx(0.08685)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert api.calls == [local(9, 0), NOW]  # tomorrow is due after 12:45: asked, failed
    assert isinstance(entry.runtime_data.coordinator.last_error, CannotConnect)
    assert price(hass) == pytest.approx(0.08685)


@pytest.mark.parametrize(
    "stored",
    [
        pytest.param({"version": 1, "minor_version": 1, "data": "garbage"}, id="not-a-dict"),
        pytest.param({"version": 1, "minor_version": 1, "data": {"spot": "garbage"}}, id="spot-not-a-dict"),
        pytest.param(
            {"version": 1, "minor_version": 1, "data": {"spot": {"start": "yesterday", "prices": [0.1]}}},
            id="bad-start",
        ),
        pytest.param(
            {
                "version": 1,
                "minor_version": 1,
                "data": {"spot": {"start": "2026-11-28T23:00:00+00:00", "resolution_minutes": 15, "prices": ["x"]}},
            },
            id="bad-price",
        ),
        pytest.param(
            {
                "version": 1,
                "minor_version": 1,
                "data": {
                    "spot": {"start": "2026-11-28T23:00:00+00:00", "resolution_minutes": 60, "prices": [0.5] * 48}
                },
            },
            id="hourly-curve",
        ),
        pytest.param({"version": 9, "minor_version": 1, "data": {"spot": {}}}, id="newer-version"),
    ],
)
async def test_corrupt_store_is_dropped_with_a_warning(
    hass: HomeAssistant,
    tz: str,
    freezer: FrozenDateTimeFactory,
    api: FakeEntsoe,
    hass_storage: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    stored: dict[str, Any],
) -> None:
    freezer.move_to(NOW)
    entry = entsoe_entry()
    hass_storage[prices_key(entry)] = {"key": prices_key(entry), **stored}
    api.fail(aiohttp.ClientConnectionError("no network"))

    entry.add_to_hass(hass)
    with caplog.at_level(logging.WARNING):
        assert not await hass.config_entries.async_setup(entry.entry_id)

    assert "Dropping unreadable cached prices" in caplog.text
    # Not trusted: set-up needs a fetch, which fails, so Home Assistant retries it (no entity shows a price, nor 0).
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert hass.states.get(PRICE) is None

    # The network comes back: the next set-up attempt replaces the bad cache with a good one.
    api.serve(BOTH_DAYS)
    await advance(hass, freezer, local(20, 10), timedelta(minutes=1))
    assert entry.state is ConfigEntryState.LOADED
    assert price(hass) == pytest.approx(0.08685)
    assert hass_storage[prices_key(entry)]["version"] == 1
    assert len(hass_storage[prices_key(entry)]["data"]["spot"]["prices"]) == 192


# --- 7. removal --------------------------------------------------------------------------------------------------


async def test_remove_entry_deletes_both_stores(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe, hass_storage: dict[str, Any]
) -> None:
    freezer.move_to(NOW)
    api.serve(BOTH_DAYS)
    entry = entsoe_entry()
    plans_key = f"{DOMAIN}.{entry.entry_id}.plans"
    hass_storage[plans_key] = {"version": 1, "minor_version": 1, "key": plans_key, "data": {}}
    other = f"{DOMAIN}.another_entry.prices"
    hass_storage[other] = {"version": 1, "minor_version": 1, "key": other, "data": {}}
    await set_up(hass, entry)
    assert prices_key(entry) in hass_storage

    assert (await hass.config_entries.async_remove(entry.entry_id))["require_restart"] is False
    await hass.async_block_till_done()

    assert prices_key(entry) not in hass_storage
    assert plans_key not in hass_storage
    assert other in hass_storage  # only this entry's files


# --- 8. another HA sensor as the source --------------------------------------------------------------------------


def raw_items(day: int, hourly: dict[int, float | None], scale: float = 1.0) -> list[dict[str, Any]]:
    """HACS Nord Pool ``raw_*`` items ({start, end, value}) for the given local hours of 2026-11-``day``."""
    return [
        {
            "start": local(hour, day=day).isoformat(),
            "end": (local(hour, day=day) + timedelta(hours=1)).isoformat(),
            "value": None if value is None else round(value * scale, 6),
        }
        for hour, value in hourly.items()
    ]


# Whole local days (a shorter list is refused); the other sensor gives no price (None) before noon today.
TODAY_KWH = {hour: kwh(TODAY_EUR_MWH[hour]) if hour >= 12 else None for hour in range(24)}
TOMORROW_KWH = {hour: kwh(TOMORROW_EUR_MWH.get(hour, 50.0)) for hour in range(24)}


def sensor_entry() -> MockConfigEntry:
    return MockConfigEntry(
        domain=DOMAIN,
        title="Price sensor",
        unique_id="sensor_prices",
        data={"price_source": "sensor", "price_entity": "sensor.prices"},
        options=dict(DEFAULT_OPTIONS),
        version=1,
        minor_version=1,
    )


async def test_sensor_source_follows_the_other_sensors_attributes(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, aioclient_mock: AiohttpClientMocker
) -> None:
    freezer.move_to(NOW)
    hass.states.async_set(
        "sensor.prices",
        "0.08685",
        {
            "unit_of_measurement": "EUR/kWh",
            "raw_today": raw_items(29, TODAY_KWH),
            "raw_tomorrow": raw_items(30, TOMORROW_KWH),
        },
    )
    entry = await set_up(hass, sensor_entry())
    state = hass.states.get(PRICE)
    assert float(state.state) == pytest.approx(0.08685)
    assert state.attributes["source"] == "sensor"
    assert state.attributes["tomorrow"][4]["price"] == pytest.approx(0.03534)  # 01:00 local
    assert state.attributes["today"][0]["price"] is None  # hours the other sensor does not give stay unknown

    # The other sensor revises 20:00 and tomorrow's 02:00, now in cents: our sensor follows.
    revised = {**TODAY_KWH, 20: 0.1234}
    hass.states.async_set(
        "sensor.prices",
        "12.34",
        {
            "unit_of_measurement": "c/kWh",
            "raw_today": raw_items(29, revised, scale=100),
            "raw_tomorrow": raw_items(30, {**TOMORROW_KWH, 2: 0.0333}, scale=100),
        },
    )
    await hass.async_block_till_done(wait_background_tasks=True)
    state = hass.states.get(PRICE)
    assert float(state.state) == pytest.approx(0.1234)
    assert state.attributes["tomorrow"][8]["price"] == pytest.approx(0.0333)

    # Slot boundaries read the sensor again (no HTTP anywhere).
    await advance(hass, freezer, local(21, 0), timedelta(minutes=5))
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))
    assert aioclient_mock.call_count == 0
    assert entry.runtime_data.coordinator.last_error is None

    # The other sensor breaks (no attributes): the last good curve stays.
    hass.states.async_set("sensor.prices", "unavailable", {})
    await hass.async_block_till_done(wait_background_tasks=True)
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))
    assert isinstance(entry.runtime_data.coordinator.last_error, PriceSourceError)


async def test_sensor_source_with_an_unknown_current_price_is_unavailable_not_zero(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory
) -> None:
    freezer.move_to(NOW)
    hass.states.async_set(
        "sensor.prices",
        "unknown",
        {"unit_of_measurement": "EUR/kWh", "raw_today": raw_items(29, {**TODAY_KWH, 20: None})},
    )
    await set_up(hass, sensor_entry())
    state = hass.states.get(PRICE)
    assert state.state == STATE_UNAVAILABLE

    await advance(hass, freezer, local(21, 0), timedelta(minutes=5))
    assert price(hass) == pytest.approx(kwh(TODAY_EUR_MWH[21]))


async def test_sensor_source_that_appears_after_setup(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory
) -> None:
    freezer.move_to(NOW)
    entry = await set_up(hass, sensor_entry())
    assert hass.states.get(PRICE).state == STATE_UNAVAILABLE
    assert isinstance(entry.runtime_data.coordinator.last_error, PriceSourceError)

    hass.states.async_set(
        "sensor.prices", "0.08685", {"unit_of_measurement": "EUR/kWh", "raw_today": raw_items(29, TODAY_KWH)}
    )
    await hass.async_block_till_done(wait_background_tasks=True)
    assert price(hass) == pytest.approx(0.08685)


async def test_sensor_source_with_plain_today_and_tomorrow_lists(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory
) -> None:
    """HACS Nord Pool without raw attributes: plain lists for HA's local today and tomorrow."""
    freezer.move_to(NOW)
    hass.states.async_set(
        "sensor.prices",
        "8.685",
        {
            "unit_of_measurement": "c/kWh",
            "currency": "EUR",
            "today": [round(value / 10, 3) for value in BE_60M_EUR_MWH],  # EUR/MWh / 10 = c/kWh
            "tomorrow": [],
        },
    )
    await set_up(hass, sensor_entry())
    state = hass.states.get(PRICE)
    assert float(state.state) == pytest.approx(0.08685)
    assert state.attributes["today"][0] == {"start": "2026-11-28T23:00:00+00:00", "price": pytest.approx(0.06498)}
    assert all(item["price"] is None for item in state.attributes["tomorrow"])
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_OFF


async def test_reconfigured_source_does_not_reuse_the_old_cache(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, hass_storage: dict[str, Any]
) -> None:
    """Switching to another sensor drops the previous sensor's cached prices (its tomorrow must not linger)."""
    freezer.move_to(NOW)
    both = {"unit_of_measurement": "EUR/kWh", "raw_today": raw_items(29, TODAY_KWH), "raw_tomorrow": raw_items(30, TOMORROW_KWH)}
    hass.states.async_set("sensor.prices", "0.08685", both)
    hass.states.async_set("sensor.other", "0.08685", {"unit_of_measurement": "EUR/kWh", "raw_today": raw_items(29, TODAY_KWH)})
    entry = await set_up(hass, sensor_entry())
    assert hass.states.get(PRICE).attributes["tomorrow"][4]["price"] == pytest.approx(0.03534)
    assert hass_storage[prices_key(entry)]["data"]["source"] == "sensor_prices"

    # What the reconfigure step does: update the entry, then reload it.
    hass.config_entries.async_update_entry(
        entry, unique_id="sensor_other", data={"price_source": "sensor", "price_entity": "sensor.other"}
    )
    assert await hass.config_entries.async_reload(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    assert all(p["price"] is None for p in hass.states.get(PRICE).attributes["tomorrow"])
    assert hass_storage[prices_key(entry)]["data"]["source"] == "sensor_other"
