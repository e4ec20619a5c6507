"""The device farm over virtual adb servers: a job queue, retries off dead phones, health checks, several hosts."""

import json
import threading
import time

import pytest

from collectors.farm import collect_on_devices, list_phones
from collectors.farm_phones import FarmOptions, load_policy_factory
from phones.errors import AdbServerUnreachable, DeviceNotFound
from tests.adb.helpers import free_port

FAST = dict(backoff=0.02, reconnects=2)
TASKS = ["SettingsWifiOff", "NotesCreate"]
DISTINCT = ["NotesCreate", "ContactsAdd"]  # every (task, seed) gives different content (SettingsWifiOff's seeds do not)


def test_list_phones_gives_state_and_screen_facts(server):
    server.devices[1].state = "unauthorized"
    rows = list_phones(port=server.port)
    assert [(r.serial, r.state) for r in rows] == [("emulator-5554", "device"), ("emulator-5556", "unauthorized")]
    assert (rows[0].width, rows[0].height, rows[0].dpi, rows[0].kind) == (1080, 2400, 420, "mock")
    assert rows[1].width is None


def test_list_phones_on_dead_server_says_so():
    with pytest.raises(AdbServerUnreachable, match="no adb server answers"):
        list_phones(port=free_port())


def test_policy_spec_must_name_a_callable():
    with pytest.raises(ValueError, match="module:callable"):
        load_policy_factory("nonsense")


def rows(lake):
    return lake.sql("SELECT task, outcome, verified_by, meta_json FROM episodes").to_pylist()


def test_a_phone_offline_from_the_start_leaves_its_jobs_to_the_others(server, lake):
    server.devices[1].state = "offline"
    report = collect_on_devices(lake, ["emulator-5554", "emulator-5556"], TASKS, seeds=[0], port=server.port, **FAST)
    assert report.written == 2 and report.outcomes == {"success": 2}
    assert any("emulator-5556" in e and "left the farm" in e for e in report.errors)


def test_phone_killed_mid_run_has_its_episode_retried_and_all_jobs_finish(server, lake):
    server.devices[0].offline_after = 12  # a few steps into its first episode
    report = collect_on_devices(lake, ["emulator-5554", "emulator-5556"], DISTINCT, seeds=[0, 1], port=server.port,
                                **FAST)
    got = rows(lake)
    done = [r for r in got if '"device_offline"' not in r["meta_json"]]
    dropped = [r for r in got if '"device_offline"' in r["meta_json"]]
    assert sorted((r["task"], r["outcome"]) for r in done) == sorted((t, "success") for t in DISTINCT for _ in (0, 1))
    assert len(dropped) == 1 and dropped[0]["outcome"] == "unknown" and dropped[0]["verified_by"] == "none"
    assert report.dropped == 1


def test_unhealthy_phone_takes_no_job(server, lake):
    server.devices[0].configure(locked=True)
    server.devices[1].configure(battery=5)
    with pytest.raises(DeviceNotFound, match="no usable phone"):
        collect_on_devices(lake, ["emulator-9999"], TASKS, seeds=[0], port=server.port, **FAST)
    report = collect_on_devices(lake, [], TASKS, seeds=[0], port=server.port, options=FarmOptions(**FAST))
    assert report.written == 0
    assert any("locked" in e for e in report.errors) and any("battery 5%" in e for e in report.errors)
    assert sorted(report.failed_jobs) == [f"{t} seed 0: no phone left in the farm" for t in sorted(TASKS)]


def test_phones_on_two_adb_hosts_share_the_queue(lake):
    from mockphone.adb import VirtualAdbServer

    with VirtualAdbServer(phones=1) as a, VirtualAdbServer(phones=1) as b:
        report = collect_on_devices(lake, [], DISTINCT, seeds=[0, 1],
                                    adb=[f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"])
    hosts = {json.loads(r["meta_json"])["adb"] for r in rows(lake)}
    assert report.written == 4 and len(hosts) == 2


def test_missing_lake_is_found_before_any_phone_is_used(server, tmp_path):
    from datalake.errors import LakeError

    with pytest.raises(LakeError):
        collect_on_devices(tmp_path / "no-lake", ["emulator-5554"], TASKS, port=server.port)
    assert server.devices[0].phone.nav.foreground is None  # nothing ran


def test_unlisted_serial_is_named(server, lake):
    report = collect_on_devices(lake, ["emulator-5554", "R58M-NOPE"], ["SettingsWifiOff"], port=server.port)
    assert report.written == 1 and any("R58M-NOPE: not listed" in e for e in report.errors)


def test_phone_that_comes_back_rejoins(server, lake):
    vd = server.devices[0]
    vd.offline_after = 12

    def plug_back_in():  # 0.5 s after the cable was pulled, however long the farm took to get there
        deadline = time.monotonic() + 120
        while vd.state != "offline" and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)
        vd.state = "device"

    threading.Thread(target=plug_back_in, daemon=True).start()
    report = collect_on_devices(lake, ["emulator-5554"], DISTINCT, seeds=[0], port=server.port, backoff=0.2,
                                reconnects=5)
    assert report.written == 3 and report.outcomes.get("success") == 2  # two jobs + the dropped attempt


def test_health_check_names_what_is_wrong(server):
    from collectors.farm_phones import health
    from phones.adb_phone import AdbPhone

    vd = server.devices[0]
    phone = AdbPhone(vd.serial, port=server.port)
    assert health(phone, needs_ime=True, min_battery=15) is None
    vd.adb_keyboard = False
    assert "ADBKeyBoard" in health(phone, needs_ime=True, min_battery=15)
    assert health(phone, needs_ime=False, min_battery=15) is None
    vd.configure(screen_on=False)
    assert health(phone, needs_ime=False, min_battery=15) == "screen off"
