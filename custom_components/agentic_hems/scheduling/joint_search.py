"""The joint MILP without a solver: a branch and bound over the runs' starts, with at most one energy load after them.

The runs are placed one at a time, in the caller's order; a node is the room the placed runs leave. The lower bound
of placing its run at a start adds to their cost each later run's cheapest start that fits that room alone and the
energy load's cheapest fill of it (less room never costs less, to the fill's tie tolerance), raised by what the run
there takes from that fill (:meth:`_Fill.costs`). Given prices on the limit (the LP relaxation's
duals), a Lagrangian bound of the same node is taken too, and the higher one prunes. A first pass finds the least
cost C, taking each run's cheaper starts first; a second pass walks the starts in ascending order and returns the
first schedule costing at most C + slack: the canonical ties of :func:`~.joint._solve` (each run in order as early
as it can be). Both passes give up after ``MAX_WORK`` units of work (:class:`SearchLimit`), and HiGHS solves the
MILP instead: a node counts one unit per run still to place, and one (its runs' fits and its energy load's fills).

A leaf is costed as the MILP path costs a plan: the runs' window sums added in order, then the energy load filled by
:func:`~.energy.cheapest_fill` in the room they leave; so the search and the MILP path pick the same schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..prices.curve import FloatArray, PriceCurve
from .contiguous import run_power
from .energy import fill_in_order
from .joint_model import ChargeLoad, JointLoad, RunLoad, clear_starts
from .windows import REL_EPS, BoolArray, IntArray, slot_hours

# Work (see the module docstring) before HiGHS takes over; a unit costs about 20-40 us of CPU here. On 300 random
# two-day homes with four runs and an EV the slowest searches took 0.25-0.35 s, where HiGHS took 1.3 s; a home with six
# runs where the search gives up pays about 0.65 s more than HiGHS alone (0.9 s).
MAX_WORK = 30_000


class SearchLimit(Exception):
    """The search spent its work limit (``MAX_WORK`` by default) without an answer."""


def search_applies(fitting: list[JointLoad]) -> bool:
    """Return True when the loads are runs followed by at most one energy load, the shape the search handles."""
    charges = [number for number, load in enumerate(fitting) if isinstance(load, ChargeLoad)]
    return not charges or charges == [len(fitting) - 1]


def search_schedule(
    curve: PriceCurve,
    fitting: list[JointLoad],
    keep: list[BoolArray],
    headroom: FloatArray,
    *,
    slack: float,
    upper: float,
    limit_price: FloatArray | None = None,
    max_work: int | None = None,
) -> list[FloatArray] | None:
    """Per-load kW arrays (n,) of the canonical least-cost schedule among the kept starts; None when none fits.

    Args:
        curve: the prices.
        fitting: runs, then at most one energy load (:func:`search_applies`).
        keep: a mask over each load's starts (runs) or slots (ignored for the energy load).
        headroom: kW left for the loads per slot (n,).
        slack: tie tolerance (currency): schedules within it of the least cost are equal, the earliest wins.
        upper: the cost of a known schedule (``math.inf`` when none is known); only cheaper ones are searched.
        limit_price: (n,) prices >= 0 (currency per kW) on each slot's limit, such as the LP relaxation's duals
            (:class:`~.joint_model.LpBound`); they add a Lagrangian bound to each node (the better one prunes).
        max_work: the work (both passes; see the module docstring) before giving up; ``MAX_WORK`` when None.

    Raises:
        SearchLimit: more than ``max_work`` of work, or no schedule found within ``upper`` (which a known schedule
            contradicts; HiGHS decides then).

    """
    search = _Search.of(curve, fitting, keep, headroom, slack)
    search.max_work = MAX_WORK if max_work is None else max_work
    if limit_price is not None:
        search.lagrange = _Lagrange.of(search, limit_price)
    least = search.least(upper)
    if least is None:
        if np.isfinite(upper):
            raise SearchLimit
        return None
    combo = search.first(least + slack)
    if combo is None:  # the least schedule is within the budget: only float noise gets here
        raise SearchLimit
    return search.powers(combo)


@dataclass
class _Search:
    curve: PriceCurve
    runs: list[RunLoad]
    starts: list[IntArray]  # each run's kept starts, ascending
    costs: list[FloatArray]  # their costs (currency)
    charge: ChargeLoad | None
    headroom: FloatArray
    room: FloatArray  # kW the runs may draw per slot: the headroom, none where the base load fills it
    slack: float
    filling: _Fill | None  # the energy load, filled by price as cheapest_fill does
    lagrange: _Lagrange | None = None
    max_work: int = MAX_WORK
    work: int = 0
    best: float = np.inf
    found: bool = False
    floors: dict[tuple[int, ...], float] = field(default_factory=dict)  # the first pass's bound below each node
    seen: dict[tuple[int, ...], tuple[IntArray, FloatArray] | None] = field(default_factory=dict)  # its candidates
    chosen: list[int] = field(default_factory=list)

    @classmethod
    def of(
        cls, curve: PriceCurve, fitting: list[JointLoad], keep: list[BoolArray], headroom: FloatArray, slack: float
    ) -> _Search:
        runs = [load for load in fitting if isinstance(load, RunLoad)]
        masks = [mask for load, mask in zip(fitting, keep, strict=True) if isinstance(load, RunLoad)]
        charge = fitting[-1] if isinstance(fitting[-1], ChargeLoad) else None
        filling = None
        if charge is not None:
            filling = _Fill.of(charge, headroom, charge.order, curve.prices[charge.slots], slot_hours(curve))
        return cls(
            curve,
            runs,
            [load.starts[mask] for load, mask in zip(runs, masks, strict=True)],
            [load.cost[mask] for load, mask in zip(runs, masks, strict=True)],
            charge,
            headroom,
            np.maximum(headroom, 0.0),
            slack,
            filling,
        )

    def least(self, upper: float) -> float | None:
        """Return the least cost of a schedule costing at most ``upper`` (+ the margin); None when there is none."""
        self.best = upper + self._margin(upper) if np.isfinite(upper) else np.inf
        self._least(_Node.root(len(self.curve)))
        return self.best if self.found else None

    def first(self, budget: float) -> list[int] | None:
        """Return the first schedule (ascending starts, run by run) within ``budget``: an index per run's starts."""
        self.chosen = []
        return self.chosen if self._first(_Node.root(len(self.curve)), budget) else None

    def powers(self, combo: list[int]) -> list[FloatArray]:
        """Per-load kW (n,) of the runs at ``combo`` and the energy load filled in the room they leave."""
        n = len(self.curve)
        node = _Node.root(n)
        for index in combo:
            node = self._child(node, index)  # the draw the search costed
        powers = [
            run_power(n, int(starts[index]), run.options.slots, run.spec.power_kw)
            for run, starts, index in zip(self.runs, self.starts, combo, strict=True)
        ]
        if self.filling is not None:
            placed = self.filling.placed(node.drawn)
            assert placed is not None  # the search placed it
            power = np.zeros(n)
            power[self.filling.slots] = placed / self.filling.hours
            powers.append(power)
        return powers

    def _least(self, node: _Node) -> float:
        """Depth-first, cheaper starts first; lower ``best`` to each clearly cheaper leaf (``found``).

        Only a clearly lower bound is followed, so ties are not explored; ``best`` ends within the energy fill's tie
        tolerance (and float noise) of the least cost, which the second pass's slack covers. Return a lower bound on
        every schedule below ``node`` (inf: none): the least of its leaves' costs and its pruned children's bounds,
        kept in ``floors`` for the second pass.
        """
        self._visit(node)
        if node.depth == len(self.runs):
            cost = self._leaf(node)
            if cost is not None and cost < self._improving():
                self.best, self.found = cost, True
            return np.inf if cost is None else cost
        floor = np.inf
        candidates = self._candidates(node)
        self.seen[node.path] = candidates
        if candidates is not None:
            ok, bounds = candidates
            for position in bounds.argsort(kind="stable"):
                if bounds[position] >= self._improving():  # so are the rest
                    floor = min(floor, float(bounds[position]))
                    break
                floor = min(floor, self._least(self._child(node, int(ok[position]))))
        self.floors[node.path] = floor
        return floor

    def _first(self, node: _Node, budget: float) -> bool:
        """Depth-first in ascending starts; record in ``chosen`` the first leaf within ``budget``.

        A child whose first-pass bound (``floors``) exceeds the budget is skipped: no schedule below it is within.
        A node the first pass visited keeps its candidates (``seen``).
        """
        self._visit(node)
        if node.depth == len(self.runs):
            cost = self._leaf(node)
            return cost is not None and cost <= budget
        candidates = self.seen[node.path] if node.path in self.seen else self._candidates(node)
        if candidates is None:
            return False
        ok, bounds = candidates
        limit = budget + self._margin(budget)
        for position in (bounds <= limit).nonzero()[0]:
            index = int(ok[position])
            if self.floors.get((*node.path, index), -np.inf) > limit:
                continue
            self.chosen.append(index)
            if self._first(self._child(node, index), budget):
                return True
            self.chosen.pop()
        return False

    def _candidates(self, node: _Node) -> tuple[IntArray, FloatArray] | None:
        """Return the node's run's starts that fit beside its draw and their lower bounds.

        None when a run cannot fit; every bound inf when the energy load cannot.
        """
        fits = [self._fits(number, node.drawn) for number in range(node.depth, len(self.runs))]
        if not all(mask.any() for mask in fits):
            return None
        depth = node.depth
        rest = sum(float(costs[mask].min()) for costs, mask in zip(self.costs[depth + 1 :], fits[1:], strict=True))
        ok = fits[0].nonzero()[0]
        bounds = node.cost + self.costs[depth][ok] + rest
        if self.filling is not None:
            run = self.runs[depth]
            bounds += self.filling.costs(node.drawn, self.starts[depth][ok], run.options.slots, run.spec.power_kw)
        if self.lagrange is not None and bounds.size and bounds.min() < self._improving():  # else all are pruned
            bounds = np.maximum(bounds, self.lagrange.bounds(self, node, fits, ok))
        return ok, bounds

    def _child(self, node: _Node, index: int) -> _Node:
        run, depth = self.runs[node.depth], node.depth
        start = int(self.starts[depth][index])
        drawn = node.drawn.copy()
        drawn[start : start + run.options.slots] += run.spec.power_kw
        priced = node.priced + (float(self.lagrange.costs[depth][index]) if self.lagrange is not None else 0.0)
        return _Node(depth + 1, drawn, node.cost + float(self.costs[depth][index]), priced, (*node.path, index))

    def _fits(self, number: int, drawn: FloatArray) -> BoolArray:
        """Mask of run ``number``'s starts whose run keeps ``drawn`` within :attr:`room`."""
        run = self.runs[number]
        return clear_starts(self.starts[number], run.options.slots, drawn + run.spec.power_kw > self.room)

    def _leaf(self, node: _Node) -> float | None:
        if self.filling is None:
            return node.cost
        filled = self.filling.cost(node.drawn)
        return None if filled is None else node.cost + filled

    def _improving(self) -> float:
        """Return the bound a node or leaf must stay below to be clearly cheaper than ``best`` (inf: none yet)."""
        return self.best - _noise(self.best) if np.isfinite(self.best) else np.inf

    def _margin(self, budget: float) -> float:
        """Return the allowance on a bound: the energy fill's ties and float noise (a bound may exceed a leaf so)."""
        return self.slack + _noise(budget)

    def _visit(self, node: _Node) -> None:
        """Count the node's work (its run fits and fills: one per run still to place, and one) against the limit."""
        self.work += 1 + len(self.runs) - node.depth
        if self.work > self.max_work:
            raise SearchLimit


