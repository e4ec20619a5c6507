"""docs/scale.md names no phoneloop flag that does not exist (issue 32: it documented `--max-attempts`)."""

import re
from pathlib import Path

import click
import typer

from phoneloop.cli import app

DOC = Path(__file__).resolve().parents[2] / "docs" / "scale.md"
OTHER_TOOLS = ("ray start", "vllm serve", "aws ", "accelerate launch")  # lines of other programs' commands
OTHER_FLAGS = {"--head", "--num-cpus", "--resources", "--block", "--max-model-len", "--limit-mm-per-prompt"}


def _options(command: click.Command) -> set[str]:
    names = {opt for p in command.params for opt in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])}
    for sub in getattr(command, "commands", {}).values():
        names |= _options(sub)
    return names


def test_every_flag_in_docs_scale_exists():
    known = _options(typer.main.get_command(app))
    named = set()
    for line in DOC.read_text().splitlines():
        if any(tool in line for tool in OTHER_TOOLS) and "phoneloop" not in line:
            continue
        named |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line))
    assert named - known - OTHER_FLAGS == set()
