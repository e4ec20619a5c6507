"""`phoneloop tasks ...`: see which mock-phone tasks exist, look at one, and check every task's invariants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from phoneloop.cli_lake import JsonOpt
from phoneloop.output import console, err_console, fail, print_json

LocaleOpt = Annotated[str, typer.Option("--locale", help="Phone locale: en-US or zh-CN (screens and instructions).")]
tasks_app = typer.Typer(help="List, show and check the mock phone's tasks.", no_args_is_help=True)


@tasks_app.command("list")
def list_(
    category: Annotated[str | None, typer.Option("--category", "-c", help="Only this category.")] = None,
    app: Annotated[str | None, typer.Option("--app", "-a", help="Only tasks touching this app (short name).")] = None,
    instances: Annotated[int, typer.Option("--instances", min=0, help="Instance rows per template (seeds).")] = 3,
    locale: LocaleOpt = "en-US",
    json_out: JsonOpt = False,
) -> None:
    """One row per template and per instance: id (template + params hash), category, apps, optimal steps
    (measured from the oracle), allowed changes and the instruction.

    Example: phoneloop tasks list --category safety --json
    Example: phoneloop tasks list --app settings --locale zh-CN
    """
    from mockphone.errors import UnknownTask
    from mockphone.tasks import catalog, registry

    terms = [t for t in (f"category:{category}" if category else "", f"app:{app}" if app else "") if t]
    try:
        classes = registry.select("&".join(terms) or "all")
    except UnknownTask as exc:
        fail(str(exc))
    _check_locale(locale)
    rows = catalog.rows(classes, instances, locale=locale)
    if json_out:
        print_json(rows)
        return
    from rich.table import Table

    table = Table(title=f"{len(classes)} task template(s)")
    for col in ("id", "category", "apps", "steps", "allowed changes", "instruction"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["id"] if r["kind"] == "template" else f"  {r['id']}", r["category"], ",".join(r["apps"]),
                      str(r["optimal_steps"]), "\n".join(r["allowed_changes"]) or "-", r["instruction"])
    console.print(table)


@tasks_app.command("show")
def show(
    ident: Annotated[str, typer.Argument(metavar="ID", help="Template name or instance id.")],
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the instance (default 0).")] = None,
    png: Annotated[Path | None, typer.Option("--png", help="Write the start screen's PNG here.")] = None,
    xml: Annotated[Path | None, typer.Option("--xml", help="Write the start screen's UI XML here.")] = None,
    locale: LocaleOpt = "en-US",
    json_out: JsonOpt = False,
) -> None:
    """Render an instance's start screen and print its params and the oracle's steps.

    Example: phoneloop tasks show ContactsEditPhone --seed 2 --png start.png --locale zh-CN
    """
    from mockphone.errors import UnknownTask
    from mockphone.phone import MockPhone
    from mockphone.tasks import catalog

    try:
        task, s = catalog.resolve(ident, seed)
    except UnknownTask as exc:
        fail(str(exc))
    _check_locale(locale)
    phone = MockPhone(seed=s, locale=locale)
    task.initialize_task(phone)
    obs = phone.observe()
    if png is not None:
        png.write_bytes(obs.screenshot)
    if xml is not None:
        xml.write_text(obs.ui_tree, encoding="utf-8")
    steps = [json.loads(a.to_json()) for a in catalog.oracle_steps(type(task), s, task.params, locale)]
    info = {"id": catalog.instance_id(type(task), task.params), "template": task.name(), "seed": s,
            "category": task.category, "params": task.params, "instruction": task.goal, "locale": locale,
            "allowed_changes": list(task.allowed_changes()), "optimal_steps": len(steps), "oracle": steps}
    if json_out:
        print_json(info)
        return
    for key in ("id", "template", "seed", "category", "params", "locale", "instruction", "allowed_changes",
                "optimal_steps"):
        typer.echo(f"{key}: {info[key]}")
    for i, step in enumerate(steps):
        step.pop("element", None)
        typer.echo(f"  {i:>2} {json.dumps(step, ensure_ascii=False)}")


@tasks_app.command("check")
def check(
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Check seeds 0..N-1.")] = 3,
    task: Annotated[str, typer.Option("--tasks", "-t", help="Task selector (default all).")] = "all",
    locale: LocaleOpt = "en-US",
    json_out: JsonOpt = False,
) -> None:
    """Run every invariant (start 0, oracle 1, wrong endings < 1, determinism, render/XML agreement,
    the collateral-damage fuzzer) and exit 1 on any failure, naming task, seed and invariant.

    Example: phoneloop tasks check --seeds 3 --json
    Example: phoneloop tasks check --seeds 1 --locale zh-CN
    """
    from mockphone.errors import UnknownTask
    from mockphone.tasks import invariants, registry

    try:
        classes = registry.select(task)
    except UnknownTask as exc:
        fail(str(exc))
    _check_locale(locale)
    failures, fuzz = invariants.check(classes, range(seeds), locale=locale)
    summary = {"tasks": len(classes), "seeds": seeds, "locale": locale, "failures": [f.__dict__ for f in failures],
               "fuzz": {"pairs": fuzz.pairs, "unchanged": fuzz.unchanged, "damaged": fuzz.damaged,
                        "inside_allowed": fuzz.inside}}
    if json_out:
        print_json(summary)
    else:
        for f in failures:
            err_console.print(f"[red]FAIL[/red] {f}")
        err_console.print(f"{len(classes)} task(s) x {seeds} seed(s): {len(failures)} invariant failure(s); "
                          f"fuzzer tried {fuzz.pairs} pairs ({fuzz.damaged} with collateral damage, "
                          f"{fuzz.unchanged} unchanged, {fuzz.inside} inside the allowed set)")
    if failures:
        raise typer.Exit(1)


def _check_locale(locale: str) -> None:
    from mockphone import i18n

    try:
        i18n.check(locale)
    except ValueError as exc:
        fail(str(exc))
