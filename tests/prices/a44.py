"""Builders of synthetic ENTSO-E documents (IEC 62325-451-3 A44 publications and 451-1 acknowledgements) for tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

PUBLICATION_NS = "urn:iec62325.351:tc57wg16:451-3:publicationdocument:7:3"
ACK_NS = "urn:iec62325.351:tc57wg16:451-1:acknowledgementdocument:7:0"


def period(start: str, end: str, points: Sequence[float] | Mapping[int, float], resolution: str = "PT15M") -> str:
    """A <Period>; ``points`` is a list (positions 1..n) or a {position: price} mapping (A03 omissions)."""
    by_position = points if isinstance(points, Mapping) else dict(enumerate(points, start=1))
    body = "".join(
        f"<Point><position>{position}</position><price.amount>{price}</price.amount></Point>"
        for position, price in sorted(by_position.items())
    )
    return (
        f"<Period><timeInterval><start>{start}</start><end>{end}</end></timeInterval>"
        f"<resolution>{resolution}</resolution>{body}</Period>"
    )


def time_series(
    *periods: str,
    contract: str = "A01",
    sequence: int | None = None,
    curve_type: str = "A01",
    currency: str = "EUR",
    unit: str = "MWH",
    zone: str = "10YBE----------2",
) -> str:
    """A <TimeSeries> holding ``periods``; ``sequence`` adds a classificationSequence position."""
    sequence_element = (
        ""
        if sequence is None
        else f"<classificationSequence_AttributeInstanceComponent.position>{sequence}"
        "</classificationSequence_AttributeInstanceComponent.position>"
    )
    return (
        "<TimeSeries><mRID>1</mRID><auction.type>A01</auction.type><businessType>A62</businessType>"
        f'<in_Domain.mRID codingScheme="A01">{zone}</in_Domain.mRID>'
        f'<out_Domain.mRID codingScheme="A01">{zone}</out_Domain.mRID>'
        f"<contract_MarketAgreement.type>{contract}</contract_MarketAgreement.type>{sequence_element}"
        f"<currency_Unit.name>{currency}</currency_Unit.name><price_Measure_Unit.name>{unit}</price_Measure_Unit.name>"
        f"<curveType>{curve_type}</curveType>{''.join(periods)}</TimeSeries>"
    )


def publication(*series: str, start: str = "2024-10-07T22:00Z", end: str = "2024-10-08T22:00Z") -> str:
    """A Publication_MarketDocument (type A44) holding ``series``."""
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n<Publication_MarketDocument xmlns="{PUBLICATION_NS}">'
        "<mRID>test</mRID><revisionNumber>1</revisionNumber><type>A44</type>"
        f"<period.timeInterval><start>{start}</start><end>{end}</end></period.timeInterval>"
        f"{''.join(series)}</Publication_MarketDocument>"
    )


def acknowledgement(code: str, text: str) -> str:
    """An Acknowledgement_MarketDocument with one Reason, as ENTSO-E sends when it returns no data."""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Acknowledgement_MarketDocument xmlns="{ACK_NS}">'
        "<mRID>ack</mRID><createdDateTime>2025-10-01T10:00:00Z</createdDateTime>"
        '<sender_MarketParticipant.mRID codingScheme="A01">10X1001A1001A450</sender_MarketParticipant.mRID>'
        "<sender_MarketParticipant.marketRole.type>A32</sender_MarketParticipant.marketRole.type>"
        '<receiver_MarketParticipant.mRID codingScheme="A01">10X1001A1001A450</receiver_MarketParticipant.mRID>'
        "<receiver_MarketParticipant.marketRole.type>A39</receiver_MarketParticipant.marketRole.type>"
        "<received_MarketDocument.createdDateTime>2025-10-01T10:00:00Z</received_MarketDocument.createdDateTime>"
        f"<Reason><code>{code}</code><text>{text}</text></Reason></Acknowledgement_MarketDocument>"
    )


NO_DATA_TEXT = (
    "No matching data found for Data item Day-ahead Prices [12.1.D] (10YBE----------2, 10YBE----------2) "
    "and interval 2025-10-01T22:00:00.000Z/2025-10-02T22:00:00.000Z."
)

HTML_503 = (
    "<!DOCTYPE html>\n<html><head><title>503 Service Temporarily Unavailable</title>"
    "<meta charset=utf-8></head><body><h1>Service Temporarily Unavailable</h1>"
    "<p>The Transparency Platform is under maintenance.<br></p></body></html>"
)


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "entsoe"


def real_document(name: str) -> bytes:
    """A real ENTSO-E answer from tests/fixtures/entsoe (see its NOTICE.md)."""
    return (FIXTURES / name).read_bytes()
