"""`phoneloop lake ...`: create, inspect, query, import into and export from a lake."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from datalake import interchange
from datalake.errors import LakeError
from datalake.lake import Lake
from phoneloop.output import console, fail, print_json, print_table, progress_bars

app = typer.Typer(help="Create, inspect, query, import into and export from a lake.", no_args_is_help=True)

LakeOpt = Annotated[str, typer.Option("--lake", envvar="PHONELOOP_LAKE", help="Lake path or URI (default ./lake).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def open_lake(uri: str) -> Lake:
    try:
        return Lake.open(uri)
    except LakeError as exc:
        fail(str(exc))
        raise  # unreachable


@app.command()
def init(lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Create an empty lake (idempotent: an existing lake is left as it is).

    Example: phoneloop lake init --lake ./lake
    """
    try:
        opened = Lake.init(lake)
    except LakeError as exc:
        fail(str(exc))
    if json_out:
        print_json({"uri": opened.uri, "schema_version": opened.meta["schema_version"]})
    else:
        console.print(f"lake ready at [bold]{opened.uri}[/bold] (schema v{opened.meta['schema_version']})")


@app.command()
def info(lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Row counts and Delta versions per table, and the schema version.

    Example: phoneloop lake info --json
    """
    summary = open_lake(lake).info()
    if json_out:
        print_json(summary)
        return
    console.print(f"[bold]{summary['uri']}[/bold]  schema v{summary['schema_version']}")
    for name, rows in summary["rows"].items():
        version = summary["versions"].get(name)
        console.print(f"  {name:<12} {rows:>10,} rows   "
                      + (f"(version {version})" if version is not None else "(absent: added by a newer schema)"))
    if "needs_migration" in summary:
        console.print(f"[yellow]read-only[/yellow]: {summary['needs_migration']}")


@app.command()
def migrate(
    lake: LakeOpt = "./lake",
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the steps without changing anything.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Upgrade a lake written by an older phoneloop to this version's schema.

    Adds the new tables and (nullable) columns; stored rows are not rewritten and time
    travel to earlier versions keeps working. Safe to run again (a finished migration
    does nothing; an interrupted one is completed).

    Example: phoneloop lake migrate --lake ./lake --dry-run
    """
    from datalake import migrate as migrations

    target = open_lake(lake)
    try:
        report = migrations.migrate(target.uri, storage_options=target.storage_options, dry_run=dry_run)
    except LakeError as exc:
        fail(str(exc))
    if json_out:
        print_json(report.to_dict())
        return
    if report.from_version == report.to_version:
        console.print(f"{report.uri} is already at schema v{report.to_version}: nothing to do")
        return
    verb = "would migrate" if dry_run else "migrated"
    console.print(f"{verb} {report.uri}: schema v{report.from_version} -> v{report.to_version}")
    for step in report.steps:
        console.print(f"  {step}")


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="DuckDB SQL over the lake's views (episodes, steps, frames, ...).")],
    lake: LakeOpt = "./lake",
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")] = "table",
    as_of: Annotated[str | None, typer.Option(help="Read at a time (ISO 8601) or table versions (JSON).")] = None,
) -> None:
    """Run a SQL query over the lake.

    Example: phoneloop lake sql "SELECT app, count(*) FROM episodes GROUP BY app" --format csv
    """
    if fmt not in ("table", "json", "csv"):
        fail(f"--format must be table, json or csv, not {fmt!r}")
    opened = open_lake(lake)
    if as_of:
        opened = _as_of(opened, as_of)
    try:
        result = opened.sql(query)
    except Exception as exc:  # duckdb raises many error types; all mean "bad query"
        if isinstance(exc, LakeError) or type(exc).__module__.startswith(("duckdb", "_duckdb")):
            fail(f"query failed: {exc}")
        raise
    print_table(result, fmt)


