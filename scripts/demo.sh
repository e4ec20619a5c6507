#!/usr/bin/env bash
# The main job on the embedded default: a measured round on mock phones, a local lake
# (./lake) and a tiny offline model (demos, curate, SFT, GRPO, random vs SFT vs GRPO on held-out seeds).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh train
exec .venv/bin/phoneloop demo --lake "${PHONELOOP_LAKE:-./lake}" "$@"
