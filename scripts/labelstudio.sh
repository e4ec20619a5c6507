#!/usr/bin/env bash
# Create (once) the virtualenv that runs the Label Studio server, at .venv-labelstudio
# (or $PHONELOOP_LABEL_STUDIO_VENV). Its pins (pyarrow<25, pytz<2023, ~60 Django
# packages) clash with phoneloop's, so it never shares .venv. Idempotent: a venv that
# already has the pinned label-studio is left as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=1.23.2
VENV="${PHONELOOP_LABEL_STUDIO_VENV:-.venv-labelstudio}"
PYTHON="${PYTHON:-python3}"
if [ -x "$VENV/bin/label-studio" ] && \
   [ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("label-studio"))' 2>/dev/null)" = "$VERSION" ]; then
    exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install --quiet "label-studio==$VERSION"
echo "Label Studio $VERSION installed in $VENV"
