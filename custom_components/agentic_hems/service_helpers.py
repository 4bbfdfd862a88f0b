"""What every service action shares: the entry field and its resolution, size caps, translated errors, local times.

The service actions of every feature (planning, device control, the assistant, the grid toolkit) name their config
entry with one field, ``config_entry_id`` (:data:`ENTRY_SCHEMA`), and resolve it here, as the cards' websocket
commands do; they raise their validation errors through :func:`invalid`. :func:`register` checks a call's fields in
the handler, so that a rejected field becomes a translated sentence naming the field and its limit
(:func:`field_error`) rather than the schema library's text. The grid toolkit's actions called the field ``tenant``:
:func:`accepting_tenant` still reads that name, with a repair issue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv, issue_registry as ir, translation
from homeassistant.util import dt as dt_util

from .bounds import MAX_TEXT_CHARS, MAX_TOTAL_CHARS, TooLarge, check_size
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


def bounded(schema: Any, *, max_chars: int = MAX_TEXT_CHARS, max_total_chars: int = MAX_TOTAL_CHARS) -> Any:
    """Return ``schema`` behind the size caps of :mod:`.bounds`, checked first.

    ``max_chars`` characters per string, ``max_total_chars`` in all.

    An input over a cap is refused with the translated ``input_too_large_<limit>`` error before any other
    validation, scanning or parsing looks at it; its cost is bounded by the caps, not by the input's size.
    """

    def _size(data: Any) -> Any:
        try:
            check_size(data, max_chars=max_chars, max_total_chars=max_total_chars)
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


def local_text(moment: datetime) -> str:
    """Return ``moment`` as the HA time zone's ``YYYY-MM-DD HH:MM`` (how error messages show times)."""
    return dt_util.as_local(moment).strftime("%Y-%m-%d %H:%M")


type ServiceHandler = Callable[[ServiceCall], Awaitable[ServiceResponse]]


def register(
    hass: HomeAssistant,
    service: str,
    handler: ServiceHandler,
    schema: Any,
    supports_response: SupportsResponse = SupportsResponse.NONE,
    *,
    max_total_chars: int = MAX_TOTAL_CHARS,
) -> None:
    """Register ``agentic_hems.<service>``: HA checks the size caps (:func:`bounded`), the handler the fields.

    ``handler`` gets the call with its data validated by ``schema``; a field ``schema`` rejects is raised as the
    translated :func:`field_error`.
    """

    async def _handle(call: ServiceCall) -> ServiceResponse:
        try:
            data = schema(dict(call.data))
        except vol.Invalid as err:
            raise await field_error(hass, service, schema, call.data, err) from None
        return await handler(ServiceCall(hass, call.domain, call.service, data, call.context, call.return_response))

    schema_bounded = bounded(dict, max_total_chars=max_total_chars)
    hass.services.async_register(DOMAIN, service, _handle, schema=schema_bounded, supports_response=supports_response)


def _mapping_of(validator: Any) -> Mapping[Any, Any]:
    """Return the mapping schema inside ``validator`` (a ``vol.Schema``, ``closed()`` or ``vol.All`` of one)."""
    if isinstance(inner := getattr(validator, "schema", None), Mapping):
        return inner
    for part in getattr(validator, "validators", ()):
        if found := _mapping_of(part):
            return found
    return {}


def _parts(validator: Any) -> Iterator[Any]:
    """Yield ``validator`` and, through ``vol.All``/``vol.Any``, every validator it combines."""
    yield validator
    for part in getattr(validator, "validators", ()):
        yield from _parts(part)


def _number(value: Any) -> float | None:
    """Return ``value`` as a number, or None when it is not one (booleans are not)."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except TypeError, ValueError:
        return None


async def field_error(
    hass: HomeAssistant, service: str, schema: Any, data: Mapping[str, Any], err: vol.Invalid
) -> ServiceValidationError:
    """Return the translated error for the first field of ``data`` that ``schema`` rejected with ``err``.

    The field is named as the action's form names it (in HA's language); the error says what the field needs: a
    value, a number within its range, a shorter text, a date and time, one of its options, or only one of a group
    of fields that exclude each other.
    """
    first = err.errors[0] if isinstance(err, vol.MultipleInvalid) else err
    if ATTR_TENANT in data:  # the entry field's old name (accepting_tenant)
        data = {ATTR_CONFIG_ENTRY_ID: data[ATTR_TENANT], **data}
    fields = {str(getattr(marker, "schema", marker)): (marker, value) for marker, value in _mapping_of(schema).items()}
    strings = await translation.async_get_translations(hass, hass.config.language, "services", [DOMAIN])

    def name(key: str) -> str:
        return strings.get(f"component.{DOMAIN}.services.{service}.fields.{key}.name") or key

    groups: dict[str, list[str]] = {}
    for key, (marker, _) in fields.items():
        if isinstance(marker, vol.Exclusive) and key in data:
            groups.setdefault(str(marker.group_of_exclusion), []).append(name(key))
    if isinstance(first, vol.ExclusiveInvalid) and (given := next((g for g in groups.values() if len(g) > 1), None)):
        return invalid("fields_exclusive", fields=", ".join(given))
    key = str(first.path[0]) if first.path else ""
    if key not in fields:
        return invalid("field_unknown", field=key)
    if key not in data:
        return invalid("field_required", field=name(key))
    return _value_error(name(key), list(_parts(fields[key][1])), data[key])


def _value_error(field: str, validators: list[Any], value: Any) -> ServiceValidationError:
    """Return the error for a rejected ``value`` of ``field``, read from the field's ``validators`` and the value itself."""
    for part in validators:
        if isinstance(part, vol.Range):
            if (number := _number(value)) is None:
                return invalid("field_not_a_number", field=field)
            if part.min is not None and number < part.min:
                return invalid("field_below_minimum", field=field, minimum=f"{part.min:g}")
            if part.max is not None and number > part.max:
                return invalid("field_above_maximum", field=field, maximum=f"{part.max:g}")
            if not number.is_integer():
                return invalid("field_not_a_whole_number", field=field)
        if isinstance(part, vol.Length) and isinstance(value, str):
            if part.max is not None and len(value) > part.max:
                return invalid("field_too_long", field=field, maximum=str(part.max))
            if not value and part.min:
                return invalid("field_empty", field=field)
            if part.min is not None and len(value) < part.min:
                return invalid("field_too_short", field=field, minimum=str(part.min))
        if isinstance(part, vol.In):
            return invalid("field_not_an_option", field=field, options=", ".join(map(str, part.container)))
    if cv.datetime in validators:
        return invalid("field_not_a_datetime", field=field)
    if cv.boolean in validators:
        return invalid("field_not_a_boolean", field=field)
    if cv.entity_id in validators:
        return invalid("field_not_an_entity", field=field)
    return invalid("field_invalid", field=field)
