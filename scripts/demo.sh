#!/usr/bin/env bash
# The main job on the embedded default: a local lake (./lake) fed with the bundled sample,
# then a summary query. Later rounds grow this into a full loop round on mock phones.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/phoneloop demo --lake "${PHONELOOP_LAKE:-./lake}" "$@"
