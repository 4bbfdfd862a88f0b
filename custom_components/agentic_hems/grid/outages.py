"""The fast path of the AC N-1: one base factorization, a low-rank update per outage, the bridges found once.

A branch outage changes Ybus by the branch's 2x2 stamp, so the outage network's Jacobian at the base voltages is the
base Jacobian plus a block of at most 4 x 4 (the P and Q rows and the angle and magnitude columns of the two end
buses). :class:`OutageSolver` factorizes the base Jacobian once and applies that block with the Woodbury identity
(4 extra triangular solves per outage). Each outage is then solved by chord iterations on its own exact mismatch,
from the base voltages, accelerated by Anderson mixing; it stops at the same mismatch tolerance as the plain
Newton-Raphson, so a converged answer is the same power-flow solution. When it cannot tell (no convergence within
its budget, a singular update, a self-loop branch) it says so and the caller solves that outage the plain way.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .network import F_BUS, T_BUS, Network
from .powerflow import (
    MAX_ITERATIONS,
    TOLERANCE,
    _branch_admittances,
    _initial_voltage,
    _Jacobian,
    _newton,
    bus_types,
    make_sbus,
    make_ybus,
)

type Complex = NDArray[np.complex128]
CHORD_ITERATIONS = 20  # past this, the outage is left to the plain Newton-Raphson
ANDERSON_MEMORY = 3


def bridges(n_bus: int, f: NDArray[np.int64], t: NDArray[np.int64], on: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Return (l,) True for each branch in service whose removal disconnects its two end buses.

    ``f``, ``t``: (l,) bus rows of each branch's ends; ``on``: (l,) in service. Parallel branches are never bridges
    and self-loops never are. Tarjan's low-link over one iterative depth-first search: O(buses + branches).
    """
    adjacency: list[list[tuple[int, int]]] = [[] for _ in range(n_bus)]
    for edge in np.flatnonzero(on & (f != t)):
        adjacency[f[edge]].append((int(t[edge]), int(edge)))
        adjacency[t[edge]].append((int(f[edge]), int(edge)))
    order = np.full(n_bus, -1, dtype=np.int64)
    low = np.zeros(n_bus, dtype=np.int64)
    result = np.zeros(len(f), dtype=bool)
    counter = 0
    for root in range(n_bus):
        if order[root] >= 0:
            continue
        order[root] = low[root] = counter
        counter += 1
        stack = [(root, -1, 0)]  # (bus, edge it was entered by, next neighbour position)
        while stack:
            bus, via, position = stack[-1]
            if position < len(adjacency[bus]):
                stack[-1] = (bus, via, position + 1)
                other, edge = adjacency[bus][position]
                if edge == via:
                    continue
                if order[other] < 0:
                    order[other] = low[other] = counter
                    counter += 1
                    stack.append((other, edge, 0))
                else:
                    low[bus] = min(low[bus], order[other])
                continue
            stack.pop()
            if stack:
                parent = stack[-1][0]
                low[parent] = min(low[parent], low[bus])
                if low[bus] > order[parent]:
                    result[via] = True
    return result


