"""What every service action shares: the entry field and its resolution, size caps, translated errors, local times.

The service actions of every feature (planning, device control, the assistant, the grid toolkit) name their config
entry with one field, ``config_entry_id`` (:data:`ENTRY_SCHEMA`), and resolve it here, as the cards' websocket
commands do; they raise their validation errors through :func:`invalid`. The grid toolkit's actions called the field
``tenant``: :func:`accepting_tenant` still reads that name, with a repair issue.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv, issue_registry as ir
from homeassistant.util import dt as dt_util

from .bounds import MAX_TEXT_CHARS, TooLarge, check_size
from .const import ATTR_CONFIG_ENTRY_ID, DOMAIN
from .validation import vol

if TYPE_CHECKING:
    from .runtime import AgenticHemsConfigEntry

ENTRY_SCHEMA: dict[vol.Marker, Any] = {vol.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}
ATTR_TENANT = "tenant"  # the grid toolkit actions' old name of config_entry_id
DEPRECATED_TENANT = "deprecated_tenant_field"  # the repair issue (and its translation key) of a call that used it


def invalid(key: str, **placeholders: str) -> ServiceValidationError:
    """Return the translated validation error ``exceptions.<key>`` with its placeholders."""
    return ServiceValidationError(
        translation_domain=DOMAIN, translation_key=key, translation_placeholders=placeholders or None
    )


def bounded(schema: Any, *, max_chars: int = MAX_TEXT_CHARS) -> Any:
    """Return ``schema`` behind the size caps of :mod:`.bounds` (``max_chars`` characters per string), checked first.

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
    """Return the translated ``input_too_large_<limit>`` error for ``err``.

    It names the limit, its value and where the walk stopped.
    """
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
    """Return the entry named by ``config_entry_id``, or the only loaded one."""
    return resolve_entry(hass, call.data.get(ATTR_CONFIG_ENTRY_ID))


def resolve_entry(hass: HomeAssistant, entry_id: str | None) -> AgenticHemsConfigEntry:
    """Return the loaded entry ``entry_id``, or the only loaded one when it is None.

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


def accepting_tenant(hass: HomeAssistant, service: str, schema: Any) -> Any:
    """Return ``schema`` behind a step that reads the entry field's old name ``tenant`` as ``config_entry_id``.

    A call that uses it still works and raises the repair issue ``deprecated_tenant_field`` naming ``service``
    (not persistent: it goes at the next restart).

    Raises:
        ServiceValidationError: ``entry_fields_conflict`` when ``tenant`` and ``config_entry_id`` differ.

    """

    def _rename(data: Any) -> Any:
        if not isinstance(data, Mapping) or ATTR_TENANT not in data:
            return data
        renamed = {key: value for key, value in data.items() if key != ATTR_TENANT}
        tenant = data[ATTR_TENANT]
        if (entry_id := renamed.setdefault(ATTR_CONFIG_ENTRY_ID, tenant)) != tenant:
            raise invalid("entry_fields_conflict", config_entry_id=str(entry_id), tenant=str(tenant))
        ir.async_create_issue(
            hass,
            DOMAIN,
            DEPRECATED_TENANT,
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=DEPRECATED_TENANT,
            translation_placeholders={"service": f"{DOMAIN}.{service}"},
        )
        return renamed

    return vol.All(_rename, schema)
