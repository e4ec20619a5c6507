"""Where a phone's Ray actor runs: a real phone on the node that advertises its serial, a mock phone anywhere."""

from fleet.placement import actor_options


def test_an_adb_phone_actor_asks_for_the_resource_of_its_serial():
    options = actor_options("adb", "10.0.0.7:5037/R58M123", run="run1")
    assert options["resources"] == {"adb:R58M123": 0.001}
    assert options["name"] == "phoneloop-run1-10.0.0.7:5037/R58M123" and options["max_restarts"] == 0


def test_a_mock_phone_actor_asks_for_no_custom_resource():
    assert "resources" not in actor_options("mock", "mock-0", run="run1")
