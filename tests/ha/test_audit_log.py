"""The audit log's HA shell: the file under the config dir, the anchor Store, breaks, torn lines and the repair flow.

Two ``AuditLog`` instances on one entry stand for two runs of Home Assistant: the file is tampered with in between,
and the anchor survives in ``hass_storage``; or for the old and the new log of a reload, writing at once. A second
Python process stands for another writer, or for one killed mid-line. The repair goes through HA's repairs HTTP API as the frontend does.
"""

from __future__ import annotations

import asyncio
from datetime import UTC
import functools
import hashlib
import json
from pathlib import Path
import subprocess
import sys
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component

from custom_components.agentic_hems.grid_ha import audit_log as audit_log_module
from custom_components.agentic_hems.grid_ha.audit_log import AuditLog, async_get_audit_log, issue_id
from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.grid.audit import GENESIS, Anchor, append, line_hash, tail, verify

from .conftest import NOW, sample_entry

STAMP = "20261129T190500"  # NOW in UTC
TRANSLATIONS = Path(__file__).resolve().parents[2] / "custom_components" / "agentic_hems" / "translations"


@pytest.fixture
async def entry(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, tmp_path: Path
) -> MockConfigEntry:
    """A sample entry that is known to HA but not set up (the audit log is constructed by the tests).

    The test ``hass`` shares one config dir (inside the installed test package) between all tests: give each test
    its own, so audit files never leak into it or between tests.
    """
    hass.config.config_dir = str(tmp_path / "config")
    freezer.move_to(NOW)
    entry = sample_entry()
    entry.add_to_hass(hass)
    return entry


def request(i: int) -> dict[str, Any]:
    return {"type": "request", "who": "user-1", "asked": "run_power_flow", "computed": {"loss_kw": i}, "decided": "ok"}


async def started(hass: HomeAssistant, entry_id: str) -> AuditLog:
    """A new AuditLog (a start of Home Assistant), loaded."""
    log = AuditLog(hass, entry_id)
    await log.async_load()
    return log


async def with_records(hass: HomeAssistant, entry_id: str, n: int = 5) -> tuple[AuditLog, list[dict[str, Any]]]:
    log = await started(hass, entry_id)
    results = [await log.async_append(request(i)) for i in range(n)]
    return log, results


