"""SG Ready blocks across restarts, in the entry's Store ``agentic_hems.<entry_id>.sg_ready``.

A restart resets most relays' ``last_changed``, so the contacts alone would count a block in progress (and the
release time before the next one) from the restart. :class:`SgBlocks` watches both contacts of each SG Ready heat
pump, whoever switches them (the plan's commands or other hands), and keeps the state they show, when the current
block began and when the last block ended (:class:`SgTimes`). :func:`.sg_exec.block_history` prefers these times
while the contacts still show the state kept, and falls back to ``last_changed`` otherwise.

A change is recorded at the changed contact's ``last_changed``. A contact that is unknown (unavailable, missing)
records nothing; a state seen after an unknown contact that differs from the state kept counts from the moment it is
seen, as ``last_changed`` would. The last block's end is kept only while the contacts are seen to go on from the state
kept: after a change from another state (they changed unseen, while Home Assistant was down) it is unknown. A store
that cannot be read counts as empty (the contacts' ``last_changed`` alone, as without it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import CALLBACK_TYPE, Event, EventStateChangedData, HomeAssistant, State, callback
from homeassistant.helpers.event import async_track_state_change_event
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, LOGGER, STORAGE_VERSION
from ..scheduling.sg_ready import BLOCKED, CONTACTS, state_of
from ..storage import async_load_store
from .heat_config import HeatPumpConfig
from .sg_exec import contacts

STORE_NAME = "sg_ready"
SAVE_DELAY_S = 1.0


@dataclass(frozen=True, kw_only=True)
class SgTimes:
    """What one SG Ready heat pump's contacts last showed (times aware UTC).

    ``state``: the SG Ready state (1-4, :mod:`..scheduling.sg_ready`); ``block_start``: when the current block began
    (state 1 only, else None); ``block_end``: when the last block ended (None: no end seen).
    """

    state: int
    block_start: datetime | None = None
    block_end: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the times as stored: ``{"state", "block_start", "block_end"}`` with ISO 8601 times or None."""
        return {
            "state": self.state,
            "block_start": self.block_start.isoformat() if self.block_start else None,
            "block_end": self.block_end.isoformat() if self.block_end else None,
        }

    @classmethod
    def from_dict(cls, data: Any) -> SgTimes | None:
        """Return the times of a stored ``data`` (:meth:`as_dict`); None when it is not such a mapping.

        Not such a mapping: a state outside 1-4, a time that is not an aware ISO 8601 text, a block start outside
        state 1.
        """
        if not isinstance(data, Mapping) or data.get("state") not in CONTACTS or isinstance(data["state"], bool):
            return None
        parsed: list[datetime | None] = []
        for key in ("block_start", "block_end"):
            value = data.get(key)
            when = dt_util.parse_datetime(value) if isinstance(value, str) else None
            if value is not None and (when is None or when.tzinfo is None):
                return None
            parsed.append(dt_util.as_utc(when) if when is not None else None)
        start, end = parsed
        if (start is not None) != (data["state"] == BLOCKED):
            return None
        return cls(state=data["state"], block_start=start, block_end=end)


class SgBlocks:
    """The block times of one entry's SG Ready heat pumps (see the module docstring)."""

    def __init__(self, hass: HomeAssistant, entry_id: str, heat_pumps: Iterable[HeatPumpConfig]) -> None:
        """Keep the times of the SG Ready ones among ``heat_pumps`` in the Store of ``entry_id``."""
        self.hass = hass
        self._pumps = {hp.subentry_id: hp for hp in heat_pumps if hp.sg_ready}
        self.times: dict[str, SgTimes] = {}  # heat pump subentry id -> its times
        self._store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry_id}.{STORE_NAME}")
        self._dirty = False

    async def async_load(self) -> None:
        """Load the stored times of the configured SG Ready heat pumps; an unreadable record is dropped, logged.

        Without an SG Ready heat pump nothing is read.
        """
        if not self._pumps:
            return
        data = await async_load_store(self._store, "SG Ready block times") or {}
        stored = data.get("heat_pumps")
        for subentry_id, record in (stored if isinstance(stored, dict) else {}).items():
            if subentry_id not in self._pumps:
                continue
            if (times := SgTimes.from_dict(record)) is None:
                LOGGER.warning("Dropping unreadable SG Ready block times of %s: %s", subentry_id, record)
                continue
            self.times[subentry_id] = times

    @callback
    def async_start(self) -> CALLBACK_TYPE:
        """Watch the contacts of each SG Ready heat pump; returns the stop."""
        watched = [e for hp in self._pumps.values() for e in (hp.control_entity, hp.sg_contact_2 or "")]
        if not watched:
            return lambda: None
        return async_track_state_change_event(self.hass, watched, self._changed)

    async def async_flush(self) -> None:
        """Write the times now when they changed since the last write (unload)."""
        if self._dirty:
            await self._store.async_save(self._data())

    @callback
    def _changed(self, event: Event[EventStateChangedData]) -> None:
        """Record a change of a heat pump's SG Ready state (see the module docstring)."""
        entity_id, new = event.data["entity_id"], event.data["new_state"]
        for hp in self._pumps.values():
            if entity_id not in (hp.control_entity, hp.sg_contact_2) or new is None:
                continue
            if (pair := contacts(self.hass, hp)) is None:
                continue
            kept, state = self.times.get(hp.subentry_id), state_of(*pair)
            before = _state_before(pair, entity_id == hp.control_entity, event.data["old_state"])
            if before is None:  # the contact was unknown: the state kept is the one before
                before = kept.state if kept else None
            if before == state:
                continue
            when = new.last_changed
            # the last end carries on only from the state kept: contacts that changed unseen may have blocked since
            end = when if before == BLOCKED else (kept.block_end if kept and kept.state == before else None)
            self.times[hp.subentry_id] = SgTimes(
                state=state, block_start=when if state == BLOCKED else None, block_end=end
            )
            LOGGER.debug("SG Ready %s: state %s since %s", hp.name, state, when.isoformat())
            self._dirty = True
            self._store.async_delay_save(self._data, SAVE_DELAY_S)

    def _data(self) -> dict[str, Any]:
        self._dirty = False
        return {"heat_pumps": {k: v.as_dict() for k, v in self.times.items()}}


def _state_before(pair: tuple[bool, bool], first: bool, old: State | None) -> int | None:
    """Return the SG Ready state before the change of contact 1 (``first``) or 2; None when it was unknown."""
    if old is None or old.state not in (STATE_ON, STATE_OFF):
        return None
    on = old.state == STATE_ON
    return state_of(on, pair[1]) if first else state_of(pair[0], on)
