"""`phoneloop rollout` and `phoneloop eval`: run policies on phones, write verified episodes, compare."""

from __future__ import annotations

from typing import Annotated

import typer
from datalake.errors import LakeError
from fleet.errors import FleetError
from phoneloop.cli_lake import JsonOpt, LakeOpt
from phoneloop.cli_phones import AddressOpt, BackendOpt, PerturbOpt, episode_bars
from phoneloop.output import console, fail, print_json
from rollout.errors import RolloutError

PhonesOpt = Annotated[str, typer.Option("--phones", help="mock:N or adb:SERIAL[,SERIAL...].")]
TasksOpt = Annotated[str, typer.Option("--tasks", help="Task selector, e.g. app:shop, category:mini-app, a name.")]
EpisodesOpt = Annotated[int, typer.Option("--episodes", help="Episodes (seeds) per task.")]
StyleOpt = Annotated[str, typer.Option("--style", help="Model output format: qwen3vl, json or uitars.")]
CoordsOpt = Annotated[str, typer.Option("--coords", help="Model coordinates: abs, resized, rel1000, rel1.")]
ModelOpt = Annotated[str, typer.Option("--model", help="Model name sent to an endpoint.")]
AdbPortOpt = Annotated[int | None, typer.Option("--adb-port", help="adb server port for adb: phones.")]
AdbOpt = Annotated[str | None, typer.Option("--adb", help="adb server HOST:PORT of the adb: phones (another host's "
                                                         "server; instead of --adb-port).")]
LeaseWaitOpt = Annotated[float, typer.Option("--lease-wait", min=0, help="Seconds to wait for an adb phone another "
                                             "run has leased (0: fail at once, naming the holder).")]
LocaleOpt = Annotated[str, typer.Option("--locale", help="Mock phones' locale: en-US or zh-CN (screens and "
                                        "instructions; recorded as meta.locale).")]
ApiKeyOpt = Annotated[str | None, typer.Option("--api-key", envvar="OPENAI_API_KEY",
                                               help="Bearer token for an endpoint (default: $OPENAI_API_KEY).")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", help="Seconds per endpoint request.")]
RetriesOpt = Annotated[int, typer.Option("--retries", help="Retries of a failing request (backoff with jitter); "
                                                           "a request never costs more than timeout x retries.")]
TemperatureOpt = Annotated[float, typer.Option("--temperature", help="Sampling temperature sent to an endpoint.")]
MaxTokensOpt = Annotated[int, typer.Option("--max-tokens", help="Most tokens a model may answer per step.")]
HeaderOpt = Annotated[list[str] | None, typer.Option("--header", help="Extra HTTP header NAME:VALUE (repeatable).")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="First seed: each task runs seeds SEED..SEED+episodes-1.")]
SeedsOpt = Annotated[str | None, typer.Option("--seeds", help="Exactly these seeds for every task: N, A-B or a comma "
                                                              "list (e.g. 100-102,200); replaces --seed/--episodes.")]


def _adb_phones(phones: str, adb: str | None, adb_port: int | None) -> tuple[str, list[str]]:
    """(the --phones spec, with each serial as HOST:PORT/SERIAL under --adb; the lease labels of its adb phones)."""
    if not phones.startswith("adb:"):
        if adb:
            raise ValueError(f"--adb {adb} is for adb: phones, not --phones {phones}")
        return phones, []
    from collectors.farm_phones import parse_adb
    from phones.adb_phone import client

    host, port = parse_adb(adb) if adb else ("127.0.0.1", client(port=adb_port).port)
    labels = [s if "/" in s else f"{host}:{port}/{s}" for s in phones[4:].split(",") if s]
    return ("adb:" + ",".join(labels) if adb else phones), labels


def _leases(labels: list[str], command: str, wait: float):
    """Leases on the adb phones of a run (``fleet.leases``), or nothing to hold for mock phones."""
    from contextlib import nullcontext

    from fleet.leases import Leases

    return Leases.take(labels, command=command, wait=wait) if labels else nullcontext()


