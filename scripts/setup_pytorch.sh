#!/usr/bin/env bash
# Installs PyTorch's CUDA build into the project's venv, ${GPUMEMTRACE_VENV:-<repo>/.venv}, for the tests that run
# real PyTorch on the simulated device (tests/pytorch). Idempotent; quiet when it is already there.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${GPUMEMTRACE_VENV:-$root/.venv}"
torch_version=2.14.1  # its CUDA 13 build installs on Python 3.11

if [ -x "$venv/bin/python" ] &&
   [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null)" = "$torch_version" ]; then
  exit 0
fi

# pyenv's CPython 3.11, else a python3.11 on PATH.
python=""
if command -v pyenv >/dev/null; then
  for candidate in "$(pyenv root)"/versions/3.11*/bin/python3.11; do
    [ -x "$candidate" ] && python="$candidate"
  done
fi
[ -n "$python" ] || python="$(command -v python3.11 || true)"
# Without PyTorch the real-PyTorch tests are skipped, visibly: a machine that cannot install it still builds and
# tests the rest. CI must run them, so there a failure here fails the setup.
give_up() {
  echo "setup: $1" >&2
  if [ "${CI:-}" = true ]; then exit 1; fi
  echo "setup: the real-PyTorch tests (tests/pytorch) will be skipped" >&2
  exit 0
}
[ -n "$python" ] || give_up "PyTorch $torch_version needs Python 3.11 (pyenv's or python3.11 on PATH); none found"

echo "setup: installing torch==$torch_version into $venv ($python)"
start=$SECONDS
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv" || give_up "could not create the venv $venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$torch_version" ||
  give_up "pip could not install torch==$torch_version into $venv"
echo "setup: torch $torch_version installed in $((SECONDS - start)) s ($(du -sh "$venv" | cut -f1))"
