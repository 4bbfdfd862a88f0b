"""The hash-chained audit log behind ``generate_audit_record``.

An append-only JSONL file: each line is ``{"seq", "epoch", "prev", "hash", "record"}`` where ``hash`` is SHA-256 over
the canonical JSON of ``[seq, epoch, prev, record]`` and ``prev`` is the previous line's hash (64 zeros for the first
line of an epoch). The head hash and the line count are anchored separately (the HA shell keeps them in a ``Store``),
so truncation at the tail is detected. Appends are synchronous and fsync'ed: the shell runs them in the executor.

:func:`verify` reads the file and tells apart: ``edited`` (a hash does not match its line), ``broken_link`` (a line
does not cite its predecessor: a deletion, an insertion or a reorder), ``truncated`` (fewer lines than the anchor, or
a different head), and ``incomplete_tail`` (a torn last line, e.g. power lost mid-write: not tampering).

Writers exclude each other with an advisory lock (``flock``) on the file's folder, held by :func:`append` (and by
the shell around a check that may cut a torn line, :func:`locked`), so threads and processes never interleave
their lines. Under the lock :func:`append` also checks that the file still ends at the writer's anchor
(:func:`tail`): a writer whose anchor is stale (another process or instance appended meanwhile, or a killed writer
left a torn line) gets :class:`ChainConflict` and writes nothing, instead of a line that breaks the chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..canonical_json import canonical_json

GENESIS = "0" * 64
_TAIL_CHUNK = 65536  # bytes read at a time from the end when looking for the last line


class ChainConflict(Exception):
    """The file does not end at the writer's anchor: nothing was written (``reason``: what the tail is instead)."""

    def __init__(self, reason: str) -> None:
        """``reason``: ``incomplete_tail`` (a torn or unreadable last line) or ``moved`` (another head or count)."""
        super().__init__(reason)
        self.reason = reason


def line_hash(seq: int, epoch: int, prev: str, record: Any) -> str:
    """SHA-256 hex of the canonical JSON of ``[seq, epoch, prev, record]``."""
    return hashlib.sha256(canonical_json([seq, epoch, prev, record]).encode()).hexdigest()


@dataclass(frozen=True)
class Anchor:
    """What is kept apart from the file: the head hash, the number of lines and the current epoch."""

    head: str = GENESIS
    count: int = 0
    epoch: int = 0


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`verify`: ``ok``, or the first ``problem`` and the 0-based ``line`` it was found at."""

    ok: bool
    lines: int
    problem: str | None = None
    line: int | None = None
    detail: str = ""


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive advisory lock of ``path``'s folder (which must exist); blocks until it is free.

    The lock is per open file description: a second ``locked`` in the same thread waits for ever, so never nest it.
    """
    handle = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def tail(path: Path) -> Anchor | None:
    """Return the anchor the file ends at (its last line's hash, seq + 1 and epoch; the empty anchor for no file).

    None when the last line is torn (no final newline) or is not a record line.
    """
    if not path.exists():
        return Anchor()
    with path.open("rb") as handle:
        end = handle.seek(0, os.SEEK_END)
        if end == 0:
            return Anchor()
        data, start = b"", end
        while start > 0 and data.count(b"\n") < 2:
            start = max(0, start - _TAIL_CHUNK)
            handle.seek(start)
            data = handle.read(end - start)
    if not data.endswith(b"\n"):
        return None
    try:
        entry = json.loads(data[:-1].rsplit(b"\n", 1)[-1])
        return Anchor(str(entry["hash"]), int(entry["seq"]) + 1, int(entry["epoch"]))
    except ValueError, KeyError, TypeError:
        return None


def append(path: Path, anchor: Anchor, record: Any, *, lock: bool = True) -> Anchor:
    """Append ``record`` (JSON-safe) after ``anchor``'s head, fsync, and return the new anchor.

    With ``lock`` (the default) the folder's lock is held for the check and the write (pass False inside
    :func:`locked`). Raises :class:`ChainConflict` when the file does not end at ``anchor`` (an empty anchor of any
    epoch expects an empty file); OSError when the file cannot be written.
    """
    if lock:
        with locked(path):
            return append(path, anchor, record, lock=False)
    found = tail(path)
    if found is None:
        raise ChainConflict("incomplete_tail")
    if (found.head, found.count) != (anchor.head, anchor.count) or (anchor.count and found.epoch != anchor.epoch):
        raise ChainConflict("moved")
    seq = anchor.count
    digest = line_hash(seq, anchor.epoch, anchor.head, record)
    line = canonical_json({"seq": seq, "epoch": anchor.epoch, "prev": anchor.head, "hash": digest, "record": record})
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return Anchor(digest, seq + 1, anchor.epoch)


def verify(path: Path, anchor: Anchor) -> Verdict:
    """Check the whole file against itself and against ``anchor`` (see the module docstring)."""
    raw = path.read_bytes() if path.exists() else b""
    text = raw.decode("utf-8", errors="replace")
    lines = text.split("\n")
    torn = lines[-1] != ""  # a complete file ends with a newline
    body = lines[:-1]
    prev, epoch, head = GENESIS, None, GENESIS
    for index, line in enumerate(body):
        try:
            entry = json.loads(line)
            seq, entry_epoch, entry_prev, digest, record = (
                entry["seq"],
                entry["epoch"],
                entry["prev"],
                entry["hash"],
                entry["record"],
            )
        except json.JSONDecodeError, KeyError, TypeError:
            return Verdict(False, index, "edited", index, "not a valid record line")
        if line_hash(seq, entry_epoch, entry_prev, record) != digest:
            return Verdict(False, index, "edited", index, "the hash does not match the line")
        if entry_epoch != epoch:  # a new epoch starts from the genesis hash and must cite the broken head
            if epoch is not None and (entry_epoch != epoch + 1 or entry_prev != GENESIS):
                return Verdict(False, index, "broken_link", index, "an epoch change that is not a restart")
            epoch, prev = entry_epoch, GENESIS
        if seq != index or entry_prev != prev:
            return Verdict(False, index, "broken_link", index, "a line does not follow its predecessor")
        prev = head = digest
    if torn:
        return Verdict(False, len(body), "incomplete_tail", len(body), "the last line was not completely written")
    if len(body) < anchor.count or (len(body) == anchor.count and head != anchor.head):
        return Verdict(False, len(body), "truncated", len(body), f"{anchor.count} lines anchored, {len(body)} found")
    if len(body) > anchor.count:
        return Verdict(False, anchor.count, "broken_link", anchor.count, "lines after the anchored head")
    return Verdict(True, len(body))
