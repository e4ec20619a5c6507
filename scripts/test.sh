#!/usr/bin/env bash
# Install everything the tests need, start what they need, and run the whole suite.
# Extra arguments go to pytest (e.g. scripts/test.sh -k lake -x; -m "not slow" for a quick run).
# The per-template sweeps run sampled (every template, one seed each); PHONELOOP_TEST_SWEEP=full
# runs every (template, seed) pair. The suite runs on PHONELOOP_TEST_WORKERS pytest-xdist workers
# (default 4: most tests wait on servers, phones and subprocesses, so 4 workers keep 2 cores busy;
# 0 runs it in this process); tests sharing an expensive session fixture stay on one
# worker (tests/conftest.py). The 15 slowest tests are printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# The three installs are independent (the project's venv, the system packages, Label Studio's own
# venv): run them side by side and fail if any of them failed.
scripts/system-deps.sh & deps=$!
scripts/labelstudio.sh & studio=$!  # the Label Studio server's own venv, for tests/annotate
scripts/setup.sh dev,train,env,annotate
wait "$deps"
wait "$studio"
workers="${PHONELOOP_TEST_WORKERS:-4}"
parallel=()
if [ "$workers" != "0" ]; then
    parallel=(-n "$workers" --dist loadgroup)
fi
status=0
.venv/bin/python -m pytest -q -p no:cacheprovider --durations=15 "${parallel[@]}" "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: treating that as a failure" >&2
    exit 1
fi
exit "$status"
