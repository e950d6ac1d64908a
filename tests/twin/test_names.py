"""Linux names: every port maps to a valid, unique, stable interface name."""

from __future__ import annotations

import pytest

from fabgen.twin.names import (
    IFNAMSIZ,
    default_prefix,
    ifname_map,
    is_linux_ifname,
    netns_names,
    valid_prefix,
)


def test_valid_names_are_kept_and_eos_slashes_become_dashes() -> None:
    m = ifname_map(["Ethernet8", "swp3", "ens1np0", "Ethernet17/1", "Ethernet1/1/1"])
    assert m["Ethernet8"] == "Ethernet8" and m["swp3"] == "swp3" and m["ens1np0"] == "ens1np0"
    assert m["Ethernet17/1"] == "Ethernet17-1"
    assert m["Ethernet1/1/1"] == "Ethernet1-1-1"


def test_too_long_names_are_hashed_within_ifnamsiz() -> None:
    m = ifname_map(["Ethernet100/10/1", "Port-Channel1000/1"])
    for name in m.values():
        assert len(name) <= IFNAMSIZ and is_linux_ifname(name) and "/" not in name
    assert m["Ethernet100/10/1"].startswith("p")


def test_collisions_and_the_loopback_are_avoided() -> None:
    m = ifname_map(["Ethernet17/1", "Ethernet17-1", "lo"])
    assert m["Ethernet17-1"] == "Ethernet17-1"  # a valid name keeps itself ...
    assert m["Ethernet17/1"] != "Ethernet17-1"  # ... and the mapped one steps aside
    assert m["lo"] != "lo"
    assert len(set(m.values())) == 3


def test_mapping_does_not_depend_on_order() -> None:
    ports = [f"Ethernet{i}/1" for i in range(1, 33)] + ["Ethernet17-1", "x" * 20]
    assert ifname_map(ports) == ifname_map(list(reversed(ports)))


@pytest.mark.parametrize("name", ["", "a/b", "a b", "a:b", "x" * 16, "lo", "-x"])
def test_invalid_linux_names(name: str) -> None:
    assert not is_linux_ifname(name)


def test_namespaces_and_prefixes() -> None:
    assert netns_names("fg-abc123", ["leaf", "host"]) == {"leaf": "fg-abc123-0", "host": "fg-abc123-1"}
    assert default_prefix("0123456789abcdef") == "fg-012345"
    assert valid_prefix("fg-012345") and valid_prefix("ci")
    for bad in ("", "../x", "Fg", "a" * 21, "x-", "1x", "a b"):
        assert not valid_prefix(bad)
