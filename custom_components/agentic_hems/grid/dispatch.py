"""Battery and DER dispatch against prices: a MILP solved with ``scipy.optimize.milp`` (HiGHS).

Per step ``t`` (``step_h`` hours) and battery ``b``: charge ``c`` and discharge ``d`` (kW, at most one of them non-zero:
a binary per step), state of charge ``s`` (kWh) with charge and discharge efficiencies, grid import and export (kW,
not both: a binary per step) within their limits, and a terminal SoC. The site balance is
``import - export = load - pv + sum(c - d)``.

Objectives (``Objective``): ``cost`` (import price times import minus export price times export), ``self_consumption``
(least imported energy, then cost), ``peak_shaving`` (the least peak import, then cost).

An infeasible problem returns a certificate: the problem is solved again with non-negative slacks on the constraints
that can conflict (site balance at each step, terminal SoC), and the slacks in use name them. A time limit returns the
best solution found with its bound and gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from scipy.optimize import Bounds, LinearConstraint
    import scipy.sparse as sp

type Vector = NDArray[np.float64]
MIP_REL_GAP = 1e-6
TIE_BREAK = 1e-6  # secondary cost weight for self_consumption and peak_shaving


class Objective(StrEnum):
    """What the dispatch minimizes."""

    COST = "cost"
    SELF_CONSUMPTION = "self_consumption"
    PEAK_SHAVING = "peak_shaving"


@dataclass(frozen=True)
class Battery:
    """A battery: energy limits (kWh), power limits (kW), efficiencies (0-1), initial and terminal SoC (kWh)."""

    name: str
    capacity_kwh: float
    soc_min_kwh: float
    soc_max_kwh: float
    charge_kw: float
    discharge_kw: float
    soc_initial_kwh: float
    soc_terminal_kwh: float
    charge_efficiency: float = 0.95
    discharge_efficiency: float = 0.95


@dataclass(frozen=True)
class DispatchProblem:
    """Prices (per kWh), site load and PV (kW) per step, grid limits (kW), the batteries and the objective."""

    import_price: Vector
    export_price: Vector
    load_kw: Vector
    pv_kw: Vector
    batteries: tuple[Battery, ...]
    import_limit_kw: float
    export_limit_kw: float
    step_h: float = 0.25
    objective: Objective = Objective.COST


@dataclass
class DispatchResult:
    """The outcome of a dispatch problem.

    ``status``: optimal, time_limit (best found, with ``bound`` and ``gap``) or infeasible (with ``conflicts``).
    Arrays are per step; ``charge_kw``/``discharge_kw``/``soc_kwh`` per battery (b, T).
    """

    status: str
    objective_value: float | None = None
    cost: float | None = None
    import_kw: Vector | None = None
    export_kw: Vector | None = None
    charge_kw: Vector | None = None
    discharge_kw: Vector | None = None
    soc_kwh: Vector | None = None
    bound: float | None = None
    gap: float | None = None
    conflicts: list[dict[str, Any]] = field(default_factory=list)


class _Layout:
    """Column offsets of the variables: per battery c, d, s, u (T each), then import, export, grid binary, peak."""

    def __init__(self, n_bat: int, steps: int) -> None:
        self.t = steps
        self.n_bat = n_bat
        self.battery = 4 * steps
        self.imp = n_bat * self.battery
        self.exp = self.imp + steps
        self.z = self.exp + steps
        self.peak = self.z + steps
        self.size = self.peak + 1

    def c(self, b: int) -> int:
        return b * self.battery

    def d(self, b: int) -> int:
        return b * self.battery + self.t

    def s(self, b: int) -> int:
        return b * self.battery + 2 * self.t

    def u(self, b: int) -> int:
        return b * self.battery + 3 * self.t


@dataclass
class _Rows:
    """Constraint rows over ``size`` variables, gathered block by block."""

    size: int
    rows: list[sp.coo_matrix] = field(default_factory=list)
    lower: list[Vector] = field(default_factory=list)
    upper: list[Vector] = field(default_factory=list)

    def add(self, entries: list[tuple[int, Any]], lo: Vector, hi: Vector) -> None:
        """Add the rows ``lo <= sum of the blocks <= hi``; each entry is (first variable, block matrix)."""
        import scipy.sparse as sp  # noqa: PLC0415 - lazy, as in optimize_dispatch

        mats = []
        for offset, mat in entries:
            m = sp.coo_matrix(mat)
            mats.append(sp.coo_matrix((m.data, (m.row, m.col + offset)), shape=(m.shape[0], self.size)))
        self.rows.append(sp.coo_matrix(sum(mats[1:], mats[0])))
        self.lower.append(lo)
        self.upper.append(hi)

    def constraint(self) -> LinearConstraint:
        """Return every row added as one LinearConstraint."""
        from scipy.optimize import LinearConstraint  # noqa: PLC0415 - lazy, as in optimize_dispatch
        import scipy.sparse as sp  # noqa: PLC0415 - lazy, as in optimize_dispatch

        return LinearConstraint(sp.vstack(self.rows).tocsr(), np.concatenate(self.lower), np.concatenate(self.upper))


def _build(problem: DispatchProblem, slack: bool) -> tuple[Vector, LinearConstraint, Bounds, Vector, _Layout, int]:
    """Return the MILP's cost, constraints, bounds, integrality, layout and slack count (slacks when ``slack``)."""
    steps = len(problem.import_price)
    lay = _Layout(len(problem.batteries), steps)
    n_slack = 2 * steps + len(problem.batteries) if slack else 0
    size = lay.size + n_slack
    rows = _Rows(size)
    _balance_rows(rows, problem, lay, slack)
    for b, bat in enumerate(problem.batteries):
        _battery_rows(rows, bat, b, h=problem.step_h, lay=lay, slack=slack)
    _grid_rows(rows, problem, lay)
    bounds, integrality = _bounds(problem, lay, size)
    return _cost(problem, lay, size, slack), rows.constraint(), bounds, integrality, lay, n_slack


