#!/usr/bin/env bash
# Builds .venv-bench: EMHASS 0.18.7 from PyPI in its own virtualenv, for benchmarks/home_vs_emhass.py only (never the
# integration's venvs). EMHASS 0.18.7 cannot install on Python 3.14: it pins cvxpy<1.8 and numpy<2.3, which publish
# no 3.14 wheels. So the venv uses Python 3.13 (PYTHON, default the first python3.13 on PATH or pyenv's 3.13.x) and
# the benchmark runs in it, loading the integration's pure core without Home Assistant.
#
#   benchmarks/setup_emhass.sh            # creates or refreshes .venv-bench in the repository root
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv-bench"
find_python() {
  local candidate
  for candidate in ${PYTHON:-} python3.13 $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13.*/bin/python3.13 2>/dev/null | sort -rV); do
    if "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then echo "$candidate"; return; fi
  done
}
PY="$(find_python)"
[ -n "$PY" ] || { echo "setup_emhass: need Python 3.13 (set PYTHON=/path/to/python3.13)" >&2; exit 1; }
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q "emhass==0.18.7"
# The benchmark reads the bundled ENTSO-E price days with the integration's parser, which needs its entsoe-py pin.
"$VENV/bin/python" -m pip install -q "$(grep -o 'entsoe-py==[0-9.]*' "$REPO/custom_components/agentic_hems/manifest.json")"
# The planners call HiGHS through highspy: the manifest's range.
"$VENV/bin/python" -m pip install -q "$(grep -o 'highspy[^"]*' "$REPO/custom_components/agentic_hems/manifest.json")"
"$VENV/bin/python" -c 'import emhass, cvxpy, scipy, numpy, sys; from importlib.metadata import version as v; print("python", sys.version.split()[0], "emhass", v("emhass"), "cvxpy", cvxpy.__version__, "scipy", scipy.__version__, "numpy", numpy.__version__)'
