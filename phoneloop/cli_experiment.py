"""`phoneloop experiment recipe`: one shared SFT, then RL-Real and RL-Real+Mock, on four suites (issue 29)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from phoneloop.cli_lake import LakeOpt, open_lake
from phoneloop.output import fail

experiment_app = typer.Typer(help="Measured experiments on the embedded default.", no_args_is_help=True)


@experiment_app.command("recipe")
def recipe(
    quick: Annotated[bool, typer.Option("--quick", help="The small version (<= 5 min on 2 idle cores).")] = False,
    output: Annotated[Path | None, typer.Option("--output", help="Report folder (default <lake>/experiments/"
                                                "recipe).")] = None,
    lake: LakeOpt = "./lake",
) -> None:
    """SFT, RL-Real and RL-Real+Mock from one SFT model; success per arm on id, ood-template, ood-app
    (real-like phones, judged) and mock-id, paired differences, curves and report.md.

    Example: phoneloop experiment recipe --quick --lake /tmp/recipe-lake
    """
    from training.recipe import QUICK, RecipeConfig, SuiteOverlapsTraining, run_recipe, write_report

    opened = open_lake(lake)
    try:
        report = run_recipe(opened, QUICK if quick else RecipeConfig(), echo=typer.echo)
    except SuiteOverlapsTraining as exc:
        fail(str(exc))
    folder = write_report(report, output or Path(str(opened.uri)) / "experiments" / "recipe")
    typer.echo(f"report: {folder / 'report.md'}")
