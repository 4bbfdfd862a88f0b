"""Start-up cost, structurally (not timed): no module of the integration imports a heavy library at module level.

Each check runs in a fresh interpreter, so what earlier tests imported does not count. scipy, openai, pandas and
entsoe-py are imported inside the executor jobs that first need them; numpy and the rest of the integration are
imported by ``async_setup``'s import executor job, so importing the package itself loads only HA's modules and
``const``. ``benchmarks/bench_startup.py`` measures the times and memory.
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).parent.parent
HEAVY = ("scipy", "openai", "pandas", "entsoe")

PROBE = """
import importlib, json, pkgutil, sys
import custom_components.agentic_hems as pkg
package_only = sorted(m for m in sys.modules if m.startswith(pkg.__name__ + "."))
numpy_after_package = "numpy" in sys.modules
names = [info.name for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
first_heavy = {}
for name in names:
    importlib.import_module(name)
    for heavy in HEAVY:
        if heavy in sys.modules and heavy not in first_heavy:
            first_heavy[heavy] = name
print(json.dumps({"package_only": package_only, "numpy": numpy_after_package, "modules": names,
                  "first_heavy": first_heavy}))
"""


def _probe() -> dict[str, object]:
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    found: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


def test_no_module_imports_a_heavy_library() -> None:
    """Importing every module of the integration (platforms, flows, planners, grid) loads none of the heavy ones."""
    found = _probe()
    modules = found["modules"]
    assert isinstance(modules, list)
    # the walk reached the platforms HA imports at set-up and the modules that imported scipy or openai before
    for name in ("config_flow", "sensor", "conversation", "grid.dispatch", "grid.contingency", "assistant.llm"):
        assert f"custom_components.agentic_hems.{name}" in modules
    assert found["first_heavy"] == {}


def test_package_import_loads_only_const() -> None:
    """``import custom_components.agentic_hems`` (HA's loader's first job) loads only ``const``, not numpy."""
    found = _probe()
    assert found["package_only"] == ["custom_components.agentic_hems.const"]
    assert found["numpy"] is False
