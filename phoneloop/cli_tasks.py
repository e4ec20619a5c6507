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
    the collateral-damage fuzzer) and exit 1 on any failure, naming task, seed and invariant. The fuzzer
    decides "damaged" from raw copies of the phone's stores, not with the verifier; it reports the pairs
    tried, the share of draws that changed state, and how many damaged pairs the verifiers caught.

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
    own = invariants.own_wrong_endings(classes)
    summary = {"tasks": len(classes), "seeds": seeds, "locale": locale, "failures": [f.__dict__ for f in failures],
               "fuzz": fuzz.to_dict(), "own_wrong_endings": {
                   "templates": sum(1 for n in own.values() if n >= invariants.MIN_OWN), "of": len(classes),
                   "at_least": invariants.MIN_OWN}}
    if json_out:
        print_json(summary)
    else:
        for f in failures:
            err_console.print(f"[red]FAIL[/red] {f}")
        f = fuzz.to_dict()
        err_console.print(f"{len(classes)} task(s) x {seeds} seed(s): {len(failures)} invariant failure(s); "
                          f"independent fuzzer: {f['pairs']} pairs that changed state ({100 * f['changed_share']:.0f}% "
                          f"of draws; {f['unchanged_dropped']} unchanged draws dropped), {f['damaged']} damaged, "
                          f"{f['caught']} caught, {f['inside']} inside the oracle's own changes; "
                          f"{summary['own_wrong_endings']['templates']} of {len(classes)} templates define at least "
                          f"{invariants.MIN_OWN} wrong endings of their own")
    if failures:
        raise typer.Exit(1)


def _check_locale(locale: str) -> None:
    from mockphone import i18n

    try:
        i18n.check(locale)
    except ValueError as exc:
        fail(str(exc))


def seed_range(text: str) -> list[int]:
    """``0-19``, ``100-102,200`` or ``7`` -> a list of seeds; ``ValueError`` naming a bad one."""
    seeds: list[int] = []
    for part in (p.strip() for p in str(text).split(",") if p.strip()):
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()) or (sep and int(hi) < int(lo)):
            raise ValueError(f"bad seeds {text!r}: use N, A-B or a comma list of them (e.g. 0-19,100)")
        seeds.extend(range(int(lo), int(hi) + 1) if sep else [int(lo)])
    if not seeds:
        raise ValueError(f"seeds {text!r} name no seed")
    return seeds


def _seed_range(text: str) -> list[int]:
    try:
        return seed_range(text)
    except ValueError as exc:
        fail(str(exc))


@tasks_app.command("generate")
def generate(
    name: Annotated[str, typer.Option("--name", help="Task set name; each run writes its next version.")],
    task: Annotated[str, typer.Option("--tasks", "-t", help="Task selector (default all).")] = "all",
    seeds: Annotated[str, typer.Option("--seeds", help="Seeds: N, A-B or a comma list (e.g. 0-59).")] = "0-19",
    locale: LocaleOpt = "en-US",
    workers: Annotated[int, typer.Option("--workers", min=1, help="Processes solving instances.")] = 1,
    quick: Annotated[bool, typer.Option("--quick", help="Skip the wrong-ending checks (start 0 and oracle 1 "
                                                        "only).")] = False,
    lake: Annotated[str, typer.Option("--lake", envvar="PHONELOOP_LAKE", help="Lake folder or URI.")] = "./lake",
    json_out: JsonOpt = False,
) -> None:
    """Sample instances (templates x seeds), solve each with its oracle, check the invariants
    (start 0, oracle 1, every wrong ending < 1) and register the verified ones as the next
    version of task set NAME in the lake's tasksets table. A template with a broken instance
    registers none of them; the reasons are printed. Instances are kept once by fingerprint.

    Example: phoneloop tasks generate --name world --seeds 0-59 --workers 2
    Example: phoneloop tasks generate --name clock-zh --tasks app:clock --seeds 0-9 --locale zh-CN
    """
    from datalake import tasksets
    from datalake.errors import LakeError
    from datalake.lake import Lake
    from mockphone.errors import UnknownTask
    from mockphone.tasks import instances, registry
    from phoneloop.cli_phones import episode_bars

    try:
        classes = registry.select(task)
    except UnknownTask as exc:
        fail(str(exc))
    _check_locale(locale)
    chosen = _seed_range(seeds)
    with episode_bars() as bar:
        update = bar(f"generate {name}", len(classes) * len(chosen))
        kept, rejected, dupes = instances.generate(classes, chosen, locale, workers=workers,
                                                   wrong_endings=not quick, progress=lambda d, t: update(d, 0.0))
    broken = sorted({r.template for r in rejected})
    for r in rejected[:20]:
        err_console.print(f"[red]rejected[/red] {r.template} seed {r.seed}: {r.reason}")
    try:
        ref = tasksets.write(Lake.open(lake), name, "taskset", [i.to_row() for i in kept]) if kept else None
    except LakeError as exc:
        fail(str(exc))
    summary = {"taskset": ref, "instances": len(kept), "templates": len({i.template for i in kept}),
               "tried": len(classes) * len(chosen), "duplicates": dupes, "rejected": len(rejected),
               "broken_templates": broken}
    if json_out:
        print_json(summary)
    else:
        console.print(f"{ref or 'nothing registered'}: {len(kept)} verified instance(s) of "
                      f"{summary['templates']} template(s) from {summary['tried']} tried; {dupes} duplicate(s) "
                      f"merged; {len(rejected)} rejected" + (f" (templates left out: {', '.join(broken)})"
                                                               if broken else ""))
    if not kept:
        raise typer.Exit(1)


