"""Frames hashed and checked while earlier ones are written: what ends up in the lake."""

import os

from deltalake import DeltaTable

from datalake.types import Action, Device, Episode, Observation, Step
from tests.factory import H, W, corrupt_png, episode, png


def test_batch_with_a_corrupt_frame_stores_only_valid_frames_and_good_episodes(lake):
    good = [episode(k, n_steps=40) for k in range(3)]  # 120 frames: several hash chunks
    bad = Episode(instruction="bad", source="human", device=Device(W, H),
                  steps=(Step(Observation(png(9001)), Action("tap", x=1, y=1)),
                         Step(Observation(corrupt_png(9002)), Action("terminate", status="success"))))
    report = lake.write_episodes([good[0], bad, good[1], good[2]])
    assert (report.written, report.quarantined) == (3, 1)
    shas = set(lake.sql("SELECT sha256 FROM frames").column(0).to_pylist())
    wanted = {s.observation.sha256 for ep in good for s in ep.steps}
    assert wanted <= shas and bad.steps[1].observation.sha256 not in shas
    for ep in good:
        assert lake.episode(ep.episode_id).steps == ep.steps
    assert len(DeltaTable(lake.table_uri("frames")).file_uris()) == 1  # one frames file for the batch


def test_batch_of_known_episodes_writes_no_frames_file(lake):
    eps = [episode(k) for k in range(2)]
    lake.write_episodes(eps)
    frames = DeltaTable(lake.table_uri("frames"))
    version, files = frames.version(), set(frames.file_uris())
    again = lake.write_episodes(eps)
    assert (again.written, again.skipped) == (0, 2)
    frames = DeltaTable(lake.table_uri("frames"))
    assert frames.version() == version and set(frames.file_uris()) == files
    folder = lake.table_uri("frames")
    assert len([n for n in os.listdir(folder) if n.endswith(".parquet")]) == len(files)  # no stray file left


def test_a_screenshot_repeated_across_chunks_of_a_batch_is_stored_once(lake):
    # Separate Observation objects with the same bytes, spread over several hash chunks
    # (the same screen seen again later in an episode, or in another episode of the batch).
    eps = [Episode(instruction=f"repeat {k}", source="human", device=Device(W, H),
                   steps=tuple(Step(Observation(png(9100 + (k * 40 + i) % 7)), Action("tap", x=1, y=1))
                               for i in range(39)) + (Step(Observation(png(9200 + k)),
                                                           Action("terminate", status="success")),))
           for k in range(4)]
    report = lake.write_episodes(eps)
    assert (report.written, report.new_frames) == (4, 7 + 4)
    shas = lake.sql("SELECT sha256 FROM frames").column(0).to_pylist()
    assert len(shas) == len(set(shas)) == 11
    for ep in eps:
        assert lake.episode(ep.episode_id).steps == ep.steps
    again = lake.write_episodes([Episode(instruction="later", source="human", device=Device(W, H),
                                         steps=(Step(Observation(png(9100)), Action("terminate", status="success")),))])
    assert again.new_frames == 0
