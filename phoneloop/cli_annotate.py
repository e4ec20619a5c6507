"""`phoneloop annotate ...`: Label Studio for a lake — serve, push tasks, pull annotations."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from annotate.errors import AnnotateError
from datalake.errors import LakeError
from datalake.lake import Lake
from phoneloop.cli_lake import JsonOpt, LakeOpt
from phoneloop.output import console, err_console, fail, print_json

app = typer.Typer(help="Correct actions and judge episodes in Label Studio: serve, push, pull.",
                  no_args_is_help=True)

ProjectOpt = Annotated[str, typer.Option("--project", help="Label Studio project title (created by push if missing).")]


def _say(message: str) -> None:
    err_console.print(message)


@app.command()
def serve(lake: LakeOpt = "./lake",
          port: Annotated[int | None, typer.Option(
              help="Preferred port (default: the last one, else 8080; a free one is used if busy).")] = None,
          json_out: JsonOpt = False) -> None:
    """Start Label Studio for the lake (or reuse the running one) and print its URL and login.

    With PHONELOOP_LABEL_STUDIO_URL and PHONELOOP_LABEL_STUDIO_TOKEN set, that server is
    used instead. Otherwise a headless Label Studio runs from its own virtualenv on
    127.0.0.1 with its data, login and API token under <lake>/labelstudio/.

    Example: phoneloop annotate serve --lake ./lake
    """
    from annotate import server as ls

    try:
        srv = ls.serve(Lake.open(lake).uri, port=port, say=_say)
    except (AnnotateError, LakeError) as exc:
        fail(str(exc))
    info = {"url": srv.url, "managed": srv.managed, "username": srv.username, "token_file": srv.token_file,
            "pid": srv.pid}
    if json_out:
        print_json(info)
    elif srv.managed:
        console.print(f"Label Studio at [bold]{srv.url}[/bold] — log in as {srv.username}; "
                      f"password and API token in {srv.token_file}")
    else:
        console.print(f"using the configured Label Studio at [bold]{srv.url}[/bold]")


@app.command()
def stop(lake: LakeOpt = "./lake") -> None:
    """Stop the lake's local Label Studio (its data stays; `serve` restarts it in seconds).

    Example: phoneloop annotate stop --lake ./lake
    """
    from annotate import server as ls

    try:
        stopped = ls.stop(Lake.open(lake).uri)
    except (AnnotateError, LakeError) as exc:
        fail(str(exc))
    console.print("Label Studio stopped" if stopped else "no local Label Studio was running")


@app.command()
def status(lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Whether Label Studio runs, its URL, where the token is, and each project's tasks and annotations.

    Example: phoneloop annotate status --json
    """
    from annotate import server as ls

    try:
        info = ls.status(Lake.open(lake).uri)
    except (AnnotateError, LakeError) as exc:
        fail(str(exc))
    if json_out:
        print_json(info)
        return
    if not info["running"]:
        console.print("Label Studio is not running (start it with `phoneloop annotate serve`)")
        return
    console.print(f"Label Studio at [bold]{info['url']}[/bold] (token: {info['token_file']})")
    for p in info["projects"]:
        console.print(f"  {p['title']}: {p['tasks']} tasks, {p['annotations']} annotations")


@app.command()
def push(project: ProjectOpt, lake: LakeOpt = "./lake",
         preset: Annotated[str | None, typer.Option(help="failed | unverified | random:FRACTION")] = None,
         where: Annotated[str | None, typer.Option(help="SQL condition over s (steps) and e (episodes).")] = None,
         kind: Annotated[str, typer.Option(help="step (fix actions) or episode (judge outcomes).")] = "step",
         frames_url: Annotated[str, typer.Option(help="Base URL of the phoneloop API serving /frames/.")] =
         "http://127.0.0.1:8765",
         json_out: JsonOpt = False) -> None:
    """Push steps (or episodes) as Label Studio tasks, the recorded action pre-filled; idempotent.

    Frames are loaded by the annotator's browser from the phoneloop API (`phoneloop serve`).

    Example: phoneloop annotate push --project fix-taps --preset failed
    """
    from annotate import push as pusher
    from annotate import server as ls

    try:
        opened = Lake.open(lake)
        with ls.connect(opened.uri).client() as client:
            report = pusher.push(opened, client, project, preset=preset, where=where, kind=kind,
                                 frames_url=frames_url)
    except (AnnotateError, LakeError, ValueError) as exc:
        fail(str(exc))
    if json_out:
        print_json(asdict(report))
    else:
        console.print(f"{report.pushed} tasks pushed to {project!r} ({report.skipped} already there)")


