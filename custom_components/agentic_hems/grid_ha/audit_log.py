"""The audit log of one entry: the HA shell of the hash chain behind ``generate_audit_record``.

Every request tool appends "who asked what, what was computed, what was decided" through :meth:`AuditLog.async_append`.
The pure chain lives in :mod:`..grid.audit` and the blocking file work in :mod:`.audit_file`; this module adds what
needs Home Assistant:

- the file ``<config>/agentic_hems/audit/<entry_id>.jsonl`` (one line per record, appended and fsync'ed in the
  executor, one append at a time under an :class:`asyncio.Lock` that every ``AuditLog`` of the entry in this Home
  Assistant shares, with the anchor: a reload builds a new log while tasks of the old runtime may still append
  through the old one, and both go on one chain);
- the anchor (head hash, line count, epoch) in the Store ``agentic_hems.audit.<entry_id>``, written with
  ``async_save`` (never delayed) around every append. Before the line is written the Store also records the hash the
  line will have (``pending``, a write-ahead intent); if Home Assistant stops after the line reached the disk but
  before the new anchor did, the next start finds exactly that line after the anchored head and adopts it instead of
  reporting a break. Nobody else can produce a line with that hash, so this opens no gap for tampering;
- verification at every start (:meth:`AuditLog.async_load`) and on demand (:meth:`AuditLog.async_verify`).

Outcomes of a check:

- **intact**: appends go on.
- **torn last line** (``incomplete_tail``: the power went out mid-write): not tampering. If everything before the
  fragment verifies against the anchor, the fragment is moved to ``<entry_id>.jsonl.torn-<UTC yyyymmddThhmmss>``
  (kept, never deleted), the file is cut back to its last complete line and a record ``{"type": "incomplete_tail",
  "fragment_sha256", "bytes", "kept_as"}`` is appended. The chain is not halted. If the rest does not verify, the
  file is left exactly as found and this is a break.
- **break** (``edited``, ``broken_link``, ``truncated``): :attr:`AuditLog.broken` is True, which halts
  ``request_authorization`` and grid Execution, and the fixable repair issue ``audit_chain_broken_<entry_id>`` is
  raised. The broken file is evidence and is never written to again: records appended meanwhile are **held in
  memory** (at most :data:`MAX_HELD`, then counted as dropped) and written into the new epoch right after its first
  record when the repair runs. Held records are lost if Home Assistant restarts before the repair (the break itself
  is found again at the start, as the issue is not persistent: the chain is re-verified at every start).
- **repair** (:meth:`AuditLog.async_new_epoch`, from the issue's fix flow in :mod:`..repairs`): the broken file is
  renamed to ``<entry_id>.broken-<UTC yyyymmddThhmmss>.jsonl`` (never deleted) and a fresh file starts at epoch + 1,
  sequence 0, from the genesis hash, with a first record citing the anchored (last trusted) head and the archive.
- **another writer** (``concurrent_writer``): the file gained lines this Home Assistant did not write (a second
  Home Assistant on the same configuration folder). The append writes nothing (:func:`~..grid.audit.append` checks
  the file's tail under the folder's lock), and this is a break with its own repair issue
  ``audit_chain_concurrent_writer``. A torn line found when appending (a writer killed mid-line) is handled as at a
  start, and the record is then written.

If :meth:`AuditLog.async_verify` finds a broken chain intact again (the file was restored from a backup), the break
is cleared, the held records are appended to the chain (one that cannot be written stays held) and the issue is
deleted. An anchor Store that is missing or unreadable while the file has lines is the break ``anchor_missing``.
A loaded entry's log is found by entry id through :func:`async_get_audit_log`, in the entry's ``runtime_data``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
import functools
from pathlib import Path
from typing import Any, Final

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir, translation
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util
from homeassistant.util.hass_dict import HassKey

from ..canonical_json import canonical_json
from ..const import DOMAIN, LOGGER, STORAGE_VERSION
from ..gates.models import SOURCE_GRID
from ..grid.audit import Anchor, ChainConflict, Verdict, line_hash
from ..storage import async_load_store
from .audit_file import (
    ANCHOR_MISSING,
    CONCURRENT_WRITER,
    PROBLEM_TEXT_KEYS,
    anchor_from,
    append_record,
    inspect_file,
    restart,
    stamp,
)

# entry_id -> the _Chain every AuditLog of the entry shares. In hass.data, not runtime_data: a chain outlives its
# entry's runtime (a reload deletes runtime_data while tasks of the old runtime still append through the old log).
AUDIT_CHAINS: Final[HassKey[dict[str, _Chain]]] = HassKey(f"{DOMAIN}_audit_chains")
ISSUE_PREFIX: Final = "audit_chain_broken_"
ISSUE_TRANSLATION_KEY: Final = "audit_chain_broken"
MAX_HELD: Final = 1000  # records held in memory while the chain is broken; later ones are only counted


def issue_id(entry_id: str) -> str:
    """Return the id of the repair issue raised while the entry's chain is broken."""
    return f"{ISSUE_PREFIX}{entry_id}"


