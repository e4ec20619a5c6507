"""The `phoneloop` command: one verb per stage of the loop; each a thin shell over a package."""

from __future__ import annotations

import contextlib
import sys

import typer

from phoneloop import __version__
from phoneloop.cli_annotate import app as annotate_app
from phoneloop.cli_curate import curate, datasets_app
from phoneloop.cli_lake import app as lake_app
from phoneloop.cli_loop import loop_app
from phoneloop.cli_rollout import eval_, rollout
from phoneloop.cli_serve import serve
from phoneloop.cli_train import app as train_app
from phoneloop.cli_collect import collect_app
from phoneloop.cli_device import device_app, devices
from phoneloop.cli_tasks import tasks_app
from phoneloop.cli_env import env_app
from phoneloop.cli_experiment import experiment_app

app = typer.Typer(
    help="phoneloop: collect, annotate, curate, train and roll out phone-use agents on real and mock phones.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(lake_app, name="lake")
app.add_typer(annotate_app, name="annotate")
app.command()(curate)
app.add_typer(datasets_app, name="datasets")
app.command("serve")(serve)
app.command("rollout")(rollout)
app.command("eval")(eval_)
app.add_typer(train_app, name="train")
app.add_typer(device_app, name="device")
app.command("devices")(devices)
app.add_typer(collect_app, name="collect")
app.add_typer(tasks_app, name="tasks")
app.add_typer(env_app, name="env")
app.add_typer(loop_app, name="loop")
app.add_typer(experiment_app, name="experiment")


@app.command()
def version() -> None:
    """Print the phoneloop version."""
    typer.echo(__version__)


@app.command()
def demo(
    lake: str = typer.Option("./lake", "--lake", envvar="PHONELOOP_LAKE", help="Lake path or URI."),
    round_: str = typer.Option("loop", "--round",
                               help="loop: one round of examples/loop.yaml with rollouts (the default, about "
                                    "5 min on 2 cores); experiment: demos -> SFT -> SFT->GRPO measured on "
                                    "held-out seeds against random and issue 18's targets (about 4 min)."),
    quick: bool = typer.Option(False, "--quick", help="The round's small version (3 templates, few steps; "
                                                      "examples/loop_quick.yaml for the loop), about a minute."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run the embedded default on mock phones, a local lake and a tiny offline model.

    Imports the bundled real-phone sample, then the round. loop (default): one round of
    examples/loop.yaml on the demo task set (oracle demonstrations -> element-list dataset ->
    SFT -> rollouts -> dataset -> GRPO with online mock episodes -> eval on held-out seeds
    against the oracle and random). experiment: the same recipe measured in-process, random
    vs SFT vs SFT->GRPO on held-out seeds with 95% intervals and the targets, curves in
    <lake>/experiments/demo. Safe to run again.

    Example: phoneloop demo --lake ./lake

    Example: phoneloop demo --round experiment --quick
    """
    import pyarrow as pa

    from phoneloop import demo as demo_round
    from phoneloop.output import err_console, print_json, print_table

    if round_ not in demo_round.ROUNDS:
        raise typer.BadParameter(f"--round must be one of {', '.join(demo_round.ROUNDS)}, not {round_!r}")
    with contextlib.redirect_stdout(sys.stderr):  # trainers log to stdout; keep it for the result
        report = demo_round.run(lake, say=lambda message: err_console.print(message), round=round_, quick=quick)
    if json_out:
        print_json(report)
        return
    print_table(pa.Table.from_pylist(report["summary"]), title="episodes by source, phone and category")
    if round_ == "loop":
        r = report["round"]
        c = r.get("correct") or {}
        print(f"corrections: {c.get('corrections', 0)} of {c.get('failed_rollouts', 0)} failed rollout(s) by "
              f"{c.get('inputs', {}).get('annotator', '-')}, {c.get('written', 0)} verified corrected episode(s)")
        print(f"datasets {r['curate']['dataset']}, {r['curate_rollouts']['dataset']}; "
              f"models {r['sft']['model']}, {r['grpo']['model']}")
        print(report["eval_markdown"])
        print(f"learning curves: {r['eval']['curves']}")
        print(f"next: phoneloop serve --lake {report['lake']}  (trajectories at http://127.0.0.1:8765/episodes), "
              f"the dataset report {r['curate']['path']}/report.html, the evaluation in {r['eval']['folder']}")
        return
    x = report["experiment"]
    print(x["markdown"])
    print(f"learning curves: {x['curves']}")
    print(f"next: phoneloop serve --lake {report['lake']}  (trajectories at http://127.0.0.1:8765/episodes), "
          f"phoneloop rollout --policy demo-grpo --lake {report['lake']}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
