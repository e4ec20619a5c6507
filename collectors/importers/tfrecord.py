"""TFRecord files without TensorFlow: the record framing, read and written.

A TFRecord file (optionally GZIP-compressed as a whole) is a sequence of records::

    uint64 length (little endian) | uint32 masked_crc32c(length) | data | uint32 masked_crc32c(data)

``read_records`` yields every record with its number and byte offset (in the
uncompressed stream). A record whose data CRC does not match is yielded as a
``CorruptRecord`` and reading goes on (its length was sound); a bad length CRC or a
file that ends inside a record is yielded as ``CorruptRecord`` and ends that file,
since nothing after it can be framed. ``write_records`` writes the same format
(tests and benchmarks build their fixtures with it).

GZIP files are inflated by ISA-L (python-isal's ``igzip``, a drop-in for ``gzip``):
about 3x faster than zlib here, and inflating is most of the cost of reading AitW.
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import crc32c as _crc32c
from isal import igzip, isal_zlib

_MASK_DELTA = 0xA282EAD8
_GZIP_MAGIC = b"\x1f\x8b"
_DAMAGED = (EOFError, OSError, zlib.error, isal_zlib.error)  # what inflating a damaged stream raises


def masked_crc(data: bytes) -> int:
    """TFRecord's masked CRC32C (Castagnoli) of ``data``."""
    crc = _crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


@dataclass(frozen=True)
class Record:
    number: int  # 0-based position in the file
    offset: int  # byte offset of the record's header in the uncompressed stream
    data: bytes


@dataclass(frozen=True)
class CorruptRecord:
    number: int
    offset: int
    reason: str
    data: bytes  # whatever could be read of it (for quarantine)
    fatal: bool  # the rest of the file cannot be framed


def open_stream(path: str | os.PathLike, compression: str = "auto"):
    """A binary file object over the uncompressed records ("auto" sniffs the GZIP magic)."""
    if compression == "auto":
        with open(path, "rb") as fh:
            compression = "GZIP" if fh.read(2) == _GZIP_MAGIC else ""
    if compression.upper() == "GZIP":
        return igzip.open(path, "rb")
    if compression:
        raise ValueError(f"unknown TFRecord compression {compression!r} (GZIP or none)")
    return open(path, "rb", buffering=1 << 20)


def read_records(path: str | os.PathLike, compression: str = "auto") -> Iterator[Record | CorruptRecord]:
    with open_stream(path, compression) as fh:
        number, offset = 0, 0
        while True:
            try:
                head = fh.read(12)
            except _DAMAGED as exc:
                yield CorruptRecord(number, offset, f"compressed stream is damaged: {exc}", b"", True)
                return
            if not head:
                return
            if len(head) < 12:
                yield CorruptRecord(number, offset, "file ends inside a record header (truncated)", head, True)
                return
            length, length_crc = struct.unpack("<QI", head)
            if masked_crc(head[:8]) != length_crc:
                yield CorruptRecord(number, offset, "length CRC mismatch (the framing is damaged)", head, True)
                return
            try:
                body = fh.read(length + 4)
            except _DAMAGED as exc:
                yield CorruptRecord(number, offset, f"compressed stream is damaged: {exc}", b"", True)
                return
            if len(body) < length + 4:
                yield CorruptRecord(number, offset, f"file ends inside a {length}-byte record (truncated)",
                                    body, True)
                return
            data = body[:length]
            if masked_crc(data) != struct.unpack("<I", body[length:])[0]:
                yield CorruptRecord(number, offset, "data CRC mismatch (the record is corrupt)", data, False)
            else:
                yield Record(number, offset, data)
            number += 1
            offset += 12 + length + 4


def frame(data: bytes) -> bytes:
    """One record in TFRecord framing."""
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc(head)) + data + struct.pack("<I", masked_crc(data))


def write_records(path: str | os.PathLike, records: Iterable[bytes], compression: str = "GZIP",
                  compresslevel: int = 6) -> None:
    fh = gzip.open(path, "wb", compresslevel=compresslevel) if compression.upper() == "GZIP" else open(path, "wb")
    with fh:
        for data in records:
            fh.write(frame(data))