@callback
def async_get_audit_log(hass: HomeAssistant, entry_id: str) -> AuditLog | None:
    """Return the :class:`AuditLog` in the ``runtime_data`` of the entry ``entry_id``, or None (not loaded)."""
    runtime = getattr(hass.config_entries.async_get_entry(entry_id), "runtime_data", None)
    log = getattr(runtime, "audit", None)
    return log if isinstance(log, AuditLog) else None


@dataclass
class _Chain:
    """What every :class:`AuditLog` of one entry in this Home Assistant shares: the lock, the anchor and the intent."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    anchor: Anchor = field(default_factory=Anchor)
    pending: str | None = None  # hash of the line being written (write-ahead intent)


class AuditLog:
    """The hash-chained audit log of one config entry (see the module docstring).

    Not thread-safe: use it from the event loop.
    """

    def __init__(self, hass: HomeAssistant, entry_id: str) -> None:
        """Start empty; :meth:`async_load` restores the anchor and checks the file."""
        self.hass = hass
        self.entry_id = entry_id
        self.path = Path(hass.config.path(DOMAIN, "audit", f"{entry_id}.jsonl"))
        self.verdict: Verdict | None = None  # the last check; None until async_load
        self._held: list[dict[str, Any]] = []
        self._dropped = 0
        self._suspect = False  # an append failed: check the file before the next one
        self._replaying = False  # the held records are being written
        self._no_anchor = False  # the anchor Store was missing or unreadable at the start
        self._chain: _Chain = hass.data.setdefault(AUDIT_CHAINS, {}).setdefault(entry_id, _Chain())
        self._store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.audit.{entry_id}")

    # -------------------------------------------------------------------------------------------- state

    @property
    def broken(self) -> bool:
        """True while the chain is broken: the integration halts ``request_authorization`` and grid Execution."""
        return self.verdict is not None and not self.verdict.ok

    def halts(self, source_agent: str) -> str | None:
        """Why Execution is halted for ``source_agent``: grid commands while the chain is broken; else None."""
        return "the audit chain is broken" if source_agent == SOURCE_GRID and self.broken else None

    @property
    def anchor(self) -> Anchor:
        """The anchored head hash, line count and epoch."""
        return self._chain.anchor

    @property
    def _anchor(self) -> Anchor:
        return self._chain.anchor

    @_anchor.setter
    def _anchor(self, anchor: Anchor) -> None:
        self._chain.anchor = anchor

    @property
    def _pending(self) -> str | None:
        return self._chain.pending

    @_pending.setter
    def _pending(self, pending: str | None) -> None:
        self._chain.pending = pending

    @property
    def held(self) -> int:
        """Records held in memory while the chain is broken (written into the next epoch by the repair)."""
        return len(self._held)

    def status(self) -> dict[str, Any]:
        """Return the chain's status for diagnostics and services.

        ``ok``, ``lines`` (anchored lines, or where verification stopped), ``epoch``, ``head`` (anchored hash),
        ``problem`` and ``line`` (0-based) of the last check, and ``held`` records.
        """
        verdict = self.verdict
        ok = verdict is not None and verdict.ok
        return {
            "ok": ok,
            "lines": self._anchor.count if ok or verdict is None else verdict.lines,
            "epoch": self._anchor.epoch,
            "head": self._anchor.head,
            "problem": verdict.problem if verdict else None,
            "line": verdict.line if verdict else None,
            "held": len(self._held),
        }

    # ------------------------------------------------------------------------------------------ life cycle

    async def async_load(self) -> Verdict:
        """Read the anchor and verify the file in the executor (see the module docstring).

        A break sets :attr:`broken` and raises the repair issue; a torn last line is cut off and recorded. Raises
        ``OSError`` when the file cannot be read.
        """
        async with self._chain.lock:
            data = await async_load_store(self._store, f"audit anchor {self._store.key}")
            stored = anchor_from(data)
            self._anchor, self._pending = stored or (Anchor(), None)
            self._no_anchor = stored is None
            return await self._async_check()

    async def async_unload(self) -> None:
        """Wait for an append in progress to finish (the anchor is on disk after every append)."""
        async with self._chain.lock:
            return

    async def async_verify(self) -> Verdict:
        """Verify the whole file now (the admin service); updates :attr:`broken` and the repair issue."""
        async with self._chain.lock:
            return await self._async_check()

    # ---------------------------------------------------------------------------------------------- writing

    async def async_append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Append ``record`` (JSON-safe) with an ``at`` UTC timestamp unless it has one.

        Returns ``{"record_id": "<epoch>-<seq>", "chain_hash": <sha256 hex>}``; while the chain is broken the record
        is held (see the module docstring) and ``{"record_id": None, "chain_hash": None, "held": True}`` is returned.
        Raises ``TypeError``/``ValueError`` for a record that is not JSON-safe (nothing is written), ``OSError`` when
        the file cannot be written (the file is checked again before the next append), and ``RuntimeError`` before
        :meth:`async_load`.
        """
        stamped = {"at": dt_util.utcnow().isoformat(), **record}
        canonical_json(stamped)  # refuse what cannot be hashed before anything is written or held
        async with self._chain.lock:
            if self.verdict is None:
                raise RuntimeError("AuditLog.async_load must run before async_append")
            if self._suspect:
                await self._async_check()
            if self.broken:
                self._hold(stamped)
                return {"record_id": None, "chain_hash": None, "held": True}
            return await self._async_write(stamped)

    async def async_new_epoch(self, reason: str) -> None:
        """Repair a break: archive the broken file and start epoch + 1 citing the anchored head.

        Then write the held records, clear :attr:`broken` and delete the repair issue. The file is verified first: when
        it is intact (e.g. restored from a backup) nothing is archived and the check clears the break. Raises
        ``OSError`` when the files cannot be written (the chain then stays broken) and ``RuntimeError`` before
        :meth:`async_load`.
        """
        async with self._chain.lock:
            if self.verdict is None:
                raise RuntimeError("AuditLog.async_load must run before async_new_epoch")
            verdict = await self._async_check()  # the file may have been restored since the break was found
            if verdict.ok:
                return
            old = self._anchor
            first = {
                "at": dt_util.utcnow().isoformat(),
                "type": "epoch",
                "cites_broken_head": old.head,
                "reason": reason,
                "problem": verdict.problem,
                "line": verdict.line,
                "held": len(self._held),
                "held_dropped": self._dropped,
            }
            held = list(self._held)
            anchor, archive, fresh = await self.hass.async_add_executor_job(
                functools.partial(
                    restart, self.path, self.entry_id, stamp(), old_epoch=old.epoch, first=first, held=held
                )
            )
            self._anchor, self._pending = anchor, None
            await self._async_save()
            self._held.clear()
            self._dropped = 0
            self._suspect = False
            if not fresh.ok:  # cannot happen short of a concurrent writer; stay halted
                await self._async_set_broken(fresh)
                return
            self.verdict = fresh
            ir.async_delete_issue(self.hass, DOMAIN, issue_id(self.entry_id))
            LOGGER.warning(
                "Audit chain of %s restarted at epoch %s (%s); the broken file is kept as %s, %s held records written",
                self.entry_id,
                anchor.epoch,
                reason,
                archive,
                len(held),
            )

    # ------------------------------------------------------------------------------------------- internals

    def _hold(self, record: dict[str, Any]) -> None:
        if len(self._held) < MAX_HELD:
            self._held.append(record)
        else:
            self._dropped += 1

    async def _async_save(self) -> None:
        anchor, self._no_anchor = self._anchor, False
        await self._store.async_save(
            {"head": anchor.head, "count": anchor.count, "epoch": anchor.epoch, "pending": self._pending}
        )

    async def _async_write(self, record: dict[str, Any], *, retry: bool = True, hold: bool = True) -> dict[str, Any]:
        """Append one record to the intact chain (lock held): intent, line, anchor.

        When the file does not end at the anchor (:class:`ChainConflict`), the file is checked: a torn line is cut
        off and recorded, and the write is tried once more (``retry``); foreign lines are a ``concurrent_writer``
        break, and the record is held (unless ``hold`` is False: a held record being written stays where it is).
        """
        anchor = self._anchor
        self._pending = line_hash(anchor.count, anchor.epoch, anchor.head, record)
        await self._async_save()
        try:
            new = await self.hass.async_add_executor_job(append_record, self.path, anchor, record)
        except ChainConflict as err:
            verdict = await self._async_check()
            if verdict.ok and retry:
                return await self._async_write(record, retry=False, hold=hold)
            if verdict.ok or (verdict.problem == "broken_link" and verdict.line == anchor.count):
                detail = f"the file does not end at the anchored line {anchor.count} ({err.reason})"
                await self._async_set_broken(Verdict(False, verdict.lines, CONCURRENT_WRITER, anchor.count, detail))
            if hold:
                self._hold(record)
            return {"record_id": None, "chain_hash": None, "held": True}
        except OSError:
            self._suspect = True
            raise
        self._anchor, self._pending = new, None
        await self._async_save()
        return {"record_id": f"{new.epoch}-{new.count - 1}", "chain_hash": new.head}

    async def _async_check(self) -> Verdict:
        """Verify (lock held); handle a torn tail, a break, or a break that is gone."""
        self._suspect = False
        verdict, anchor, torn = await self.hass.async_add_executor_job(
            inspect_file, self.path, self._anchor, self._pending, stamp()
        )
        if not verdict.ok:
            if self._no_anchor and verdict.problem == "broken_link" and verdict.line == 0:
                verdict = Verdict(False, 0, ANCHOR_MISSING, 0, "no stored chain head to check the file against")
            await self._async_set_broken(verdict)
            return verdict
        if anchor != self._anchor or self._pending is not None:
            self._anchor, self._pending = anchor, None
            await self._async_save()
        was_broken = self.broken
        self.verdict = verdict
        if torn is not None:
            LOGGER.warning(
                "The last audit record of %s was not completely written (%s bytes); kept as %s, the chain goes on",
                self.entry_id,
                torn["bytes"],
                torn["kept_as"],
            )
            await self._async_write({"at": dt_util.utcnow().isoformat(), **torn})
        if was_broken:
            LOGGER.warning("The audit chain of %s verifies again; writing %s held records", self.entry_id, self.held)
        if (was_broken or self._held or self._dropped) and not self._replaying:
            await self._async_replay()
        if not self.broken:
            ir.async_delete_issue(self.hass, DOMAIN, issue_id(self.entry_id))
        return self.verdict

    async def _async_replay(self) -> None:
        """Write the held records in order (lock held); one not written stays held with the rest for the next check."""
        self._replaying = True
        try:
            dropped = {"at": dt_util.utcnow().isoformat(), "type": "held_dropped", "count": self._dropped}
            if self._dropped and not (await self._async_write(dropped, hold=False)).get("held"):
                self._dropped = 0
            while (
                self._held and not self.broken and not (await self._async_write(self._held[0], hold=False)).get("held")
            ):
                del self._held[0]
        finally:
            self._replaying = False

    async def _async_set_broken(self, verdict: Verdict) -> None:
        strings = await translation.async_get_translations(self.hass, self.hass.config.language, "exceptions", [DOMAIN])
        key = PROBLEM_TEXT_KEYS.get(str(verdict.problem))
        reason = strings.get(f"component.{DOMAIN}.exceptions.{key}.message", verdict.problem)
        if self.verdict != verdict:
            LOGGER.error(
                "The audit chain of %s is broken: %s at line %s (%s); request tools are halted until it is repaired",
                self.entry_id,
                verdict.problem,
                verdict.line,
                verdict.detail,
            )
        self.verdict = verdict
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            issue_id(self.entry_id),
            is_fixable=True,
            is_persistent=False,  # the chain is verified again at every start
            severity=ir.IssueSeverity.ERROR,
            translation_key=f"audit_chain_{CONCURRENT_WRITER}"
            if verdict.problem == CONCURRENT_WRITER
            else ISSUE_TRANSLATION_KEY,
            translation_placeholders={
                "entry_title": entry.title
                if (entry := self.hass.config_entries.async_get_entry(self.entry_id))
                else self.entry_id,
                "problem": str(reason),
                "line": str(verdict.line + 1) if verdict.line is not None else "?",  # as editors count
            },
            data={"entry_id": self.entry_id},
        )
