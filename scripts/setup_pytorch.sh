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
if [ -z "$python" ]; then
  echo "setup: PyTorch $torch_version needs Python 3.11 (pyenv's or python3.11 on PATH); none found" >&2
  exit 1
fi

echo "setup: installing torch==$torch_version into $venv ($python)"
start=$SECONDS
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$torch_version"
echo "setup: torch $torch_version installed in $((SECONDS - start)) s ($(du -sh "$venv" | cut -f1))"
