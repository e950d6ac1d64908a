"""The twin reads a host's rendered network files, not the plan (no root needed): parsing and translation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from twin_support import LAB, ROOT

import fabgen
from fabgen.targets.environment import environment
from fabgen.targets.hostnet.config import render_host_network
from fabgen.twin.hostfiles import (
    host_setups,
    ip_commands,
    namespace_sysctls,
    parse_host_files,
    parse_netplan,
    parse_sysctl,
)
from fabgen.twin.system import TwinError
from fabgen.twin.topology import twin_topology

CUMULUS = ROOT / "examples" / "cumulus-pod" / "spec.yaml"


def test_lab01_is_configured_exactly_as_its_netplan_file_says() -> None:
    fabric = fabgen.plan_fabric(fabgen.load_spec(LAB))
    setup = host_setups(fabric, ["lab01"])["lab01"]
    assert setup.files == ("hosts/_profiles/lab-node/sysctl.conf", "hosts/lab01/netplan.yaml")
    assert host_setups(fabric, ["lab04"])["lab04"].files == ("hosts/lab04/netplan.yaml", "hosts/lab04/sysctl.conf")
    commands = ip_commands(setup, twin_topology(fabric, "fg-t").ifnames["lab01"])
    assert commands[:4] == ["link set dev ens1np0 mtu 4200", "link set dev ens1np0 addrgenmode none",
                            "address add 10.10.0.1/31 dev ens1np0", "link set dev ens1np0 up"]
    rail0 = [c for c in commands if "ens1np0" in c and c.startswith("route")] + \
        [c for c in commands if c.startswith("rule add from 10.10.0.1/32 ")]
    assert rail0 == [
        "route add 10.10.0.0/31 dev ens1np0 src 10.10.0.1 table 100 scope link",
        "route add 10.10.0.0/24 via 10.10.0.0 dev ens1np0 src 10.10.0.1 table 100",
        "route add 10.255.0.0/24 via 10.10.0.0 dev ens1np0 src 10.10.0.1 table 100",
        "rule add from 10.10.0.1/32 lookup 100 priority 1000",
    ]
    values, skipped = namespace_sysctls(setup, {"ens1np0": "ens1np0", "ens2np0": "ens2np0", "ens3np0": "ens3np0",
                                                "ens4np0": "ens4np0"})
    assert skipped == []
    assert (Path("/proc/sys/net/ipv4/conf/ens1np0/rp_filter"), "2") in values
    assert len(values) == 4 * 3


def test_an_out_of_service_nic_is_left_alone_because_its_files_do_not_name_it() -> None:
    fabric = fabgen.plan_fabric(fabgen.load_spec(LAB))
    commands = ip_commands(host_setups(fabric, ["lab04"])["lab04"], twin_topology(fabric, "fg-t").ifnames["lab04"])
    assert not any("ens4np0" in c for c in commands)


def test_netplan_and_networkmanager_files_of_one_host_give_the_same_namespace() -> None:
    """The cumulus pod's hosts use keyfiles; the same host rendered as netplan must translate identically."""
    fabric = fabgen.plan_fabric(fabgen.load_spec(CUMULUS))
    env = environment()
    ifnames = twin_topology(fabric, "fg-t").ifnames
    for host in fabric.hosts[:2]:
        assert host.network is not None and host.network.config == "networkmanager"
        keyfiles = render_host_network(fabric.spec.cluster.name, host, env)
        netplan = render_host_network(fabric.spec.cluster.name,
                                      replace(host, network=replace(host.network, config="netplan")), env)
        assert any(p.endswith(".nmconnection") for p in keyfiles) and any(p.endswith(".yaml") for p in netplan)
        from_keyfiles = ip_commands(parse_host_files(host.name, keyfiles), ifnames[host.name])
        from_netplan = ip_commands(parse_host_files(host.name, netplan), ifnames[host.name])
        assert from_keyfiles == from_netplan and len(from_netplan) > 10


