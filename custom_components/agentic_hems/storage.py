"""Loading a Store with recovery: stored data that cannot be read is dropped with a warning, never trusted."""

from __future__ import annotations

from typing import Any

from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.storage import Store

from .const import LOGGER


async def async_load_store(store: Store[dict[str, Any]], what: str) -> dict[str, Any] | None:
    """Return the Store's data, or None when there is none or it cannot be read.

    It cannot be read when it is unreadable JSON, of a newer storage version, a file without ``version`` or
    ``data``, or data that is not a mapping. A drop is logged as "Dropping unreadable ``what``".
    """
    try:
        data = await store.async_load()
    except (HomeAssistantError, NotImplementedError, KeyError, TypeError, ValueError) as err:
        LOGGER.warning("Dropping unreadable %s: %s", what, err)
        return None
    if data is not None and not isinstance(data, dict):
        LOGGER.warning("Dropping unreadable %s: expected a mapping, got %s", what, type(data).__name__)
        return None
    return data
