"""Deterministic planners that place flexible loads into the cheapest slots of a :class:`PriceCurve`.

- :func:`plan_contiguous`: one uninterrupted run (dishwasher, washing machine, heat-pump block), by window sums.
- :func:`plan_energy`: an amount of energy in any slots at up to a maximum power (EV), greedy on sorted prices.
- :func:`plan_joint`: several loads under the household power limit, a MILP (HiGHS through highspy).

Every plan's ``power_kw`` array is aligned with the whole input curve. Nothing here imports Home Assistant, and
highspy is imported only inside :func:`plan_joint`'s solves.
"""

from .contiguous import plan_contiguous
from .energy import plan_energy
from .joint import plan_joint
from .plan import LoadSpec, Plan, Reason
from .windows import window_sums

__all__ = ["LoadSpec", "Plan", "Reason", "plan_contiguous", "plan_energy", "plan_joint", "window_sums"]
