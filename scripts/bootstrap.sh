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
    # Another apt (unattended upgrades on a fresh machine, say) may hold the lock: wait for it, up
    # to 10 minutes, saying so once, instead of failing on `Could not get lock`.
    apt_wait=(-o DPkg::Lock::Timeout=600)
    if fuser /var/lib/dpkg/lock-frontend /var/lib/apt/lists/lock >/dev/null 2>&1; then
      echo "bootstrap: another apt is running; waiting for it to finish (up to 10 minutes)" >&2
    fi
    if ! apt-get "${apt_wait[@]}" update -qq >/dev/null || \
       ! apt-get "${apt_wait[@]}" install -y -qq mesa-vulkan-drivers >/dev/null; then
      echo "bootstrap: could not install mesa-vulkan-drivers with apt-get (is another package" \
           "manager still running, or is the network down?). Install it by hand:" \
           "apt-get install mesa-vulkan-drivers, then run this script again." >&2
      exit 1
    fi
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
