"""Typed price errors; the shell maps each to a translated message by its ``translation_key``."""

from __future__ import annotations


class PriceError(Exception):
    """Base class for every price failure. ``translation_key`` names the message in translations/*.json."""

    translation_key = "price_error"


class PricesNotPublished(PriceError):
    """ENTSO-E answered with an Acknowledgement_MarketDocument (reason code 999): no data for the period yet."""

    translation_key = "prices_not_published"


class PriceSourceError(PriceError):
    """The source answered with something that is not a day-ahead price document (HTML page, empty body, bad XML)."""

    translation_key = "price_source_error"


class InvalidAuth(PriceError):
    """The price source rejected the credentials (ENTSO-E answers HTTP 401 to an unknown security token)."""

    translation_key = "invalid_auth"


class CannotConnect(PriceSourceError):
    """The price source could not be reached: timeout, DNS or connection failure, or a 5xx answer."""

    translation_key = "cannot_connect"
