"""`phoneloop curate RECIPE` and `phoneloop datasets ...`: build, inspect, compare and push dataset versions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from curation.errors import CurationError
from datalake.errors import LakeError
from phoneloop.cli_lake import JsonOpt, LakeOpt, open_lake
from phoneloop.output import console, fail, print_json, progress_bars

datasets_app = typer.Typer(help="List, show, compare, rebuild and push dataset versions.", no_args_is_help=True)


class _Bars:
    """One rich progress bar per stage ("hashing frames", "export sft", ...)."""

    def __init__(self, progress: Progress):
        self.progress = progress
        self.tasks: dict[str, int] = {}

    def __call__(self, what: str, done: int, total: int) -> None:
        if what not in self.tasks:
            self.tasks[what] = self.progress.add_task(what, total=total)
        self.progress.update(self.tasks[what], completed=done, total=total)


def curate(
    recipe: Annotated[Path | None, typer.Argument(help="Recipe YAML (see examples/recipes/default.yaml).")] = None,
    lake: LakeOpt = "./lake",
    as_of: Annotated[str | None, typer.Option(help="Table versions to read, as JSON (default: the latest).")] = None,
    list_ops: Annotated[bool, typer.Option("--list-ops", help="List the ops a recipe can use and exit.")] = False,
    allow_unredacted: Annotated[bool, typer.Option(help="Write exports even when they hold real-phone episodes "
                                                        "that no redact op scanned.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Build a new dataset version NAME@vN from a recipe: select, ops, split, exports, report.

    Real-phone episodes that no redact op scanned are refused (exit 2) unless --allow-unredacted.

    Example: phoneloop curate examples/recipes/default.yaml
    """
    from curation.build import curate as build
    from curation.recipe import load_recipe

    if list_ops:
        _print_ops(json_out)
        return
    if recipe is None:
        fail("give a recipe file (or --list-ops)")
    opened = open_lake(lake)
    try:
        parsed = load_recipe(recipe)
        versions = json.loads(as_of) if as_of else None
        with progress_bars() as progress:
            dv = build(opened, parsed, as_of=versions, progress=_Bars(progress), allow_unredacted=allow_unredacted)
    except (CurationError, LakeError, json.JSONDecodeError) as exc:
        fail(str(exc))
    _print_version(dv, json_out)


def _print_ops(json_out: bool) -> None:
    from curation.ops import OPS

    if json_out:
        print_json({name: {"doc": op.doc, "params": {k: repr(d) for k, (_, d) in op.params.items()}}
                    for name, op in OPS.items()})
        return
    for name, op in OPS.items():
        params = ", ".join(f"{k}={d!r}" for k, (_, d) in op.params.items())
        console.print(f"[bold]{name}[/bold]({params})\n    {op.doc.splitlines()[0] if op.doc else ''}")


def _print_version(dv, json_out: bool) -> None:
    if json_out:
        print_json(dv.to_dict())
        return
    console.print(f"[bold]{dv.ref}[/bold]  {dv.counts['episodes']} episodes, {dv.counts['steps']} steps  "
                  f"fingerprint {dv.fingerprint[:16]}")
    for split, n in dv.counts.get("splits", {}).items():
        console.print(f"  {split:<6} {n['episodes']:>6} episodes {n['steps']:>7} steps")
    console.print(f"  exports: {dv.path}  (report: {Path(dv.path) / 'report.html'})")