def _cost(problem: DispatchProblem, lay: _Layout, size: int, slack: bool) -> Vector:
    """Return the objective per variable; the relaxed problem (``slack``) minimizes only the slacks."""
    cost = np.zeros(size)
    if slack:
        cost[lay.size :] = 1.0
        return cost
    steps, h = lay.t, problem.step_h
    energy_cost = np.zeros(size)
    energy_cost[lay.imp : lay.imp + steps] = problem.import_price * h
    energy_cost[lay.exp : lay.exp + steps] = -problem.export_price * h
    if problem.objective is Objective.COST:
        cost += energy_cost
    elif problem.objective is Objective.SELF_CONSUMPTION:
        cost[lay.imp : lay.imp + steps] = h
        cost += TIE_BREAK * energy_cost
    else:
        cost[lay.peak] = 1.0
        cost += TIE_BREAK * energy_cost
    return cost


def _balance_rows(rows: _Rows, problem: DispatchProblem, lay: _Layout, slack: bool) -> None:
    """Add the site balance: import - export - sum(c - d) = load - pv (with slacks: + s_up - s_down)."""
    import scipy.sparse as sp  # noqa: PLC0415 - lazy, as in optimize_dispatch

    steps = lay.t
    eye = sp.eye(steps, format="coo")
    entries: list[tuple[int, Any]] = [(lay.imp, eye), (lay.exp, -eye)]
    for b in range(lay.n_bat):
        entries += [(lay.c(b), -eye), (lay.d(b), eye)]
    if slack:
        entries += [(lay.size, eye), (lay.size + steps, -eye)]
    net = problem.load_kw - problem.pv_kw
    rows.add(entries, net, net)