@app.command()
def pull(project: ProjectOpt, lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Write the project's annotations into the lake as annotation rows (raw steps untouched).

    Unusable annotations go to the lake's quarantine with the reason (exit code 1).

    Example: phoneloop annotate pull --project fix-taps
    """
    from annotate import pull as puller
    from annotate import server as ls

    try:
        opened = Lake.open(lake)
        with ls.connect(opened.uri).client() as client:
            report = puller.pull(opened, client, project)
    except (AnnotateError, LakeError) as exc:
        fail(str(exc))
    if json_out:
        print_json(asdict(report))
    else:
        console.print(f"{report.written} annotations written, {report.skipped} already in the lake, "
                      f"{report.quarantined} quarantined")
        for reason in report.reasons:
            err_console.print(f"  quarantined {reason}")
    if report.quarantined:
        raise typer.Exit(1)


@app.command()
def webhook(project: ProjectOpt, lake: LakeOpt = "./lake",
            api_url: Annotated[str, typer.Option(help="Base URL of the phoneloop API as Label Studio reaches it.")] =
            "http://127.0.0.1:8765",
            secret: Annotated[str, typer.Option(envvar="PHONELOOP_WEBHOOK_SECRET",
                                                help="The API's webhook secret (PHONELOOP_WEBHOOK_SECRET).")] = "",
            json_out: JsonOpt = False) -> None:
    """Make Label Studio send the project's annotations to the phoneloop API as they are saved.

    Idempotent: an existing webhook to the same URL is kept.

    Example: PHONELOOP_WEBHOOK_SECRET=s3cret phoneloop annotate webhook --project fix-taps
    """
    from annotate import hooks
    from annotate import server as ls

    if not secret:
        fail("the webhook needs the API's secret: --secret or PHONELOOP_WEBHOOK_SECRET")
    try:
        with ls.connect(Lake.open(lake).uri).client() as client:
            hook = hooks.register(client, project, api_url, secret)
    except (AnnotateError, LakeError) as exc:
        fail(str(exc))
    if json_out:
        print_json({"id": hook["id"], "url": hook["url"], "project": hook.get("project")})
    else:
        console.print(f"Label Studio project {project!r} posts annotations to {hook['url']}")


@app.command()
def agreement(lake: LakeOpt = "./lake",
              tolerance_px: Annotated[float, typer.Option(help="Points this close (device px) agree.")] = 14.0,
              json_out: JsonOpt = False) -> None:
    """Inter-annotator agreement on steps (correct?, corrected action) and episodes (outcome).

    Example: phoneloop annotate agreement --tolerance-px 20 --json
    """
    from annotate.agreement import agreement as measure

    try:
        report = measure(Lake.open(lake), tolerance_px=tolerance_px)
    except LakeError as exc:
        fail(str(exc))
    if json_out:
        print_json(report)
        return
    fmt = lambda s: "-" if s["agreement"] is None else f"{s['agreement']:.0%} of {s['pairs']} pairs"  # noqa: E731
    console.print(f"{report['annotators']} annotators; {report['steps']['items']} steps and "
                  f"{report['episodes']['items']} episodes judged by two or more")
    console.print(f"  step correct: {fmt(report['steps']['step_correct'])}")
    console.print(f"  action (±{tolerance_px:g} px): {fmt(report['steps']['action'])}")
    console.print(f"  episode outcome: {fmt(report['episodes']['outcome'])}")
