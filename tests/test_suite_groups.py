"""The suite's xdist groups hold: tests sharing an expensive fixture run on one worker.

Checked from outside the hook: a throwaway test tree that re-exports the suite's collection hook is
run by a real ``pytest -n 2 --dist loadgroup``, and each test writes the worker that ran it.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = textwrap.dedent("""
    import os
    from pathlib import Path

    import pytest

    OUT = Path(os.environ["GROUPS_OUT"])


    @pytest.fixture(scope="module")
    def learned():  # one of the suite's module fixtures (tests/conftest.py)
        return 1


    @pytest.fixture
    def tiny_path():  # one of the suite's session fixtures (group "training")
        return 1


    def _record(name):
        (OUT / name).write_text(os.environ["PYTEST_XDIST_WORKER"])


    @pytest.mark.parametrize("i", range(6))
    def test_module_fixture(learned, i):
        _record(f"module-{i}")


    @pytest.mark.parametrize("i", range(6))
    def test_session_fixture(tiny_path, i):
        _record(f"session-{i}")


    @pytest.mark.parametrize("i", range(12))
    def test_free(i):
        _record(f"free-{i}")
""")


def test_tests_sharing_a_fixture_run_on_one_worker_and_others_spread(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "conftest.py").write_text("from tests.conftest import pytest_collection_modifyitems  # noqa: F401\n")
    (tree / "test_probe.py").write_text(TESTS)
    out = tmp_path / "out"
    out.mkdir()
    repo = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                          "--dist", "loadgroup", "--rootdir", str(tree), "-c", "/dev/null", str(tree)],
                         cwd=tree, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(repo), "GROUPS_OUT": str(out),
                                        "HOME": str(tmp_path)},
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    workers = {p.name: p.read_text() for p in out.iterdir()}
    assert len(workers) == 24
    assert len({w for n, w in workers.items() if n.startswith("module-")}) == 1
    assert len({w for n, w in workers.items() if n.startswith("session-")}) == 1
    assert len({w for n, w in workers.items() if n.startswith("free-")}) == 2  # the rest still spread
