"""N-1 contingency analysis over branch outages (the ``run_contingency`` tool).

Each outage takes one in-service branch out. An outage that splits the network into islands is detected from the
graph and reported as ``islanded``, never run as a power flow that would fail to converge: the bridges of the branch
graph are found once (Tarjan), so an outage adds an island exactly when its branch is a bridge. The others are solved
(AC or DC) and checked against RATE_A with a margin; RATE_A = 0 means unrated and is left out. AC outages go through
:class:`~.outages.OutageSolver` (one base factorization, a low-rank update and warm-started chord iterations per
outage, to the same tolerance), and any outage it cannot settle is solved the plain way; ``fast=False`` runs the plain
one-by-one analysis (a copy of the network, a connectivity search and a Newton-Raphson from the case's start per
outage), the oracle of the fast path.
A wall-clock ``deadline_s`` makes the result partial: ``completed`` is False and the unevaluated outages are listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .network import BR_STATUS, F_BUS, RATE_A, T_BUS, Network
from .outages import OutageSolver, bridges
from .powerflow import PowerFlowResult, run_power_flow


@dataclass
class Outage:
    """The result of one branch outage (``branch`` is the 0-based row in the case file)."""

    branch: int
    f_bus: int
    t_bus: int
    islands: int
    converged: bool | None = None  # None when islanded (not solved)
    max_loading_pct: float | None = None
    overloaded: list[dict[str, Any]] = field(default_factory=list)
    min_vm_pu: float | None = None

    @property
    def islanded(self) -> bool:
        """The outage splits the network."""
        return self.islands > 1

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "branch": self.branch,
            "f_bus": self.f_bus,
            "t_bus": self.t_bus,
            "islanded": self.islanded,
            "islands": self.islands,
            "converged": self.converged,
            "max_loading_pct": self.max_loading_pct,
            "overloaded": self.overloaded,
            "min_vm_pu": self.min_vm_pu,
        }


@dataclass
class ContingencyResult:
    """All evaluated outages, whether the run completed, and what was left when it did not."""

    method: str
    outages: list[Outage]
    completed: bool
    unevaluated: list[int]


def islands(network: Network) -> int:
    """Return connected components of the buses over the branches in service."""
    import scipy.sparse as sp  # noqa: PLC0415 - scipy is heavy: loaded by the first analysis, in the executor
    from scipy.sparse.csgraph import connected_components  # noqa: PLC0415

    on = network.branch[:, BR_STATUS] > 0
    f = network.rows(network.branch[on, F_BUS])
    t = network.rows(network.branch[on, T_BUS])
    graph = sp.coo_matrix((np.ones(len(f)), (f, t)), shape=(network.n_bus, network.n_bus))
    count, _ = connected_components(graph, directed=False)
    return int(count)


def loading(network: Network, result: PowerFlowResult) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Return (loading in % of RATE_A per branch (NaN where unrated or out of service), the rated mask)."""
    return _loading(
        network,
        network.branch[:, BR_STATUS] > 0,
        np.hypot(result.pf_mw, result.qf_mvar),
        np.hypot(result.pt_mw, result.qt_mvar),
    )


def _loading(
    network: Network, on: NDArray[np.bool_], sf: NDArray[np.float64], st: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Return loading (% of RATE_A, NaN where unrated or off) and the rated mask from |Sf|, |St| (MVA) per branch."""
    rate = network.branch[:, RATE_A]
    rated = (rate > 0) & on
    pct = np.full(network.n_branch, np.nan)
    pct[rated] = 100 * np.maximum(sf, st)[rated] / rate[rated]
    return pct, rated


def _record(
    outage: Outage, pct: NDArray[np.float64], rated: NDArray[np.bool_], vm: NDArray[np.float64], limit: float
) -> None:
    """Fill a converged outage's loading, overloads above ``limit`` % and lowest voltage."""
    outage.converged = True
    outage.max_loading_pct = None if not rated.any() else round(float(np.nanmax(pct)), 3)
    outage.overloaded = [
        {"branch": int(i), "loading_pct": round(float(pct[i]), 3)} for i in np.flatnonzero(rated & (pct > limit))
    ]
    outage.min_vm_pu = round(float(vm.min()), 6)


def _plain(network: Network, index: int, method: str, limit: float, outage: Outage) -> None:
    """Solve one outage from the case's own start, on a copy of the network (the one-by-one way)."""
    net = network.copy()
    net.branch[index, BR_STATUS] = 0
    result = run_power_flow(net, method)
    outage.converged = result.converged
    if result.converged:
        _record(outage, *loading(net, result), result.vm_pu, limit)


def run_contingency(
    network: Network,
    *,
    branches: Sequence[int] | None = None,
    method: str = "ac",
    limit_margin_pct: float = 0.0,
    deadline_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    fast: bool = True,
) -> ContingencyResult:
    """N-1 over ``branches`` (0-based rows; default: every branch in service).

    A branch is overloaded above ``100 - limit_margin_pct`` % of RATE_A (apparent power for AC, |P| for DC).
    ``fast`` (default) finds islands from the bridges and solves AC outages from the base factorization; the
    outcome is the plain one-by-one analysis's (``fast=False``) up to the power flow's tolerance, except where the
    plain Newton-Raphson from the case's start diverges on an outage that has a solution: the fast path, started from
    the base solution, reports the solution it found (mismatch below the same tolerance).
    """
    on = network.branch[:, BR_STATUS] > 0
    candidates = list(branches) if branches is not None else [int(i) for i in np.flatnonzero(on)]
    limit = 100 - limit_margin_pct
    started = clock()
    solver = OutageSolver(network) if fast and method == "ac" else None
    is_bridge = bridges(
        network.n_bus, network.rows(network.branch[:, F_BUS]), network.rows(network.branch[:, T_BUS]), on
    )
    base_islands = islands(network)
    evaluated: list[Outage] = []
    for position, index in enumerate(candidates):
        if deadline_s is not None and clock() - started > deadline_s:
            return ContingencyResult(method, evaluated, False, candidates[position:])
        outage = Outage(index, int(network.branch[index, F_BUS]), int(network.branch[index, T_BUS]), 0)
        if fast:
            outage.islands = base_islands + int(is_bridge[index])
        else:
            net = network.copy()
            net.branch[index, BR_STATUS] = 0
            outage.islands = islands(net)
        if outage.islanded:
            pass
        elif solver is not None and solver.ready and (v := solver.solve(index)) is not None:
            sf, st = solver.flows(index, v)
            without = on.copy()
            without[index] = False
            _record(outage, *_loading(network, without, np.abs(sf), np.abs(st)), np.abs(v), limit)
        else:
            _plain(network, index, method, limit, outage)
        evaluated.append(outage)
    return ContingencyResult(method, evaluated, True, [])
