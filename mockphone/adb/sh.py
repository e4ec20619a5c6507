"""A small ``/system/bin/sh`` for virtual devices: command lists, ``$?``/``$VAR``, ``$(cmd)``, redirections, ``| grep``.

Enough for what adb clients send: ``rm -f F; uiautomator dump F && echo success``,
``screencap -p > F``, ``dumpsys window | grep mCurrentFocus``, ``cmd 2>/dev/null``,
``CMD; echo X4EXIT:$?`` (adbutils' ``shell2`` without shell v2), ``A=1; echo "$A" ${HOME}``.
As in ``sh``: ``;``, ``&&`` and ``||`` chain left to right, ``$?`` is the last exit status
when its command runs, variables expand inside double quotes but not single ones, and each
command line is a fresh shell (assignments last until its end). ``$(cmd)`` and ```cmd```
run ``cmd`` as a shell line of their own when their command runs and put what it printed
in its place (trailing newlines removed; one word inside double quotes, split into words
outside): ``input tap $(echo 540 1200)``, ``S=$(getprop ro.serialno) && echo "$S"``.
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
ENV = {"HOME": "/", "USER": "shell", "PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin:/system/xbin",
       "EXTERNAL_STORAGE": "/sdcard", "ANDROID_DATA": "/data", "TMPDIR": "/data/local/tmp", "SHELL": "/bin/sh"}
_VAR = re.compile(r"\$(\?|\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass
class Result:
    code: int
    stdout: bytes = b""
    stderr: bytes = b""
    combined: bytes | None = None  # stdout and stderr in the order written (what a shell v1 client sees)


def tokenize(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    return list(lexer)


def split_chain(line: str) -> list[tuple[str, str]]:
    """``a; b && c || d`` -> [(a, ";"), (b, "&&"), (c, "||"), (d, ";")], respecting quotes and backslashes."""
    parts: list[tuple[str, str]] = []
    buf, quote, i = [], "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"' and i + 1 < len(line):
                buf.append(line[i:i + 2])
                i += 2
                continue
            if quote == '"' and (line.startswith("$(", i) or ch == "`"):
                end = substitution_end(line, i)
                buf.append(line[i:end])
                i = end
                continue
            quote = "" if ch == quote else quote
        elif ch == "\\" and i + 1 < len(line):
            buf.append(line[i:i + 2])
            i += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif line.startswith("$(", i) or ch == "`":  # a command substitution is one piece of its word
            end = substitution_end(line, i)
            buf.append(line[i:end])
            i = end
            continue
        elif line.startswith(("&&", "||"), i) or ch == ";":
            op = line[i:i + 2] if ch != ";" else ";"
            parts.append(("".join(buf), op))
            buf, i = [], i + len(op)
            continue
        buf.append(ch)
        i += 1
    if quote:
        raise ValueError("No closing quotation")
    parts.append(("".join(buf), ";"))
    return [(text, op) for text, op in parts if text.strip() or op != ";"]


def substitution_end(line: str, i: int) -> int:
    """The index just past the ``$(...)`` or backquoted command starting at ``line[i]`` (nesting and quotes kept)."""
    if line[i] == "`":
        end = line.find("`", i + 1)
        if end < 0:
            raise ValueError("No closing backquote")
        return end + 1
    depth, quote, j = 1, "", i + 2
    while j < len(line):
        ch = line[j]
        if quote:
            if ch == "\\" and quote == '"':
                j += 2
                continue
            quote = "" if ch == quote else quote
        elif ch == "\\":
            j += 2
            continue
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError("No closing ')' for $(")


def substitute(text: str, run_inner) -> str:
    """``$(cmd)`` and backquoted commands replaced by what ``run_inner(cmd)`` prints, trailing newlines
    removed: one word inside double quotes, split into words outside them, as sh does."""
    out, quote, i = [], "", 0
    while i < len(text):
        ch = text[i]
        if quote != "'" and (text.startswith("$(", i) or ch == "`"):
            end = substitution_end(text, i)
            inner = text[i + 2:end - 1] if ch == "$" else text[i + 1:end - 1]
            value = run_inner(inner).rstrip("\n")
            if quote == '"':
                out.append(value.replace("\\", "\\\\").replace('"', '\\"'))
            else:
                out.append(" ".join(shlex.quote(w) for w in value.split()))
            i = end
            continue
        if ch == "\\" and quote != "'" and i + 1 < len(text):
            out.append(text[i:i + 2])
            i += 2
            continue
        if ch in "'\"":
            quote = "" if quote == ch else (ch if not quote else quote)
        out.append(ch)
        i += 1
    return "".join(out)


def expand(text: str, env: dict[str, str], status: int) -> str:
    """``$?``, ``$NAME`` and ``${NAME}`` replaced outside single quotes (the value quoted so it stays one word)."""
    out, quote, start = [], "", 0
    for i, ch in enumerate(text):
        if ch in "'\"" and (i == 0 or text[i - 1] != "\\"):
            if quote == ch:
                out.append(_expand_part(text[start:i + 1], env, status, quote))
                quote, start = "", i + 1
            elif not quote:
                out.append(_expand_part(text[start:i], env, status, ""))
                quote, start = ch, i
    out.append(_expand_part(text[start:], env, status, quote))
    return "".join(out)


def _expand_part(part: str, env: dict[str, str], status: int, quote: str) -> str:
    if quote == "'":
        return part

    def value(m: re.Match) -> str:
        name = m.group(1).strip("{}")
        v = str(status) if name == "?" else env.get(name, "")
        return v.replace("\\", "\\\\").replace('"', '\\"') if quote else (shlex.quote(v) if v else "")
    return _VAR.sub(value, part)


def run(device: VirtualDevice, line: str) -> Result:
    """Run one shell command line on ``device``: ``a ; b``, ``a && b``, ``a || b``, ``a | grep x``, ``$?``."""
    try:
        segments = split_chain(line)
    except ValueError as exc:
        return Result(2, stderr=f"/system/bin/sh: syntax error: {exc}\n".encode())
    env = dict(ENV)
    out, err, both = bytearray(), bytearray(), bytearray()
    last = Result(0)
    op = ";"
    for text, sep in segments:
        if op == ";" or (op == "&&" and last.code == 0) or (op == "||" and last.code != 0):
            def inner(cmd: str) -> str:
                result = run(device, cmd)
                err.extend(result.stderr)
                return result.stdout.decode("utf-8", "replace")

            try:
                expanded = expand(text, env, last.code)
                if "$(" in expanded or "`" in expanded:
                    expanded = substitute(expanded, inner)
                tokens = tokenize(expanded)
            except ValueError as exc:
                return Result(2, bytes(out), bytes(err) + f"/system/bin/sh: syntax error: {exc}\n".encode())
            while tokens and _ASSIGN.match(tokens[0]):
                name, _, value = tokens.pop(0).partition("=")
                env[name] = value
            last = _pipeline(device, tokens) if tokens else Result(0)
            out += last.stdout
            err += last.stderr
            both += last.stdout + last.stderr
        op = sep
    return Result(last.code, bytes(out), bytes(err), bytes(both))


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
