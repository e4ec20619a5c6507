"""Options and progress shared by the commands that drive phones (`collect mock`, `collect run`,
`rollout`, `eval`): where workers run (--backend, --address), mock perturbations, and one
progress bar per run showing episodes, speed and success."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Annotated, Callable, Iterator

import typer
from rich.progress import TextColumn

from phoneloop.output import progress_bars

BackendOpt = Annotated[str, typer.Option("--backend", help="local: one spawned process per phone; ray: one Ray "
                                                           "actor per phone (see docs/scale.md).")]
AddressOpt = Annotated[str | None, typer.Option("--address", help="Ray cluster for --backend ray: auto, "
                                                                  "ray://HOST:PORT or HOST:PORT (default: start "
                                                                  "a local one).")]
PerturbOpt = Annotated[str, typer.Option("--perturb", help="Mock phones' perturbations: none, light, real-like, "
                                         "heavy, or a YAML of per-kind rates.")]

Update = Callable[..., None]  # update(done, success_rate, row=None)


@contextmanager
def episode_bars() -> Iterator[Callable[[str, int], Update]]:
    """``with episode_bars() as bar: update = bar("rollout oracle", total); update(done, rate)``:
    one row per run (eval adds one per policy) with episodes done, episodes/s and success."""
    with progress_bars(TextColumn("{task.fields[speed]} ep/s, success {task.fields[rate]}")) as progress:
        def add(label: str, total: int) -> Update:
            row, start = progress.add_task(label, total=total, speed="-", rate="-"), time.perf_counter()

            def update(done: int, success_rate: float) -> None:
                elapsed = time.perf_counter() - start
                progress.update(row, completed=done, rate=f"{100 * success_rate:.0f}%",
                                speed=f"{done / elapsed:.1f}" if elapsed > 0 else "-")
            return update

        yield add
