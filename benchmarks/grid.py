"""Grid benchmark (issue 5): ours against PYPOWER and pandapower, measured side by side in the same run.

Run: ``benchmarks/grid`` (it builds ``.venv-bench`` with pandapower 3.5.6 (with numba) and PYPOWER 5.1.21 on the integration's
numpy and scipy; the integration's own environment never gets them). Medians of wall time (``time.perf_counter``):

- AC power flow on case118: ours vs PYPOWER ``runpf`` vs pandapower ``runpp``; target: at least as fast as PYPOWER;
- N-1 AC over all 186 branch outages of case118: ours (islanded outages reported, not solved) vs a pandapower loop
  (the same outages; islanded ones counted as failures); target <= 0.5 s;
- a 96-step battery dispatch MILP; target <= 50 ms.

Before timing, ours and PYPOWER are checked to agree on case118 (Vm to 1e-6 pu, Va to 1e-4 degrees).
Exit status 1 when a target is missed. The integration's package is loaded without its Home Assistant shell.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
import sys
import types
import warnings

import numpy as np

from timing import median_s  # benchmarks/ is the script's folder, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "custom_components" / "agentic_hems"
CASE = ROOT / "tests" / "fixtures" / "grid" / "case118.m"


def _load_grid() -> types.ModuleType:
    """``custom_components.agentic_hems.grid`` without the integration's __init__ (which needs Home Assistant)."""
    for name, path in (("custom_components", ROOT / "custom_components"), ("custom_components.agentic_hems", PACKAGE)):
        module = types.ModuleType(name)
        module.__path__ = [str(path)]
        sys.modules[name] = module
    spec = importlib.util.spec_from_file_location(
        "custom_components.agentic_hems.grid", PACKAGE / "grid" / "__init__.py", submodule_search_locations=[str(PACKAGE / "grid")]
    )
    assert spec and spec.loader
    grid = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = grid
    spec.loader.exec_module(grid)
    return grid


def main() -> int:
    warnings.filterwarnings("ignore")
    grid = _load_grid()
    from pypower.api import ppoption, runpf  # noqa: PLC0415
    import pandapower as pp  # noqa: PLC0415
    from pandapower.converter.pypower import from_ppc  # noqa: PLC0415

    net = grid.load_matpower(CASE)
    ppc = {"version": "2", "baseMVA": net.base_mva, "bus": net.bus.copy(), "gen": net.gen.copy(),
           "branch": net.branch.copy()}
    opt = ppoption(VERBOSE=0, OUT_ALL=0, PF_TOL=1e-10)
    ours = grid.run_power_flow(net, "ac")
    theirs, ok = runpf(ppc, opt)
    assert ok and ours.converged
    assert np.allclose(ours.vm_pu, theirs["bus"][:, 7], atol=1e-6) and np.allclose(ours.va_deg, theirs["bus"][:, 8], atol=1e-4)
    pp_net = from_ppc(ppc, f_hz=60, validate_conversion=False)

    rows = []
    t_ours = median_s(lambda: grid.run_power_flow(net, "ac"), 50)
    t_pypower = median_s(lambda: runpf(ppc, opt), 50)
    t_pandapower = median_s(lambda: pp.runpp(pp_net, tolerance_mva=1e-8, trafo_model="pi"), 20)
    rows.append(("AC power flow, case118", t_ours, [("PYPOWER runpf", t_pypower), ("pandapower runpp", t_pandapower)],
                 t_ours <= t_pypower, "<= PYPOWER"))

    t_n1 = median_s(lambda: grid.run_contingency(net, method="ac"), 5, warmup=1)
    n1 = grid.run_contingency(net, method="ac")
    islanded = sum(o.islanded for o in n1.outages)

    def pandapower_n1() -> None:
        for index in pp_net.line.index:
            pp_net.line.at[index, "in_service"] = False
            try:
                pp.runpp(pp_net, tolerance_mva=1e-8, trafo_model="pi")
            except Exception:  # noqa: BLE001 - an islanded outage fails in pandapower
                pass
            pp_net.line.at[index, "in_service"] = True
        for index in pp_net.trafo.index:
            pp_net.trafo.at[index, "in_service"] = False
            try:
                pp.runpp(pp_net, tolerance_mva=1e-8, trafo_model="pi")
            except Exception:  # noqa: BLE001
                pass
            pp_net.trafo.at[index, "in_service"] = True

    t_pp_n1 = median_s(pandapower_n1, 1, warmup=0)
    rows.append((f"N-1 AC, case118 ({len(n1.outages)} outages, {islanded} islanded)", t_n1,
                 [("pandapower loop", t_pp_n1)], t_n1 <= 0.5, "<= 0.5 s"))

    rng = np.random.default_rng(7)
    prices = np.round(0.1 + 0.08 * np.sin(np.arange(96) / 96 * 4 * np.pi) + rng.normal(0, 0.01, 96), 4)
    load = np.round(0.8 + 0.6 * (np.arange(96) >= 68) + rng.uniform(0, 0.3, 96), 3)
    problem = grid.DispatchProblem(prices, np.zeros(96), load, np.zeros(96),
                                   (grid.Battery("home", 10, 1, 9.5, 3, 3, 5, 5),), 11.0, 0.0)
    t_milp = median_s(lambda: grid.optimize_dispatch(problem), 20)
    rows.append(("Dispatch MILP, 96 steps, 1 battery", t_milp, [], t_milp <= 0.05, "<= 50 ms"))

    print(f"{'case':<52} {'ours ms':>9}  {'reference':<32} {'ratio (ref/ours)':>16}  {'target':<11} result")
    ok_all = True
    for label, ours_s, refs, passed, target in rows:
        ok_all &= passed
        first = True
        for name, ref_s in refs or [("-", float("nan"))]:
            ratio = f"{ref_s / ours_s:.2f}x" if ref_s == ref_s else "-"
            ref_text = f"{name} {ref_s * 1e3:.1f} ms" if ref_s == ref_s else "-"
            head = f"{label:<52} {ours_s * 1e3:>9.2f}" if first else f"{'':<52} {'':>9}"
            tail = f"{target:<11} {'pass' if passed else 'FAIL'}" if first else ""
            print(f"{head}  {ref_text:<32} {ratio:>16}  {tail}")
            first = False
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
