"""The audit log's file, in the executor (blocking): verify, cut a torn last line, append, archive and restart.

The chain itself (hashes, lines, :func:`~..grid.audit.verify`) is the pure :mod:`..grid.audit`; these functions add
the write-ahead hash, the kept fragment of a torn line, and the archive of a broken file. :mod:`.audit_log` runs them
through ``hass.async_add_executor_job``, one at a time; each holds the audit folder's lock
(:func:`~..grid.audit.locked`), so a check never cuts off a line another process is still writing.
"""

from __future__ import annotations

from collections.abc import Callable
import hashlib
import os
from pathlib import Path
from typing import Any, Final

from homeassistant.util import dt as dt_util

from ..const import LOGGER
from ..grid.audit import GENESIS, Anchor, Verdict, append, locked, verify

INCOMPLETE_TAIL: Final = "incomplete_tail"
ANCHOR_MISSING: Final = "anchor_missing"  # the problem of a file whose anchor Store was missing or unreadable
CONCURRENT_WRITER: Final = "concurrent_writer"  # the problem (and issue translation key suffix) of another writer
PROBLEM_TEXT_KEYS: Final = {  # a break's problem -> the exceptions text its repair issue shows for it
    "edited": "audit_problem_edited",
    "broken_link": "audit_problem_broken_link",
    "truncated": "audit_problem_truncated",
    "incomplete_tail": "audit_problem_incomplete_tail",
    CONCURRENT_WRITER: "audit_problem_concurrent_writer",
    ANCHOR_MISSING: "audit_problem_anchor_missing",
}


def anchor_from(data: Any) -> tuple[Anchor, str | None] | None:
    """Return the stored anchor and write-ahead hash of the anchor Store's ``data``; None when missing or malformed.

    Then the empty anchor applies, and any line in the file is the break ``anchor_missing``.
    """
    if not isinstance(data, dict):
        return None
    head, count, epoch, pending = data.get("head"), data.get("count"), data.get("epoch"), data.get("pending")
    if not (isinstance(head, str) and type(count) is int and type(epoch) is int and count >= 0 and epoch >= 0):
        LOGGER.warning("Ignoring a malformed audit anchor: %s", data)
        return None
    return Anchor(head, count, epoch), pending if isinstance(pending, str) else None


def stamp() -> str:
    """UTC ``yyyymmddThhmmss`` for archive and fragment names."""
    return dt_util.utcnow().strftime("%Y%m%dT%H%M%S")


def _unused(directory: Path, name: Callable[[str], str]) -> Path:
    """``directory / name("")``, or with ``-2``, ``-3``, ... when taken: an archive never replaces another."""
    candidate = directory / name("")
    suffix = 1
    while candidate.exists():
        suffix += 1
        candidate = directory / name(f"-{suffix}")
    return candidate


def _fsync_dir(directory: Path) -> None:
    """Make a rename or a new file in ``directory`` durable (best effort where directories cannot be opened)."""
    try:
        handle = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(handle)
    except OSError:
        pass
    finally:
        os.close(handle)


def _write_new(path: Path, data: bytes) -> None:
    """Create ``path`` (never overwrite) with ``data``, fsync'ed."""
    with path.open("xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _verify(path: Path, anchor: Anchor, pending: str | None) -> tuple[Verdict, Anchor]:
    """:func:`verify`, accepting the one line the write-ahead ``pending`` hash announced after the anchored head."""
    verdict = verify(path, anchor)
    if not verdict.ok and pending and verdict.problem == "broken_link" and verdict.line == anchor.count:
        ahead = Anchor(pending, anchor.count + 1, anchor.epoch)
        if (adopted := verify(path, ahead)).ok:
            return adopted, ahead
    return verdict, anchor


def inspect_file(
    path: Path, anchor: Anchor, pending: str | None, stamp: str
) -> tuple[Verdict, Anchor, dict[str, Any] | None]:
    """Verify the file; cut off a torn last line when the rest verifies. Returns (verdict, anchor, torn record)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        return _inspect(path, anchor, pending, stamp)


def _inspect(
    path: Path, anchor: Anchor, pending: str | None, stamp: str
) -> tuple[Verdict, Anchor, dict[str, Any] | None]:
    """:func:`inspect_file` with the lock held."""
    verdict, anchor_now = _verify(path, anchor, pending)
    if verdict.problem != INCOMPLETE_TAIL:
        return verdict, anchor_now, None
    raw = path.read_bytes()
    cut = raw.rfind(b"\n") + 1
    fragment = raw[cut:]
    probe = path.with_name(f".{path.name}.probe")  # check the rest without touching the evidence
    probe.unlink(missing_ok=True)
    try:
        _write_new(probe, raw[:cut])
        rest, rest_anchor = _verify(probe, anchor, pending)
    finally:
        probe.unlink(missing_ok=True)
    if not rest.ok:
        return rest, anchor, None
    kept = _unused(path.parent, lambda n: f"{path.name}.torn-{stamp}{n}")
    _write_new(kept, fragment)
    with path.open("r+b") as handle:
        handle.truncate(cut)
        handle.flush()
        os.fsync(handle.fileno())
    _fsync_dir(path.parent)
    record = {
        "type": INCOMPLETE_TAIL,
        "fragment_sha256": hashlib.sha256(fragment).hexdigest(),
        "bytes": len(fragment),
        "kept_as": kept.name,
    }
    return rest, rest_anchor, record


def append_record(path: Path, anchor: Anchor, record: dict[str, Any]) -> Anchor:
    """:func:`~..grid.audit.append` ``record`` after ``anchor``, creating the audit folder first; the new anchor."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return append(path, anchor, record)


def restart(
    path: Path, entry_id: str, stamp: str, *, old_epoch: int, first: dict[str, Any], held: list[dict[str, Any]]
) -> tuple[Anchor, str | None, Verdict]:
    """Archive the broken file, start epoch ``old_epoch + 1`` with ``first`` (plus the archive name) and ``held``.

    ``first`` (``type: epoch``, ``cites_broken_head``, ``reason``, plus the archive name) is the new file's line
    seq 0, after the genesis hash. Returns the new anchor, the archive's file name (None when there was no file)
    and the new file's verdict.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    archive: Path | None = None
    with locked(path):
        if path.exists():
            archive = _unused(path.parent, lambda n: f"{entry_id}.broken-{stamp}{n}.jsonl")
            path.rename(archive)
            _fsync_dir(path.parent)
        first = {**first, "archive": archive.name if archive else None}
        anchor = append(path, Anchor(GENESIS, 0, old_epoch + 1), first, lock=False)
        for record in held:
            anchor = append(path, anchor, record, lock=False)
        _fsync_dir(path.parent)
        return anchor, archive.name if archive else None, verify(path, anchor)
