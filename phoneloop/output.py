"""Rendering results for people (rich tables) and scripts (--json, csv)."""

from __future__ import annotations

import csv
import io
import json
import sys
from datetime import date, datetime
from decimal import Decimal
from typing import Any, NoReturn

import pyarrow as pa
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

console = Console()
err_console = Console(stderr=True)


def _jsonable(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, bytes):
        return {"bytes": len(value)}
    if isinstance(value, Decimal):
        return float(value)
    return value


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2, default=_jsonable) + "\n")


def rows_of(table: pa.Table) -> list[dict]:
    return [{k: _jsonable(v) for k, v in row.items()} for row in table.to_pylist()]


def print_table(table: pa.Table, fmt: str = "table", title: str | None = None) -> None:
    if fmt == "json":
        print_json(rows_of(table))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")  # \r\n would end up in piped ids
        writer.writerow(table.column_names)
        for row in rows_of(table):
            writer.writerow(["" if v is None else v for v in row.values()])
        sys.stdout.write(buf.getvalue())
    else:
        out = Table(title=title)
        for name in table.column_names:
            out.add_column(name)
        for row in rows_of(table):
            out.add_row(*("" if v is None else str(v) for v in row.values()))
        console.print(out)


def progress_bars(*extra: ProgressColumn) -> Progress:
    """Progress bars on stderr (stdout stays clean for --json): what, bar, n/total, elapsed, extras."""
    return Progress(TextColumn("{task.description:<18}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    *extra, console=err_console, transient=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` on stderr and exit (2: bad input or environment)."""
    err_console.print(f"[red]error:[/red] {message}")
    raise typer.Exit(code)
