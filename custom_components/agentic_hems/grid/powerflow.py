"""AC (Newton-Raphson, polar, sparse Jacobian) and DC power flow on MATPOWER data (the ``run_power_flow`` tool).

Conventions follow MATPOWER: ``makeYbus`` (TAP = 0 means ratio 1, SHIFT in degrees, line charging split in halves,
bus shunts Gs/Bs in MW/MVAr at 1 pu), ``makeSbus`` (generators in service), ``bustypes`` (a PV bus without a generator
in service is PQ), ``newtonpf`` and ``makeBdc``. Angles keep the case's own slack reference. Generator Q limits are
not enforced (as in the reference results).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .network import (
    BR_B,
    BR_R,
    BR_STATUS,
    BR_X,
    BS,
    BUS_TYPE,
    F_BUS,
    GEN_BUS,
    GEN_STATUS,
    GS,
    PD,
    PG,
    PQ,
    PV,
    QD,
    QG,
    REF,
    SHIFT,
    T_BUS,
    TAP,
    VA,
    VG,
    VM,
    Network,
)

type Vector = NDArray[np.float64]
TOLERANCE = 1e-10  # pu mismatch
MAX_ITERATIONS = 30

if TYPE_CHECKING:
    import scipy.sparse as sp


class MethodNotAvailable(ValueError):
    """The requested power-flow method is not implemented (``pinn``): never a silent fallback."""


@dataclass
class PowerFlowResult:
    """A solved (or not converged) power flow, in the file's bus and branch order.

    Attributes:
        method: "ac" or "dc".
        converged: False is a result, not an error.
        iterations: Newton iterations (0 for DC).
        vm_pu: (n,) voltage magnitudes (1.0 everywhere for DC).
        va_deg: (n,) angles in degrees, with the case's slack reference.
        pf_mw, qf_mvar, pt_mw, qt_mvar: (l,) branch flows at the from and to ends, MW and MVAr (0 for branches out
            of service). DC has no reactive flows (0) and no losses (Pt = -Pf).
        losses_mw: total active losses, the sum of Pf + Pt.
        p_inj_mw, q_inj_mvar: (n,) net injections at each bus (generation minus load).

    """

    method: str
    converged: bool
    iterations: int
    vm_pu: Vector
    va_deg: Vector
    pf_mw: Vector
    qf_mvar: Vector
    pt_mw: Vector
    qt_mvar: Vector
    losses_mw: float
    p_inj_mw: Vector
    q_inj_mvar: Vector


def _branch_admittances(net: Network) -> tuple[NDArray[np.complex128], ...]:
    br = net.branch
    on = br[:, BR_STATUS] > 0
    ys = np.where(on, 1 / (br[:, BR_R] + 1j * br[:, BR_X] + (~on)), 0)  # (~on) avoids 1/0 for off branches
    bc = np.where(on, br[:, BR_B], 0)
    tap = np.where(br[:, TAP] != 0, br[:, TAP], 1.0) * np.exp(1j * np.pi / 180 * br[:, SHIFT])
    ytt = ys + 1j * bc / 2
    yff = ytt / (tap * np.conj(tap))
    yft = -ys / np.conj(tap)
    ytf = -ys / tap
    return yff, yft, ytf, ytt


def make_ybus(net: Network) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    """(Ybus (n, n), Yf (l, n), Yt (l, n)) in per unit: MATPOWER's ``makeYbus``."""
    import scipy.sparse as sp  # noqa: PLC0415 - scipy is heavy: loaded by the first power flow, in the executor

    n, nl = net.n_bus, net.n_branch
    f, t = net.rows(net.branch[:, F_BUS]), net.rows(net.branch[:, T_BUS])
    yff, yft, ytf, ytt = _branch_admittances(net)
    lines = np.arange(nl)
    yf = sp.csr_matrix((np.r_[yff, yft], (np.r_[lines, lines], np.r_[f, t])), shape=(nl, n))
    yt = sp.csr_matrix((np.r_[ytf, ytt], (np.r_[lines, lines], np.r_[f, t])), shape=(nl, n))
    cf = sp.csr_matrix((np.ones(nl), (lines, f)), shape=(nl, n))
    ct = sp.csr_matrix((np.ones(nl), (lines, t)), shape=(nl, n))
    ysh = (net.bus[:, GS] + 1j * net.bus[:, BS]) / net.base_mva
    ybus = (cf.T @ yf + ct.T @ yt + sp.diags(ysh)).tocsr()
    return ybus, yf, yt


def bus_types(net: Network) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """(ref, pv, pq) bus rows: a PV (or slack) bus needs a generator in service, else it is PQ (``bustypes``)."""
    on = net.gen[:, GEN_STATUS] > 0
    has_gen = np.zeros(net.n_bus, dtype=bool)
    has_gen[net.rows(net.gen[on, GEN_BUS])] = True
    kind = net.bus[:, BUS_TYPE]
    ref = np.flatnonzero(kind == REF)
    pv = np.flatnonzero((kind == PV) & has_gen)
    pq = np.flatnonzero((kind == PQ) | ((kind == PV) & ~has_gen))
    return ref, pv, pq