def _noise(value: float) -> float:
    """Float noise of sums near ``value`` (currency)."""
    return 1e-9 * abs(value) + 1e-12


@dataclass(frozen=True)
class _Node:
    """The first ``depth`` runs placed: their draw (kW per slot), cost and priced cost (:class:`_Lagrange`)."""

    depth: int
    drawn: FloatArray
    cost: float
    priced: float
    path: tuple[int, ...]  # each placed run's index into its starts

    @classmethod
    def root(cls, n: int) -> _Node:
        return cls(0, np.zeros(n), 0.0, 0.0, ())


@dataclass(frozen=True)
class _Fill:
    """The energy load filled in one order of its slots beside the runs' draw, costed at ``price`` per kWh."""

    slots: IntArray  # the load's slots, in the order they fill
    caps_kw: FloatArray  # the most each takes alone
    headroom: FloatArray  # their headroom (kW)
    price: FloatArray  # currency per kWh
    energy_kwh: float
    hours: float

    @classmethod
    def of(cls, charge: ChargeLoad, headroom: FloatArray, order: IntArray, price: FloatArray, hours: float) -> _Fill:
        """``order``: positions in ``charge.slots``; ``price``: per kWh in each of those slots (ascending slots)."""
        slots = charge.slots[order]
        return cls(slots, charge.caps_kw[order], headroom[slots], price[order], charge.energy_kwh, hours)

    def placed(self, drawn: FloatArray) -> FloatArray | None:
        """Return the kWh in each slot (fill order) beside ``drawn`` (kW per slot, (n,)); None when it cannot fit."""
        caps = np.minimum(self.caps_kw, np.maximum(self.headroom - drawn[self.slots], 0.0))
        return fill_in_order(caps * self.hours, self.energy_kwh)

    def cost(self, drawn: FloatArray) -> float | None:
        """Return the cost of :meth:`placed` (currency); None when it cannot fit."""
        placed = self.placed(drawn)
        return None if placed is None else float(self.price @ placed)

    def costs(self, drawn: FloatArray, starts: IntArray, slots: int, power_kw: float) -> FloatArray:
        """Return a lower bound on :meth:`cost` with a run of ``slots`` slots at ``power_kw`` added at each start.

        One value per start, (k,), all inf when the load does not fit beside ``drawn`` alone. The run lowers the
        caps of some slots the fill uses; that energy then goes to slots at least as dear as the fill's last one, so
        each kWh lost in slot t costs at least (price of the last - price of t) more, to the fill's tie tolerance.
        """
        free = self.headroom - drawn[self.slots]
        caps = np.minimum(self.caps_kw, np.maximum(free, 0.0)) * self.hours
        cumulative = caps.cumsum()
        last = int(cumulative.searchsorted(self.energy_kwh * (1 - REL_EPS)))  # as fill_in_order fills
        if last == caps.size:
            return np.full(starts.size, np.inf)
        rest = self.energy_kwh - (float(cumulative[last - 1]) if last else 0.0)
        cost = float(self.price[:last] @ caps[:last]) + float(self.price[last]) * min(rest, float(caps[last]))
        used = last + 1
        lower = np.minimum(self.caps_kw[:used], np.maximum(free[:used] - power_kw, 0.0)) * self.hours
        rise = np.zeros(drawn.size + 1)
        rise[self.slots[:used] + 1] = (caps[:used] - lower) * (self.price[last] - self.price[:used])
        rises = rise.cumsum()
        bounds: FloatArray = cost + (rises[starts + slots] - rises[starts])
        return bounds


