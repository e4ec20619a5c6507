"""`phoneloop device serve` (a virtual adb server of mock phones) and `phoneloop devices` (the farm's phones)."""

from __future__ import annotations

from typing import Annotated

import typer

from phoneloop.output import console, err_console, fail, print_json

device_app = typer.Typer(help="Virtual adb devices backed by mock phones.", no_args_is_help=True)

PortOpt = Annotated[int | None, typer.Option("--port", "-P", envvar="ANDROID_ADB_SERVER_PORT",
                                             help="adb server port (default 5037).")]


@device_app.command("serve")
def serve(
    port: Annotated[int, typer.Option("--port", "-P", help="Loopback port to listen on (0: a free one).")] = 5037,
    phones: Annotated[int, typer.Option("--phones", "-n", min=1, max=64, help="How many mock phones.")] = 1,
    capture_latency: Annotated[float | None, typer.Option(min=0, help="Seconds a screencap takes (real phones: "
                                                                      "~0.5-1.5; default 0, real-like 0.8).")]
    = None,
    dump_latency: Annotated[float | None, typer.Option(min=0, help="Seconds a uiautomator dump takes (default 0, "
                                                                   "real-like 1.2).")] = None,
    nav_mode: Annotated[str | None, typer.Option(help="3button, gestural or keys: what navigation emits "
                                                      "(default 3button, real-like gestural).")] = None,
    touch_protocol: Annotated[str, typer.Option(help="B, A or single: how the touch panel reports.")] = "B",
    rotate: Annotated[int, typer.Option("--rotate", min=0, max=3,
                                        help="Start rotated: 0..3 quarter turns (1: landscape).")] = 0,
    transition: Annotated[float | None, typer.Option(min=0, help="Seconds a screen change animates; a screencap "
                                                                 "inside it is the two screens blended (Android: "
                                                                 "0.25-0.4; default 0, real-like 0.3).")] = None,
    slow_grabs: Annotated[float | None, typer.Option(min=0, max=1, help="Fraction of screencaps that grab 2-3 s "
                                                                        "late (returning a later frame; default 0, "
                                                                        "real-like 0.05).")] = None,
    grab_jitter: Annotated[float | None, typer.Option(min=0, help="Up to this many seconds before any screencap "
                                                                  "grabs (default 0, real-like 0.2).")] = None,
    real_like: Annotated[bool, typer.Option("--real-like", help="Real-like phones: the realish skin, real-like "
                                                                "perturbations, gesture navigation and real-like "
                                                                "latencies, no verifier (mockphone.reallike); "
                                                                "the options above override its settings.")]
    = False,
) -> None:
    """Serve N mock phones over the adb host protocol on 127.0.0.1 until interrupted.

    Any adb client works against it: adb -P PORT devices / shell / pull / push / exec-out,
    adbutils, and agent harnesses built on them. Mock phone i is seeded i.

    Realism for testing recorders and harnesses: --capture-latency 1.2 --nav-mode gestural
    --transition 0.3 --slow-grabs 0.3 --rotate 1. While it runs, `phoneloop device control`
    takes a phone offline, back online, or rotates it.

    --real-like serves stand-ins for real apps (another look, interruptions, latencies) whose state
    a client cannot read: judge their episodes with phones.judge, as on a real phone.

    Example: phoneloop device serve --port 5555 --phones 4 &  adb -P 5555 shell input tap 540 1000
    """
    from mockphone import reallike
    from mockphone.adb import VirtualAdbServer

    given = {"capture_latency": capture_latency, "dump_latency": dump_latency, "nav_mode": nav_mode,
             "transition": transition, "slow_grabs": slow_grabs, "grab_jitter": grab_jitter}
    base = dict(reallike.DEVICE) if real_like else {"capture_latency": 0.0, "dump_latency": 0.0,
                                                    "nav_mode": "3button", "transition": 0.0, "slow_grabs": 0.0,
                                                    "grab_jitter": 0.0}
    asked = {**base, **{k: v for k, v in given.items() if v is not None}, "touch_protocol": touch_protocol}
    try:
        server = reallike.server(phones, port) if real_like else VirtualAdbServer(phones=phones, port=port)
        for d in server.devices:
            d.configure(**asked)
            if rotate:
                d.rotate(rotate)
    except OSError as exc:
        fail(f"cannot listen on 127.0.0.1:{port}: {exc}")
    except ValueError as exc:
        fail(str(exc))
    serials = ", ".join(d.serial for d in server.devices)
    kind = "real-like" if real_like else "mock"
    err_console.print(f"virtual adb server on 127.0.0.1:{server.port} with {phones} {kind} phone(s): {serials}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


@device_app.command("control")
def control(
    serial: Annotated[str, typer.Argument(help="The served phone, e.g. emulator-5554.")],
    command: Annotated[list[str], typer.Argument(help="offline | online | unauthorized | rotate N | screen on|off "
                                                      "| transition SECONDS | slow-grabs FRACTION")],
    port: Annotated[int, typer.Option("--port", "-P", help="The virtual adb server's port.")] = 5037,
) -> None:
    """Switch a phone of a running `phoneloop device serve` at run time (a cable pulled, a turn).

    Example: phoneloop device control emulator-5554 offline --port 5555

    Example: phoneloop device control emulator-5554 rotate 1 --port 5555
    """
    from mockphone.adb import control as ctl

    try:
        console.print(ctl.send(port, serial, " ".join(command)))
    except ctl.ControlError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"no virtual adb server answers on 127.0.0.1:{port}: {exc}")


def devices(
    port: PortOpt = None,
    host: Annotated[str, typer.Option(help="adb server host.")] = "127.0.0.1",
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the phones the adb server sees: state (device/offline/unauthorized) and screen facts.

    Never starts an adb server: if none answers, says so and exits 2.

    Example: phoneloop devices --port 5037
    """
    from rich.table import Table

    from collectors.farm import list_phones
    from phones.errors import PhoneError

    try:
        rows = list_phones(host=host, port=port)
    except PhoneError as exc:
        fail(str(exc))
    if json_out:
        print_json([r.to_dict() for r in rows])
        return
    table = Table("serial", "state", "screen", "dpi", "model", "kind")
    for r in rows:
        screen = f"{r.width}x{r.height}" if r.width else (r.error or "")
        table.add_row(r.serial, r.state, screen, str(r.dpi or ""), r.model or "", r.kind or "")
    console.print(table if rows else "no phones attached")