def make_sbus(net: Network) -> NDArray[np.complex128]:
    """Net complex injection per bus, per unit (``makeSbus``)."""
    on = net.gen[:, GEN_STATUS] > 0
    sg = np.zeros(net.n_bus, dtype=np.complex128)
    np.add.at(sg, net.rows(net.gen[on, GEN_BUS]), net.gen[on, PG] + 1j * net.gen[on, QG])
    return (sg - (net.bus[:, PD] + 1j * net.bus[:, QD])) / net.base_mva


def _initial_voltage(net: Network) -> NDArray[np.complex128]:
    v0: NDArray[np.complex128] = net.bus[:, VM] * np.exp(1j * np.pi / 180 * net.bus[:, VA])
    on = net.gen[:, GEN_STATUS] > 0
    rows = net.rows(net.gen[on, GEN_BUS])
    ref, pv, _ = bus_types(net)
    controlled = np.isin(rows, np.r_[ref, pv])
    v0[rows[controlled]] = net.gen[on, VG][controlled] * v0[rows[controlled]] / np.abs(v0[rows[controlled]])
    return v0


class _Jacobian:
    """The Newton Jacobian built element-wise on Ybus's sparsity pattern.

    It is ``dSbus_dV`` in polar form, without sparse-matrix products: rows are P mismatches at PV and PQ buses then
    Q mismatches at PQ buses, columns are angles at PV and PQ buses then magnitudes at PQ buses.
    """

    def __init__(self, ybus: sp.csr_matrix, pvpq: NDArray[np.int64], pq: NDArray[np.int64]) -> None:
        n = ybus.shape[0]
        coo = ybus.tocoo()
        missing = np.setdiff1d(np.arange(n), coo.row[coo.row == coo.col])  # diagonals Ybus does not store
        self.rows = np.r_[coo.row, missing].astype(np.int64)
        self.cols = np.r_[coo.col, missing].astype(np.int64)
        self.y = np.r_[coo.data, np.zeros(len(missing))].astype(np.complex128)
        self.diag = np.flatnonzero(self.rows == self.cols)
        self.diag_bus = self.rows[self.diag]
        n_pvpq = len(pvpq)
        self.shape = (n_pvpq + len(pq),) * 2
        angle = np.full(n, -1)
        angle[pvpq] = np.arange(n_pvpq)
        mag = np.full(n, -1)
        mag[pq] = n_pvpq + np.arange(len(pq))
        r_p, r_q, c_a, c_m = angle[self.rows], mag[self.rows], angle[self.cols], mag[self.cols]
        self.m11, self.m12 = (r_p >= 0) & (c_a >= 0), (r_p >= 0) & (c_m >= 0)
        self.m21, self.m22 = (r_q >= 0) & (c_a >= 0), (r_q >= 0) & (c_m >= 0)
        self.index = (
            np.r_[r_p[self.m11], r_p[self.m12], r_q[self.m21], r_q[self.m22]],
            np.r_[c_a[self.m11], c_m[self.m12], c_a[self.m21], c_m[self.m22]],
        )

    def at(self, v: NDArray[np.complex128], ibus: NDArray[np.complex128]) -> sp.csc_matrix:
        """Return the Jacobian at voltages ``v`` with bus currents ``ibus``."""
        import scipy.sparse as sp  # noqa: PLC0415 - lazy, as in make_ybus

        vr, yv = v[self.rows], self.y * v[self.cols]
        dva = -1j * vr * np.conj(yv)
        dvm = vr * np.conj(yv / np.abs(v[self.cols]))
        d = self.diag_bus
        dva[self.diag] += 1j * v[d] * np.conj(ibus[d])
        dvm[self.diag] += np.conj(ibus[d]) * v[d] / np.abs(v[d])
        data = np.r_[dva.real[self.m11], dvm.real[self.m12], dva.imag[self.m21], dvm.imag[self.m22]]
        return sp.csc_matrix((data, self.index), shape=self.shape)


