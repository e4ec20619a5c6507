"""`phoneloop rollout` and `phoneloop eval`: run policies on phones, write verified episodes, compare."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import TextColumn

from datalake.errors import LakeError
from phoneloop.cli_lake import JsonOpt, LakeOpt
from phoneloop.output import console, fail, print_json, progress_bars
from rollout.errors import RolloutError

PhonesOpt = Annotated[str, typer.Option("--phones", help="mock:N or adb:SERIAL[,SERIAL...].")]
TasksOpt = Annotated[str, typer.Option("--tasks", help="Task selector, e.g. app:shop, category:mini-app, a name.")]
EpisodesOpt = Annotated[int, typer.Option("--episodes", help="Episodes (seeds) per task.")]
StyleOpt = Annotated[str, typer.Option("--style", help="Model output format: qwen3vl, json or uitars.")]
CoordsOpt = Annotated[str, typer.Option("--coords", help="Model coordinates: abs, resized, rel1000, rel1.")]
ModelOpt = Annotated[str, typer.Option("--model", help="Model name sent to an endpoint.")]
AdbPortOpt = Annotated[int | None, typer.Option("--adb-port", help="adb server port for adb: phones.")]
PerturbOpt = Annotated[str, typer.Option("--perturb", help="Mock phones' perturbations: none, light, real-like, "
                                         "heavy, or a YAML of per-kind rates.")]


def _spec(policy, tasks, phones, episodes, round_, max_steps, style, coords, model, perturb="none"):
    from rollout.policies import PolicyOptions
    from rollout.runner import RolloutSpec

    return RolloutSpec(policy=policy, tasks=tasks, phones=phones, episodes=episodes, round=round_,
                       max_steps=max_steps, options=PolicyOptions(style=style, coords=coords, model=model),
                       perturb=perturb)


def _bar():
    return progress_bars(TextColumn("success {task.fields[rate]}"))


def rollout(
    policy: Annotated[str, typer.Option("--policy", help="oracle, random[:SEED], an http(s) endpoint, or a model.")],
    tasks: TasksOpt = "category:single-app",
    phones: PhonesOpt = "mock:2",
    episodes: EpisodesOpt = 1,
    round_: Annotated[int | None, typer.Option("--round", help="Loop round recorded on the episodes.")] = None,
    max_steps: Annotated[int | None, typer.Option(help="Step limit (default 2x the oracle's, 30 on real phones).")] = None,
    style: StyleOpt = "qwen3vl",
    coords: CoordsOpt = "rel1000",
    model: ModelOpt = "default",
    adb_port: AdbPortOpt = None,
    perturb: PerturbOpt = "none",
    lake: LakeOpt = "./lake",
    json_out: JsonOpt = False,
) -> None:
    """Run a policy on phones (one worker per phone) and write the verified episodes to the lake.

    Example: phoneloop rollout --policy oracle --phones mock:4 --tasks app:clock --episodes 2 --round 1
    """
    from rollout.runner import jobs_for
    from rollout.runner import rollout as run

    try:
        spec = _spec(policy, tasks, phones, episodes, round_, max_steps, style, coords, model, perturb)
        total = len(jobs_for(spec))
        with _bar() as bar:
            task = bar.add_task(f"rollout {policy}", total=total, rate="-")
            report = run(lake, spec, adb_port=adb_port, progress=lambda r: bar.update(
                task, completed=r.episodes, rate=f"{100 * r.success_rate:.0f}%"))
    except (RolloutError, LakeError, ValueError) as exc:
        fail(str(exc))
    result = {"rollout_id": report.rollout_id, "episodes": report.episodes, "outcomes": report.outcomes,
              "success_rate": report.success_rate, "written": report.written, "quarantined": report.quarantined,
              "invalid_steps": report.invalid_steps, "errors": report.errors}
    if json_out:
        print_json(result)
    else:
        console.print(f"{report.episodes} episodes, success {100 * report.success_rate:.1f}% {report.outcomes}, "
                      f"{report.written} written, {report.invalid_steps} invalid steps")
        for error in report.errors[:10]:
            console.print(f"  [yellow]error[/yellow] {error}")
        if report.outcomes.get("unknown"):
            console.print("real-phone outcomes are unknown until a person judges them:\n  phoneloop annotate push "
                          "--project judge --kind episode --where "
                          f"\"json_extract_string(e.meta_json, '$.rollout_id') = '{report.rollout_id}'\"")
    if report.errors:
        raise typer.Exit(1)


def eval_(
    policies: Annotated[str, typer.Option("--policies", help="Comma-separated policies (see rollout --policy).")],
    tasks: TasksOpt = "category:single-app",
    phones: PhonesOpt = "mock:2",
    episodes: EpisodesOpt = 1,
    max_steps: Annotated[int | None, typer.Option(help="Step limit (default 2x the oracle's).")] = None,
    style: StyleOpt = "qwen3vl",
    coords: CoordsOpt = "rel1000",
    model: ModelOpt = "default",
    perturb: PerturbOpt = "none",
    lake: LakeOpt = "./lake",
    json_out: JsonOpt = False,
) -> None:
    """Compare policies on the same tasks: success rate per category and app with 95% intervals.

    Saves report.md, chart.png and results.json under <lake>/evals/<id>/.

    Example: phoneloop eval --policies oracle,random --tasks category:mini-app --episodes 3
    """
    from rollout.eval import evaluate
    from rollout.runner import jobs_for

    names = [p.strip() for p in policies.split(",") if p.strip()]
    if not names:
        fail("--policies needs at least one policy")
    try:
        spec = _spec(names[0], tasks, phones, episodes, None, max_steps, style, coords, model, perturb)
        total = len(jobs_for(spec))
        with _bar() as bar:
            bars = {p: bar.add_task(f"eval {p}", total=total, rate="-") for p in names}
            report = evaluate(lake, names, spec, progress=lambda p, r: bar.update(
                bars[p], completed=r.episodes, rate=f"{100 * r.success_rate:.0f}%"))
    except (RolloutError, LakeError, ValueError) as exc:
        fail(str(exc))
    if json_out:
        print_json(report.to_dict())
    else:
        console.print(report.markdown, markup=False, highlight=False)
        console.print(f"saved in {report.folder}")
