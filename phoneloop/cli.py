"""The `phoneloop` command: one verb per stage of the loop; each a thin shell over a package."""

from __future__ import annotations

import typer

from phoneloop import __version__
from phoneloop.cli_curate import curate, datasets_app
from phoneloop.cli_lake import app as lake_app
from phoneloop.cli_lake import run_demo
from phoneloop.cli_serve import serve
from phoneloop.cli_collect import collect_app
from phoneloop.cli_device import device_app, devices

app = typer.Typer(
    help="phoneloop: collect, annotate, curate, train and roll out phone-use agents on real and mock phones.",
    no_args_is_help=True,
    add_completion=False,
)
app.add_typer(lake_app, name="lake")
app.command()(curate)
app.add_typer(datasets_app, name="datasets")
app.command("serve")(serve)
app.add_typer(device_app, name="device")
app.command("devices")(devices)
app.add_typer(collect_app, name="collect")


@app.command()
def version() -> None:
    """Print the phoneloop version."""
    typer.echo(__version__)


@app.command()
def demo(
    lake: str = typer.Option("./lake", "--lake", envvar="PHONELOOP_LAKE", help="Lake path or URI."),
    json_out: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run the embedded default: create a lake, import the bundled sample, print a summary.

    Example: phoneloop demo --lake ./lake
    """
    run_demo(lake, json_out)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
