#!/usr/bin/env bash
# Create (or refresh) the project's virtualenv at .venv and install phoneloop into it.
# Usage: scripts/setup.sh [extras]   e.g. scripts/setup.sh dev
# Idempotent: a second run only installs what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "phoneloop needs Python >= 3.11 (found $("$PYTHON" --version 2>&1)); set PYTHON=..." >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
# torch==2.13.0 must come before anything that depends on torch (a CPU build from local
# disk; a range would download a multi-GB CUDA build).
case ",$extras," in
    *,train,*) .venv/bin/pip install --quiet torch==2.13.0 ;;
esac
if [ -n "$extras" ]; then
    .venv/bin/pip install --quiet -e ".[$extras]"
else
    .venv/bin/pip install --quiet -e .
fi
# openenv-core without gradio (its optional web UI, which would downgrade pillow): see the env extra.
case ",$extras," in
    *,env,*) .venv/bin/pip install --quiet --no-deps "openenv-core==0.3.0" ;;
esac
