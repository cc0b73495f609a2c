#!/usr/bin/env bash
# The action's first step: TeX Live and bubblewrap from the system packages (only what is missing), then proof
# that bwrap can make the namespaces every engine run needs. Nothing here reads the pull request's checkout.
#   PATCHWRITE_TEX_PACKAGES  space-separated Debian packages (the action's `tex-packages` input)
set -euo pipefail

read -r -a packages <<< "${PATCHWRITE_TEX_PACKAGES:-texlive-latex-base texlive-latex-recommended latexmk lmodern}"
if [[ "${PATCHWRITE_PAGES:-false}" == true ]]; then packages+=(poppler-utils); fi  # pdftoppm: the changed pages
packages+=(bubblewrap)
missing=()
for package in "${packages[@]}"; do
  [[ "$package" =~ ^[a-z0-9][a-z0-9+.-]*$ ]] || { echo "::error::tex-packages: '$package' is not a Debian package name" >&2; exit 2; }
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ((${#missing[@]})); then
  echo "patchwrite action: apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for tool in pdflatex bwrap; do
  command -v "$tool" >/dev/null || { echo "::error::$tool is missing after apt-get" >&2; exit 2; }
done

# Ubuntu 24.04's AppArmor refuses unprivileged user namespaces, which bwrap needs; lift that on the runner
if [ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo 0)" = 1 ]; then
  $SUDO sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0 || true
fi
if ! bwrap --ro-bind / / --unshare-all --die-with-parent true; then
  echo "::error::bwrap cannot create a sandbox on this runner (user namespaces refused); patchwrite will not check an untrusted manuscript without it" >&2
  exit 2
fi
echo "patchwrite action: TeX Live and the sandbox are ready ($(pdflatex --version | head -1))"
