"""`phoneloop train ...`: SFT and GRPO with TRL, the tiny offline model, the model registry."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from curation.errors import CurationError
from datalake.errors import LakeError
from phoneloop.cli_lake import JsonOpt, LakeOpt, open_lake
from phoneloop.output import console, fail, print_json, print_table
from training.errors import TrainingError

app = typer.Typer(help="Train policies with TRL (SFT, GRPO) and list registered models.", no_args_is_help=True)

ModelOpt = Annotated[str, typer.Option("--model", help="Hub id, local folder, registered model name, or 'tiny'.")]
OutputOpt = Annotated[str, typer.Option("--output", help="Name of the new model in the lake's registry.")]
StepsOpt = Annotated[int, typer.Option("--max-steps", help="Optimizer steps (-1: whole epochs, SFT only).")]
PixelsOpt = Annotated[int | None, typer.Option("--max-pixels", help="Image-size cap per screenshot, in pixels.")]
LoraOpt = Annotated[bool, typer.Option("--lora", help="Train LoRA adapters (merged into the saved model).")]
ResumeOpt = Annotated[bool, typer.Option("--resume", help="Continue the output's latest checkpoint.")]
LrOpt = Annotated[float | None, typer.Option("--lr", help="Learning rate (default: the stage's).")]
BatchOpt = Annotated[int, typer.Option("--batch-size", help="Rows (SFT) or completions (GRPO) per device per step.")]
LauncherOpt = Annotated[str, typer.Option("--launcher", help="'accelerate': run in --num-processes processes "
                                                             "through `accelerate launch` (data parallel).")]
ProcsOpt = Annotated[int, typer.Option("--num-processes", help="Processes (GPUs, or CPU ranks with gloo) for "
                                                               "--launcher accelerate.")]
AccConfigOpt = Annotated[str | None, typer.Option("--accelerate-config",
                                                  help="An accelerate config, e.g. training/accelerate/fsdp.yaml.")]


def _relaunch(launcher: str, num_processes: int, config: str | None, lake: str, model: str) -> bool:
    """Re-run this command under ``accelerate launch`` when asked; True if it did (and succeeded)."""
    if launcher == "none":
        return False
    from training.launch import LAUNCHERS, launch, strip_launcher_args

    if launcher not in LAUNCHERS:
        fail(f"--launcher must be one of {', '.join(LAUNCHERS)}, got {launcher!r}")
    if model == "tiny":  # build the shared tiny model once, before the ranks race to build it
        from training.tiny import tiny_model

        tiny_model(open_lake(lake).uri)
    try:
        code = launch(strip_launcher_args(sys.argv[1:]), num_processes, config)
    except TrainingError as exc:
        fail(str(exc))
    if code != 0:
        fail(f"accelerate launch exited with {code} (a rank failed; see its output above)")
    return True


def _run(stage, lake: str, run) -> None:
    opened = open_lake(lake)
    try:
        entry = stage(opened, run, echo=console.print)
    except (TrainingError, CurationError, LakeError) as exc:
        fail(str(exc))
        raise  # unreachable
    from training.common import is_main_process

    if is_main_process():  # under accelerate, one rank prints the registered model
        print_json(entry.to_dict())


@app.command()
def sft(
    dataset: Annotated[str, typer.Option("--dataset", help="Dataset version NAME@vN with an sft export.")],
    output: OutputOpt,
    model: ModelOpt = "tiny",
    max_steps: StepsOpt = -1,
    epochs: Annotated[float, typer.Option(help="Epochs when --max-steps is -1.")] = 1.0,
    batch_size: BatchOpt = 4,
    lr: LrOpt = None,
    max_pixels: PixelsOpt = None,
    lora: LoraOpt = False,
    tools: Annotated[bool, typer.Option("--tools", help="Show the mobile_use tool schema in prompts, as online "
                                                       "GRPO does (SFT before `grpo --env mock`).")] = False,
    balance: Annotated[str | None, typer.Option(
        "--balance", help="'task' or 'app': repeat episodes so every group weighs as many as the largest "
                          "(a template whose seeds give one identical episode is kept once in the lake).")] = None,
    resume: ResumeOpt = False,
    launcher: LauncherOpt = "none",
    num_processes: ProcsOpt = 1,
    accelerate_config: AccConfigOpt = None,
    lake: LakeOpt = "./lake",
) -> None:
    """Supervised fine-tuning on a dataset version's sft export; registers the checkpoint.

    Example: phoneloop train sft --dataset default@v1 --model tiny --output sft-a --max-steps 50
    Two processes: ... --launcher accelerate --num-processes 2
    """
    if _relaunch(launcher, num_processes, accelerate_config, lake, model):
        return
    from training.sft import SFTRun, run_sft

    extra = {"learning_rate": lr} if lr is not None else {}
    _run(run_sft, lake, SFTRun(dataset=dataset, output=output, model=model, max_steps=max_steps, epochs=epochs,
                               batch_size=batch_size, max_pixels=max_pixels, lora=lora, tools=tools, resume=resume,
                               balance=balance, **extra))


@app.command()
def grpo(
    output: OutputOpt,
    dataset: Annotated[str | None, typer.Option("--dataset", help="NAME@vN with a grpo export (offline).")] = None,
    env: Annotated[str, typer.Option("--env", help="'mock': online episodes on mock phones (verified); 'real-like': "
                                     "on real-like phones, rewarded only by the outcome judge; 'real-like+mock'.")] = "none",
    share: Annotated[float | None, typer.Option("--share", help="--env real-like+mock: share of online prompts on "
                                                "real-like phones (default 0.5).")] = None,
    tasks: Annotated[str, typer.Option("--tasks", help="Task selector for --env mock, e.g. 'app:clock'.")] = "all",
    mix: Annotated[bool, typer.Option("--mix", help="Offline prompts and mock episodes in one run.")] = False,
    model: ModelOpt = "tiny",
    max_steps: StepsOpt = 100,
    num_generations: Annotated[int, typer.Option(help="Completions per prompt (the group).")] = 4,
    batch_size: BatchOpt = 4,
    max_turns: Annotated[int, typer.Option(help="Actions per tool-call mock episode.")] = 5,
    online_prompts: Annotated[int, typer.Option(help="Mock-episode prompts (--env mock) on seeds from "
                                                     "1000 (apart from demonstrations and evaluations).")] = 64,
    offline_prompts: Annotated[int | None, typer.Option(help="At most this many offline rows, a seeded "
                                                             "sample (with --mix it sets their share).")] = None,
    perturb: Annotated[str, typer.Option("--perturb", help="--env mock phones' perturbations: none, light, "
                                         "real-like, heavy, or a YAML of per-kind rates.")] = "none",
    tools: Annotated[bool, typer.Option("--tools", help="Show the mobile_use tool schema in offline prompts "
                                                       "(for models SFT'd with --tools; implied by --mix).")] = False,
    lr: LrOpt = None,
    max_pixels: PixelsOpt = None,
    lora: LoraOpt = False,
    resume: ResumeOpt = False,
    launcher: LauncherOpt = "none",
    num_processes: ProcsOpt = 1,
    accelerate_config: AccConfigOpt = None,
    lake: LakeOpt = "./lake",
) -> None:
    """GRPO with verifiable step rewards (offline) and/or mock-phone episodes (online).

    Example: phoneloop train grpo --dataset default@v1 --model sft-a --output grpo-a --max-steps 20
    """
    if _relaunch(launcher, num_processes, accelerate_config, lake, model):
        return
    from training.grpo import GRPORun, run_grpo

    extra = {"learning_rate": lr} if lr is not None else {}
    _run(run_grpo, lake, GRPORun(output=output, dataset=dataset, env=env, share=share, tasks=tasks, mix=mix, model=model,
                                 max_steps=max_steps, num_generations=num_generations, batch_size=batch_size,
                                 max_turns=max_turns, online_prompts=online_prompts, offline_prompts=offline_prompts,
                                 perturb=perturb, max_pixels=max_pixels, lora=lora, tools=tools, resume=resume,
                                 **extra))


@app.command()
def models(name: Annotated[str | None, typer.Argument(help="Only this model's rows.")] = None,
           lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """List registered models: name, base model, parent, dataset, path.

    Example: phoneloop train models --json
    """
    from training.registry import list_models

    entries = [e.to_dict() for e in list_models(open_lake(lake), name)]
    if json_out:
        print_json(entries)
        return
    import pyarrow as pa

    cols = ("name", "base_model", "parent", "dataset", "path", "created_at")
    print_table(pa.Table.from_pylist([{k: e[k] for k in cols} for e in entries]) if entries else
                pa.table({k: pa.array([], pa.string()) for k in cols}))


@app.command()
def tiny(lake: LakeOpt = "./lake") -> None:
    """Build (once) the tiny offline Qwen3-VL-architecture model under the lake and print its folder.

    Example: phoneloop train tiny --lake ./lake
    """
    from training.tiny import tiny_model

    console.print(str(tiny_model(open_lake(lake).uri)))
