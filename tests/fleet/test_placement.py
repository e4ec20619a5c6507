"""Where a phone's Ray actor runs: a real phone on the node that advertises its host and serial, a mock
phone anywhere, and a placement that cannot be met refused before any actor starts, naming what is missing."""

import pytest

from fleet.errors import PlacementInfeasible
from fleet.placement import Node, actor_options, place

A, B = "10.0.0.7:5037/emulator-5554", "10.0.0.8:5037/emulator-5554"  # the same serial on two hosts


def node(name, cpus, *resources):
    return Node(name, name, cpus, frozenset(resources))


def test_the_same_serial_on_two_hosts_goes_to_each_hosts_node():
    nodes = [node("n7", 2, f"adb:{A}"), node("n8", 2, f"adb:{B}")]
    plan = place([("adb", A), ("adb", B)], nodes)
    assert plan == {A: f"adb:{A}", B: f"adb:{B}"}
    assert actor_options("adb", A, "run1", plan)["resources"] == {f"adb:{A}": 0.001}
    assert actor_options("adb", B, "run1", plan)["resources"] == {f"adb:{B}": 0.001}


def test_a_serial_only_resource_is_used_when_it_names_one_phone():
    plan = place([("adb", A)], [node("n7", 2, "adb:emulator-5554"), node("n8", 2)])
    assert plan == {A: "adb:emulator-5554"}


def test_a_serial_only_resource_shared_by_two_hosts_phones_is_refused_naming_the_host_form():
    nodes = [node("n7", 2, "adb:emulator-5554"), node("n8", 2, "adb:emulator-5554")]
    with pytest.raises(PlacementInfeasible, match=f"adb:{A}"):
        place([("adb", A), ("adb", B)], nodes)


def test_a_missing_adb_resource_is_named():
    with pytest.raises(PlacementInfeasible) as err:
        place([("adb", A)], [node("head", 2)])
    assert f"'adb:{A}'" in str(err.value) and "'adb:emulator-5554'" in str(err.value)
    assert "--address" in str(err.value)  # a local cluster has no custom resources


def test_a_phone_named_by_its_serial_asks_for_the_serial_resource():
    assert place([("adb", "R58M123")], [node("n", 1, "adb:R58M123")]) == {"R58M123": "adb:R58M123"}
    with pytest.raises(PlacementInfeasible, match="'adb:R58M123'"):
        place([("adb", "R58M123")], [node("n", 1, "adb:R58M456")])


def test_more_actors_than_the_cpus_hold_are_refused():
    phones = [("mock", f"mock-{i}") for i in range(5)]  # 0.5 CPU each: 2.5 CPU
    with pytest.raises(PlacementInfeasible, match="5 phone actors of 0.5 CPU.*2 CPU, room for 4"):
        place(phones, [node("head", 2)])
    assert place(phones[:4], [node("head", 2)]) == {f"mock-{i}": None for i in range(4)}


def test_pinned_actors_need_cpus_on_their_own_node():
    phones = [("adb", f"10.0.0.7:5037/s{i}") for i in range(3)]
    nodes = [node("n7", 1, *(f"adb:10.0.0.7:5037/s{i}" for i in range(3))), node("big", 16)]
    with pytest.raises(PlacementInfeasible, match="10.0.0.7:5037/s2.*'adb:10.0.0.7:5037/s2' \\(n7, 1 CPU\\)"):
        place(phones, nodes)
    # pinned phones leave the rest of their node to mock phones, and the mock phones use the big node
    assert place([*phones[:2], *(("mock", f"m{i}") for i in range(32))], nodes)["m31"] is None


def test_an_empty_cluster_is_refused():
    with pytest.raises(PlacementInfeasible, match="no live node"):
        place([("mock", "mock-0")], [])


def test_actors_restart_but_never_rerun_the_call_that_died():
    options = actor_options("mock", "mock-0", run="run1")
    assert options["max_restarts"] > 0 and options["max_task_retries"] == 0
    assert "resources" not in options and options["name"] == "phoneloop-run1-mock-0"