def _battery_rows(rows: _Rows, bat: Battery, b: int, *, h: float, lay: _Layout, slack: bool) -> None:
    """Add battery ``b``'s SoC dynamics, its charge-xor-discharge rows and its terminal SoC (slack when ``slack``)."""
    import scipy.sparse as sp  # noqa: PLC0415 - lazy, as in optimize_dispatch

    steps = lay.t
    eye = sp.eye(steps, format="coo")
    # SoC dynamics: s_t - s_{t-1} - eta_c h c_t + h/eta_d d_t = 0 (s_0 = initial)
    shift = sp.eye(steps, k=-1, format="coo")
    rhs = np.zeros(steps)
    rhs[0] = bat.soc_initial_kwh
    dynamics: list[tuple[int, Any]] = [
        (lay.s(b), eye - shift),
        (lay.c(b), -bat.charge_efficiency * h * eye),
        (lay.d(b), h / bat.discharge_efficiency * eye),
    ]
    rows.add(dynamics, rhs, rhs)
    # no simultaneous charge and discharge: c <= Pc u, d <= Pd (1 - u)
    rows.add([(lay.c(b), eye), (lay.u(b), -bat.charge_kw * eye)], np.full(steps, -np.inf), np.zeros(steps))
    rows.add(
        [(lay.d(b), eye), (lay.u(b), bat.discharge_kw * eye)],
        np.full(steps, -np.inf),
        np.full(steps, bat.discharge_kw),
    )
    # terminal SoC (with a slack: s_T + slack >= terminal)
    terminal = sp.coo_matrix(([1.0], ([0], [steps - 1])), shape=(1, steps))
    entries_t: list[tuple[int, Any]] = [(lay.s(b), terminal)]
    if slack:
        entries_t.append((lay.size + 2 * steps + b, sp.coo_matrix(([1.0], ([0], [0])), shape=(1, 1))))
    rows.add(entries_t, np.array([bat.soc_terminal_kwh]), np.array([np.inf]))


def _grid_rows(rows: _Rows, problem: DispatchProblem, lay: _Layout) -> None:
    """Add import xor export (import <= I z, export <= E (1 - z)) and peak >= import."""
    import scipy.sparse as sp  # noqa: PLC0415 - lazy, as in optimize_dispatch

    steps = lay.t
    eye = sp.eye(steps, format="coo")
    free = np.full(steps, -np.inf)
    rows.add([(lay.imp, eye), (lay.z, -problem.import_limit_kw * eye)], free, np.zeros(steps))
    rows.add([(lay.exp, eye), (lay.z, problem.export_limit_kw * eye)], free, np.full(steps, problem.export_limit_kw))
    rows.add([(lay.imp, eye), (lay.peak, sp.coo_matrix(-np.ones((steps, 1))))], free, np.zeros(steps))


def _bounds(problem: DispatchProblem, lay: _Layout, size: int) -> tuple[Bounds, Vector]:
    """Return the variables' bounds (powers, SoC window, binaries in [0, 1]) and integrality (the binaries)."""
    from scipy.optimize import Bounds  # noqa: PLC0415 - lazy, as in optimize_dispatch

    steps = lay.t
    lb, ub = np.zeros(size), np.full(size, np.inf)
    integrality = np.zeros(size)
    for b, bat in enumerate(problem.batteries):
        ub[lay.c(b) : lay.c(b) + steps] = bat.charge_kw
        ub[lay.d(b) : lay.d(b) + steps] = bat.discharge_kw
        lb[lay.s(b) : lay.s(b) + steps] = bat.soc_min_kwh
        ub[lay.s(b) : lay.s(b) + steps] = bat.soc_max_kwh
        ub[lay.u(b) : lay.u(b) + steps] = 1
        integrality[lay.u(b) : lay.u(b) + steps] = 1
    ub[lay.imp : lay.imp + steps] = problem.import_limit_kw
    ub[lay.exp : lay.exp + steps] = problem.export_limit_kw
    ub[lay.z : lay.z + steps] = 1
    integrality[lay.z : lay.z + steps] = 1
    return Bounds(lb, ub), integrality