class OutageSolver:
    """Exact AC power flows of single-branch outages from one factorization of the base case.

    ``ready`` is False when the base case does not converge or its Jacobian is singular; then nothing is solved here.
    """

    def __init__(self, net: Network, *, tol: float = TOLERANCE, max_iter: int = MAX_ITERATIONS) -> None:
        """Solve the base case (as ``run_power_flow`` does) and factorize its Jacobian at the solution."""
        self.tol = tol
        self.base_mva = net.base_mva
        self.ybus, self.yf, self.yt = make_ybus(net)
        self.sbus = make_sbus(net)
        self.f, self.t = net.rows(net.branch[:, F_BUS]), net.rows(net.branch[:, T_BUS])
        self.stamps = np.stack(_branch_admittances(net), axis=1)  # (l, 4): yff, yft, ytf, ytt
        ref, pv, pq = bus_types(net)
        self.pvpq, self.pq = np.r_[pv, pq], pq
        v0, converged, _ = _newton(
            self.ybus, self.sbus, _initial_voltage(net), ref=ref, pv=pv, pq=pq, tol=tol, max_iter=max_iter
        )
        self.v0 = v0
        self.row_p = np.full(net.n_bus, -1)
        self.row_p[self.pvpq] = np.arange(len(self.pvpq))
        self.row_q = np.full(net.n_bus, -1)
        self.row_q[pq] = len(self.pvpq) + np.arange(len(pq))
        self.ready = bool(converged)
        if self.ready:
            jacobian = _Jacobian(self.ybus, self.pvpq, pq).at(v0, self.ybus @ v0)
            from scipy.sparse.linalg import splu  # noqa: PLC0415 - scipy is heavy: loaded with the first N-1

            try:
                self.lu = splu(jacobian, permc_spec="MMD_AT_PLUS_A")
            except RuntimeError:  # exactly singular
                self.ready = False

    def _woodbury(
        self, branch: int
    ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.float64], Complex] | None:
        """(rows R, Z = J0^-1 E_R (m, r), W (m, r), the 2x2 Ybus change): ``y - W @ y[R]`` solves with the outage's J."""
        f, t = self.f[branch], self.t[branch]
        yff, yft, ytf, ytt = self.stamps[branch]
        d_y = -np.array([[yff, yft], [ytf, ytt]])
        v = self.v0[[f, t]]
        d_i = d_y @ v
        unit = v / np.abs(v)
        ds_dva = 1j * np.diag(v * np.conj(d_i)) - 1j * v[:, None] * np.conj(d_y * v[None, :])
        ds_dvm = v[:, None] * np.conj(d_y * unit[None, :]) + np.diag(np.conj(d_i) * unit)
        block = np.block([[ds_dva.real, ds_dvm.real], [ds_dva.imag, ds_dvm.imag]])  # rows P_f P_t Q_f Q_t
        index = np.r_[self.row_p[[f, t]], self.row_q[[f, t]]]
        keep = index >= 0
        rows, block = index[keep], block[keep][:, keep]
        if not rows.size:
            empty = np.zeros((len(self.pvpq) + len(self.pq), 0))
            return rows, empty, empty, d_y
        unit_columns = np.zeros((len(self.pvpq) + len(self.pq), rows.size))
        unit_columns[rows, np.arange(rows.size)] = 1
        z = self.lu.solve(unit_columns)
        capacitance = np.eye(rows.size) + z[rows] @ block
        if not np.isfinite(z).all() or np.linalg.cond(capacitance) > 1e12:
            return None
        return rows, z, z @ block @ np.linalg.inv(capacitance), d_y

    def solve(self, branch: int) -> Complex | None:
        """Return the bus voltages (n,) with ``branch`` out of service, or None when the plain solve must decide.

        The answer meets the plain Newton-Raphson's test (largest P or Q mismatch below ``tol`` pu).
        """
        f, t = self.f[branch], self.t[branch]
        update = self._woodbury(branch) if f != t else None
        if update is None:
            return None
        rows, z, w, d_y = update
        n_pvpq = len(self.pvpq)
        va, vm = np.angle(self.v0), np.abs(self.v0)
        x = np.r_[va[self.pvpq], vm[self.pq]]
        residuals: list[NDArray[np.float64]] = []
        steps: list[NDArray[np.float64]] = []
        for iteration in range(CHORD_ITERATIONS):
            va[self.pvpq], vm[self.pq] = x[:n_pvpq], x[n_pvpq:]
            v: Complex = vm * np.exp(1j * va)
            current = self.ybus @ v
            current[[f, t]] += d_y @ v[[f, t]]
            mis = v * np.conj(current) - self.sbus
            mismatch = np.concatenate((mis.real[self.pvpq], mis.imag[self.pq]))
            size = np.abs(mismatch).max()
            if size < self.tol:
                return v
            if not np.isfinite(size):
                return None
            # At the base solution the mismatch sits at the outage's rows (up to the base tolerance): no solve.
            y = z @ mismatch[rows] if iteration == 0 else self.lu.solve(mismatch)
            step = -(y - w @ y[rows])
            x = self._anderson(x, step, residuals, steps)
        return None

    @staticmethod
    def _anderson(
        x: NDArray[np.float64],
        step: NDArray[np.float64],
        residuals: list[NDArray[np.float64]],
        steps: list[NDArray[np.float64]],
    ) -> NDArray[np.float64]:
        """Next iterate: the chord step ``x + step`` mixed with the last few (Anderson acceleration, type II)."""
        residuals.append(step)
        steps.append(x + step)
        if len(residuals) > ANDERSON_MEMORY + 1:
            residuals.pop(0)
            steps.pop(0)
        if len(residuals) == 1:
            return x + step
        d_res = np.diff(np.array(residuals), axis=0).T
        d_steps = np.diff(np.array(steps), axis=0).T
        try:
            gamma = np.linalg.solve(d_res.T @ d_res, d_res.T @ step)  # normal equations, at most 3 x 3
        except np.linalg.LinAlgError:  # repeated residuals: take the plain chord step
            return x + step
        mixed: NDArray[np.float64] = x + step - d_steps @ gamma
        return mixed

    def flows(self, branch: int, v: Complex) -> tuple[Complex, Complex]:
        """(Sf, St) per branch (l,), MVA, with ``branch`` out of service (0 there)."""
        sf = v[self.f] * np.conj(self.yf @ v) * self.base_mva
        st = v[self.t] * np.conj(self.yt @ v) * self.base_mva
        sf[branch] = st[branch] = 0
        return sf, st
