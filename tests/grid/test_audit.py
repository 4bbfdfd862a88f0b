"""The hash-chained audit log: every kind of tampering is told apart from a torn last line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_components.agentic_hems.grid.audit import GENESIS, Anchor, append, verify


def chain(tmp_path: Path, n: int = 5) -> tuple[Path, Anchor]:
    path = tmp_path / "audit.jsonl"
    anchor = Anchor()
    for i in range(n):
        anchor = append(path, anchor, {"tool": "run_power_flow", "call": i, "user": "u1"})
    return path, anchor


def lines(path: Path) -> list[str]:
    return path.read_text().split("\n")[:-1]


def write(path: Path, rows: list[str]) -> None:
    path.write_text("".join(row + "\n" for row in rows))


def test_an_intact_chain_verifies(tmp_path: Path) -> None:
    path, anchor = chain(tmp_path)
    assert verify(path, anchor).ok and anchor.count == 5
    first = json.loads(lines(path)[0])
    assert first["prev"] == GENESIS and first["seq"] == 0


@pytest.mark.parametrize(
    ("tamper", "problem", "line"),
    [
        ("edit", "edited", 2),
        ("delete", "broken_link", 2),
        ("reorder", "broken_link", 1),
        ("insert", "broken_link", 2),
        ("truncate", "truncated", 3),
        ("torn", "incomplete_tail", 4),
    ],
)
def test_each_kind_of_tampering(tmp_path: Path, tamper: str, problem: str, line: int) -> None:
    path, anchor = chain(tmp_path)
    rows = lines(path)
    if tamper == "edit":
        entry = json.loads(rows[2])
        entry["record"]["user"] = "mallory"
        rows[2] = json.dumps(entry)
    elif tamper == "delete":
        del rows[2]
    elif tamper == "reorder":
        rows[1], rows[2] = rows[2], rows[1]
    elif tamper == "insert":
        rows.insert(2, rows[1])
    elif tamper == "truncate":
        rows = rows[:3]
    if tamper == "torn":
        path.write_text("".join(r + "\n" for r in rows[:4]) + rows[4][: len(rows[4]) // 2])
    else:
        write(path, rows)
    verdict = verify(path, anchor)
    assert (verdict.ok, verdict.problem, verdict.line) == (False, problem, line)