def test_sysctl_forms_and_keys_that_are_not_per_namespace() -> None:
    parsed = parse_sysctl("s.conf", "# c\n; c\nnet.ipv4.conf.ens1np0.arp_ignore = 1\n"
                                    "net/ipv4/conf/ens1.100/rp_filter=2\n-net.core.rmem_max = 4096\n")
    assert [s.parts for s in parsed] == [("net", "ipv4", "conf", "ens1np0", "arp_ignore"),
                                         ("net", "ipv4", "conf", "ens1.100", "rp_filter"),
                                         ("net", "core", "rmem_max")]
    setup = parse_host_files("h", {"hosts/h/sysctl.conf": "net/ipv4/conf/ens1.100/rp_filter = 2\n"
                                                           "net.core.rmem_max = 4096\n"})
    values, skipped = namespace_sysctls(setup, {"ens1.100": "ens1.100"})
    assert values == [(Path("/proc/sys/net/ipv4/conf/ens1.100/rp_filter"), "2")]
    assert [s.parts for s in skipped] == [("net", "core", "rmem_max")]
    for bad in ("net.ipv4.conf.x.rp_filter\n", "net/ipv4/conf/../../../kernel/x = 1\n",
                "net.ipv4.conf.x.rp_filter = 1 2\n"):
        with pytest.raises(TwinError, match=r"s\.conf:1"):
            parse_sysctl("s.conf", bad)


NETPLAN = """network:
  version: 2
  ethernets:
    ens1np0:
      dhcp4: false
      mtu: 4200
      addresses: [{address}]
      routes:
        - {{to: 10.0.0.0/24, via: 10.10.0.0, from: 10.10.0.1, table: 100}}
      routing-policy:
        - {{from: 10.10.0.1/32, table: 100, priority: 1000}}
"""


@pytest.mark.parametrize(("text", "message"), [
    (NETPLAN.format(address="10.10.0.1/31").replace("dhcp4: false", "dhcp4: true"), "need static addresses"),
    (NETPLAN.format(address="10.10.0.1/31").replace("mtu: 4200", "wakeonlan: true"), "'wakeonlan' is not a key"),
    (NETPLAN.format(address='"10.10.0.1/31 dev lo\\nrule flush"'), "is not an address"),
    (NETPLAN.format(address="10.10.0.1/31").replace("via: 10.10.0.0,", "via: 10.10.0.0, type: blackhole,"),
     "a route not of the form"),
])
def test_what_the_twin_cannot_apply_faithfully_is_refused_with_the_file(text: str, message: str) -> None:
    with pytest.raises(TwinError, match=message) as caught:
        parse_netplan("hosts/h/netplan.yaml", text)
    assert "hosts/h/netplan.yaml" in str(caught.value)


def test_a_file_naming_an_interface_the_twin_did_not_cable_is_refused() -> None:
    setup = parse_host_files("h", {"hosts/h/netplan.yaml": NETPLAN.format(address="10.10.0.1/31")})
    with pytest.raises(TwinError, match="configures ens1np0, which no cable"):
        ip_commands(setup, {"ens2np0": "ens2np0"})


def test_host_files_from_a_generated_tree_are_read_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    fabric = fabgen.plan_fabric(fabgen.load_spec(LAB))
    tree = tmp_path / "out"
    for path, text in fabgen.render_fabric(fabric, ["host-net", "host-sysctl"]).items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text.replace("mtu: 4200", "mtu: 9000"))
    setup = host_setups(fabric, ["lab02"], tree)["lab02"]
    assert {nd.mtu for nd in setup.netdevs} == {9000}
    (tree / "hosts" / "lab04" / "sysctl.conf").unlink()
    with pytest.raises(TwinError, match=r"lab04/sysctl\.conf: cannot read"):
        host_setups(fabric, ["lab04"], tree)
    (tree / "hosts" / "_profiles" / "lab-node" / "sysctl.conf").unlink()
    with pytest.raises(TwinError, match=r"_profiles/lab-node/sysctl\.conf: cannot read"):
        host_setups(fabric, ["lab03"], tree)


def test_next_hop_interfaces_are_read_with_and_without_the_uniform_stride() -> None:
    """``rtnexthop`` entries of one length are sliced; mixed lengths take the walk; both give the same indexes."""
    import struct

    from fabgen.twin.netlink import _hop_ifindexes

    gateway = struct.pack("=HH4s", 8, 5, bytes(4))  # RTA_GATEWAY
    uniform = b"".join(struct.pack("=HBBi", 16, 0, 0, i) + gateway for i in (7, 9, 11))
    assert _hop_ifindexes(b"\0" * 4 + uniform, 4, len(uniform)) == (7, 9, 11)
    mixed = struct.pack("=HBBi", 8, 0, 0, 3) + struct.pack("=HBBi", 16, 0, 0, 5) + gateway
    assert _hop_ifindexes(b"\0" * 4 + mixed, 4, len(mixed)) == (3, 5)