def _as_of(opened: Lake, as_of: str) -> Lake:
    """The lake at ``--as-of`` (JSON versions or an ISO time), every table loaded; one-line errors."""
    target: object = as_of
    if as_of.lstrip().startswith("{"):
        try:
            target = json.loads(as_of)
        except json.JSONDecodeError as exc:
            fail(f"--as-of is not valid JSON ({exc.msg} at column {exc.colno}): {as_of}")
    try:
        pinned = opened.as_of(target)
        pinned.versions()
    except LakeError as exc:
        fail(f"--as-of: {exc}")
    return pinned


@app.command()
def show(episode_id: str, lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Show one episode: instruction, outcome and every step's action.

    Example: phoneloop lake show 6f1c...e2
    """
    opened = open_lake(lake)
    try:
        ep = opened.episode(episode_id)
    except LakeError as exc:
        fail(str(exc))
    record = interchange.episode_to_dict(ep)
    for step in record["steps"]:
        step.pop("ui_tree", None)
    if json_out:
        print_json(record)
        return
    console.print(f"[bold]{ep.instruction}[/bold]")
    console.print(f"id {ep.episode_id}  source {ep.source}  app {ep.app}  outcome {ep.outcome} ({ep.verified_by})")
    for i, step in enumerate(ep.steps):
        console.print(f"  {i:>3}  {step.action.to_json()}  [dim]{step.observation.sha256[:12]}[/dim]")


@app.command("import")
def import_(
    files: Annotated[list[str], typer.Argument(
        help="Interchange JSONL files, a dataset's files or folders (with --format), or hf://datasets/ORG/NAME[@REV].")],
    lake: LakeOpt = "./lake",
    fmt: Annotated[str, typer.Option("--format", help="jsonl (the lake's own), androidcontrol, aitw, gui-odyssey, "
                                                      "amex, androidworld or hub; hf:// paths imply hub.")] = "jsonl",
    split: Annotated[str | None, typer.Option(help="Split name recorded in meta.dataset (public datasets).")] = None,
    workers: Annotated[int, typer.Option(help="Processes (spawned), one file each (jsonl only).")] = 1,
    batch: Annotated[int, typer.Option(help="Episodes per commit.")] = interchange.DEFAULT_BATCH_EPISODES,
    max_ui_tree_kb: Annotated[int, typer.Option(help="Larger UI trees are quarantined.")] = 2048,
    json_out: JsonOpt = False,
) -> None:
    """Import episodes; bad records go to quarantine (exit code 1 if any did).

    Public datasets are read in their published form; rerunning skips episodes already imported.

    Example: phoneloop lake import demos/episodes.jsonl

    Example: phoneloop lake import --format aitw aitw/general-*.tfrecord.gz --split train

    Example: phoneloop lake import hf://datasets/acme/phone-episodes@v3
    """
    if fmt == "jsonl" and files and all(f.startswith("hf://") for f in files):
        fmt = "hub"
    if fmt != "jsonl":
        _import_dataset(fmt, files, lake, split, json_out)
        return
    paths = [Path(f) for f in files]
    for path in paths:
        if not path.is_file():
            fail(f"no such file: {path}")
    opened = open_lake(lake)
    total = sum(_count_lines(p) for p in paths)
    with progress_bars() as bar:
        task = bar.add_task("importing", total=total)
        report = interchange.import_files(opened, paths, workers=workers, batch_episodes=batch,
                                          max_ui_tree_bytes=max_ui_tree_kb * 1024,
                                          progress=lambda n: bar.advance(task, n))
    summary = {"lines": report.lines, "written": report.written, "skipped_existing": report.skipped,
               "quarantined": report.quarantined, "steps": report.steps, "new_frames": report.new_frames,
               "reasons": report.reasons}
    _print_import(summary, report, json_out)


def _import_dataset(fmt: str, files: list[str], lake: str, split: str | None, json_out: bool) -> None:
    from collectors import importers

    if fmt not in importers.FORMATS:
        fail(f"--format must be jsonl or one of {', '.join(sorted(importers.FORMATS))}, not {fmt!r}")
    for f in files:
        if fmt != "hub" and not Path(f).exists():
            fail(f"no such file or folder: {f}")
    opened = open_lake(lake)
    with progress_bars() as bar:
        task = bar.add_task(f"importing {fmt}", total=None)
        try:
            report = importers.import_dataset(opened, fmt, files, split=split,
                                              progress=lambda n: bar.advance(task, n))
        except LakeError as exc:
            fail(str(exc))
        except Exception as exc:  # the Hub client's HTTP and transport errors: one line, not a traceback
            if type(exc).__module__.split(".")[0] in ("huggingface_hub", "httpx", "httpx2", "requests"):
                fail(f"cannot read {' '.join(files)} from the Hub: {str(exc).splitlines()[0]}")
            raise
    summary = {"dataset": fmt, "records": report.records, "written": report.written,
               "skipped_existing": report.skipped, "quarantined": report.quarantined, "steps": report.steps,
               "new_frames": report.new_frames, "reasons": report.reasons, "notes": report.notes}
    _print_import(summary, report, json_out)


def _print_import(summary: dict, report, json_out: bool) -> None:
    if json_out:
        print_json(summary)
    else:
        console.print(f"{report.written} episodes written ({report.steps} steps, {report.new_frames} new frames), "
                      f"{report.skipped} already in the lake, {report.quarantined} quarantined")
        for reason in report.reasons[:20]:
            console.print(f"  [yellow]quarantined[/yellow] {reason}")
        for line in getattr(report, "notes", [])[:20]:
            console.print(f"  [dim]note[/dim] {line}", soft_wrap=True)
    if report.quarantined:
        raise typer.Exit(1)


def _count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


@app.command()
def export(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write episodes.jsonl and frames/ into.")],
    where: Annotated[str | None, typer.Option(help="SQL condition over the episodes view.")] = None,
    lake: LakeOpt = "./lake",
    json_out: JsonOpt = False,
) -> None:
    """Export episodes in the interchange format (re-importable, byte-exact).

    Example: phoneloop lake export out/ --where "source = 'human' AND outcome = 'success'"
    """
    opened = open_lake(lake)
    with progress_bars() as bar:
        task = bar.add_task("exporting", total=None)
        try:
            count = interchange.export_jsonl(opened, out_dir, where=where, progress=lambda n: bar.advance(task, n))
        except LakeError as exc:
            fail(str(exc))
        except Exception as exc:
            if type(exc).__module__.startswith(("duckdb", "_duckdb")):
                fail(f"--where is not a valid condition: {exc}")
            raise
    if json_out:
        print_json({"episodes": count, "path": str(out_dir / "episodes.jsonl")})
    else:
        console.print(f"{count} episodes exported to {out_dir / 'episodes.jsonl'}")


@app.command()
def compact(
    lake: LakeOpt = "./lake",
    vacuum: Annotated[bool, typer.Option(help="Also delete unreferenced files (ends time travel before now).")] = False,
    force: Annotated[bool, typer.Option(help="Vacuum even when registered dataset versions need the files "
                                             "(they become unrebuildable; the report lists them).")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Merge small files in every table (frames sorted by sha for fast lookups).

    --vacuum is refused while a registered dataset version still needs the files it would delete.

    Example: phoneloop lake compact --vacuum
    """
    try:
        report = open_lake(lake).compact(vacuum=vacuum, force=force)
    except LakeError as exc:
        fail(str(exc))
    if json_out:
        print_json(report)
        return
    lost = report.pop("unrebuildable", [])
    for name, r in report.items():
        console.print(f"  {name:<12} +{r['files_added']} -{r['files_removed']} files, {r['vacuumed']} vacuumed")
    if lost:
        console.print(f"forced: these dataset versions can no longer be rebuilt: {', '.join(lost)}")