@dataclass(frozen=True)
class _Lagrange:
    """The limit priced at ``lam`` (currency per kW per slot, >= 0) instead of enforced: a second lower bound.

    A schedule within the limit costs at least its cost plus ``lam . (draw - room)``, whose least over each load on
    its own is a bound: the runs' costs plus ``lam`` over their slots, the energy load filled in the order of its
    slots' price plus ``lam`` per kWh, less ``lam . room``.
    """

    costs: list[FloatArray]  # each run's kept starts: cost + lam over the run's slots x its kW
    filling: _Fill | None  # the energy load at price + lam / hours per kWh, cheapest first
    offset: float  # lam . room

    @classmethod
    def of(cls, search: _Search, lam: FloatArray) -> _Lagrange:
        sums = np.concatenate(([0.0], np.cumsum(lam)))
        costs = [
            cost + run.spec.power_kw * (sums[starts + run.options.slots] - sums[starts])
            for run, starts, cost in zip(search.runs, search.starts, search.costs, strict=True)
        ]
        filling = None
        if search.charge is not None:
            hours = slot_hours(search.curve)
            slots = search.charge.slots
            unit = search.curve.prices[slots] + lam[slots] / hours
            filling = _Fill.of(search.charge, search.headroom, np.argsort(unit, kind="stable"), unit, hours)
        return cls(costs, filling, float(lam @ search.room))

    def bounds(self, search: _Search, node: _Node, fits: list[BoolArray], ok: IntArray) -> FloatArray:
        """Each start ``ok`` of the node's run: the Lagrangian bound of the schedules that place it there."""
        depth = node.depth
        rest = sum(float(costs[mask].min()) for costs, mask in zip(self.costs[depth + 1 :], fits[1:], strict=True))
        bounds = node.priced + self.costs[depth][ok] + rest - self.offset
        if self.filling is not None:
            run = search.runs[depth]
            bounds += self.filling.costs(node.drawn, search.starts[depth][ok], run.options.slots, run.spec.power_kw)
        return bounds
