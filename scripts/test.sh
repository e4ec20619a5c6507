#!/usr/bin/env bash
# Install everything the tests need, start what they need, and run the whole suite.
# Extra arguments go to pytest (e.g. scripts/test.sh -k lake -x; -m "not slow" for a quick run).
# The per-template sweeps run sampled (every template, one seed each); PHONELOOP_TEST_SWEEP=full
# runs every (template, seed) pair. The 15 slowest tests are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh dev,train,env,annotate
scripts/system-deps.sh
scripts/labelstudio.sh  # the Label Studio server's own venv, for tests/annotate
status=0
.venv/bin/python -m pytest -q -p no:cacheprovider --durations=15 "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: treating that as a failure" >&2
    exit 1
fi
exit "$status"
