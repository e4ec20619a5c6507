"""`phoneloop collect ...`: run episodes on mock phones or on adb phones, and record human demonstrations."""

from __future__ import annotations

from typing import Annotated

import typer

from phoneloop.cli_lake import LakeOpt
from phoneloop.cli_phones import AddressOpt, BackendOpt, PerturbOpt, episode_bars
from phoneloop.output import err_console, fail, print_json

collect_app = typer.Typer(help="Collect episodes on mock and adb phones into the lake.", no_args_is_help=True)

PortOpt = Annotated[int | None, typer.Option("--port", "-P", envvar="ANDROID_ADB_SERVER_PORT",
                                             help="adb server port (default 5037).")]


@collect_app.command("run")
def run(
    task: Annotated[str, typer.Option("--task", "-t", help="Task selector (e.g. 'app:shop', 'Settings*').")],
    lake: LakeOpt = "./lake",
    serial: Annotated[list[str] | None, typer.Option("--serial", "-s", help="adb serial (or HOST:PORT/SERIAL); "
                                                     "repeat for a farm. Without it and --adb: an in-process mock "
                                                     "phone.")] = None,
    adb: Annotated[list[str] | None, typer.Option("--adb", help="adb server HOST:PORT; repeat for phones on "
                                                  "several hosts (no --serial: every online phone).")] = None,
    min_battery: Annotated[int, typer.Option("--min-battery", min=0, max=100,
                                             help="Health check: a phone below this battery % takes no job.")] = 15,
    seeds: Annotated[int, typer.Option("--seeds", min=1, help="Seeds 0..N-1 per task.")] = 1,
    policy: Annotated[str, typer.Option(help="'oracle' or module:callable(phone, task) -> Policy.")] = "oracle",
    max_steps: Annotated[int, typer.Option("--max-steps", min=1)] = 30,
    attempts: Annotated[int, typer.Option("--attempts", min=1, help="Tries of one job over the farm (a phone or "
                                          "host lost, or the job raising) before it is given up.")] = 3,
    lease_wait: Annotated[float, typer.Option("--lease-wait", min=0, help="Seconds to wait for a phone another "
                                              "run has leased (0: fail at once, naming the holder).")] = 0.0,
    port: PortOpt = None,
    backend: BackendOpt = "local",
    address: AddressOpt = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Run a policy on tasks and write the episodes (verified where a verifier exists) to the lake.

    On adb phones, jobs come from one queue: an idle, healthy phone takes the next one; an
    episode cut by a phone going offline or its host dying is kept (failure_reason
    device_offline or host_unreachable, not counted against the policy) and retried on
    another phone, as is a job that raised, up to --attempts tries. Each phone is leased to
    this run (a second run on it waits --lease-wait seconds, then fails naming the holder).
    Exits 1, naming them, when any job ended with no episode.

    With --backend ray each phone is a Ray actor on the node that advertises the resource
    adb:HOST:PORT/SERIAL (the node whose adb server sees it; checked before any actor starts);
    the lake must be reachable from every node.

    Example: phoneloop collect run --task 'app:settings' --seeds 3 --adb 127.0.0.1:5037 --adb 10.0.0.7:5037
    """
    from collectors.collect import collect
    from collectors.errors import CollectorError
    from collectors.farm import collect_on_devices
    from collectors.farm_phones import load_policy_factory
    from datalake.errors import LakeError
    from fleet.errors import FleetError
    from mockphone.errors import UnknownTask
    from mockphone.tasks import registry
    from phones.errors import PhoneError

    try:
        names = [cls.name() for cls in registry.select(task)]
        if serial or adb:
            report = collect_on_devices(lake, list(serial or []), names, seeds=range(seeds), port=port,
                                        adb=list(adb) if adb else None, policy=policy, max_steps=max_steps,
                                        min_battery=min_battery, backend=backend, address=address,
                                        max_attempts=attempts, lease_wait=lease_wait,
                                        command="phoneloop collect run --task " + task)
        else:
            if backend != "local":
                raise ValueError("--backend ray needs adb phones (--serial or --adb); the in-process mock phone "
                                 "is local (for mock phones on Ray: phoneloop collect mock --backend ray)")
            from mockphone import MockPhone

            report = collect(lake, MockPhone(), load_policy_factory(policy), names, seeds=range(seeds),
                             max_steps=max_steps)
    except (UnknownTask, CollectorError, PhoneError, FleetError, LakeError, ValueError, ImportError,
            AttributeError) as exc:
        fail(str(exc))
    if json_out:
        print_json(report.__dict__)
    else:
        err_console.print(f"{report.episodes} episode(s) {report.outcomes}: {report.written} written, "
                          f"{report.skipped} already present, {report.quarantined} quarantined")
        for line in report.errors:
            err_console.print(f"  [yellow]{line}[/yellow]")
    failed = getattr(report, "failed_jobs", [])
    if failed:
        fail(f"{len(failed)} job(s) ended with no episode: " + "; ".join(failed), code=1)


@collect_app.command("mock")
def mock(
    tasks: Annotated[str, typer.Option("--tasks", "-t", help="Task selector (e.g. 'app:shop', 'category:mini-app').")],
    episodes: Annotated[int, typer.Option("--episodes", "-n", help="Episodes in all, cycling over the tasks.")],
    workers: Annotated[int, typer.Option("--workers", "-w", help="Phone slots: spawned processes (<= CPU cores) "
                                                              "or, with --backend ray, Ray actors.")] = 1,
    noise: Annotated[float, typer.Option(help="Share of actions done like a human: jittered taps, pauses, "
                                              "typing in bursts.")] = 0.0,
    detours: Annotated[float, typer.Option(help="Share of episodes with one recoverable mistake (labelled).")] = 0.0,
    perturb: PerturbOpt = "none",
    seed: Annotated[int, typer.Option(help="First seed (task params, app data and interruptions).")] = 0,
    locale: Annotated[str, typer.Option("--locale", help="Phones' locale: en-US or zh-CN (screens and "
                                                         "instructions; recorded as meta.locale).")] = "en-US",
    backend: BackendOpt = "local",
    address: AddressOpt = None,
    lake: LakeOpt = "./lake",
    json_out: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Oracle demonstrations on mock phones over W workers, written in batches as they finish.

    Example: phoneloop collect mock --tasks app:settings --episodes 10 --locale zh-CN

    Example: phoneloop collect mock --tasks app:shop --episodes 40 --workers 2 --noise 0.2 --detours 0.3 --perturb real-like

    On a Ray cluster (one actor per phone slot; the lake must be reachable from every node):
    phoneloop collect mock --tasks all --episodes 1000 --workers 32 --backend ray --address auto --lake s3://bucket/lake
    """
    from collectors.mock_collect import MockCollectSpec, collect_mock
    from datalake.errors import LakeError
    from fleet.errors import FleetError
    from mockphone.errors import UnknownTask

    spec = MockCollectSpec(tasks=tasks, episodes=episodes, workers=workers, noise=noise, detours=detours,
                           perturb=perturb, seed=seed, backend=backend, address=address,
                           locale=locale)
    try:
        spec.check()
        with episode_bars() as bar:
            update = bar("collect mock", episodes)
            report = collect_mock(lake, spec, progress=lambda r: update(r.episodes, r.success_rate))
    except (UnknownTask, LakeError, FleetError, ValueError) as exc:
        fail(str(exc))
    if json_out:
        print_json(report.to_dict())
    else:
        err_console.print(f"{report.episodes} episode(s) {report.outcomes} in {report.elapsed_s:.1f} s "
                          f"({report.episodes_per_s:.2f}/s), {report.detoured} with a detour: {report.written} "
                          f"written, {report.skipped} already present, {report.quarantined} quarantined")
        for line in report.errors:
            err_console.print(f"  [yellow]{line}[/yellow]")
    if report.errors:
        raise typer.Exit(1)


@collect_app.command("record")
def record(
    serial: Annotated[str, typer.Option("--serial", "-s", help="adb serial of the phone the operator uses.")],
    instruction: Annotated[str, typer.Option("--instruction", "-i", help="What the demonstration does.")],
    lake: LakeOpt = "./lake",
    task: Annotated[str | None, typer.Option(help="Registered task name, if the demo performs one.")] = None,
    port: PortOpt = None,
    adb: Annotated[str | None, typer.Option("--adb", help="adb server HOST:PORT of the phone (instead of "
                                                          "--port).")] = None,
    lease_wait: Annotated[float, typer.Option("--lease-wait", min=0, help="Seconds to wait for the phone if "
                                              "another run has leased it.")] = 0.0,
    episodes: Annotated[int, typer.Option("--episodes", "-n", min=1, help="Takes to record, one after another.")]
    = 1,
) -> None:
    """Record human demonstrations: touches (getevent), keys and typing, paired with screens.

    Screens are captured continuously and each action is paired with the last frame
    shown at rest before its touch-down; steps whose screen is not certain are flagged
    (step meta pairing=uncertain). Press Enter to end a take, then a key: s (or Enter)
    keeps it as a success, f as a failure, r records it again, d drops it, q stops. Each
    kept take (source human, verified by human) is written to the lake at once. Ctrl-C,
    SIGTERM or the end of input keep the take in progress (outcome unknown, meta.stopped).
    The lake is opened and checked before the first take. If the phone is lost
    mid-recording, the steps so far are written as a partial, flagged episode. The phone is
    leased to this recording (a run that holds it is named).

    Example: phoneloop collect record --serial R58M123 --instruction "Turn off Wi-Fi" --episodes 5

    Example: phoneloop collect record --adb 10.0.0.7:5037 --serial emulator-5554 --instruction "Turn off Wi-Fi"
    """
    from collectors.collect import write
    from collectors.errors import CollectorError
    from collectors.recorder import Recorder
    from collectors.takes import install_sigterm, record_takes
    from datalake.errors import LakeError
    from phoneloop.cli_lake import open_lake
    from phones.adb_phone import AdbPhone
    from phones.errors import PhoneError

    from collectors.farm_phones import parse_adb
    from fleet.errors import FleetError
    from fleet.leases import Leases
    from phones.adb_phone import client

    opened = open_lake(lake)  # before anyone records: a lake that cannot be written fails now
    try:
        opened.check_writable()
        host, port = parse_adb(adb) if adb else ("127.0.0.1", client(port=port).port)
        lease = Leases.take([f"{host}:{port}/{serial}"], command=f"phoneloop collect record --serial {serial}",
                            wait=lease_wait)
    except (LakeError, FleetError, ValueError) as exc:
        fail(str(exc))

    last: list[Recorder] = []  # the previous take's recorder: where it left the touch panel's fingers

    def start() -> Recorder:
        try:
            panel = last[0].panel_state() if last else None
            last[:] = [Recorder(AdbPhone(serial, host=host, port=port), instruction, task=task, panel=panel).start()]
            return last[0]
        except (CollectorError, PhoneError, ValueError) as exc:
            fail(str(exc))
            raise  # unreachable

    def keep(episode) -> None:
        try:
            report = write(opened, [episode])
        except (CollectorError, PhoneError, LakeError) as exc:
            fail(str(exc))
        if episode.meta.get("partial"):
            err_console.print(f"[yellow]{episode.meta['failure_reason']}: kept {len(episode.steps)} step(s) as a "
                              f"partial episode[/yellow]")
        uncertain = sum(s.meta.get("pairing") == "uncertain" for s in episode.steps)
        stopped = f" (stopped: {episode.meta['stopped']})" if episode.meta.get("stopped") else ""
        err_console.print(f"{len(episode.steps)} step(s) ({uncertain} flagged uncertain), outcome {episode.outcome}"
                          f"{stopped}: {report.written} written, {report.quarantined} quarantined "
                          f"{report.errors or ''}")

    install_sigterm()
    with lease:
        takes = record_takes(start, keep, episodes=episodes, read_line=_read_line, say=err_console.print)
    err_console.print(f"{len(takes.kept)} take(s) kept, {takes.discarded} dropped, {takes.redone} redone"
                      + (f"; stopped: {takes.stopped}" if takes.stopped else ""))
    if not takes.kept and takes.empty:
        fail(takes.empty[0])
    if takes.stopped in ("sigint", "sigterm"):
        raise typer.Exit(130 if takes.stopped == "sigint" else 143)


def _read_line(prompt: str) -> str:
    if prompt:
        err_console.print(prompt, end="", markup=False)
    return input()
