"""The grid toolkit: the agent tool contracts over a twin of the home or a MATPOWER network.

Public entry points (pure, no Home Assistant): :func:`load_matpower` reads MATPOWER version 2 text, its JSON form, or
a path; :func:`run_power_flow` solves it (AC Newton-Raphson or DC) in MATPOWER's conventions; :func:`run_contingency`
runs N-1 over branch outages with islanding detection; :func:`optimize_dispatch` is the battery/DER dispatch MILP;
:mod:`.audit` is the hash-chained audit log's core.
"""

from .contingency import ContingencyResult, run_contingency
from .dispatch import Battery, DispatchProblem, DispatchResult, Objective, optimize_dispatch
from .network import Network, NetworkError, load_matpower
from .powerflow import MethodNotAvailable, PowerFlowResult, run_power_flow

__all__ = [
    "Battery",
    "ContingencyResult",
    "DispatchProblem",
    "DispatchResult",
    "MethodNotAvailable",
    "Network",
    "NetworkError",
    "Objective",
    "PowerFlowResult",
    "load_matpower",
    "optimize_dispatch",
    "run_contingency",
    "run_power_flow",
]
