from datetime import timedelta
import numpy as np
from custom_components.agentic_hems.scheduling import home_solve
from custom_components.agentic_hems.scheduling.home_build import build, cost_scale
from custom_components.agentic_hems.scheduling.home_model import HomeBattery
from custom_components.agentic_hems.scheduling.home_solve import COST_SCALE, PLAN_GAP
from custom_components.agentic_hems.scheduling.plan import LoadSpec
from tests.scheduling.conftest import home_inputs
from tests.scheduling.test_home_warm import N, T0, make_curve

def home(seed):
    rng = np.random.default_rng(seed)
    loads = [LoadSpec(f"r{i}", power_kw=float(rng.choice([1.5, 2.0, 2.5])), duration_min=int(rng.choice([45, 60, 90])), earliest_start=T0,
                      deadline=T0 + timedelta(hours=12)) for i in range(3)]
    price = np.repeat(np.round(rng.uniform(0.05, 0.40, N // 8), 3), 8)
    return {"curve": make_curve(price), "loads": loads, "fuse_kw": 5.0,
            "batteries": [HomeBattery(name="b", capacity_kwh=10.0, charge_kw=3.0, discharge_kw=3.0, initial_soc_pct=50.0)],
            "base_load_kw": np.round(rng.uniform(0.2, 0.8, N), 3), "export_price": 0.0}

hits = 0
for seed in range(20):
    inputs = home_inputs(home(seed))
    model, cols = build(inputs)
    f = COST_SCALE / cost_scale(inputs)
    obj = model.objective() * f
    relaxed = model.reduced_costs(obj)
    plain = model.solve(obj)
    x, bound = home_solve._dive(inputs, model, cols, relaxed, obj)
    tight = plain.fun <= relaxed[0] + PLAN_GAP
    hit = bound <= relaxed[0] + PLAN_GAP
    print(seed, "LP", round(relaxed[0], 4), "least", round(plain.fun, 4), "dive", round(bound, 4), "tight" if tight else "", "hit" if hit else "")
