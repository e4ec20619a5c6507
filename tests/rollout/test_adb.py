"""Rollouts on adb phones: the runner drives the virtual adb server's devices like real phones."""

from tests.adb.helpers import free_port  # noqa: F401  (sets ANDROID_ADB_SERVER_PORT before adbutils loads)

from datalake.lake import Lake  # noqa: E402
from mockphone.adb import VirtualAdbServer  # noqa: E402
from rollout.runner import rollout  # noqa: E402
from rollout.spec import RolloutSpec  # noqa: E402


def test_oracle_rollout_over_adb_is_verified_on_the_virtual_devices(lake):
    server = VirtualAdbServer(phones=2).start()
    try:
        report = rollout(lake.uri, RolloutSpec(policy="oracle", tasks="ClockAddAlarm,SettingsWifiOn",
                                               phones="adb:emulator-5554,emulator-5556", round=2),
                         adb_port=server.port)
    finally:
        server.stop()
    assert report.errors == [] and report.episodes == 2 and report.outcomes == {"success": 2}
    rows = Lake.open(lake.uri).sql("SELECT source, round, verified_by, json_extract_string(meta_json, '$.phone') "
                                   "AS phone FROM episodes ORDER BY phone").to_pylist()
    assert rows == [{"source": "rollout", "round": 2, "verified_by": "verifier", "phone": "emulator-5554"},
                    {"source": "rollout", "round": 2, "verified_by": "verifier", "phone": "emulator-5556"}]
