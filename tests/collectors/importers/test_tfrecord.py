"""TFRecord framing and the protos, checked against the format's published constants."""

import gzip
import random
import struct


from collectors.importers import protos
from collectors.importers.tfrecord import CorruptRecord, Record, frame, masked_crc, read_records, write_records


def test_masked_crc_matches_tensorflow_for_known_input():
    # crc32c("123456789") is the Castagnoli check value 0xE3069283; TFRecord masks it.
    crc = 0xE3069283
    assert masked_crc(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_records_round_trip_gzip_and_plain(tmp_path):
    data = [b"a", b"", b"x" * 100_000]
    for compression in ("GZIP", ""):
        path = tmp_path / f"r{compression}.tfrecord"
        write_records(path, data, compression=compression)
        got = list(read_records(path))
        assert [r.data for r in got] == data and all(isinstance(r, Record) for r in got)
        assert [r.offset for r in got] == [0, 17, 33]


def test_data_crc_mismatch_is_reported_and_reading_goes_on(tmp_path):
    framed = bytearray(frame(b"hello") + frame(b"world"))
    framed[14] ^= 0x01  # inside the first record's data
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(gzip.compress(bytes(framed)))
    first, second = list(read_records(path))
    assert isinstance(first, CorruptRecord) and "data CRC" in first.reason and not first.fatal
    assert isinstance(second, Record) and second.data == b"world"


def test_truncated_file_and_bad_length_crc_end_the_file(tmp_path):
    path = tmp_path / "cut.tfrecord"
    path.write_bytes(frame(b"one") + frame(b"two")[:-3])
    got = list(read_records(path))
    assert got[0].data == b"one" and isinstance(got[1], CorruptRecord) and got[1].fatal
    assert "truncated" in got[1].reason
    bad = bytearray(frame(b"one"))
    bad[8] ^= 0xFF
    path.write_bytes(bytes(bad) + frame(b"two"))
    (only,) = list(read_records(path))
    assert isinstance(only, CorruptRecord) and "length CRC" in only.reason


def test_truncated_gzip_stream_is_reported(tmp_path):
    path = tmp_path / "cut.tfrecord.gz"
    whole = gzip.compress(frame(b"x" * 5000) * 20)
    path.write_bytes(whole[: len(whole) // 2])
    got = list(read_records(path))
    assert isinstance(got[-1], CorruptRecord) and got[-1].fatal


def test_example_proto_is_wire_compatible_with_tf_train_example():
    # Hand-encoded tf.train.Example{features{feature{key:"n" value{int64_list{value:[7]}}}}}
    int64_list = b"\x0a\x01\x07"            # Int64List.value (packed) = [7]
    feature = b"\x1a" + bytes([len(int64_list)]) + int64_list   # Feature.int64_list = 3
    entry = b"\x0a\x01n" + b"\x12" + bytes([len(feature)]) + feature
    features = b"\x0a" + bytes([len(entry)]) + entry
    example = b"\x0a" + bytes([len(features)]) + features
    assert protos.features(example) == {"n": [7]}
    assert protos.features(protos.example({"n": [7]})) == {"n": [7]}
    assert struct.unpack("<f", struct.pack("<f", 0.25))[0] in protos.features(protos.example({"f": [0.25]}))["f"]


def test_damaged_gzip_streams_are_reported_not_raised(tmp_path):
    """A fuzzer: bytes flipped anywhere in the compressed stream (header, deflate blocks,
    trailer), plus a deflate block of the reserved type; reading reports, never raises."""
    rng = random.Random(19)
    records = [frame(rng.randbytes(3000) + b"\0" * 2000) for _ in range(30)]
    whole = gzip.compress(b"".join(records))
    cases = [whole[:10] + b"\x07" + whole[11:]]  # BFINAL=1, BTYPE=11: "invalid block type"
    for _ in range(150):
        damaged = bytearray(whole)
        pos = rng.randrange(10, len(damaged) - 8)  # past the header (its MTIME and OS bytes are unchecked)
        for k in range(rng.choice([1, 8])):
            damaged[pos + k] ^= rng.randrange(1, 256)
        cases.append(bytes(damaged))
    path = tmp_path / "damaged.tfrecord.gz"
    for case in cases:
        path.write_bytes(case)
        got = list(read_records(path))
        assert all(r.data == records[r.number][12:-4] for r in got if isinstance(r, Record))
        assert sum(isinstance(r, CorruptRecord) for r in got) >= (case != whole)
