"""Day-ahead prices from the ENTSO-E Transparency Platform.

Source: ENTSO-E Transparency Platform RESTful API guide, "Day-ahead Prices [12.1.D]" (documentType A44); the answer is
an IEC 62325-451-3 ``Publication_MarketDocument`` with prices in EUR per MWh on UTC Periods, or an
``Acknowledgement_MarketDocument`` (IEC 62325-451-1) when there is nothing to return. Prices leave this module in
EUR per kWh.

``async_fetch_day_ahead`` only downloads. ``parse_day_ahead`` imports entsoe-py (and pandas with it) when called,
so callers run it in an executor.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Final
import xml.etree.ElementTree as ET

import aiohttp
import numpy as np

from ._items import price
from .curve import SLOT, PriceCurve, ensure_utc, local_day_bounds
from .days import MARKET_TZ, Day, assemble, refused_day, utc_text
from .errors import CannotConnect, InvalidAuth, PricesNotPublished, PriceSourceError
from .trust import PriceIssue

API_URL: Final = "https://web-api.tp.entsoe.eu/api"

# Bidding zones with day-ahead prices on the platform: entsoe-py 0.8.1 ``entsoe.mappings.Area`` name -> EIC code
# (tests/prices check both against entsoe-py). Copied rather than imported: ``import entsoe`` loads pandas, which
# must not happen on the event loop where the config flow and the fetch run.
_EIC_CODES: Final[dict[str, str]] = {
    "AT": "10YAT-APG------L",
    "BE": "10YBE----------2",
    "BG": "10YCA-BULGARIA-R",
    "CH": "10YCH-SWISSGRIDZ",
    "CZ": "10YCZ-CEPS-----N",
    "DE_LU": "10Y1001A1001A82H",
    "DK_1": "10YDK-1--------W",
    "DK_2": "10YDK-2--------M",
    "EE": "10Y1001A1001A39I",
    "ES": "10YES-REE------0",
    "FI": "10YFI-1--------U",
    "FR": "10YFR-RTE------C",
    "GR": "10YGR-HTSO-----Y",
    "HR": "10YHR-HEP------M",
    "HU": "10YHU-MAVIR----U",
    "IT_CALA": "10Y1001C--00096J",
    "IT_CNOR": "10Y1001A1001A70O",
    "IT_CSUD": "10Y1001A1001A71M",
    "IT_NORD": "10Y1001A1001A73I",
    "IT_SARD": "10Y1001A1001A74G",
    "IT_SICI": "10Y1001A1001A75E",
    "IT_SUD": "10Y1001A1001A788",
    "LT": "10YLT-1001A0008Q",
    "LV": "10YLV-1001A00074",
    "NL": "10YNL----------L",
    "NO_1": "10YNO-1--------2",
    "NO_2": "10YNO-2--------T",
    "NO_3": "10YNO-3--------J",
    "NO_4": "10YNO-4--------9",
    "NO_5": "10Y1001A1001A48H",
    "PL": "10YPL-AREA-----S",
    "PT": "10YPT-REN------W",
    "RO": "10YRO-TEL------P",
    "RS": "10YCS-SERBIATSOV",
    "SE_1": "10Y1001A1001A44P",
    "SE_2": "10Y1001A1001A45N",
    "SE_3": "10Y1001A1001A46L",
    "SE_4": "10Y1001A1001A47J",
    "SI": "10YSI-ELES-----O",
    "SK": "10YSK-SEPS-----K",
}

ZONES: Final[list[str]] = sorted(_EIC_CODES)
"""entsoe-py Area names of the bidding zones offered in the config flow."""

SEQUENCED_ZONES: Final = frozenset({"AT", "DE_LU"})
"""Zones whose A44 documents hold several classificationSequence positions (position 1 is the SDAC auction).

