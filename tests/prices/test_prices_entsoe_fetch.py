"""async_fetch_day_ahead against a local aiohttp server on 127.0.0.1, and the request parameters."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta, timezone

from a44 import HTML_503, NO_DATA_TEXT, acknowledgement, real_document
from aiohttp import ClientSession, web
from aiohttp.test_utils import TestServer
from entsoe.mappings import Area
import pytest

from custom_components.agentic_hems.prices import (
    SEQUENCED_ZONES,
    ZONES,
    CannotConnect,
    InvalidAuth,
    PricesNotPublished,
    PriceSourceError,
    async_fetch_day_ahead,
    build_request_params,
    parse_day_ahead,
)
from custom_components.agentic_hems.prices import entsoe as entsoe_module

START = datetime(2024, 10, 7, 22, tzinfo=UTC)
END = datetime(2024, 10, 8, 22, tzinfo=UTC)

type Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@asynccontextmanager
async def serve(handler: Handler, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ClientSession]:
    """Point API_URL at a local server running ``handler``; yield a client session."""
    app = web.Application()
    app.router.add_get("/api", handler)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    monkeypatch.setattr(entsoe_module, "API_URL", str(server.make_url("/api")))
    try:
        async with ClientSession() as session:
            yield session
    finally:
        await server.close()


def reply(body: str | bytes, status: int = 200, content_type: str = "text/xml") -> Handler:
    async def handler(request: web.Request) -> web.Response:
        data = body.encode() if isinstance(body, str) else body
        return web.Response(body=data, status=status, content_type=content_type)

    return handler


@pytest.mark.usefixtures("socket_enabled")
async def test_200_returns_body_and_sends_a44_params(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, str] = {}
    document = real_document("BE_60M.xml")

    async def handler(request: web.Request) -> web.Response:
        seen.update(request.query)
        return web.Response(body=document, content_type="text/xml")

    async with serve(handler, monkeypatch) as session:
        body = await async_fetch_day_ahead(session, "secret-token", "BE", START, END)
    assert body == document
    assert seen == {
        "securityToken": "secret-token",
        "documentType": "A44",
        "in_Domain": "10YBE----------2",
        "out_Domain": "10YBE----------2",
        "periodStart": "202410072200",
        "periodEnd": "202410082200",
        "contract_MarketAgreement.type": "A01",
    }
    assert len(parse_day_ahead(body)) == 96


@pytest.mark.usefixtures("socket_enabled")
async def test_200_acknowledgement_is_left_to_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serve(reply(acknowledgement("999", NO_DATA_TEXT)), monkeypatch) as session:
        body = await async_fetch_day_ahead(session, "token", "BE", START, END)
    with pytest.raises(PricesNotPublished):
        parse_day_ahead(body)


@pytest.mark.usefixtures("socket_enabled")
async def test_401_is_invalid_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    handler = reply("<html><body>Unauthorized</body></html>", 401, "text/html")
    async with serve(handler, monkeypatch) as session:
        with pytest.raises(InvalidAuth) as raised:
            await async_fetch_day_ahead(session, "wrong-token", "BE", START, END)
    assert raised.value.translation_key == "invalid_auth"
    assert "wrong-token" not in str(raised.value)


@pytest.mark.usefixtures("socket_enabled")
async def test_400_with_no_data_acknowledgement(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serve(reply(acknowledgement("999", NO_DATA_TEXT), 400), monkeypatch) as session:
        with pytest.raises(PricesNotPublished, match="No matching data"):
            await async_fetch_day_ahead(session, "token", "BE", START, END)


@pytest.mark.usefixtures("socket_enabled")
async def test_400_with_other_acknowledgement(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "The amount of requested data exceeds allowed limit."
    async with serve(reply(acknowledgement("999", text), 400), monkeypatch) as session:
        with pytest.raises(PriceSourceError, match="exceeds allowed limit") as raised:
            await async_fetch_day_ahead(session, "token", "BE", START, END)
    assert not isinstance(raised.value, PricesNotPublished)


@pytest.mark.parametrize(
    ("status", "body", "error"),
    [
        (400, "Bad Request", PriceSourceError),
        (404, "Not Found", PriceSourceError),
        (503, HTML_503, CannotConnect),
    ],
)
@pytest.mark.usefixtures("socket_enabled")
async def test_other_statuses(
    monkeypatch: pytest.MonkeyPatch, status: int, body: str, error: type[PriceSourceError]
) -> None:
    async with serve(reply(body, status, "text/html"), monkeypatch) as session:
        with pytest.raises(error) as raised:
            await async_fetch_day_ahead(session, "token", "BE", START, END)
    assert not isinstance(raised.value, PricesNotPublished)


@pytest.mark.usefixtures("socket_enabled")
async def test_timeout_is_cannot_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    release = asyncio.Event()

    async def slow(request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text="late")

    async with serve(slow, monkeypatch) as session:
        try:
            with pytest.raises(CannotConnect) as raised:
                await async_fetch_day_ahead(session, "token", "BE", START, END, timeout=0.05)
        finally:
            release.set()
    assert raised.value.translation_key == "cannot_connect"
    assert isinstance(raised.value, PriceSourceError)


@pytest.mark.usefixtures("socket_enabled")
async def test_connection_refused_is_cannot_connect(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serve(reply("unused"), monkeypatch) as session:
        pass
    async with ClientSession() as session:  # the server above is gone: nothing listens on its port
        with pytest.raises(CannotConnect):
            await async_fetch_day_ahead(session, "token", "BE", START, END, timeout=5)


def test_request_params_for_sequenced_zone() -> None:
    local = timezone(timedelta(hours=2))
    start, end = datetime(2025, 10, 2, 0, 15, tzinfo=local), datetime(2025, 10, 3, tzinfo=local)
    params = build_request_params("t", "de_lu", start, end)
    assert params["in_Domain"] == params["out_Domain"] == "10Y1001A1001A82H"
    assert params["periodStart"] == "202510012215"  # converted to UTC, minutes kept
    assert params["classificationSequence_AttributeInstanceComponent.position"] == "1"
    assert "classificationSequence_AttributeInstanceComponent.position" not in build_request_params(
        "t", "NL", START, END
    )


@pytest.mark.parametrize(
    ("zone", "start", "end"),
    [
        ("XX", START, END),
        ("DE", START, END),  # a country, not a bidding zone
        ("BE", START.replace(tzinfo=None), END),
        ("BE", END, START),
        ("BE", START, START),
    ],
)
def test_request_params_rejects(zone: str, start: datetime, end: datetime) -> None:
    with pytest.raises(ValueError):
        build_request_params("t", zone, start, end)


def test_zones_mirror_entsoe_py() -> None:
    """ZONES and their EIC codes are entsoe-py Area names and codes; the sequenced zones are among them."""
    assert ZONES == sorted(ZONES)
    assert {"BE", "DE_LU", "NL", "FR", "AT", "SE_3", "NO_2", "DK_1"} <= set(ZONES)
    assert set(SEQUENCED_ZONES) <= set(ZONES)
    for zone in ZONES:
        code = build_request_params("t", zone, START, END)["in_Domain"]
        assert code == Area[zone].code
