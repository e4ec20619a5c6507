"""Fetching one frame by sha256 without scanning the frames table.

The index maps every sha to (file, row group, row) from the sha column and the
Parquet footers only; a fetch then reads one small row group (frames are written
in row groups of 64). The index is built lazily per table version.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import pyarrow.fs as pafs
import pyarrow.parquet as pq
from deltalake import DeltaTable

from datalake.errors import FrameNotFound
from datalake.storage import filesystem

_OPEN_FILES = 64


class FrameIndex:
    def __init__(self, dt: DeltaTable | None, storage_options: dict[str, str] | None = None):
        self._dt = dt
        self._storage_options = storage_options
        self._where: dict[str, tuple[str, int, int]] | None = None
        self._files: OrderedDict[str, pq.ParquetFile] = OrderedDict()
        self._lock = threading.Lock()

    def _build(self) -> dict[str, tuple[str, int, int]]:
        where: dict[str, tuple[str, int, int]] = {}
        if self._dt is None:
            return where
        for uri in self._dt.file_uris():
            pf = self._open(uri)
            shas = pf.read(columns=["sha256"]).column(0).to_pylist()
            row = 0
            for rg in range(pf.metadata.num_row_groups):
                n = pf.metadata.row_group(rg).num_rows
                for offset in range(n):
                    where.setdefault(shas[row + offset], (uri, rg, offset))
                row += n
        return where

    def _open(self, uri: str) -> pq.ParquetFile:
        pf = self._files.get(uri)
        if pf is None:
            if uri.startswith("/"):
                pf = pq.ParquetFile(uri, memory_map=True)
            else:
                fs, path = filesystem(uri, self._storage_options)
                pf = pq.ParquetFile(fs.open_input_file(path))
            self._files[uri] = pf
            if len(self._files) > _OPEN_FILES:
                self._files.popitem(last=False)
        else:
            self._files.move_to_end(uri)
        return pf

    def __contains__(self, sha: str) -> bool:
        with self._lock:
            if self._where is None:
                self._where = self._build()
            return sha in self._where

    def shas(self) -> set[str]:
        with self._lock:
            if self._where is None:
                self._where = self._build()
            return set(self._where)

    def get(self, sha: str) -> bytes:
        with self._lock:
            if self._where is None:
                self._where = self._build()
            try:
                uri, rg, offset = self._where[sha]
            except KeyError:
                raise FrameNotFound(f"no frame with sha256 {sha} in the lake") from None
            column = self._open(uri).read_row_group(rg, columns=["png"]).column(0)
            return column[offset].as_py()
