"""The hash-chained audit log: every kind of tampering is told apart from a torn last line; concurrent writers
(threads, a second process) and a writer killed mid-line never break the chain."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
import json
from pathlib import Path
import subprocess
import sys

import pytest

from custom_components.agentic_hems.grid.audit import GENESIS, Anchor, ChainConflict, append, locked, tail, verify


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


# ------------------------------------------------------------------------------------------- concurrent writers

WORKER = """
import sys
from pathlib import Path
from custom_components.agentic_hems.grid.audit import append, locked, tail
path, name, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(n):
    with locked(path):
        append(path, tail(path), {"writer": name, "call": i}, lock=False)
"""


def follow(path: Path, name: str, n: int) -> None:
    """Append n records, each after whatever the file ends at (the lock makes reading the tail and writing one)."""
    for i in range(n):
        with locked(path):
            append(path, tail(path), {"writer": name, "call": i}, lock=False)


def check_chain(path: Path, expected: dict[str, int]) -> None:
    """The file verifies against its own tail, and holds each writer's records in its own order."""
    end = tail(path)
    assert end is not None and verify(path, end).ok and end.count == sum(expected.values())
    records = [json.loads(row)["record"] for row in lines(path)]
    for name, n in expected.items():
        assert [r["call"] for r in records if r["writer"] == name] == list(range(n))


def test_threads_and_a_second_process_append_without_breaking_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen([sys.executable, "-c", WORKER, str(path), "process", "150"], cwd=root)
    with ThreadPoolExecutor(4) as pool:
        for future in [pool.submit(follow, path, f"thread-{k}", 100) for k in range(4)]:
            future.result()
    assert child.wait(timeout=120) == 0
    check_chain(path, {"process": 150, **{f"thread-{k}": 100 for k in range(4)}})


def test_a_stale_anchor_writes_nothing(tmp_path: Path) -> None:
    """A writer whose anchor is behind the file (another wrote meanwhile) gets ChainConflict, not a broken link."""
    path, anchor = chain(tmp_path, 3)
    stale = Anchor(json.loads(lines(path)[1])["hash"], 2, 0)
    before = path.read_bytes()
    with pytest.raises(ChainConflict) as caught:
        append(path, stale, {"tool": "late"})
    assert caught.value.reason == "moved" and path.read_bytes() == before
    with pytest.raises(ChainConflict):
        append(path, Anchor(anchor.head, anchor.count, 1), {"tool": "another epoch"})
    with pytest.raises(ChainConflict):
        append(path, Anchor(), {"tool": "from the start"})
    assert append(path, anchor, {"tool": "on time"}).count == 4 and verify(path, tail(path) or Anchor()).ok


def test_a_writer_killed_mid_line_leaves_a_torn_tail_that_stops_the_next_append(tmp_path: Path) -> None:
    """A process killed (SIGKILL) while it holds the lock and has written half a line: the lock is free again, and
    the next append refuses to chain onto the fragment (the shell cuts it off and records it)."""
    path, anchor = chain(tmp_path, 2)
    root = Path(__file__).resolve().parents[2]
    script = (
        "import os, signal, sys\nfrom pathlib import Path\nfrom custom_components.agentic_hems.grid.audit import locked\n"
        "path = Path(sys.argv[1])\nwith locked(path):\n"
        "    with path.open('ab') as f:\n        f.write(b'{\"seq\": 2, \"epoch\": 0, \"pr'); f.flush()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    assert subprocess.run([sys.executable, "-c", script, str(path)], cwd=root, check=False).returncode == -9
    assert tail(path) is None and verify(path, anchor).problem == "incomplete_tail"
    with pytest.raises(ChainConflict) as caught:
        append(path, anchor, {"tool": "after the crash"})  # the lock is free: no dead-lock
    assert caught.value.reason == "incomplete_tail"


def test_tail_reads_a_last_line_longer_than_one_chunk(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    anchor = append(path, Anchor(), {"tool": "short"})
    anchor = append(path, anchor, {"tool": "long", "blob": "x" * 200_000})
    assert tail(path) == anchor and tail(tmp_path / "none.jsonl") == Anchor()
