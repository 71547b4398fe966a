#!/usr/bin/env bash
# Makes docs/images/html-report.png, the README's picture of `gpumemtrace html`: the demo's training loop
# traced on the simulated device (so the picture is the same on every machine), its HTML report, and
# headless Chromium's view of it (analyzer/html/tools/open_report.cjs, playwright-core).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${GPUMEMTRACE_BUILD_DIR:-$root/build}"

echo "screenshot: installing missing packages (scripts/setup.sh)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"

out="$build/demo"
mkdir -p "$out" "$root/docs/images"
gpumemtrace="$build/bin/gpumemtrace"
echo "screenshot: gpumemtrace run -o $out/train_loop.trace --sim --sim-memory 4GiB -- train_loop --steps 20"
"$gpumemtrace" run -o "$out/train_loop.trace" --sim --sim-memory 4GiB -- "$build/bin/train_loop" --steps 20 >/dev/null
echo "screenshot: gpumemtrace html $out/train_loop.trace -o $out/train_loop.html"
"$gpumemtrace" html "$out/train_loop.trace" -o "$out/train_loop.html"
image="$root/docs/images/html-report.png"
echo "screenshot: $image"
NODE_PATH="$build/analyzer/html/node_modules" node "$root/analyzer/html/tools/open_report.cjs" "$out/train_loop.html" \
  --screenshot "$image" --width 1200 --height 1100 >/dev/null
