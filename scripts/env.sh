# Sourced by scripts/bootstrap, scripts/test and scripts/demo: which Home Assistant release to test, which Python
# runs it, and the re-run inside a Debian root (scripts/py314-root) on a machine without Python 3.14.
#
# AGENTIC_HEMS_HA=newest (default) tests the newest supported release (requirements_test.txt, .venv);
# AGENTIC_HEMS_HA=oldest the oldest one, the one in hacs.json (requirements_test_oldest.txt, .venv-oldest).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${AGENTIC_HEMS_HA:=newest}" in
  newest) REQUIREMENTS="$ROOT/requirements_test.txt"; VENV="$ROOT/.venv" ;;
  oldest) REQUIREMENTS="$ROOT/requirements_test_oldest.txt"; VENV="$ROOT/.venv-oldest" ;;
  *) echo "error: AGENTIC_HEMS_HA must be newest or oldest, not '$AGENTIC_HEMS_HA'" >&2; exit 2 ;;
esac
export AGENTIC_HEMS_HA

# progress MESSAGE: a progress line on stderr when it is a terminal or AGENTIC_HEMS_PROGRESS=1 (scripts/demo sets it:
# a first run builds and installs for minutes, and a log or CI must see that it is alive; scripts/test does not, so
# its first line stays its versions line).
progress() { if [ -t 2 ] || [ "${AGENTIC_HEMS_PROGRESS:-}" = 1 ]; then echo "$*" >&2; fi; }

# Home Assistant 2026.3 and newer need Python >= 3.14.2.
is_python314() { "$1" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 14) and sys.version_info >= (3, 14, 2) else 1)' 2>/dev/null; }

find_python314() {
  local c candidates=("${PYTHON:-}" python3.14)
  if command -v uv >/dev/null 2>&1; then candidates+=("$(uv python find 3.14 2>/dev/null || true)"); fi
  candidates+=("$HOME"/.pyenv/versions/3.14*/bin/python3 /usr/local/bin/python3.14 /usr/bin/python3.14)
  for c in "${candidates[@]}"; do
    [ -n "$c" ] || continue
    command -v "$c" >/dev/null 2>&1 || [ -x "$c" ] || continue
    if is_python314 "$c"; then echo "$c"; return 0; fi
  done
  return 1
}

# in_python314 SCRIPT [ARGS...]: returns when this machine has Python 3.14; otherwise re-runs SCRIPT inside the
# Debian root of scripts/py314-root (Linux, as root), or says how to get Python 3.14.
in_python314() {
  find_python314 >/dev/null && return 0
  if [ -z "${AGENTIC_HEMS_IN_PY314_ROOT:-}" ] && [ "$(uname -s)" = Linux ] && [ "$(id -u)" -eq 0 ] \
      && { command -v debootstrap >/dev/null 2>&1 || command -v apt-get >/dev/null 2>&1; }; then
    exec "$ROOT/scripts/py314-root" ${PY314_ROOT_FLAGS:-} "$@"
  fi
  cat >&2 <<'MSG'
error: Python >= 3.14.2 is required (Home Assistant 2026.3 and newer run on it) and none was found.
       Looked at $PYTHON, python3.14, `uv python find 3.14`, ~/.pyenv/versions/3.14*. Install one, e.g.
       `uv python install 3.14`, `pyenv install 3.14`, or your distribution's python3.14 and python3.14-venv,
       or set PYTHON=/path/to/python3.14. On Debian or Ubuntu, running this script as root builds a Debian root
       with Python 3.14 by itself (scripts/py314-root).
MSG
  exit 1
}
