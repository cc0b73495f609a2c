#!/usr/bin/env bash
# The README's main job on the shipped example paper.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r examples/paper "$work/paper"

echo "== the main job: pytest examples/paper (one test item per gate)"
python3 -m pytest examples/paper -v -p no:cacheprovider

echo "== the view a proposer sees: patchwrite number examples/paper/sections/results.tex"
patchwrite number "$work/paper/sections/results.tex" | head -4

echo "== an edit that keeps the paper valid is accepted"
printf '```EDIT 4 4\nTable~\\ref{tab:main} reports the occlusion study over 3 seeds.\n```\n' \
  | patchwrite apply "$work/paper/sections/results.tex"

echo "== an edit that adds an unattested number is rejected at the evidence gate"
printf '```EDIT 3 3\nAccuracy was 99.9\\%% compared with the baseline 68.2\\%%~\\citep{lee2019}.\n```\n' \
  | patchwrite apply "$work/paper/sections/results.tex" || echo "(exit $?: rejected)"

echo "== an edit that breaks the grammar is rejected, the file keeps its bytes"
before="$(sha256sum "$work/paper/sections/results.tex")"
printf '```EDIT 4 4\n```\n' | patchwrite apply "$work/paper/sections/results.tex" || echo "(exit $?: rejected)"
[ "$before" = "$(sha256sum "$work/paper/sections/results.tex")" ] && echo "file unchanged"
