"""`phoneloop loop` and `phoneloop loop status`: run rounds of the loop, see where they stand."""

from __future__ import annotations

import contextlib
import sys

import typer

loop_app = typer.Typer(help="Run rounds of the loop (resumable), or show their state.", no_args_is_help=False)


@loop_app.callback(invoke_without_command=True)
def loop(
    ctx: typer.Context,
    rounds: int = typer.Option(1, "--rounds", help="How many rounds to run (resumes unfinished ones)."),
    config: str = typer.Option(None, "--config", help="loop.yaml (default: built-in small settings)."),
    lake: str = typer.Option("./lake", "--lake", envvar="PHONELOOP_LAKE", help="Lake path or URI."),
    json_out: bool = typer.Option(False, "--json", help="Print the loop state as JSON."),
) -> None:
    """Run rounds of collect -> curate -> SFT -> rollout -> curate -> GRPO -> eval, resumable.

    A stage that fails or produces nothing (no episodes, an empty dataset, a model that
    does not load, an eval policy that did not run) stops the loop with exit code 1; the
    state file says which stage and why (phoneloop loop status). Run again to resume.

    Example: phoneloop loop --rounds 2 --config examples/loop.yaml
    """
    if ctx.invoked_subcommand is not None:
        return
    from curation.errors import CurationError
    from datalake.errors import LakeError
    from fleet.errors import FleetError
    from phoneloop.loop import Loop, LoopConfig, LoopConfigError, StageFailed
    from phoneloop.output import err_console, fail, print_json
    from rollout.errors import RolloutError
    from rollout.heldout import EvalOverlap

    try:
        with contextlib.redirect_stdout(sys.stderr):  # trainers log to stdout; keep it for the result
            state = Loop(lake, LoopConfig.load(config), say=lambda m: err_console.print(m)).run(rounds)
    except StageFailed as exc:  # exit 2 when the eval is not held out (the overlap is named), else 1
        fail(str(exc), code=2 if isinstance(exc.__cause__, EvalOverlap) else 1)
    except (LoopConfigError, FileNotFoundError, LakeError, CurationError, RolloutError, FleetError) as exc:
        fail(str(exc))
    if json_out:
        print_json(state)
    else:
        for name, stages in state.items():
            print(name, ", ".join(stages))


@loop_app.command("status")
def status(
    config: str = typer.Option(None, "--config", help="loop.yaml (names the loop; default: built-in settings)."),
    lake: str = typer.Option("./lake", "--lake", envvar="PHONELOOP_LAKE", help="Lake path or URI."),
    json_out: bool = typer.Option(False, "--json", help="Print the stages as JSON."),
) -> None:
    """Each round's stages: done, failed (and why) or pending, with their inputs and outputs.

    Example: phoneloop loop status --config examples/loop.yaml --lake ./lake
    """
    from phoneloop.loop import Loop, LoopConfig, LoopConfigError, _short
    from phoneloop.output import console, fail, print_json

    try:
        the_loop = Loop(lake, LoopConfig.load(config))
        rows = the_loop.status()
    except (LoopConfigError, FileNotFoundError) as exc:
        fail(str(exc))
    if json_out:
        print_json(rows)
        return
    for r in rows:
        inputs = ", ".join(f"{k} {v}" for k, v in r["inputs"].items() if k != "table_versions")
        line = f"round {r['round']} {r['stage']:<15} {r['state']:<7} in: {inputs or '-'}  out: {_short(r['outputs'])}"
        console.print(line + (f"  error: {r['error']}" if r["error"] else ""), markup=False, highlight=False)
    for p in the_loop.progress():
        cells = ", ".join(f"{name} {c['successes']}/{c['n']} [{100 * c['low']:.0f}%, {100 * c['high']:.0f}%]"
                          for name, c in p["success"].items())
        console.print(f"round {p['round']} success on {p['suite']}: {cells}", markup=False, highlight=False)
        for role in ("sft", "grpo"):
            d = p["vs_previous"].get(role)
            if d and d.get("pairs"):
                console.print(f"  {role} vs round {p['round'] - 1}: {100 * d['diff']:+.1f} points over {d['pairs']} "
                              f"paired instances, 95% [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}], "
                              f"McNemar p {d['p_value']:.3g}", markup=False, highlight=False)
