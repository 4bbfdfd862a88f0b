"""The hash-chained audit log behind ``generate_audit_record``.

An append-only JSONL file: each line is ``{"seq", "epoch", "prev", "hash", "record"}`` where ``hash`` is SHA-256 over
the canonical JSON of ``[seq, epoch, prev, record]`` and ``prev`` is the previous line's hash (64 zeros for the first
line of an epoch). The head hash and the line count are anchored separately (the HA shell keeps them in a ``Store``),
so truncation at the tail is detected. Appends are synchronous and fsync'ed: the shell runs them in the executor.

:func:`verify` reads the file and tells apart: ``edited`` (a hash does not match its line), ``broken_link`` (a line
does not cite its predecessor: a deletion, an insertion or a reorder), ``truncated`` (fewer lines than the anchor, or
a different head), and ``incomplete_tail`` (a torn last line, e.g. power lost mid-write: not tampering).
"""

from __future__ import annotations

from dataclasses import dataclass
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..canonical_json import canonical_json

GENESIS = "0" * 64


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


def append(path: Path, anchor: Anchor, record: Any) -> Anchor:
    """Append ``record`` (JSON-safe) after ``anchor``'s head, fsync, and return the new anchor."""
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