@tasks_app.command("stats")
def stats(
    task: Annotated[str, typer.Option("--tasks", "-t", help="Task selector (default all).")] = "all",
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Seeds 0..N-1 per template.")] = 20,
    minimum: Annotated[int, typer.Option("--min", help="Distinct episodes a template needs.")] = 10,
    locale: LocaleOpt = "en-US",
    json_out: JsonOpt = False,
) -> None:
    """Distinct episodes (instruction + oracle actions) and instances per template over seeds,
    with totals per app, domain and category and the share of templates declared fixed.
    Exits 1 when a template that is not declared fixed has fewer than --min distinct episodes.

    Example: phoneloop tasks stats --seeds 20
    Example: phoneloop tasks stats --tasks category:safety --json
    """
    from mockphone.errors import UnknownTask
    from mockphone.tasks import instances, registry

    try:
        classes = registry.select(task)
    except UnknownTask as exc:
        fail(str(exc))
    _check_locale(locale)
    rows = instances.stats(classes, range(seeds), locale)
    summary = instances.summarize(rows, minimum)
    if json_out:
        print_json({"templates": [r.__dict__ for r in rows], **summary})
    else:
        for r in rows:
            mark = "fixed" if r.fixed else ("[red]LOW[/red]" if r.distinct_episodes < minimum else "")
            console.print(f"{r.template:38} {r.app:9} {r.category:10} {r.distinct_episodes:3d} episodes "
                          f"{r.distinct_instances:3d} instances {mark}")
        for key in ("app", "domain", "category"):
            console.print(f"by {key}: " + ", ".join(f"{k} {v['templates']} templates / {v['distinct']} episodes"
                                                    for k, v in summary[f"by_{key}"].items()))
        console.print(f"{summary['templates']} templates, {summary['distinct_episodes']} distinct episodes over "
                      f"{seeds} seeds; fixed {len(summary['fixed'])} ({100 * summary['fixed_share']:.1f}%); "
                      f"below {minimum}: {len(summary['below_minimum'])}")
    if summary["below_minimum"] or any(r.errors for r in rows):
        raise typer.Exit(1)


@tasks_app.command("suites")
def suites(
    taskset: Annotated[str, typer.Option("--taskset", help="The task set the suites are drawn from (NAME[@vN]).")],
    train: Annotated[str, typer.Option("--train", help="The training instances: a task set NAME[@vN].")],
    prefix: Annotated[str, typer.Option("--prefix", help="Suite names are PREFIX + id, ood-template, ood-app.")] = "",
    per_template: Annotated[int, typer.Option("--per-template", min=1, help="Most instances per template.")] = 3,
    lake: Annotated[str, typer.Option("--lake", envvar="PHONELOOP_LAKE", help="Lake folder or URI.")] = "./lake",
    json_out: JsonOpt = False,
) -> None:
    """Split a task set into the evaluation suites id (unseen instances of trained templates),
    ood-template (templates never trained) and ood-app (apps never trained), disjoint from the
    training instances by fingerprint and by episode; each is written as a versioned suite.

    Example: phoneloop tasks suites --taskset world --train demo-train --prefix demo-
    """
    from datalake import tasksets
    from datalake.errors import LakeError
    from datalake.lake import Lake

    try:
        the_lake = Lake.open(lake)
        source = tasksets.resolve(the_lake, taskset, "taskset")
        rows = tasksets.read(the_lake, source, "taskset")
        train_ref = tasksets.resolve(the_lake, train, "taskset")
        split = tasksets.split_suites(rows, tasksets.read(the_lake, train_ref, "taskset"))
        written = {}
        for kind, members in split.items():
            capped = tasksets.per_template(members, per_template)
            written[prefix + kind] = (tasksets.write(the_lake, prefix + kind, "suite", capped, parent=source)
                                      if capped else None, len(capped))
    except LakeError as exc:
        fail(str(exc))
    if json_out:
        print_json({name: {"suite": ref, "instances": n} for name, (ref, n) in written.items()})
    else:
        for name, (ref, n) in written.items():
            console.print(f"{name}: {ref or 'empty, not written'} ({n} instances, from {source}, none in {train_ref})")
