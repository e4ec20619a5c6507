"""Phone leases as users meet them: a second command on a phone another command holds, in real processes."""

import os
import subprocess
import sys
import time


def phoneloop(*args, env, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "phoneloop.cli", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def test_collect_run_on_a_phone_being_recorded_fails_naming_the_holder_then_waits_for_it(server, lake, leases):
    env = {**os.environ, "PHONELOOP_LEASES": str(leases), "COLUMNS": "300"}
    port = str(server.port)
    record = phoneloop("collect", "record", "--serial", "emulator-5554", "--port", port, "--instruction", "stay",
                       "--lake", lake.uri, env=env, stdin=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while not list(leases.glob("*.lease")) and time.monotonic() < deadline:
            assert record.poll() is None, record.stderr.read()
            time.sleep(0.1)
        run = ["collect", "run", "--task", "SettingsWifiOff", "--serial", "emulator-5554", "--port", port,
               "--lake", lake.uri]
        refused = phoneloop(*run, env=env)
        out, err = refused.communicate(timeout=120)
        assert refused.returncode == 2, out + err
        line = next(line for line in err.splitlines() if "error:" in line)
        assert f"127.0.0.1:{port}/emulator-5554 is leased by pid {record.pid}" in line
        assert "'phoneloop collect record --serial emulator-5554'" in line and " since " in line
        patient = phoneloop(*run, "--lease-wait", "120", env=env)
        time.sleep(1.0)
        assert patient.poll() is None  # waiting for the recording to end
        record.stdin.write("\nd\n")  # end the take, drop it: the recorder exits and gives the phone back
        record.stdin.close()
        assert record.wait(60) == 0, record.stderr.read()
        out, err = patient.communicate(timeout=120)
        assert patient.returncode == 0, out + err
    finally:
        record.kill()
    assert lake.sql("SELECT task FROM episodes").to_pylist() == [{"task": "SettingsWifiOff"}]
    assert not list(leases.glob("*.lease"))  # every command gave its lease back
