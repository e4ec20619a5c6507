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
          host: Annotated[str, typer.Option(
              help="Bind address (0.0.0.0 for a team behind a reverse proxy; see docs/annotation.md).")] = "127.0.0.1",
          port: Annotated[int | None, typer.Option(
              help="Port: used exactly, or an error naming it when busy (default: the lake's last port, "
                   "else 8080 or a free one).")] = None,
          api_url: Annotated[str | None, typer.Option(
              help="The phoneloop API as Label Studio reaches it: the only private address its webhooks may "
                   "reach (default PHONELOOP_API_URL or http://127.0.0.1:8765).")] = None,
          json_out: JsonOpt = False) -> None:
    """Start Label Studio for the lake (or reuse the running one) and print its URL and login.

    With PHONELOOP_LABEL_STUDIO_URL and PHONELOOP_LABEL_STUDIO_TOKEN set, that server is
    used instead. Otherwise a headless Label Studio runs from its own virtualenv on
    HOST (127.0.0.1 by default) with its data, login and API token under <lake>/labelstudio/.

    Example: phoneloop annotate serve --lake ./lake --host 0.0.0.0 --port 8080
    """
    from annotate import server as ls

    try:
        srv = ls.serve(Lake.open(lake).uri, port=port, host=host, api_url=api_url, say=_say)
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
         preset: Annotated[str | None, typer.Option(
             help="failed | unverified | random:FRACTION | low-confidence[:N] | disagreement | uncertain-pairing | "
                  "unjudged-real | failed-rollouts")] = None,
         where: Annotated[str | None, typer.Option(help="SQL condition over s (steps) and e (episodes).")] = None,
         kind: Annotated[str, typer.Option(help="step (fix actions), episode (judge outcomes) or review (a reviewer's "
                                                   "project: each annotator's answer side by side).")] = "step",
         frames_url: Annotated[str | None, typer.Option(
             help="Public base URL of the phoneloop API serving /frames/ (default PHONELOOP_PUBLIC_URL, "
                  "else http://127.0.0.1:8765).")] = None,
         overlap: Annotated[int | None, typer.Option(
             help="Maximum annotations per task: that many annotators get each task.")] = None,
         sign: Annotated[bool, typer.Option(
             help="Frame URLs carry a signed, expiring token (needs PHONELOOP_API_TOKEN; for an API with "
                  "PHONELOOP_API_AUTH_READS=1).")] = False,
         ttl_days: Annotated[float, typer.Option(help="How long signed frame URLs stay valid.")] = 14.0,
         gold: Annotated[int, typer.Option(
             help="Mix in N step tasks with known answers (steps of verifier-passed episodes); "
                  "`annotate agreement` scores each annotator on them.")] = 0,
         json_out: JsonOpt = False) -> None:
    """Push steps (or episodes) as Label Studio tasks, the recorded action pre-filled; idempotent.

    Frames are loaded by the annotator's browser from the phoneloop API (`phoneloop serve`).

    Example: phoneloop annotate push --project fix-taps --preset disagreement --overlap 2 --sign

    Then, for the reviewers: phoneloop annotate push --project fix-taps-review --preset disagreement --kind review
    """
    from annotate import push as pusher
    from annotate import server as ls

    try:
        signer = _signer(ttl_days) if sign else None
        opened = Lake.open(lake)
        with ls.connect(opened.uri).client() as client:
            report = pusher.push(opened, client, project, preset=preset, where=where, kind=kind,
                                 frames_url=frames_url, overlap=overlap, sign=signer and signer.query,
                                 gold=gold)
    except (AnnotateError, LakeError, ValueError) as exc:
        fail(str(exc))
    if json_out:
        print_json(asdict(report))
    else:
        console.print(f"{report.pushed} tasks pushed to {project!r} ({report.skipped} already there; "
                      f"up to {report.overlap} annotations per task)")


def _signer(ttl_days: float):
    import os

    from api.signing import FrameSigner

    return FrameSigner.from_api_token(os.environ.get("PHONELOOP_API_TOKEN", ""), ttl_s=int(ttl_days * 86400))