def rows(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def issue(hass: HomeAssistant, entry_id: str) -> ir.IssueEntry | None:
    return ir.async_get(hass).async_get_issue(DOMAIN, issue_id(entry_id))


def words(problem: str, lang: str = "en") -> str:
    """The recorded translation of a problem code, as the repair issue shows it."""
    texts = json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8"))["exceptions"]
    return str(texts[f"audit_problem_{problem}"]["message"])


# ------------------------------------------------------------------------------------------------ appending


async def test_appends_build_a_verifying_chain(
    hass: HomeAssistant, entry: MockConfigEntry, hass_storage: dict[str, Any]
) -> None:
    log, results = await with_records(hass, entry.entry_id, 3)

    assert log.path == Path(hass.config.path("agentic_hems", "audit", f"{entry.entry_id}.jsonl"))
    assert [r["record_id"] for r in results] == ["0-0", "0-1", "0-2"]
    lines = [json.loads(line) for line in rows(log.path)]
    assert [line["hash"] for line in lines] == [r["chain_hash"] for r in results]
    assert lines[0]["prev"] == GENESIS and lines[1]["prev"] == results[0]["chain_hash"]
    assert lines[2]["record"] == {"at": NOW.astimezone(UTC).isoformat(), **request(2)}
    assert verify(log.path, Anchor(results[-1]["chain_hash"], 3, 0)).ok
    # The anchor is saved (not delayed) after every append, with no write-ahead intent left over.
    assert hass_storage[f"agentic_hems.audit.{entry.entry_id}"]["data"] == {
        "head": results[-1]["chain_hash"], "count": 3, "epoch": 0, "pending": None,
    }
    assert log.status() == {
        "ok": True, "lines": 3, "epoch": 0, "head": results[-1]["chain_hash"], "problem": None, "line": None,
        "held": 0,
    }
    assert not log.broken and issue(hass, entry.entry_id) is None
    assert (await log.async_verify()).ok


async def test_a_record_that_is_not_json_is_refused_before_anything_is_written(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    log, _ = await with_records(hass, entry.entry_id, 1)
    before = log.path.read_bytes()
    with pytest.raises(TypeError):
        await log.async_append({"computed": object()})
    assert log.path.read_bytes() == before and (await log.async_verify()).ok


async def test_the_anchor_survives_a_restart(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    first, results = await with_records(hass, entry.entry_id, 3)

    second = await started(hass, entry.entry_id)
    assert not second.broken and second.anchor == Anchor(results[-1]["chain_hash"], 3, 0)
    assert (await second.async_append(request(3)))["record_id"] == "0-3"
    assert verify(second.path, second.anchor).ok and len(rows(second.path)) == 4


@pytest.mark.parametrize("stored", [None, {"version": 1, "key": "x", "data": {"head": 5}}], ids=["lost", "torn"])
async def test_a_file_without_its_anchor_is_a_break_that_says_so(
    hass: HomeAssistant, entry: MockConfigEntry, hass_storage: dict[str, Any], stored: dict[str, Any] | None
) -> None:
    """An anchor Store that is gone (HA renames a torn one and starts empty) or malformed cannot vouch for the file:
    a break, named as such (it was "broken_link at line 1", as if the file had been tampered with)."""
    first, _ = await with_records(hass, entry.entry_id, 3)
    key = f"{DOMAIN}.audit.{entry.entry_id}"
    del hass_storage[key]
    if stored is not None:
        hass_storage[key] = {**stored, "key": key}
    log = await started(hass, entry.entry_id)
    assert log.broken and log.verdict is not None and (log.verdict.problem, log.verdict.line) == ("anchor_missing", 0)
    found = issue(hass, entry.entry_id)
    assert found is not None and found.translation_placeholders["problem"] == words("anchor_missing")
    assert (await log.async_append(request(9)))["held"] and len(rows(log.path)) == 3


async def test_a_line_written_before_a_crash_that_kept_the_old_anchor_is_adopted(
    hass: HomeAssistant, entry: MockConfigEntry, hass_storage: dict[str, Any]
) -> None:
    """The write-ahead intent: the line reached the disk, the new anchor did not."""
    first, results = await with_records(hass, entry.entry_id, 3)
    key = f"agentic_hems.audit.{entry.entry_id}"
    hass_storage[key]["data"] = {"head": results[1]["chain_hash"], "count": 2, "epoch": 0,
                                 "pending": results[2]["chain_hash"]}

    second = await started(hass, entry.entry_id)
    assert not second.broken and second.anchor == Anchor(results[2]["chain_hash"], 3, 0)
    assert hass_storage[key]["data"]["count"] == 3 and hass_storage[key]["data"]["pending"] is None


async def test_an_intent_for_another_line_does_not_excuse_an_extra_line(
    hass: HomeAssistant, entry: MockConfigEntry, hass_storage: dict[str, Any]
) -> None:
    first, results = await with_records(hass, entry.entry_id, 3)
    hass_storage[f"agentic_hems.audit.{entry.entry_id}"]["data"] = {
        "head": results[1]["chain_hash"], "count": 2, "epoch": 0, "pending": "f" * 64,
    }
    second = await started(hass, entry.entry_id)
    assert second.broken and (second.verdict and second.verdict.problem, second.status()["line"]) == ("broken_link", 2)


# ------------------------------------------------------------------------------------------------ tampering


def tamper(path: Path, how: str) -> None:
    lines = rows(path)
    if how == "edit":
        entry = json.loads(lines[2])
        entry["record"]["who"] = "mallory"
        lines[2] = json.dumps(entry)
    elif how == "delete":
        del lines[2]
    elif how == "reorder":
        lines[1], lines[2] = lines[2], lines[1]
    elif how == "insert":
        lines.insert(2, lines[1])
    elif how == "truncate":
        lines = lines[:3]
    elif how == "extend":  # a well-formed line after the anchored head: only the anchor shows it
        last = json.loads(lines[-1])
        append(path, Anchor(last["hash"], len(lines), 0), {"who": "mallory"})
        return
    write(path, lines)


@pytest.mark.parametrize(
    ("how", "problem", "line"),
    [
        ("edit", "edited", 2),
        ("delete", "broken_link", 2),
        ("reorder", "broken_link", 1),
        ("insert", "broken_link", 2),
        ("truncate", "truncated", 3),
        ("extend", "broken_link", 5),
    ],
)
async def test_tampering_between_two_starts_halts_and_raises_the_repair_issue(
    hass: HomeAssistant, entry: MockConfigEntry, how: str, problem: str, line: int
) -> None:
    first, results = await with_records(hass, entry.entry_id)
    tamper(first.path, how)
    evidence = first.path.read_bytes()

    log = await started(hass, entry.entry_id)

    assert log.broken and log.verdict is not None
    assert (log.verdict.problem, log.verdict.line) == (problem, line)
    assert log.status()["ok"] is False and log.status()["problem"] == problem and log.status()["line"] == line
    found = issue(hass, entry.entry_id)
    assert (found.is_fixable, found.is_persistent, found.severity, found.translation_key) == (
        True, False, ir.IssueSeverity.ERROR, "audit_chain_broken",
    )
    assert found.translation_placeholders == {
        "entry_title": entry.title, "problem": words(problem), "line": str(line + 1)}
    assert found.data == {"entry_id": entry.entry_id}

    # Appends while broken are held, never written to the broken file.
    held = await log.async_append(request(99))
    assert held == {"record_id": None, "chain_hash": None, "held": True}
    assert log.path.read_bytes() == evidence and log.status()["held"] == 1
    # An on-demand verification finds the same break; the anchor still holds the last trusted head.
    assert (await log.async_verify()).problem == problem and log.broken
    assert log.anchor == Anchor(results[-1]["chain_hash"], 5, 0)


async def test_a_restored_file_clears_the_break_and_writes_the_held_records(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    first, _ = await with_records(hass, entry.entry_id)
    original = first.path.read_bytes()
    tamper(first.path, "edit")
    log = await started(hass, entry.entry_id)
    await log.async_append(request(99))
    assert log.broken

    first.path.write_bytes(original)  # restored from a backup
    assert (await log.async_verify()).ok
    assert not log.broken and issue(hass, entry.entry_id) is None
    assert json.loads(rows(log.path)[5])["record"]["computed"] == {"loss_kw": 99}
    assert verify(log.path, log.anchor).ok and log.anchor.count == 6


async def test_held_records_a_full_disk_stops_midway_are_written_later_once_each(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """Writing the held records after a restore stops at a full disk: the written one is not held again, the
    unwritten one is not lost (the old code cleared none, then never wrote the rest: 100 was gone)."""
    first, _ = await with_records(hass, entry.entry_id)
    original = first.path.read_bytes()
    tamper(first.path, "edit")
    log = await started(hass, entry.entry_id)
    for i in (99, 100):
        assert (await log.async_append(request(i)))["held"]
    first.path.write_bytes(original)  # restored from a backup
    real, calls = audit_log_module.append_record, []

    def disk_full_on_the_second(*args: Any) -> Anchor:
        calls.append(args)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(*args)

    with patch.object(audit_log_module, "append_record", disk_full_on_the_second), pytest.raises(OSError):
        await log.async_verify()
    assert log.held == 1
    await log.async_append(request(101))
    loss = [json.loads(row)["record"]["computed"]["loss_kw"] for row in rows(log.path)]
    assert loss == [0, 1, 2, 3, 4, 99, 100, 101]
    assert log.held == 0 and verify(log.path, log.anchor).ok and issue(hass, entry.entry_id) is None


# ------------------------------------------------------------------------------------------------ torn line


async def test_a_torn_last_line_is_cut_off_kept_and_recorded_without_halting(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    first, results = await with_records(hass, entry.entry_id, 3)
    # Power lost in the middle of the fourth append: the anchor was never advanced for it.
    whole = json.dumps({"seq": 3, "epoch": 0, "prev": results[-1]["chain_hash"], "hash": "ab" * 32, "record": {}})
    fragment = whole[: len(whole) // 2].encode()
    with first.path.open("ab") as handle:
        handle.write(fragment)

    log = await started(hass, entry.entry_id)

    assert not log.broken and issue(hass, entry.entry_id) is None
    kept = log.path.with_name(f"{log.path.name}.torn-{STAMP}")
    assert kept.read_bytes() == fragment
    lines = [json.loads(line) for line in rows(log.path)]
    assert [line["hash"] for line in lines[:3]] == [r["chain_hash"] for r in results]
    assert lines[3]["seq"] == 3 and lines[3]["prev"] == results[-1]["chain_hash"]
    assert {k: v for k, v in lines[3]["record"].items() if k != "at"} == {
        "type": "incomplete_tail",
        "fragment_sha256": hashlib.sha256(fragment).hexdigest(),
        "bytes": len(fragment),
        "kept_as": kept.name,
    }
    assert verify(log.path, log.anchor).ok and log.anchor.count == 4
    assert (await log.async_append(request(4)))["record_id"] == "0-4"


async def test_a_torn_line_after_a_broken_chain_is_a_break_and_the_file_stays_as_found(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    first, _ = await with_records(hass, entry.entry_id)
    lines = rows(first.path)
    first.path.write_bytes(("".join(line + "\n" for line in lines[:2]) + lines[2][:40]).encode())
    evidence = first.path.read_bytes()

    log = await started(hass, entry.entry_id)

    assert log.broken and log.verdict is not None and log.verdict.problem == "truncated"
    assert first.path.read_bytes() == evidence
    assert sorted(p.name for p in first.path.parent.iterdir()) == [first.path.name]


# ------------------------------------------------------------------------------------------------ repair


async def repair(hass: HomeAssistant, client: Any, entry_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Start the fix flow and confirm it, as the frontend does."""
    response = await client.post("/api/repairs/issues/fix", json={"handler": DOMAIN, "issue_id": issue_id(entry_id)})
    assert response.status == 200, await response.text()
    started_flow = await response.json()
    if started_flow["type"] != "form":
        return started_flow, started_flow
    response = await client.post(f"/api/repairs/issues/fix/{started_flow['flow_id']}", json={})
    assert response.status == 200, await response.text()
    return started_flow, await response.json()


@pytest.fixture
async def client(hass: HomeAssistant, hass_client: ClientSessionGenerator) -> Any:
    """The repairs HTTP API, with this integration's repairs platform.

    The domain counts as loaded (so HA finds ``repairs.py``) without setting the entry up: until ``__init__`` owns the
    audit log, the test's own ``AuditLog`` is the only one on the file.
    """
    hass.config.components.add(DOMAIN)
    assert await async_setup_component(hass, "repairs", {})
    await hass.async_block_till_done()
    return await hass_client()


async def test_the_repair_flow_starts_a_new_epoch_citing_the_broken_head(
    hass: HomeAssistant, entry: MockConfigEntry, client: Any
) -> None:
    first, results = await with_records(hass, entry.entry_id)
    tamper(first.path, "delete")
    evidence = first.path.read_bytes()
    log = await started(hass, entry.entry_id)
    entry.runtime_data = SimpleNamespace(audit=log)  # where async_build_runtime puts it; the entry stays unloaded
    held = [await log.async_append(request(90 + i)) for i in range(2)]
    assert log.broken and all(h["held"] for h in held)

    form, done = await repair(hass, client, entry.entry_id)

    assert form["type"] == "form" and form["step_id"] == "confirm"
    assert form["description_placeholders"] == {
        "entry_title": entry.title, "problem": words("broken_link"), "line": "3"}
    assert words("broken_link").startswith("a line does not follow the one before it")
    assert done["type"] == "create_entry"
    assert entry.state is ConfigEntryState.NOT_LOADED  # only the test's AuditLog touched the file
    # The broken file is archived byte for byte, never deleted.
    archive = log.path.with_name(f"{entry.entry_id}.broken-{STAMP}.jsonl")
    assert archive.read_bytes() == evidence
    # The new file: epoch 1 from the genesis hash, citing the anchored head and the archive, then the held records.
    lines = [json.loads(line) for line in rows(log.path)]
    head = lines[0]
    assert (head["epoch"], head["seq"], head["prev"]) == (1, 0, GENESIS)
    assert head["record"]["type"] == "epoch"
    assert head["record"]["cites_broken_head"] == results[-1]["chain_hash"]
    assert head["record"]["archive"] == archive.name
    assert (head["record"]["problem"], head["record"]["line"], head["record"]["held"]) == ("broken_link", 2, 2)
    assert [line["record"]["computed"] for line in lines[1:]] == [{"loss_kw": 90}, {"loss_kw": 91}]
    assert all(line["epoch"] == 1 for line in lines)
    assert verify(log.path, log.anchor).ok and log.anchor == Anchor(lines[-1]["hash"], 3, 1)
    assert head["hash"] == line_hash(0, 1, GENESIS, head["record"])
    # Cleared: no issue, appends chain on in the new epoch, and the next start verifies.
    assert not log.broken and issue(hass, entry.entry_id) is None and log.status()["held"] == 0
    assert (await log.async_append(request(5)))["record_id"] == "1-3"
    again = await started(hass, entry.entry_id)
    assert not again.broken and again.anchor.count == 4 and again.anchor.epoch == 1


async def test_a_second_repair_in_the_same_second_keeps_both_archives(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    first, _ = await with_records(hass, entry.entry_id)
    tamper(first.path, "edit")
    log = await started(hass, entry.entry_id)
    await log.async_new_epoch("test")
    write(log.path, [])  # the new epoch's only line removed: a truncation
    assert (await log.async_verify()).problem == "truncated"
    await log.async_new_epoch("test again")
    names = sorted(p.name for p in log.path.parent.iterdir())
    assert names == sorted([
        f"{entry.entry_id}.jsonl",
        f"{entry.entry_id}.broken-{STAMP}.jsonl",
        f"{entry.entry_id}.broken-{STAMP}-2.jsonl",
    ])
    first_record = json.loads(rows(log.path)[0])
    assert first_record["epoch"] == 2 and first_record["record"]["archive"] == f"{entry.entry_id}.broken-{STAMP}-2.jsonl"
    assert verify(log.path, log.anchor).ok


async def test_a_deleted_file_is_a_break_and_the_repair_starts_afresh(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    first, results = await with_records(hass, entry.entry_id)
    first.path.unlink()
    log = await started(hass, entry.entry_id)
    assert log.broken and log.verdict is not None and (log.verdict.problem, log.verdict.line) == ("truncated", 0)
    await log.async_append(request(9))
    assert not log.path.exists()  # held, not written anywhere yet

    await log.async_new_epoch("file deleted")

    lines = [json.loads(line) for line in rows(log.path)]
    assert lines[0]["record"]["archive"] is None and lines[0]["record"]["cites_broken_head"] == results[-1]["chain_hash"]
    assert lines[1]["record"]["computed"] == {"loss_kw": 9}
    assert verify(log.path, log.anchor).ok and not log.broken


async def test_the_repair_flow_aborts_when_the_log_is_not_loaded(
    hass: HomeAssistant, entry: MockConfigEntry, client: Any
) -> None:
    first, _ = await with_records(hass, entry.entry_id)
    tamper(first.path, "edit")
    log = await started(hass, entry.entry_id)  # not in a runtime: the entry is not loaded

    _, done = await repair(hass, client, entry.entry_id)

    assert (done["type"], done["reason"]) == ("abort", "not_loaded")
    assert issue(hass, entry.entry_id) is not None  # an abort leaves the issue
    assert sorted(p.name for p in log.path.parent.iterdir()) == [log.path.name]


def test_the_issue_and_its_fix_flow_are_translated() -> None:
    """en and de have the title, the confirm step and both abort reasons, with the placeholders the code gives."""
    for lang in ("en", "de"):
        texts = json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8"))["issues"]["audit_chain_broken"]
        assert "{entry_title}" in texts["title"]
        step = texts["fix_flow"]["step"]["confirm"]
        assert step["title"] and "{problem}" in step["description"] and "{line}" in step["description"]
        assert set(texts["fix_flow"]["abort"]) == {"not_loaded", "repair_failed"}
        problems = ("edited", "broken_link", "truncated", "incomplete_tail", "concurrent_writer", "anchor_missing")
        assert all(words(problem, lang) and "_" not in words(problem, lang) for problem in problems)
        assert "{error}" in texts["fix_flow"]["abort"]["repair_failed"]


# ------------------------------------------------------------------------------------------- concurrent writers

ROOT = Path(__file__).resolve().parents[2]
FOREIGN = """
import sys
from pathlib import Path
from custom_components.agentic_hems.grid.audit import append, locked, tail
path = Path(sys.argv[1])
with locked(path):
    append(path, tail(path), {"who": "another process"}, lock=False)
"""
KILLED = """
import os, signal, sys
from pathlib import Path
from custom_components.agentic_hems.grid.audit import locked
path = Path(sys.argv[1])
with locked(path):
    with path.open("ab") as handle:
        handle.write(b'{"seq": 3, "epoch": 0, "prev": "ab')
        handle.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


async def run_python(hass: HomeAssistant, script: str, path: Path) -> int:
    """Run ``script`` in a second Python process with the audit file's path; its return code."""
    done = await hass.async_add_executor_job(
        functools.partial(subprocess.run, [sys.executable, "-c", script, str(path)], cwd=ROOT, check=False)
    )
    return done.returncode


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in rows(path)]


async def test_concurrent_appends_of_one_log_follow_each_other(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    log = await started(hass, entry.entry_id)
    results = await asyncio.gather(*(log.async_append(request(i)) for i in range(40)))

    assert [r["record_id"] for r in results] == [f"0-{i}" for i in range(40)]  # gather keeps the call order
    assert [r["computed"]["loss_kw"] for r in records(log.path)] == list(range(40))
    assert verify(log.path, log.anchor).ok and log.anchor.count == 40


async def test_the_old_log_of_a_reload_and_the_new_one_write_one_chain(
    hass: HomeAssistant, entry: MockConfigEntry, hass_storage: dict[str, Any]
) -> None:
    """A reload unloads the old log and loads a new one while tasks of the old runtime (a gate decision's audit
    task, a tool call) may still append through the old log: both write one chain (once this broke at line 1+)."""
    old, _ = await with_records(hass, entry.entry_id, 2)
    new = await started(hass, entry.entry_id)

    results = await asyncio.gather(
        *(log.async_append(request(i)) for i in range(2, 22) for log in ((old, new)[i % 2],))
    )

    assert [r["record_id"] for r in results] == [f"0-{i}" for i in range(2, 22)]
    assert [r["computed"]["loss_kw"] for r in records(new.path)] == list(range(22))
    assert hass_storage[f"agentic_hems.audit.{entry.entry_id}"]["data"]["count"] == 22
    assert (await new.async_verify()).ok and (await old.async_verify()).ok
    assert not new.broken and not old.broken and issue(hass, entry.entry_id) is None


async def test_tasks_of_the_old_runtime_appending_after_a_real_reload_keep_one_chain(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """The demo's case: a subentry added, the entry reloads, while gate decisions' audit tasks of the old runtime
    still append (through the old log) after the new one loaded."""
    old = loaded_entry.runtime_data.audit
    go = asyncio.Event()

    async def late(i: int) -> dict[str, Any]:
        await go.wait()
        return await old.async_append(request(i))

    tasks = [hass.async_create_task(late(i)) for i in range(3)]
    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    new = loaded_entry.runtime_data.audit
    assert new is not old and not new.broken
    go.set()
    results = await asyncio.gather(*tasks, *(new.async_append(request(10 + i)) for i in range(3)))

    assert all(r["record_id"] is not None for r in results)
    assert len({r["record_id"] for r in results}) == 6
    assert (await new.async_verify()).ok and not new.broken and issue(hass, loaded_entry.entry_id) is None


async def test_the_loaded_log_lives_in_runtime_data_alone(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The repair flow finds the entry's log through its runtime_data: the reloaded one, none once unloaded, and no
    second registry of logs in hass.data."""
    first = loaded_entry.runtime_data.audit
    assert async_get_audit_log(hass, loaded_entry.entry_id) is first
    assert not [key for key, value in hass.data.items() if isinstance(value, dict) and first in value.values()]
    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    assert async_get_audit_log(hass, loaded_entry.entry_id) is loaded_entry.runtime_data.audit is not first
    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    assert async_get_audit_log(hass, loaded_entry.entry_id) is None
    assert async_get_audit_log(hass, "no such entry") is None


async def test_two_entries_append_side_by_side(hass: HomeAssistant, entry: MockConfigEntry) -> None:
    """Two entries' logs share the audit folder (and its lock) and write in executor threads at once."""
    other = sample_entry()
    other.add_to_hass(hass)
    first, second = await started(hass, entry.entry_id), await started(hass, other.entry_id)

    await asyncio.gather(*(log.async_append(request(i)) for i in range(30) for log in (first, second)))

    for log in (first, second):
        assert [r["computed"]["loss_kw"] for r in records(log.path)] == list(range(30))
        assert verify(log.path, log.anchor).ok and log.anchor.count == 30


async def test_a_second_process_writing_the_file_is_a_concurrent_writer_break(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """Another process appends a well-chained line: this log writes nothing over it, halts with its own reason and
    the repair writes the held record into the new epoch."""
    log, results = await with_records(hass, entry.entry_id, 3)
    assert await run_python(hass, FOREIGN, log.path) == 0

    held = await log.async_append(request(3))

    assert held == {"record_id": None, "chain_hash": None, "held": True}
    assert log.broken and log.verdict is not None and (log.verdict.problem, log.verdict.line) == ("concurrent_writer", 3)
    assert [r.get("who") for r in records(log.path)] == ["user-1"] * 3 + ["another process"]
    assert (end := tail(log.path)) is not None and verify(log.path, end).ok  # the file is still one chain
    found = issue(hass, entry.entry_id)
    assert found is not None and found.translation_key == "audit_chain_concurrent_writer"
    assert found.translation_placeholders == {
        "entry_title": entry.title, "problem": words("concurrent_writer"), "line": "4"}

    await log.async_new_epoch("test")

    new = records(log.path)
    assert new[0]["cites_broken_head"] == results[-1]["chain_hash"] and new[1]["asked"] == "run_power_flow"
    assert not log.broken and verify(log.path, log.anchor).ok and log.anchor == Anchor(log.anchor.head, 2, 1)


async def test_a_process_killed_mid_line_is_cut_off_and_the_next_append_goes_on(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """A writer killed (SIGKILL) while it held the folder's lock, half a line written: the next append cuts the
    fragment off (kept), records it, then writes its own record; nothing halts."""
    log, results = await with_records(hass, entry.entry_id, 3)
    assert await run_python(hass, KILLED, log.path) == -9

    done = await log.async_append(request(3))

    assert done["record_id"] == "0-4" and not log.broken and issue(hass, entry.entry_id) is None
    found = records(log.path)
    assert found[3]["type"] == "incomplete_tail" and found[3]["kept_as"] == f"{log.path.name}.torn-{STAMP}"
    assert found[4]["computed"] == {"loss_kw": 3}
    assert log.path.with_name(found[3]["kept_as"]).read_bytes() == b'{"seq": 3, "epoch": 0, "prev": "ab'
    assert verify(log.path, log.anchor).ok and log.anchor.count == 5


def test_the_concurrent_writer_issue_is_translated() -> None:
    for lang in ("en", "de"):
        issues = json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8"))["issues"]
        texts = issues["audit_chain_concurrent_writer"]
        assert "{entry_title}" in texts["title"]
        step = texts["fix_flow"]["step"]["confirm"]
        assert "{problem}" in step["description"] and "{line}" in step["description"]
        assert texts["fix_flow"]["abort"] == issues["audit_chain_broken"]["fix_flow"]["abort"]


async def test_an_audit_folder_that_cannot_be_used_is_a_translated_retry(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """An audit folder that cannot be created or locked (here a file stands in its place; a read-only or full disk
    raises the same OSError) was an untranslated setup error with a traceback; it is a translated retry."""
    folder = Path(hass.config.path(DOMAIN, "audit"))
    folder.parent.mkdir(parents=True)
    folder.write_text("not a folder", encoding="utf-8")
    assert not await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert (entry.error_reason_translation_key, set(entry.error_reason_translation_placeholders or {})) == (
        "audit_unavailable", {"error"})
    english = json.loads((TRANSLATIONS / "en.json").read_text(encoding="utf-8"))["exceptions"]["audit_unavailable"]
    assert "{error}" in english["message"]
    await hass.config_entries.async_unload(entry.entry_id)