def _seeds(text: str | None) -> tuple[int, ...] | None:
    from phoneloop.cli_tasks import _seed_range

    return None if text is None else tuple(_seed_range(text))


def _options(style, coords, model, api_key, timeout, retries, temperature, max_tokens, header):
    from rollout.policies import PolicyOptions

    headers = {}
    for item in header or []:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"--header must be NAME:VALUE, not {item!r}")
        headers[name.strip()] = value.strip()
    return PolicyOptions(style=style, coords=coords, model=model, api_key=api_key, timeout=timeout, retries=retries,
                         temperature=temperature, max_tokens=max_tokens, headers=headers)


def _spec(policy, tasks, phones, episodes, round_, max_steps, options, **extra):
    from rollout.spec import RolloutSpec

    return RolloutSpec(policy=policy, tasks=tasks, phones=phones, episodes=episodes, round=round_,
                       max_steps=max_steps, options=options, **extra)


def _resumable(lake: str, spec, jobs, new_run: bool):
    """``spec`` with the run id of this command's unfinished last run, or of a new run (rollout.resume)."""
    from dataclasses import replace

    from datalake.lake import Lake
    from rollout.resume import choose_run, command_key
    from rollout.spec import parse_phones, policy_identity

    key = command_key(spec, jobs, policy_identity(spec), parse_phones(spec.phones)[0])
    choice = choose_run(Lake.open(lake), key, jobs, new_run=new_run)
    if choice.resumed:
        console.print(f"resuming run {choice.run_id}: {choice.done} of {choice.jobs} job(s) already in the lake "
                      "(--new-run starts another)")
    return replace(spec, run_id=choice.run_id)


