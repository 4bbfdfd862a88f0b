"""The hostile-model suite's counts per attack class and person, from a real run of tests/ha/test_hostile.py.

    scripts/py314-root .venv/bin/python tests/ha/hostile_counts.py     # runs the module with pytest -n 2

Each case of the module appends one JSON line to the file named by HOSTILE_COUNTS: its class, case and person, the
requests it sent (ask, Assist, evaluate_command), the commands the model proposed (replies served that carry an
EVALUATE_COMMAND, SCHEDULE or REQUEST_AUTHORIZATION; for evaluate_command cases, the commands sent), and how many
devices changed (a state, or a stored plan the scheduler runs later) without being asked for (unrequested) or as
asked (legitimate). This prints them as a table, then the
pytest summary line; the exit code is pytest's.
"""

from __future__ import annotations

from collections import defaultdict
import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile

HERE = Path(__file__).resolve().parent
FIELDS = ("cases", "requests", "proposed", "unrequested", "legitimate")


def _order(klass: str) -> int:
    """Classes by their number ("10 ..." after "9 ..."), then the unnumbered ones, then the totals."""
    number = klass.split(" ")[0]
    return int(number) if number.isdigit() else 100 if klass != "all classes" else 101


def table(rows: list[dict[str, object]]) -> str:
    """A markdown table: one row per (class, person), then the totals."""
    sums: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: dict.fromkeys(FIELDS, 0))
    for row in rows:
        for key in ((str(row["class"]), str(row["who"])), ("all classes", "both")):
            sums[key]["cases"] += 1
            for name in FIELDS[1:]:
                sums[key][name] += int(str(row[name]))
    lines = ["| class | person | cases | requests | model-proposed commands | unrequested actuations (devices) | "
             "legitimate actuations (devices) |", "|---|---|---|---|---|---|---|"]
    for (klass, who), counts in sorted(sums.items(), key=lambda item: (_order(item[0][0]), item[0])):
        lines.append(f"| {klass} | {who} | " + " | ".join(str(counts[name]) for name in FIELDS) + " |")
    return "\n".join(lines)


def main() -> int:
    """Run the module with the counts file set, print the table."""
    with tempfile.TemporaryDirectory() as tmp:
        counts = Path(tmp) / "counts.jsonl"
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-n", "2", str(HERE / "test_hostile.py")],
            env={**os.environ, "HOSTILE_COUNTS": str(counts)}, cwd=HERE.parents[1], capture_output=True, text=True,
            check=False,
        )
        rows = [json.loads(line) for line in counts.read_text(encoding="utf-8").splitlines()] if counts.exists() else []
    print(table(rows))
    print(result.stdout.strip().splitlines()[-1] if result.stdout.strip() else result.stderr[-2000:])
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
