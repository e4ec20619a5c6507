"""A small ``/system/bin/sh`` for virtual devices: command lists, redirections, ``| grep``.

Enough for what adb clients send: ``rm -f F; uiautomator dump F && echo success``,
``screencap -p > F``, ``dumpsys window | grep mCurrentFocus``, ``cmd 2>/dev/null``.
Each simple command runs through :meth:`VirtualDevice.run_simple` (device commands such
as ``screencap`` and ``getevent``, then ``mockphone.shell`` for the rest).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockphone.adb.device import VirtualDevice

OPERATORS = (";", "&&", "||", "|")


@dataclass
class Result:
    code: int
    stdout: bytes = b""
    stderr: bytes = b""


def tokenize(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def run(device: VirtualDevice, line: str) -> Result:
    """Run one shell command line on ``device``: ``a ; b``, ``a && b``, ``a || b``, ``a | grep x``."""
    try:
        tokens = tokenize(line)
    except ValueError as exc:
        return Result(2, stderr=f"/system/bin/sh: syntax error: {exc}\n".encode())
    out, err = bytearray(), bytearray()
    last = Result(0)
    op = ";"
    while tokens:
        n = next((i for i, t in enumerate(tokens) if t in (";", "&&", "||")), len(tokens))
        part, sep = tokens[:n], (tokens[n] if n < len(tokens) else ";")
        tokens = tokens[n + 1:]
        if op == ";" or (op == "&&" and last.code == 0) or (op == "||" and last.code != 0):
            last = _pipeline(device, part)
            out += last.stdout
            err += last.stderr
        op = sep
    return Result(last.code, bytes(out), bytes(err))


def _pipeline(device: VirtualDevice, tokens: list[str]) -> Result:
    stages: list[list[str]] = [[]]
    for t in tokens:
        if t == "|":
            stages.append([])
        else:
            stages[-1].append(t)
    result = _simple(device, stages[0])
    for stage in stages[1:]:
        result = _filter(stage, result)
    return result


def _simple(device: VirtualDevice, tokens: list[str]) -> Result:
    argv: list[str] = []
    stdout_to: str | None = None
    drop_stderr = merge_stderr = False
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t in (">", ">>") and i + 1 < len(tokens):
            target = tokens[i + 1]
            if argv and argv[-1] == "2":
                argv.pop()
                drop_stderr = target == "/dev/null"
            else:
                stdout_to = target
            i += 2
            continue
        if t == ">&" and i + 1 < len(tokens):
            if argv and argv[-1] == "2":
                argv.pop()
            merge_stderr = True
            i += 2
            continue
        argv.append(t)
        i += 1
    if not argv:
        return Result(0)
    result = device.run_simple(argv)
    if merge_stderr:
        result = Result(result.code, result.stdout + result.stderr)
    if drop_stderr:
        result.stderr = b""
    if stdout_to is not None:
        if stdout_to != "/dev/null":
            device.files[stdout_to] = result.stdout
        result.stdout = b""
    return result


def _filter(argv: list[str], upstream: Result) -> Result:
    """The filters harnesses pipe into: grep [-E|-i|-v] PATTERN, head -n N, tail -n N."""
    lines = upstream.stdout.decode("utf-8", "replace").splitlines()
    name, args = (argv[0], argv[1:]) if argv else ("", [])
    if name in ("grep", "egrep"):
        flags = {a for a in args if a.startswith("-")}
        pats = [a for a in args if not a.startswith("-")]
        if not pats:
            return Result(2, stderr=b"usage: grep [-Eiv] PATTERN\n")
        rx = re.compile(pats[0] if ("-E" in flags or name == "egrep") else re.escape(pats[0]),
                        re.I if "-i" in flags else 0)
        keep = [ln for ln in lines if bool(rx.search(ln)) != ("-v" in flags)]
        return Result(0 if keep else 1, "".join(ln + "\n" for ln in keep).encode(), upstream.stderr)
    if name in ("head", "tail"):
        count = 10
        if len(args) == 2 and args[0] == "-n" and args[1].isdigit():
            count = int(args[1])
        keep = lines[:count] if name == "head" else lines[-count:] if count else []
        return Result(0, "".join(ln + "\n" for ln in keep).encode(), upstream.stderr)
    return Result(127, stderr=f"/system/bin/sh: {name}: inaccessible or not found\n".encode())