The same set entsoe-py 0.8.1 asks position 1 for, in ``EntsoePandasClient._query_day_ahead_prices``:
``sequence=1 if area.name in ['DE_LU', 'AT'] else None``.
"""

_DAY_AHEAD_CONTRACT = "A01"
_SEQUENCE_TAG = "classificationSequence_AttributeInstanceComponent.position"
_NO_DATA_CODE = "999"
_MWH = "MWH"
# Period resolutions -> (step, the key of entsoe-py's parse_prices result for that step).
_RESOLUTIONS: Final = {
    "PT15M": (timedelta(minutes=15), "15min"),
    "PT30M": (timedelta(minutes=30), "30min"),
    "PT60M": (timedelta(minutes=60), "60min"),
}
_CURVE_TYPES = frozenset({"A01", "A03"})  # A01: every position given; A03: omitted positions repeat the previous
type _ParsePrices = Callable[[str], dict[str, Any]]


def build_request_params(api_key: str, zone: str, start: datetime, end: datetime) -> dict[str, str]:
    """Query parameters of a day-ahead price request for ``zone`` over ``[start, end)``.

    Args:
        api_key: ENTSO-E security token.
        zone: an entry of ``ZONES`` (entsoe-py Area name such as "BE" or "DE_LU"; case-insensitive).
        start: aware datetime, sent as UTC ``yyyyMMddHHmm`` (periodStart).
        end: aware datetime, sent likewise (periodEnd).

    Raises:
        ValueError: unknown zone, naive datetimes or ``end <= start``.

    """
    key = zone.upper()
    if key not in _EIC_CODES:
        raise ValueError(f"unknown bidding zone {zone!r}")
    start, end = ensure_utc(start), ensure_utc(end)
    if end <= start:
        raise ValueError("periodEnd must be after periodStart")
    params = {
        "securityToken": api_key,
        "documentType": "A44",
        "in_Domain": _EIC_CODES[key],
        "out_Domain": _EIC_CODES[key],
        "periodStart": start.strftime("%Y%m%d%H%M"),
        "periodEnd": end.strftime("%Y%m%d%H%M"),
        "contract_MarketAgreement.type": _DAY_AHEAD_CONTRACT,
    }
    if key in SEQUENCED_ZONES:
        params[_SEQUENCE_TAG] = "1"
    return params


async def async_fetch_day_ahead(
    session: aiohttp.ClientSession,
    api_key: str,
    zone: str,
    start: datetime,
    end: datetime,
    *,
    timeout: float = 120.0,
) -> bytes:
    """Download the A44 document for ``zone`` over ``[start, end)``; parse it with ``parse_day_ahead``.

    A 200 body is returned unparsed, even when it is an acknowledgement (``parse_day_ahead`` recognises it).

    Raises:
        ValueError: see ``build_request_params``.
        InvalidAuth: HTTP 401 (unknown security token).
        CannotConnect: timeout after ``timeout`` seconds, connection failure or an HTTP 5xx answer.
        PricesNotPublished: HTTP 400 with a "no matching data" acknowledgement.
        PriceSourceError: any other answer.

    """
    params = build_request_params(api_key, zone, start, end)
    try:
        async with session.get(API_URL, params=params, timeout=aiohttp.ClientTimeout(total=timeout)) as response:
            status = response.status
            body = await response.read()
    except (TimeoutError, aiohttp.ClientError) as err:
        # The request URL carries the token, so only the error type goes into the message.
        raise CannotConnect(f"ENTSO-E unreachable ({type(err).__name__})") from err
    if status == 200:
        return body
    if status == 401:
        raise InvalidAuth("ENTSO-E rejected the security token (HTTP 401)")
    if status == 400:
        # ENTSO-E sends its acknowledgements (no data, bad parameters) with status 400 as well; this raises them.
        _read_document(body)
    if status >= 500:
        raise CannotConnect(f"ENTSO-E answered HTTP {status}")
    raise PriceSourceError(f"ENTSO-E answered HTTP {status}")


def parse_day_ahead(xml: str | bytes, *, sequence: int | None = None) -> PriceCurve:
    """Turn an A44 answer into one contiguous 15-minute ``PriceCurve`` in EUR/kWh (source "entsoe").

    Keeps the TimeSeries of contract type A01 (day-ahead) whose classificationSequence position is ``sequence``
    (1 when omitted; series without the element are always kept). Each Period is one delivery day, checked before
    and after entsoe-py's ``parse_prices`` reads it (which repeats the previous price for positions curveType A03
    omits, trailing ones included). A Period is refused as a whole (its slots unknown, with a note) when:

    - it is not one CET/CEST delivery day, or its resolution is not PT15M, PT30M or PT60M (NOT_WHOLE_DAY);
    - curveType A01 lacks a position, or A03 lacks position 1 (NOT_WHOLE_DAY);
    - a position lies beyond its timeInterval (OUTSIDE_PERIOD);
    - a position or price is unreadable or not finite: INF, -INF, NaN (BAD_VALUE);
    - one position carries two different prices (CONFLICT), or another series of the same resolution gives the
      same day different prices (CONFLICT, both refused; identical repeats merge).

    Hourly and half-hourly prices are spread over their quarter hours; where resolutions overlap, the finer one
    wins. A day of exact zeros, or two hours or more of zeros ending the document, is doubtful (see
    :func:`~.days.assemble`). The curve runs from the earliest to the latest day with NaN in gaps. Blocking
    (imports pandas): run it in an executor.

    Raises:
        PricesNotPublished: a "no matching data" acknowledgement (reason code 999), or no matching TimeSeries.
        PriceSourceError: an empty body, non-XML (such as an HTML maintenance page), another acknowledgement,
            another document type, a non-EUR/MWh or mixed-currency document, a Period without a readable
            timeInterval, or no price at all.
        PricesRefused: (a PriceSourceError) every Period was refused; its ``spans`` say why.

    """
    root = _read_document(xml)
    currency = _keep_day_ahead(root, 1 if sequence is None else sequence)

    from entsoe.parsers import parse_prices  # noqa: PLC0415 - pulls in pandas; kept off the import path

    days = [
        _period_day(series, period, parse_prices)
        for series in root.findall("TimeSeries")
        for period in series.iter("Period")
    ]
    return assemble(days, currency=currency, source="entsoe")


def _period_day(series: ET.Element, period: ET.Element, parse_prices: _ParsePrices) -> Day:
    """One Period of ``series`` as a day in EUR/kWh, or its refusal."""
    start, end = (_time(period.findtext(f"timeInterval/{bound}")) for bound in ("start", "end"))
    label = f"period {utc_text(start)} to {utc_text(end)}"
    resolution = (period.findtext("resolution") or "").strip()
    curve_type = (series.findtext("curveType") or "").strip()
    if resolution not in _RESOLUTIONS:
        return refused_day(label, start, end, PriceIssue.NOT_WHOLE_DAY, f"resolution {resolution!r} is not supported")
    if curve_type not in _CURVE_TYPES:
        return refused_day(label, start, end, PriceIssue.BAD_VALUE, f"curveType {curve_type!r} is not A01 or A03")
    if (start, end) != local_day_bounds(start.astimezone(MARKET_TZ).date(), MARKET_TZ):
        return refused_day(label, start, end, PriceIssue.NOT_WHOLE_DAY, "is not one CET/CEST delivery day")
    step, key = _RESOLUTIONS[resolution]
    points = _points(label, start, end, step, period)
    if isinstance(points, Day):
        return points
    count = (end - start) // step
    if 1 not in points or (curve_type == "A01" and len(points) < count):
        reason = f"{len(points)} of {count} positions given under curveType {curve_type}"
        return refused_day(label, start, end, PriceIssue.NOT_WHOLE_DAY, reason)
    return _read_with_entsoe_py(label, start, end, (step, key), xml=_single(series, period), parse_prices=parse_prices)


def _time(text: str | None) -> datetime:
    """Return a timeInterval bound such as ``2024-10-07T22:00Z`` in UTC; PriceSourceError when unreadable."""
    try:
        return ensure_utc(datetime.fromisoformat((text or "").strip()))
    except ValueError as err:
        raise PriceSourceError(f"malformed day-ahead document: timeInterval bound {text!r}") from err


def _points(label: str, start: datetime, end: datetime, step: timedelta, period: ET.Element) -> dict[int, float] | Day:
    """Return the Period's prices by position (EUR/MWh), or the day's refusal."""
    count = (end - start) // step
    points: dict[int, float] = {}
    for point in period.iter("Point"):
        text = (point.findtext("position") or "").strip()
        if not text.isdigit() or int(text) < 1:
            return refused_day(label, start, end, PriceIssue.BAD_VALUE, f"position {text!r} is not a positive integer")
        position = int(text)
        instant = utc_text(start + (position - 1) * step)
        if position > count:
            reason = f"position {position} ({instant}) lies beyond the period's {count} positions"
            return refused_day(label, start, end, PriceIssue.OUTSIDE_PERIOD, reason)
        try:
            value = price(point.findtext("price.amount") or "")
        except PriceSourceError as err:
            return refused_day(label, start, end, PriceIssue.BAD_VALUE, f"{err} at {instant}")
        if points.setdefault(position, value) != value:
            reason = f"two prices for {instant}: {points[position]:g} and {value:g} EUR/MWh"
            return refused_day(label, start, end, PriceIssue.CONFLICT, reason)
    return points


def _single(series: ET.Element, period: ET.Element) -> str:
    """Return a document holding ``series`` with ``period`` as its only Period, for entsoe-py."""
    single = ET.Element("TimeSeries")
    single.extend(child for child in series if child.tag != "Period")
    single.append(period)
    document = ET.Element("Publication_MarketDocument")
    document.append(single)
    return ET.tostring(document, encoding="unicode")


def _read_with_entsoe_py(
    label: str, start: datetime, end: datetime, step_key: tuple[timedelta, str], *, xml: str, parse_prices: _ParsePrices
) -> Day:
    """entsoe-py's reading of a checked one-Period document, accepted when it is every slot of the day, in order."""
    step, key = step_key
    count = (end - start) // step
    try:
        series = parse_prices(xml)[key]
        moments = [moment.astimezone(UTC) for moment in series.index.to_pydatetime()]
        values = np.asarray(series.to_numpy(), dtype=np.float64)
    except (AttributeError, KeyError, TypeError, ValueError) as err:
        return refused_day(label, start, end, PriceIssue.BAD_VALUE, f"entsoe-py cannot read it ({err})")
    if moments != [start + k * step for k in range(count)] or not np.isfinite(values).all():
        reason = f"entsoe-py read {len(moments)} of {count} prices"
        return refused_day(label, start, end, PriceIssue.NOT_WHOLE_DAY, reason)
    return Day(label, start, end, step, np.repeat(values / 1000.0, step // SLOT))  # EUR/MWh -> EUR/kWh


def _read_document(xml: str | bytes) -> ET.Element:
    """Parse ``xml`` into a namespace-free tree of a Publication_MarketDocument; raise for anything else."""
    body = xml.strip()
    if not body:
        raise PriceSourceError("empty response")
    try:
        # expat refuses external entities and limits entity amplification; the body is an ENTSO-E API response
        root = ET.fromstring(body)  # noqa: S314
    except ET.ParseError as err:
        snippet = (body if isinstance(body, str) else body.decode("utf-8", "replace"))[:80]
        raise PriceSourceError(f"not an XML document: {' '.join(snippet.split())!r}") from err
    for element in root.iter():
        element.tag = element.tag.rpartition("}")[2]
    if root.tag == "Acknowledgement_MarketDocument":
        code = (root.findtext("Reason/code") or "").strip()
        text = " ".join((reason.findtext("text") or "").strip() for reason in root.iter("Reason")).strip()
        # Code 999 also covers refused requests ("exceeds allowed limit", ...); only "no data" means not yet published.
        if code == _NO_DATA_CODE and "no matching data" in text.lower():
            raise PricesNotPublished(text)
        raise PriceSourceError(f"ENTSO-E acknowledgement {code or '(no code)'}: {text or '(no reason)'}")
    if root.tag != "Publication_MarketDocument":
        raise PriceSourceError(f"unexpected document <{root.tag}>")
    return root


def _keep_day_ahead(root: ET.Element, sequence: int) -> str:
    """Drop the TimeSeries that are not day-ahead prices of ``sequence``; return the currency of the rest.

    entsoe-py reads every TimeSeries it finds, whatever its contract type or sequence, so this filter runs first.
    """
    currencies: set[str] = set()
    for series in root.findall("TimeSeries"):
        position = series.findtext(_SEQUENCE_TAG)
        if (series.findtext("contract_MarketAgreement.type") or "").strip() != _DAY_AHEAD_CONTRACT or (
            position is not None and position.strip() != str(sequence)
        ):
            root.remove(series)
            continue
        if (series.findtext("price_Measure_Unit.name") or "").strip().upper() != _MWH:
            raise PriceSourceError("prices are not per MWh")
        currencies.add((series.findtext("currency_Unit.name") or "").strip().upper())
    if not currencies:
        raise PricesNotPublished(f"no day-ahead TimeSeries (contract A01, sequence {sequence}) in the document")
    if len(currencies) > 1 or "" in currencies:
        raise PriceSourceError(f"missing or mixed currencies {sorted(currencies)}")
    return currencies.pop()
