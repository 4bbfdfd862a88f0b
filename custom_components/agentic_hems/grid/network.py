"""Networks in MATPOWER's data conventions: the case file (version 2) or its JSON form.

A :class:`Network` holds the MATPOWER matrices as float arrays in the file's order: ``bus`` (n, 13), ``gen`` (g, 21),
``branch`` (l, 13), and ``base_mva``. Column indices follow MATPOWER's ``idx_bus``, ``idx_gen`` and ``idx_brch``
(0-based here). Bus numbers are external ids; :attr:`Network.index` maps them to rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from pathlib import Path
import re
from typing import Any

import numpy as np
from numpy.typing import NDArray

type Matrix = NDArray[np.float64]

# MATPOWER column indices (0-based).
BUS_I, BUS_TYPE, PD, QD, GS, BS, BUS_AREA, VM, VA, BASE_KV, ZONE, VMAX, VMIN = range(13)
GEN_BUS, PG, QG, QMAX, QMIN, VG, MBASE, GEN_STATUS, PMAX, PMIN = range(10)
F_BUS, T_BUS, BR_R, BR_X, BR_B, RATE_A, RATE_B, RATE_C, TAP, SHIFT, BR_STATUS, ANGMIN, ANGMAX = range(13)
PQ, PV, REF, NONE = 1, 2, 3, 4
COLUMNS = {"bus": 13, "gen": 10, "branch": 11}  # at least these many columns


class NetworkError(ValueError):
    """The case cannot be read: the message names the part (e.g. ``mpc.branch row 3``)."""


@dataclass
class Network:
    """A power network in MATPOWER's conventions (per-unit on ``base_mva``; angles in degrees)."""

    base_mva: float
    bus: Matrix
    gen: Matrix
    branch: Matrix
    name: str = "case"
    index: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        """Check shapes and references; build the bus index.

        Raises:
            NetworkError: missing columns, NaN values, duplicate bus ids, a generator or branch at an unknown bus,
                no slack bus.

        """
        for part, minimum in COLUMNS.items():
            matrix = getattr(self, part)
            if matrix.ndim != 2 or (matrix.size and matrix.shape[1] < minimum):
                raise NetworkError(f"mpc.{part} needs at least {minimum} columns")
            if np.isnan(matrix).any():  # Inf is MATPOWER's "no limit"; NaN is no number at all
                raise NetworkError(f"mpc.{part} row {int(np.argwhere(np.isnan(matrix))[0][0]) + 1} has NaN")
        if not self.base_mva > 0:
            raise NetworkError("mpc.baseMVA must be positive")
        ids = [int(b) for b in self.bus[:, BUS_I]]
        if len(set(ids)) != len(ids):
            raise NetworkError("mpc.bus has duplicate bus numbers")
        self.index = {bus_id: row for row, bus_id in enumerate(ids)}
        for part, columns in (("gen", (GEN_BUS,)), ("branch", (F_BUS, T_BUS))):
            for row, values in enumerate(getattr(self, part)):
                for column in columns:
                    if int(values[column]) not in self.index:
                        raise NetworkError(f"mpc.{part} row {row + 1} names unknown bus {int(values[column])}")
        if not (self.bus[:, BUS_TYPE] == REF).any():
            raise NetworkError("mpc.bus has no slack (type 3) bus")

    @property
    def n_bus(self) -> int:
        """Number of buses."""
        return int(self.bus.shape[0])

    @property
    def n_branch(self) -> int:
        """Number of branches."""
        return int(self.branch.shape[0])

    def rows(self, ids: NDArray[np.float64]) -> NDArray[np.int64]:
        """Bus rows of external bus ids."""
        return np.array([self.index[int(i)] for i in ids], dtype=np.int64)

    def copy(self) -> Network:
        """Return an independent copy (for outages and modifications)."""
        return Network(self.base_mva, self.bus.copy(), self.gen.copy(), self.branch.copy(), self.name)


_ASSIGN = re.compile(r"mpc\.(\w+)\s*=\s*(\[.*?\]|[^;\n]+)\s*;", re.DOTALL)


def _matrix(text: str, part: str) -> Matrix:
    body = re.sub(r"%[^\n]*", "", text.strip()[1:-1])  # strip brackets and comments
    rows = [r for r in re.split(r"[;\n]", body) if r.strip()]
    try:
        values = [[float(x) for x in re.split(r"[\s,]+", r.strip())] for r in rows]
    except ValueError as err:
        raise NetworkError(f"mpc.{part}: {err}") from None
    if len({len(v) for v in values}) > 1:
        raise NetworkError(f"mpc.{part} rows have different lengths")
    return np.array(values, dtype=np.float64).reshape(len(values), -1 if values else 0)


def _from_matpower(text: str) -> Network:
    fields = {m.group(1): m.group(2) for m in _ASSIGN.finditer(re.sub(r"%[^\n]*", "", text))}
    if fields.get("version", "'2'").strip().strip("'\"") != "2":
        raise NetworkError("only MATPOWER case format version 2 is supported")
    name = re.search(r"function\s+mpc\s*=\s*(\w+)", text)
    try:
        base = float(fields["baseMVA"])
        parts = {part: _matrix(fields[part], part) for part in ("bus", "gen", "branch")}
    except KeyError as err:
        raise NetworkError(f"mpc.{err.args[0]} is missing") from None
    return Network(base, parts["bus"], parts["gen"], parts["branch"], name.group(1) if name else "case")


def _from_json(data: dict[str, Any]) -> Network:
    try:
        parts = {part: np.array(data[part], dtype=np.float64) for part in ("bus", "gen", "branch")}
        base = float(data["baseMVA"])
    except KeyError as err:
        raise NetworkError(f"{err.args[0]} is missing") from None
    except (TypeError, ValueError) as err:
        raise NetworkError(f"not a numeric matrix: {err}") from None
    name = str((data.get("meta") or {}).get("case", data.get("name", "case")))
    return Network(base, parts["bus"], parts["gen"], parts["branch"], name)


def load_matpower(source: str | Path) -> Network:
    """Return a network from MATPOWER version 2 case text, its JSON form, or a path to either (``.m`` or ``.json``).

    Raises:
        NetworkError: unreadable or inconsistent case data.
        OSError: the path cannot be read.

    """
    if isinstance(source, Path):
        text = source.read_text(encoding="utf-8")
    elif "\n" not in source and source.strip().endswith((".m", ".json")):
        text = Path(source).read_text(encoding="utf-8")
    else:
        text = source
    if text.lstrip().startswith("{"):
        try:
            return _from_json(json.loads(text))
        except json.JSONDecodeError as err:
            raise NetworkError(f"invalid JSON: {err}") from None
    return _from_matpower(text)


def table(matrix: Matrix) -> list[list[float]]:
    """Return a MATPOWER matrix as rows of floats (for building JSON and assets)."""
    return [[float(value) for value in row] for row in matrix]
