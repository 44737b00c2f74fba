#!/usr/bin/env bash
# Sets up everything workbench needs on a fresh Debian machine, idempotently:
#   - Mesa's Vulkan drivers (lavapipe, the CPU adapter) when missing and we are root
#   - a virtual environment in .venv with workbench and its test tools
# Usage: bash scripts/bootstrap.sh   (quiet; prints only what it installs or fails at)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    echo "bootstrap: installing mesa-vulkan-drivers (lavapipe)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq mesa-vulkan-drivers >/dev/null
  else
    echo "bootstrap: mesa-vulkan-drivers is missing; without root only the OpenGL CPU adapter is used" >&2
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.workbench-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]' 2>&1 | grep -v '^WARNING' >&2 || true
  .venv/bin/python -c "import workbench, wgpu, textual" && touch "$stamp"
fi
