"""Shared fixtures, and an isolated Hugging Face environment for the whole test session.

huggingface_hub and datasets read their settings once, at import, so they are set here
before any test module imports them:
- HF_HUB_DISABLE_XET=1: the loopback Hub (tests/hub_server.py) speaks the classic upload protocol;
- HF_HOME in an empty temporary folder: no token from the developer's machine, and a
  private datasets cache (``load_dataset(folder)`` caches by folder name, so a shared
  cache would return stale rows across test runs);
- an empty agent-harness registry in it: otherwise huggingface_hub fetches one from
  huggingface.co the first time it builds request headers.
"""

import atexit
import os
import shutil
import sys
import tempfile

os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
if "huggingface_hub" not in sys.modules:
    os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="phoneloop-hf-home-")
    atexit.register(shutil.rmtree, os.environ["HF_HOME"], ignore_errors=True)
    with open(os.path.join(os.environ["HF_HOME"], ".agent_harnesses.json"), "w") as registry:
        registry.write('{"standardEnvVars": [], "harnesses": {}}')

# Phone leases (fleet.leases) of the tests' virtual phones go to a folder of this session, never the
# developer's ~/.local/state (a test's own folder, set with monkeypatch, still wins).
if "PHONELOOP_LEASES" not in os.environ:
    os.environ["PHONELOOP_LEASES"] = tempfile.mkdtemp(prefix="phoneloop-leases-")
    atexit.register(shutil.rmtree, os.environ["PHONELOOP_LEASES"], ignore_errors=True)

import pytest  # noqa: E402

from datalake.lake import Lake  # noqa: E402


@pytest.fixture
def lake(tmp_path) -> Lake:
    """A fresh, empty lake in a temporary folder."""
    return Lake.init(tmp_path / "lake")


# Under pytest-xdist (scripts/test.sh runs `-n 4 --dist loadgroup`), tests that share an expensive
# session fixture run on one worker, so each such fixture is built once per run instead of once per
# worker: the Label Studio server (a minute to migrate), the tiny model fine-tuned for the training
# tests, the API's research lake. Other tests go to whichever worker is free.
_SHARED_FIXTURES = {
    "labelstudio": {"label_studio", "ls_lake"},
    "training": {"train_lake", "tiny_path", "sft_model"},
    "api-research": {"research", "research_lake", "rclient"},
    "api-shared": {"shared_lake", "client", "live_server"},
}
# Module fixtures that take long to build (a fine-tuned model, a loop run, the fuzzer's sweep, a Ray
# cluster, a curated S3 dataset): the tests of one module that use one run on one worker too.
_MODULE_FIXTURES = {"learned", "uninterrupted", "fuzz_report", "trained", "tallies", "curated", "built",
                    "recorded", "ray_cluster"}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        for group, fixtures in _SHARED_FIXTURES.items():
            if used & fixtures:
                item.add_marker(pytest.mark.xdist_group(group))
                break
        else:
            for fixture in sorted(used & _MODULE_FIXTURES):
                item.add_marker(pytest.mark.xdist_group(f"{item.module.__name__}.{fixture}"))
                break
    if getattr(config.option, "loadgroup", False):  # set on xdist workers under --dist loadgroup
        _suffix_groups(items)


def _suffix_groups(items) -> None:
    """Append ``@group`` to each grouped test's node id, which is what loadgroup schedules by.

    pytest-xdist 3.8 does this by assigning ``item._nodeid``, but pytest 9 keeps the id in
    ``item._id`` (a ``NodeId``), so xdist's renaming is lost and every group is scattered over the
    workers (each then builds the shared fixture itself). Ids already carrying a group are left as
    they are, so a fixed xdist does not get a second suffix.
    """
    from _pytest.nodeid import NodeId

    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        if names and item.nodeid.rfind("@") <= item.nodeid.rfind("]"):
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")