def rollout(
    policy: Annotated[str, typer.Option("--policy", help="oracle, random[:SEED], an http(s) endpoint, or a model.")],
    tasks: TasksOpt = "category:single-app",
    phones: PhonesOpt = "mock:2",
    episodes: EpisodesOpt = 1,
    seed: SeedOpt = 0,
    seeds: SeedsOpt = None,
    round_: Annotated[int | None, typer.Option("--round", help="Loop round recorded on the episodes.")] = None,
    max_steps: Annotated[int | None, typer.Option(help="Step limit (default 2x the oracle's, 30 on real phones).")] = None,
    style: StyleOpt = "qwen3vl",
    coords: CoordsOpt = "rel1000",
    model: ModelOpt = "default",
    api_key: ApiKeyOpt = None,
    timeout: TimeoutOpt = 30.0,
    retries: RetriesOpt = 2,
    temperature: TemperatureOpt = 0.0,
    max_tokens: MaxTokensOpt = 256,
    header: HeaderOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", help="Name of this run: the same name gives the same "
                                                                 "episode ids, and a rerun skips what the lake holds. "
                                                                 "Default: this command's last run while it is "
                                                                 "unfinished, else a new one.")] = None,
    new_run: Annotated[bool, typer.Option("--new-run", help="Start a new run even if this command's last run is "
                                                            "unfinished (default: resume it).")] = False,
    adb_port: AdbPortOpt = None,
    adb: AdbOpt = None,
    lease_wait: LeaseWaitOpt = 0.0,
    perturb: PerturbOpt = "none",
    locale: LocaleOpt = "en-US",
    backend: BackendOpt = "local",
    address: AddressOpt = None,
    lake: LakeOpt = "./lake",
    json_out: JsonOpt = False,
) -> None:
    """Run a policy on phones (one worker per phone) and write the verified episodes to the lake.

    Endpoint errors are retried; an episode whose endpoint keeps failing is kept with its
    steps as failure_reason=policy_error, and the run goes on. Exits 1 when any job ended
    with no episode (naming the errors). adb phones are leased to the run: a phone another
    run holds is waited for (--lease-wait) or refused, naming the holder.

    Without --run-id, a rerun of the same command (policy, tasks, seeds, step limit, options)
    resumes its last run while that run has jobs without an episode, so a rollout killed and
    rerun adds exactly the missing episodes; once it is complete the command starts a new run.
    --new-run starts a new one at once.

    Example: phoneloop rollout --policy http://127.0.0.1:8000/v1 --model qwen3-vl --phones mock:4 --tasks app:clock --episodes 2 --retries 3 --timeout 20
    Example: phoneloop rollout --policy my-sft --tasks app:shop --seeds 300-309
    Example: phoneloop rollout --policy oracle --phones adb:emulator-5554,emulator-5556 --adb 10.0.0.7:5037
    """
    from rollout.runner import rollout as run
    from rollout.spec import jobs_for

    try:
        options = _options(style, coords, model, api_key, timeout, retries, temperature, max_tokens, header)
        phones, labels = _adb_phones(phones, adb, adb_port)
        spec = _spec(policy, tasks, phones, episodes, round_, max_steps, options, run_id=run_id, perturb=perturb,
                     locale=locale, backend=backend, address=address, seed=seed, seeds=_seeds(seeds))
        if run_id is not None and new_run:
            fail("--new-run and --run-id together: a named run is resumed by naming it; leave one out", code=2)
        jobs = jobs_for(spec)
        total = len(jobs)
        if run_id is None:
            spec = _resumable(lake, spec, jobs, new_run)
        with _leases(labels, f"phoneloop rollout --policy {policy}", lease_wait), episode_bars() as bar:
            update = bar(f"rollout {policy}", total)
            report = run(lake, spec, adb_port=adb_port, progress=lambda r: update(r.episodes, r.success_rate))
    except (RolloutError, FleetError, LakeError, ValueError) as exc:
        fail(str(exc))
    if json_out:
        print_json(report.to_dict())
    else:
        console.print(f"{report.episodes} episodes, success {100 * report.success_rate:.1f}% {report.outcomes}, "
                      f"{report.written} written, {report.skipped} already in the lake, "
                      f"{report.invalid_steps} invalid steps")
        console.print(f"policy errors: {report.policy_errors} episode(s) ended by a failing endpoint, "
                      f"{report.retries} request(s) retried; {report.device_offline} phone drop-out(s)")
        for error in report.errors[:10]:
            console.print(f"  [yellow]error[/yellow] {error}")
        if report.outcomes.get("unknown"):
            console.print("real-phone outcomes are unknown until a person judges them:\n  phoneloop annotate push "
                          "--project judge --kind episode --where "
                          f"\"json_extract_string(e.meta_json, '$.rollout_id') = '{report.rollout_id}'\"")
    if report.episodes == 0 and report.skipped == 0:
        fail(f"no episode recorded ({len(report.errors)} job(s) failed, first: "
             f"{report.errors[0] if report.errors else 'none'})", code=1)
    unfinished = total - report.episodes - report.skipped
    if unfinished > 0:
        fail(f"{unfinished} of {total} job(s) ended with no episode: " + ("; ".join(report.errors) or "no error was "
             "reported"), code=1)