@app.command()
def pull(project: ProjectOpt, lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Write the project's annotations into the lake as annotation rows (raw steps untouched).

    Unusable annotations go to the lake's quarantine with the reason (exit code 1 when a new one
    failed; one already quarantined by an earlier pull is counted, not failed again).

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
                      f"{report.retracted} retracted (deleted in Label Studio), {report.healed} healed, "
                      f"{report.quarantined} quarantined ({report.already_quarantined} quarantined before)")
        for warning in report.warnings:
            err_console.print(f"warning: {warning}")
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
    """Inter-annotator agreement: kappas, tap distance, text, outcome, per person (with reviewers, on gold),
    and an annotator x annotator matrix.

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
    steps, dist = report["steps"], report["steps"]["tap_distance_px"]
    console.print(f"{report['annotators']} annotators; {steps['items']} steps and "
                  f"{report['episodes']['items']} episodes judged by two or more")
    console.print(f"  action type: {_fmt(steps['action_type'])}")
    console.print(f"  step correct: {_fmt(steps['step_correct'])}")
    console.print(f"  action (±{tolerance_px:g} px): {_fmt(steps['action'])}")
    if dist["pairs"]:
        console.print(f"  tap distance: p50 {dist['p50']} px, p90 {dist['p90']} px, max {dist['max']} px "
                      f"({dist['within_tolerance']:.0%} within ±{tolerance_px:g} px)")
    console.print(f"  text: {_fmt(steps['text'])}")
    console.print(f"  episode outcome: {_fmt(report['episodes']['outcome'])}")
    reviewers = {p["annotator"]: p for p in report["with_reviewers"]}
    golden = {p["annotator"]: p for p in report["gold"]}
    for person in report["per_annotator"]:
        share = person["agreement_with_consensus"]
        who = person["annotator"]
        console.print(f"  {who}: {person['annotations']} annotations, "
                      f"{'-' if share is None else f'{share:.0%}'} with consensus, "
                      f"{_share_of(reviewers.get(who))} with reviewers, {_share_of(golden.get(who))} on gold, "
                      f"median lead time {person['median_lead_time_s'] or '-'} s")
    grid = report["matrix"]
    if grid["annotators"]:
        console.print("  annotator x annotator (share agreed, items):")
        for who, cells in zip(grid["annotators"], grid["cells"]):
            console.print(f"    {who}: " + "  ".join(
                "-" if c is None else f"{_share_of(c)} ({c['items']})" for c in cells))


def _share_of(entry: dict | None) -> str:
    if not entry or entry.get("agreement") is None:
        return "-"
    return f"{entry['agreement']:.0%}"


def _fmt(share: dict) -> str:
    if share["agreement"] is None:
        return "-"
    kappas = "".join(f", {name} κ {share[key]:.2f}" for name, key in (("Cohen", "cohen_kappa"),
                                                                       ("Fleiss", "fleiss_kappa"))
                     if share.get(key) is not None)
    return f"{share['agreement']:.0%} of {share['pairs']} pairs{kappas}"


users = typer.Typer(help="The annotation team: Label Studio users with a role (annotator or reviewer).",
                    no_args_is_help=True)
app.add_typer(users, name="users")


@users.command("add")
def users_add(email: Annotated[str, typer.Argument(help="The person's email (their Label Studio login).")],
              lake: LakeOpt = "./lake",
              role: Annotated[str, typer.Option(help="annotator | reviewer (a reviewer's verdict wins).")] =
              "annotator",
              json_out: JsonOpt = False) -> None:
    """Create a Label Studio user (or find them) and record their role; prints a new user's password once.

    Example: phoneloop annotate users add rev@example.com --role reviewer
    """
    from annotate import people
    from annotate import server as ls

    try:
        opened = Lake.open(lake)
        with ls.connect(opened.uri).client() as client:
            user = people.add_user(client, opened.uri, email, role)
    except (AnnotateError, LakeError) as exc:
        fail(str(exc))
    if json_out:
        print_json(user)
        return
    console.print(f"{user['email']} (id {user['id']}) is a {user['role']}")
    if user["password"]:
        console.print(f"  first login password: {user['password']} (shown once; they can change it)")


@users.command("list")
def users_list(lake: LakeOpt = "./lake", json_out: JsonOpt = False) -> None:
    """Every Label Studio user with their stable id and role.

    Example: phoneloop annotate users list --json
    """
    from annotate import people
    from annotate import server as ls

    try:
        opened = Lake.open(lake)
        with ls.connect(opened.uri).client() as client:
            listed = people.list_users(client, opened.uri)
    except (AnnotateError, LakeError) as exc:
        fail(str(exc))
    if json_out:
        print_json(listed)
        return
    for user in listed:
        console.print(f"{user['id']:>5}  {user['email']}  {user['role']}")
