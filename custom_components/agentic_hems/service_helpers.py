"""What every service action shares: the entry field and its resolution, size caps, translated errors, local times.

The service actions of every feature (planning, device control, the assistant, the grid toolkit) and the cards'
websocket commands resolve their config entry here and raise their validation errors through :func:`invalid`.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util

from .bounds import MAX_TEXT_CHARS, TooLarge, check_size
from .const import ATTR_CONFIG_ENTRY_ID, DOMAIN
from .validation import vol

if TYPE_CHECKING:
    from .runtime import AgenticHemsConfigEntry

ENTRY_SCHEMA: dict[vol.Marker, Any] = {vol.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}


def invalid(key: str, **placeholders: str) -> ServiceValidationError:
    """The translated validation error ``exceptions.<key>`` with its placeholders."""
    return ServiceValidationError(
        translation_domain=DOMAIN, translation_key=key, translation_placeholders=placeholders or None
    )


def bounded(schema: Any, *, max_chars: int = MAX_TEXT_CHARS) -> Any:
    """``schema`` behind the size caps of :mod:`.bounds` (``max_chars`` characters per string), checked first.

    An input over a cap is refused with the translated ``input_too_large_<limit>`` error before any other
    validation, scanning or parsing looks at it; its cost is bounded by the caps, not by the input's size.
    """

    def _size(data: Any) -> Any:
        try:
            check_size(data, max_chars=max_chars)
        except TooLarge as err:
            raise too_large(err) from None
        return data

    return vol.All(_size, schema)


def too_large(err: TooLarge) -> ServiceValidationError:
    """The translated ``input_too_large_<limit>`` error for ``err`` (the limit, its value and where the walk
    stopped)."""
    where = {"maximum": str(err.maximum), "path": (".".join(map(str, err.path)) or "-")[:100]}
    match err.limit:
        case "chars":
            return invalid("input_too_large_chars", **where)
        case "total_chars":
            return invalid("input_too_large_total_chars", **where)
        case "items":
            return invalid("input_too_large_items", **where)
        case _:
            return invalid("input_too_large_depth", **where)


def entry_for_call(hass: HomeAssistant, call: ServiceCall) -> AgenticHemsConfigEntry:
    """The entry named by ``config_entry_id``, or the only loaded one."""
    return resolve_entry(hass, call.data.get(ATTR_CONFIG_ENTRY_ID))


def resolve_entry(hass: HomeAssistant, entry_id: str | None) -> AgenticHemsConfigEntry:
    """The loaded entry ``entry_id``, or the only loaded one when it is None.

    Raises:
        ServiceValidationError: unknown or unloaded entry, no entry loaded, or several loaded and none named.
    """
    if entry_id:
        entry = hass.config_entries.async_get_entry(entry_id)
        if entry is None or entry.domain != DOMAIN:
            raise invalid("entry_not_found", entry_id=entry_id)
        if entry.state is not ConfigEntryState.LOADED:
            raise invalid("entry_not_loaded", entry_id=entry_id)
        return entry
    loaded = hass.config_entries.async_loaded_entries(DOMAIN)
    if not loaded:
        raise invalid("no_entry_loaded")
    if len(loaded) > 1:
        raise invalid("entry_required")
    return loaded[0]


def aware(moment: datetime) -> datetime:
    """Naive datetimes from automations are local time."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt_util.get_default_time_zone())
    return dt_util.as_utc(moment)
