#!/usr/bin/env bash
# The main job on the embedded default: a full loop round on mock phones, a local lake
# (./lake) and a tiny offline model (collect, curate, SFT, rollout, GRPO, eval).
# `scripts/demo.sh --round experiment` runs the measured learning experiment instead (~4 min);
# `--quick` runs either small (about a minute).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh train
exec .venv/bin/phoneloop demo --lake "${PHONELOOP_LAKE:-./lake}" "$@"