def optimize_dispatch(problem: DispatchProblem, *, time_limit_s: float = 10.0) -> DispatchResult:
    """Solve ``problem`` (see the module docstring). Raises ValueError on inconsistent array lengths."""
    from scipy.optimize import milp  # noqa: PLC0415 - scipy is heavy: loaded by the first solve, in the executor

    steps = len(problem.import_price)
    if not all(len(a) == steps for a in (problem.export_price, problem.load_kw, problem.pv_kw)) or steps == 0:
        raise ValueError("prices, load and PV need the same, non-zero number of steps")
    cost, constraints, bounds, integrality, lay, _ = _build(problem, slack=False)
    options = {"time_limit": time_limit_s, "mip_rel_gap": MIP_REL_GAP}
    res = milp(cost, constraints=constraints, bounds=bounds, integrality=integrality, options=options)
    if res.status == 2 or (res.x is None and res.status != 1):  # infeasible
        return DispatchResult("infeasible", conflicts=_certificate(problem, time_limit_s))
    if res.x is None:
        return DispatchResult("time_limit", bound=getattr(res, "mip_dual_bound", None))
    x = res.x
    n_bat = lay.n_bat
    imp, exp = x[lay.imp : lay.imp + steps], x[lay.exp : lay.exp + steps]
    energy = float(np.dot(problem.import_price, imp) - np.dot(problem.export_price, exp)) * problem.step_h
    status = "optimal" if res.status == 0 else "time_limit"
    return DispatchResult(
        status,
        objective_value=float(res.fun),
        cost=energy,
        import_kw=imp,
        export_kw=exp,
        charge_kw=np.array([x[lay.c(b) : lay.c(b) + steps] for b in range(n_bat)]),
        discharge_kw=np.array([x[lay.d(b) : lay.d(b) + steps] for b in range(n_bat)]),
        soc_kwh=np.array([x[lay.s(b) : lay.s(b) + steps] for b in range(n_bat)]),
        bound=getattr(res, "mip_dual_bound", None),
        gap=getattr(res, "mip_gap", None),
    )


def _certificate(problem: DispatchProblem, time_limit_s: float) -> list[dict[str, Any]]:
    """Return the constraints whose slacks the relaxed problem needs (balance per step, terminal SoC per battery)."""
    from scipy.optimize import milp  # noqa: PLC0415 - lazy, as in optimize_dispatch

    cost, constraints, bounds, integrality, lay, _ = _build(problem, slack=True)
    res = milp(
        cost, constraints=constraints, bounds=bounds, integrality=integrality, options={"time_limit": time_limit_s}
    )
    if res.x is None:
        return [{"constraint": "bounds", "detail": "even the relaxed problem has no solution"}]
    steps = len(problem.import_price)
    slack = res.x[lay.size :]
    conflicts: list[dict[str, Any]] = []
    for t in range(steps):
        short, surplus = slack[t], slack[steps + t]
        if short > 1e-6:
            conflicts.append(
                {
                    "constraint": "site_balance",
                    "step": t,
                    "missing_kw": round(float(short), 6),
                    "detail": "import limit and batteries cannot cover the load",
                }
            )
        if surplus > 1e-6:
            conflicts.append(
                {
                    "constraint": "site_balance",
                    "step": t,
                    "excess_kw": round(float(surplus), 6),
                    "detail": "export limit and batteries cannot absorb the PV",
                }
            )
    for b, bat in enumerate(problem.batteries):
        if slack[2 * steps + b] > 1e-6:
            conflicts.append(
                {
                    "constraint": "terminal_soc",
                    "battery": bat.name,
                    "missing_kwh": round(float(slack[2 * steps + b]), 6),
                }
            )
    return conflicts
