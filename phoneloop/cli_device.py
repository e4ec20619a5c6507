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
    capture_latency: Annotated[float, typer.Option(min=0, help="Seconds a screencap takes (real phones: ~0.5-1.5).")]
    = 0.0,
    dump_latency: Annotated[float, typer.Option(min=0, help="Seconds a uiautomator dump takes.")] = 0.0,
    nav_mode: Annotated[str, typer.Option(help="3button, gestural or keys: what navigation emits.")] = "3button",
    touch_protocol: Annotated[str, typer.Option(help="B, A or single: how the touch panel reports.")] = "B",
) -> None:
    """Serve N mock phones over the adb host protocol on 127.0.0.1 until interrupted.

    Any adb client works against it: adb -P PORT devices / shell / pull / push / exec-out,
    adbutils, and agent harnesses built on them. Mock phone i is seeded i.

    Realism for testing recorders and harnesses: --capture-latency 1.2 --nav-mode gestural.

    Example: phoneloop device serve --port 5555 --phones 4 &  adb -P 5555 shell input tap 540 1000
    """
    from mockphone.adb import VirtualAdbServer

    try:
        server = VirtualAdbServer(phones=phones, port=port)
        for d in server.devices:
            d.configure(capture_latency=capture_latency, dump_latency=dump_latency, nav_mode=nav_mode,
                        touch_protocol=touch_protocol)
    except OSError as exc:
        fail(f"cannot listen on 127.0.0.1:{port}: {exc}")
    except ValueError as exc:
        fail(str(exc))
    serials = ", ".join(d.serial for d in server.devices)
    err_console.print(f"virtual adb server on 127.0.0.1:{server.port} with {phones} mock phone(s): {serials}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


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