@datasets_app.command("list")
def list_(lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """List every dataset version in the lake.

    Example: phoneloop datasets list --json
    """
    from curation.versions import list_versions

    versions = list_versions(open_lake(lake))
    if json_out:
        print_json([{"ref": v.ref, "fingerprint": v.fingerprint, "episodes": v.counts.get("episodes"),
                     "steps": v.counts.get("steps"), "created_at": v.created_at.isoformat()} for v in versions])
        return
    if not versions:
        console.print("no dataset versions yet: run `phoneloop curate RECIPE.yaml`")
    for v in versions:
        console.print(f"{v.ref:<24} {v.counts.get('episodes', 0):>7} episodes {v.counts.get('steps', 0):>8} steps  "
                      f"{v.fingerprint[:16]}  {v.created_at:%Y-%m-%d %H:%M}")


@datasets_app.command()
def show(ref: Annotated[str, typer.Argument(help="NAME@vN (or NAME for the latest).")],
         lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Show one version: fingerprint, counts, lineage and export paths.

    Example: phoneloop datasets show default@v1 --json
    """
    from curation.versions import get_version

    try:
        dv = get_version(open_lake(lake), ref)
    except CurationError as exc:
        fail(str(exc))
    _print_version(dv, json_out)


def _signed(n: int | None) -> str:
    return "unknown (built before manifests recorded it)" if n is None else f"{n:+d}"


@datasets_app.command()
def diff(a: str, b: str, lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Compare two versions: fingerprint, table versions read, counts and recipe.

    Example: phoneloop datasets diff default@v1 default@v2
    """
    from curation.versions import diff as diff_versions
    from curation.versions import get_version

    opened = open_lake(lake)
    try:
        result = diff_versions(get_version(opened, a), get_version(opened, b), opened.storage_options)
    except CurationError as exc:
        fail(str(exc))
    if json_out:
        print_json(result)
        return
    same = "same" if result["same_fingerprint"] else "different"
    console.print(f"{result['a']} vs {result['b']}: {same} fingerprint")
    for key, change in {**result["table_versions"], **result["counts"]}.items():
        console.print(f"  {key}: {change['a']} -> {change['b']}")
    add = result["added"]
    console.print(f"  adds: {add['new_instances']} new instance(s) ({add['dropped_instances']} dropped), "
                  f"corrected episodes {_signed(add['corrected'])}, real-phone episodes {_signed(add['real'])}")
    for source, n in (add["sources"] or {}).items():
        console.print(f"    source {source}: {n:+d} episode(s)")
    for line in result["recipe_diff"]:
        console.print(line, markup=False, highlight=False)


@datasets_app.command()
def rebuild(ref: str, lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Build a version's recipe again against the table versions it read and compare the
    fingerprint (a reproducibility check; nothing is registered). Exits 1 when it differs.

    Example: phoneloop datasets rebuild default@v1
    """
    from curation.build import rebuild as rebuild_version

    opened = open_lake(lake)
    try:
        with progress_bars() as progress:
            result = rebuild_version(opened, ref, progress=_Bars(progress))
    except (CurationError, LakeError) as exc:
        fail(str(exc))
    if json_out:
        print_json({**result, "same_fingerprint": result["same"]})
    else:
        verdict = "identical" if result["same"] else "DIFFERENT"
        console.print(f"{result['ref']}: rebuilt fingerprint {result['fingerprint'][:16]} is {verdict}")
        for rel in result["differing_files"]:
            console.print(f"  differs from the stored file: {rel}")
    if not result["same"]:
        raise typer.Exit(1)


@datasets_app.command()
def push(
    ref: str,
    repo: Annotated[str, typer.Option(help="Hub dataset repo, ORG/NAME.")],
    private: Annotated[bool, typer.Option(help="Create the repo as private.")] = False,
    token: Annotated[str | None, typer.Option(envvar="HF_TOKEN", help="Hub token (default: $HF_TOKEN).")] = None,
    allow_unredacted: Annotated[bool, typer.Option(help="Push even when the version holds real-phone episodes "
                                                        "that no redact op scanned.")] = False,
    lake: LakeOpt = "./lake",
    json_out: JsonOpt = False,
) -> None:
    """Push a version's exports, card and report to the Hub, tagged NAME-vN (honours HF_ENDPOINT).

    A version with real-phone episodes that its recipe never redacted is refused
    unless --allow-unredacted.

    Example: HF_TOKEN=... phoneloop datasets push default@v1 --repo my-org/phone-sft
    """
    from curation.hub import push_version
    from curation.versions import get_version, unredacted_real_episodes

    try:
        opened = open_lake(lake)
        dv = get_version(opened, ref)
        unscanned = unredacted_real_episodes(dv, opened.storage_options)
        if unscanned and not allow_unredacted:
            fail(f"{dv.ref} holds {unscanned} real-phone episodes that no redact op scanned for personal data "
                 "(or one with blur: false); add `- op: redact` to its recipe and build again, or pass "
                 "--allow-unredacted; nothing pushed")
        result = push_version(opened, dv, repo, private=private, token=token)
    except typer.Exit:
        raise
    except (CurationError, LakeError) as exc:
        fail(_one_line(str(exc)))
    except Exception as exc:  # noqa: BLE001 - every failure of a push is one line and exit 2, never a traceback
        if type(exc).__module__ == "curation.hub":  # the hub module's own errors name the problem
            fail(_one_line(str(exc)))
        fail(f"pushing {ref} to {repo} failed: {type(exc).__name__}: {_one_line(str(exc)) or 'no detail'}; "
             "nothing was tagged")
    if json_out:
        print_json({"ref": dv.ref, "repo": result.repo_id, "tag": result.tag, "commit": result.commit_sha,
                    "url": result.url})
    else:
        console.print(f"pushed {dv.ref} to {result.url} (tag {result.tag})")


def _one_line(message: str) -> str:
    """The first non-empty line of an error message."""
    return next((line.strip() for line in message.splitlines() if line.strip()), "")
