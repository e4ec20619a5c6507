"""The import rule (docs/architecture.md): packages sit on floors, and imports only point down.

A package may import packages on lower floors, never one on its own floor (siblings) or
above; no two modules of the project import each other, directly or round a longer circle;
every package of the repository is on exactly one floor. The graph is grimp's, built from
the source without importing it. It holds every import that runs (module level and inside
functions); imports under ``if TYPE_CHECKING:`` are annotations only and are left out.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent

# Lowest floor first. docs/architecture.md draws the same floors: keep the two in step.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("datalake",),  # the shared vocabulary (types), the lake's tables and views
    ("mockphone",),  # the simulated phone: apps, tasks, verifiers, the virtual adb server
    ("fleet", "phones"),  # where jobs run (backends, pool) | the Phone protocol, adb phone, episode loop
    ("collectors", "curation", "annotate"),  # episodes into the lake | datasets out of it | Label Studio
    ("training",),  # SFT and GRPO on curated datasets
    ("rollout",),  # policies (checkpoints, endpoints) on phones, evaluations
    ("api",),  # the FastAPI service and the viewer
    ("phoneloop",),  # the CLI and the loop that runs every stage
)
NOT_PACKAGES = ("tests",)  # a folder with __init__.py at the root that is not a package of the distribution


# --- the checker ---------------------------------------------------------------------------------------
def packages_in(root: Path) -> set[str]:
    """Top-level packages of a source tree: folders with an ``__init__.py`` (``tests`` excepted)."""
    return {p.parent.name for p in root.glob("*/__init__.py")} - set(NOT_PACKAGES)


def build(packages: set[str]) -> grimp.ImportGraph:
    return grimp.build_graph(*sorted(packages), cache_dir=None, exclude_type_checking_imports=True)


def unlayered(packages: set[str], layers) -> list[str]:
    """Packages on no floor, packages on several, and floors' names that are no package."""
    placed = [name for floor in layers for name in floor]
    problems = [f"{name}: on no floor of LAYERS" for name in sorted(packages - set(placed))]
    problems += [f"{name}: on {placed.count(name)} floors" for name in sorted(set(placed)) if placed.count(name) > 1]
    problems += [f"{name}: on a floor but not a package" for name in sorted(set(placed) - packages)]
    return problems


def bad_arrows(graph: grimp.ImportGraph, layers) -> list[str]:
    """Every import from a package to one on its own floor or a higher one, with file line."""
    floor = {name: level for level, names in enumerate(layers) for name in names}
    out = []
    for importer in sorted(graph.modules):
        here = importer.split(".")[0]
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            there = imported.split(".")[0]
            if there == here or here not in floor or there not in floor or floor[there] < floor[here]:
                continue
            how = "a sibling on its floor" if floor[there] == floor[here] else "a higher floor"
            lines = [d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)]
            out.append(f"{importer} -> {imported} (line {', '.join(map(str, lines))}): {here} imports {there}, {how}")
    return out


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Import circles: the strongly connected components of more than one module (Tarjan, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


# --- the project ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def project() -> tuple[set[str], grimp.ImportGraph]:
    packages = packages_in(ROOT)
    for name in packages:  # the graph must be this checkout's, not an installed copy's
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin and Path(spec.origin).resolve().is_relative_to(ROOT), name
    return packages, build(packages)


def test_every_package_is_on_one_floor(project):
    packages, _ = project
    assert unlayered(packages, LAYERS) == []


def test_imports_point_only_to_lower_floors(project):
    _, graph = project
    assert bad_arrows(graph, LAYERS) == []


def test_no_modules_import_each_other_round_a_circle(project):
    _, graph = project
    assert circles(graph) == []


def test_every_package_is_in_the_distribution():
    include = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    assert sorted(packages_in(ROOT) - {p.removesuffix("*") for p in include}) == []


# --- the checker can fail ------------------------------------------------------------------------------
def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checker_reports_an_upward_import_a_sibling_import_a_circle_and_a_stray_package(tmp_path, monkeypatch):
    _tree(tmp_path, {
        "archbase/__init__.py": "",
        "archbase/model.py": "from archtop import shell\n",  # upward: base -> top
        "archleft/__init__.py": "",
        "archleft/a.py": "import archright.b\n",  # sibling: left -> right on one floor
        "archright/__init__.py": "",
        "archright/b.py": "from archbase import model\n",  # downward: fine
        "archtop/__init__.py": "",
        "archtop/shell.py": "def run():\n    from archtop import loop\n",  # a circle through a function's import
        "archtop/loop.py": "from archtop import shell\n",
        # annotations only: not an import that runs, so not an upward arrow
        "archbase/hints.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from archtop import loop\n",
        "archstray/__init__.py": "",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    layers = (("archbase",), ("archleft", "archright"), ("archtop",))
    packages = packages_in(tmp_path)
    graph = build(packages)
    try:
        assert unlayered(packages, layers) == ["archstray: on no floor of LAYERS"]
        assert bad_arrows(graph, layers) == [
            "archbase.model -> archtop.shell (line 1): archbase imports archtop, a higher floor",
            "archleft.a -> archright.b (line 1): archleft imports archright, a sibling on its floor",
        ]
        assert circles(graph) == [["archtop.loop", "archtop.shell"]]
    finally:
        for name in [m for m in sys.modules if m.split(".")[0] in packages]:
            del sys.modules[name]
