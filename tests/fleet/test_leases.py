"""Phone leases (fleet.leases): one holder at a time, renewed while it lives, taken over when stale."""

import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from fleet.errors import PhoneLeased
from fleet.leases import Leases, lease_path, leases_dir, read_holder

PHONE = "127.0.0.1:5555/emulator-5554"


def test_the_folder_is_the_users_state_dir_unless_overridden(tmp_path, monkeypatch):
    monkeypatch.delenv("PHONELOOP_LEASES", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert leases_dir() == tmp_path / "state" / "phoneloop" / "leases"
    monkeypatch.setenv("PHONELOOP_LEASES", str(tmp_path / "mine"))
    assert leases_dir() == tmp_path / "mine"


def test_a_held_phone_is_refused_naming_the_holder(tmp_path):
    with Leases.take([PHONE], command="phoneloop collect run --task x", folder=tmp_path):
        with pytest.raises(PhoneLeased) as err:
            Leases.take([PHONE], command="second", folder=tmp_path)
    message = str(err.value)
    assert "\n" not in message and PHONE in message and f"pid {os.getpid()} on {socket.gethostname()}" in message
    assert "'phoneloop collect run --task x'" in message and " since " in message
    Leases.take([PHONE], command="third", folder=tmp_path).release()  # released on leaving the with


def test_of_many_takers_at_once_exactly_one_wins(tmp_path):
    won, lost = [], []
    start = threading.Barrier(8)

    def take():
        start.wait()
        try:
            won.append(Leases.take([PHONE], command="racer", folder=tmp_path))
        except PhoneLeased:
            lost.append(1)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(won) == 1 and len(lost) == 7
    won[0].release()


def test_all_or_none_when_one_phone_of_several_is_held(tmp_path):
    other = "127.0.0.1:5556/emulator-5554"
    with Leases.take([other], command="holder", folder=tmp_path):
        with pytest.raises(PhoneLeased, match="5556"):
            Leases.take([PHONE, other], command="both", folder=tmp_path)
        assert read_holder(lease_path(tmp_path, PHONE)) is None  # the first one was given back


def test_a_lease_is_renewed_while_its_run_lives(tmp_path):
    with Leases.take([PHONE], command="long run", ttl=0.6, folder=tmp_path):
        first = read_holder(lease_path(tmp_path, PHONE)).expires
        time.sleep(1.5)  # well past the first expiry
        assert read_holder(lease_path(tmp_path, PHONE)).expires > first
        with pytest.raises(PhoneLeased):
            Leases.take([PHONE], command="second", folder=tmp_path)


def test_an_expired_lease_of_another_host_is_taken_over(tmp_path):
    path = lease_path(tmp_path, PHONE)
    holder = {"phone": PHONE, "pid": 1, "host": "phone-host-7", "command": "gone", "since": time.time() - 300,
              "token": "t"}
    path.write_text(json.dumps({**holder, "expires": time.time() + 300}))
    with pytest.raises(PhoneLeased, match="pid 1 on phone-host-7"):  # another host's live lease: its pid is not ours
        Leases.take([PHONE], command="second", folder=tmp_path)
    path.write_text(json.dumps({**holder, "expires": time.time() - 1}))
    with Leases.take([PHONE], command="second", folder=tmp_path):
        assert read_holder(path).command == "second"


HOLD = """
import sys
from fleet.leases import Leases
lease = Leases.take([sys.argv[1]], command="holder process", wait=0)
print("held", flush=True)
sys.stdin.read()
lease.release()
"""


def hold(folder) -> subprocess.Popen:
    env = {**os.environ, "PHONELOOP_LEASES": str(folder)}
    proc = subprocess.Popen([sys.executable, "-c", HOLD, PHONE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=env, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_another_process_waits_for_the_lease_or_takes_it_when_the_holder_died(tmp_path):
    proc = hold(tmp_path)
    with pytest.raises(PhoneLeased, match=f"pid {proc.pid} .*'holder process'"):
        Leases.take([PHONE], command="second", folder=tmp_path)
    threading.Timer(0.5, proc.stdin.close).start()  # the holder ends its run and gives the phone back
    with Leases.take([PHONE], command="patient", wait=30, folder=tmp_path):
        assert proc.wait(10) == 0
    proc = hold(tmp_path)
    proc.kill()  # dies holding it: the file stays, its pid is dead
    proc.wait(10)
    assert read_holder(lease_path(tmp_path, PHONE)).pid == proc.pid
    with Leases.take([PHONE], command="after the crash", folder=tmp_path):
        assert read_holder(lease_path(tmp_path, PHONE)).command == "after the crash"