def eval_(
    policies: Annotated[str, typer.Option("--policies", help="Comma-separated policies (see rollout --policy).")],
    tasks: TasksOpt = "all",
    phones: PhonesOpt = "mock:2",
    episodes: Annotated[int, typer.Option("--episodes", help="Seeds per task (the same seeds for every policy).")] = 3,
    seed: SeedOpt = 0,
    seeds: SeedsOpt = None,
    suite: Annotated[str | None, typer.Option("--suite", help="Evaluation suite(s) NAME[@vN], comma-separated "
                                                              "(phoneloop tasks suites): their instances replace "
                                                              "--tasks and the seeds.")] = None,
    allow_overlap: Annotated[bool, typer.Option("--allow-overlap", help="Run even when a model trained on some of "
                                                                        "the evaluated instances (the evals row "
                                                                        "records how many).")] = False,
    allow_partial: Annotated[bool, typer.Option("--allow-partial", help="Exit 0 even when a policy has no episode "
                                                                        "for some job or a policy error ended one "
                                                                        "(its evals row says status=partial).")] = False,
    max_steps: Annotated[int | None, typer.Option(help="Step limit (default 2x the oracle's).")] = None,
    style: StyleOpt = "qwen3vl",
    coords: CoordsOpt = "rel1000",
    model: ModelOpt = "default",
    perturb: PerturbOpt = "none",
    locale: LocaleOpt = "en-US",
    api_key: ApiKeyOpt = None,
    timeout: TimeoutOpt = 30.0,
    retries: RetriesOpt = 2,
    temperature: TemperatureOpt = 0.0,
    max_tokens: MaxTokensOpt = 256,
    header: HeaderOpt = None,
    adb: AdbOpt = None,
    lease_wait: LeaseWaitOpt = 0.0,
    backend: BackendOpt = "local",
    address: AddressOpt = None,
    lake: LakeOpt = "./lake",
    json_out: JsonOpt = False,
) -> None:
    """Compare policies on the same task instances: success per suite, category and app with 95%
    intervals, and McNemar's test between every pair of policies on the instances both ran.

    The instances come from evaluation suites (--suite) or from --tasks on seeds --seed onwards
    (--episodes of them) or --seeds. Before anything runs, every instance's content fingerprint is
    checked against the datasets each registered model (and the models it continued) trained on:
    an overlap exits 2 naming the shared instances, unless --allow-overlap. Results are rows of the
    lake's evals table (SELECT * FROM evals) with the suite and the overlap count; the episodes have
    purpose=eval, so no shipped recipe trains on them. Exits 1 naming any policy that did not run,
    and any policy with fewer episodes than jobs or an episode ended by a policy error (an endpoint
    that kept failing), unless --allow-partial.

    Example: phoneloop eval --policies my-sft,oracle,random --suite demo-id,demo-ood-template,demo-ood-app
    Example: phoneloop eval --policies oracle,random,random:7 --tasks category:mini-app --seeds 100-102
    Example: phoneloop eval --policies oracle,random --tasks app:settings --episodes 2 --locale zh-CN
    Example: phoneloop eval --policies oracle --phones adb:emulator-5554 --adb 10.0.0.7:5037 --tasks app:clock

    adb phones are leased to the evaluation (--lease-wait, as for rollout).
    """
    from rollout.eval import evaluate, partial_message
    from rollout.heldout import EvalOverlap

    names = [p.strip() for p in policies.split(",") if p.strip()]
    if not names:
        fail("--policies needs at least one policy")
    refs = [r.strip() for r in (suite or "").split(",") if r.strip()]
    if suite is not None and not refs:
        fail("--suite names no suite")
    try:
        options = _options(style, coords, model, api_key, timeout, retries, temperature, max_tokens, header)
        phones, labels = _adb_phones(phones, adb, None)
        spec = _spec(names[0], tasks, phones, episodes, None, max_steps, options, perturb=perturb,
                     locale=locale, backend=backend, address=address, seed=seed, seeds=_seeds(seeds))
        if refs:
            from datalake import tasksets
            from datalake.lake import Lake

            the_lake = Lake.open(lake)
            total = sum(len(tasksets.read(the_lake, r, "suite")) for r in refs)
        else:
            from rollout.spec import jobs_for

            total = len(jobs_for(spec))
        with _leases(labels, f"phoneloop eval --policies {policies}", lease_wait), episode_bars() as bar:
            bars: dict[str, object] = {}

            def update(p, r):
                if p not in bars:
                    bars[p] = bar(f"eval {p}", total)
                bars[p](r.episodes + r.skipped, r.success_rate)

            report = evaluate(lake, names, spec, progress=update, suites=refs or None, allow_overlap=allow_overlap)
    except EvalOverlap as exc:
        fail(str(exc), code=2)
    except (RolloutError, FleetError, LakeError, ValueError) as exc:
        fail(str(exc))
    if json_out:
        print_json(report.to_dict())
    else:
        console.print(report.markdown, markup=False, highlight=False)
        console.print(f"eval {report.eval_id}: rows in the evals table; table and chart in {report.folder}")
    if report.failed:
        fail("polic" + ("ies" if len(report.failed) > 1 else "y") + " that did not run: " +
             "; ".join(f"{p}: {e}" for p, e in report.failed.items()), code=1)
    if report.partial and not allow_partial:
        fail(partial_message(report.partial), code=1)