def _newton(
    ybus: sp.csr_matrix,
    sbus: NDArray[np.complex128],
    v0: NDArray[np.complex128],
    *,
    ref: NDArray[np.int64],
    pv: NDArray[np.int64],
    pq: NDArray[np.int64],
    tol: float,
    max_iter: int,
) -> tuple[NDArray[np.complex128], bool, int]:
    from scipy.sparse.linalg import spsolve  # noqa: PLC0415 - lazy, as in make_ybus

    v = v0.copy()
    va, vm = np.angle(v), np.abs(v)
    pvpq = np.r_[pv, pq]
    n_pvpq = len(pvpq)
    jacobian = _Jacobian(ybus, pvpq, pq)

    def mismatch(v: NDArray[np.complex128], ibus: NDArray[np.complex128]) -> Vector:
        mis = v * np.conj(ibus) - sbus
        out: Vector = np.r_[mis[pvpq].real, mis[pq].imag]
        return out

    ibus = ybus @ v
    f = mismatch(v, ibus)
    if np.linalg.norm(f, np.inf) < tol:
        return v, True, 0
    for iteration in range(1, max_iter + 1):
        dx = -spsolve(jacobian.at(v, ibus), f)
        if not np.all(np.isfinite(dx)):
            return v, False, iteration
        va[pvpq] += dx[:n_pvpq]
        vm[pq] += dx[n_pvpq:]
        v = vm * np.exp(1j * va)
        ibus = ybus @ v
        f = mismatch(v, ibus)
        if np.linalg.norm(f, np.inf) < tol:
            return v, True, iteration
    return v, False, max_iter


def _ac(net: Network, tol: float, max_iter: int) -> PowerFlowResult:
    ybus, yf, yt = make_ybus(net)
    ref, pv, pq = bus_types(net)
    v, converged, iterations = _newton(
        ybus, make_sbus(net), _initial_voltage(net), ref=ref, pv=pv, pq=pq, tol=tol, max_iter=max_iter
    )
    f, t = net.rows(net.branch[:, F_BUS]), net.rows(net.branch[:, T_BUS])
    sf = v[f] * np.conj(yf @ v) * net.base_mva
    st = v[t] * np.conj(yt @ v) * net.base_mva
    sinj = v * np.conj(ybus @ v) * net.base_mva
    return PowerFlowResult(
        "ac",
        converged,
        iterations,
        np.abs(v),
        np.degrees(np.angle(v)),
        sf.real,
        sf.imag,
        st.real,
        st.imag,
        float((sf.real + st.real).sum()),
        sinj.real,
        sinj.imag,
    )


def make_bdc(net: Network) -> tuple[sp.csr_matrix, sp.csr_matrix, Vector, Vector]:
    """(Bbus (n, n), Bf (l, n), Pbusinj (n,), Pfinj (l,)) for the DC model (``makeBdc``), per unit."""
    import scipy.sparse as sp  # noqa: PLC0415 - lazy, as in make_ybus

    n, nl = net.n_bus, net.n_branch
    br = net.branch
    on = br[:, BR_STATUS] > 0
    tap = np.where(br[:, TAP] != 0, br[:, TAP], 1.0)
    b = np.where(on, 1 / (br[:, BR_X] * tap + (~on)), 0)
    f, t = net.rows(br[:, F_BUS]), net.rows(br[:, T_BUS])
    lines = np.arange(nl)
    bf = sp.csr_matrix((np.r_[b, -b], (np.r_[lines, lines], np.r_[f, t])), shape=(nl, n))
    cft = sp.csr_matrix((np.r_[np.ones(nl), -np.ones(nl)], (np.r_[lines, lines], np.r_[f, t])), shape=(nl, n))
    bbus = (cft.T @ bf).tocsr()
    pfinj = b * (-np.radians(br[:, SHIFT]))
    return bbus, bf, cft.T @ pfinj, pfinj


def _dc(net: Network) -> PowerFlowResult:
    from scipy.sparse.linalg import spsolve  # noqa: PLC0415 - lazy, as in make_ybus

    bbus, bf, pbusinj, pfinj = make_bdc(net)
    ref, pv, pq = bus_types(net)
    pvpq = np.r_[pv, pq]
    va = np.radians(net.bus[:, VA])
    p = make_sbus(net).real - pbusinj - net.bus[:, GS] / net.base_mva
    rhs = p[pvpq] - bbus[pvpq][:, ref] @ va[ref]
    va[pvpq] = spsolve(bbus[pvpq][:, pvpq].tocsc(), rhs)
    pf = (bf @ va + pfinj) * net.base_mva
    pinj = (bbus @ va + pbusinj + net.bus[:, GS] / net.base_mva) * net.base_mva
    zeros = np.zeros(net.n_branch)
    return PowerFlowResult(
        "dc",
        bool(np.all(np.isfinite(va))),
        0,
        np.ones(net.n_bus),
        np.degrees(va),
        pf,
        zeros,
        -pf,
        zeros.copy(),
        0.0,
        pinj,
        np.zeros(net.n_bus),
    )


def run_power_flow(
    network: Network,
    method: str = "ac",
    *,
    tol: float = TOLERANCE,
    max_iter: int = MAX_ITERATIONS,
) -> PowerFlowResult:
    """Solve ``network`` (MATPOWER conventions; see the module docstring) with ``method`` ``ac`` or ``dc``.

    Raises:
        MethodNotAvailable: ``pinn`` or any other method than ``ac`` and ``dc``.

    """
    if method == "ac":
        return _ac(network, tol, max_iter)
    if method == "dc":
        return _dc(network)
    raise MethodNotAvailable(f"power-flow method {method!r} is not available; use 'ac' or 'dc'")
