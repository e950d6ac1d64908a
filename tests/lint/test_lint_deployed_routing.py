"""``lint --deployed`` FG505: a deployed switch's underlay (ASN, router-id, addresses, BGP sessions, ECMP width)
against the plan, for EOS, SONiC and NVUE, and one plan's routing picture equal on all three."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from lint_support import deployed_site, write_deployed

from fabgen.lint import lint
from fabgen.lint.config import LintConfig
from fabgen.lint.deployed import read_deployed
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.eos.parse_routing import parse_eos_routing, payload_bytes
from fabgen.targets.nvue.parse_routing import parse_nvue_routing
from fabgen.targets.registry import read_backs
from fabgen.targets.routing_common import CommonRouting
from fabgen.targets.sonic.parse_routing import parse_sonic_routing
from tests.helpers import edited

EOS = ("lab", "leaf-r0-p00-01.cfg")
SONIC = ("sonic-pod", "leaf-r0-p00-01/config_db.json")
NVUE = ("cumulus-pod", "leaf-r0-p00-01/startup.yaml")
FIVE_TUPLE = ("DST_IP", "IP_PROTOCOL", "L4_DST_PORT", "L4_SRC_PORT", "SRC_IP")
STRANGER = "192.168.99.7"
"""A neighbor address no example plans: it must never be printed."""


def _findings(base: str, file: str, change: Callable[[str], str], tmp_path: Path,
              codes: tuple[str, ...] = ("FG505",)) -> tuple[list[Any], list[str]]:
    """FG505 findings after ``change`` edited the switch's file, and the edited file's lines."""
    spec, fabric, root = deployed_site(base, tmp_path)
    path = root / "switches" / file
    text = change(path.read_text())
    path.write_text(text)
    return lint(spec, fabric, deployed=root, config=LintConfig(select=codes)), text.splitlines()


def _replace(old: str, new: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        assert old in text, f"{old!r} not in the file"
        return text.replace(old, new, 1)
    return change


def _json(edit: Callable[[dict[str, Any]], None]) -> Callable[[str], str]:
    def change(text: str) -> str:
        data = json.loads(text)
        edit(data)
        return json.dumps(data, indent=4, sort_keys=True)
    return change


@pytest.mark.parametrize("base", ["lab", "sonic-pod", "cumulus-pod"])
def test_a_generated_tree_has_no_routing_drift(base: str, tmp_path: Path) -> None:
    spec, fabric, root = deployed_site(base, tmp_path)
    assert lint(spec, fabric, deployed=root, config=LintConfig(select=("FG505", "FG504"))) == []
    found = read_deployed(root, fabric)
    assert len(found.switches) == len(fabric.switches)
    readers = read_backs()
    for switch in found.switches:  # fabgen's own bytes, so not parsed by the read: each parses back to the plan
        planned = fabric.switch(switch.name)
        assert switch.routing is None and switch.expected_routing is None
        fmt = readers[planned.os][1]
        routing = fmt.parse_routing(json.loads(switch.text) if fmt.kind == "json" else switch.text)
        assert routing.asn == planned.bgp.asn and routing.router_id == planned.bgp.router_id
        assert routing.loopback == (planned.loopback,)
        assert dict(routing.addresses) == {p.name: p.address for p in planned.ports}
        assert dict(routing.neighbors) == {n.address: str(n.remote_asn) for n in planned.bgp.neighbors}
        assert routing.max_paths == planned.bgp.maximum_paths
        assert set(routing.networks) == set(planned.bgp.networks)


def _drop_sonic_neighbor(data: dict[str, Any]) -> None:
    del data["BGP_NEIGHBOR"]["default|10.20.0.66"]
    del data["BGP_NEIGHBOR_AF"]["default|10.20.0.66|ipv4_unicast"]


def _add_sonic_neighbor(data: dict[str, Any]) -> None:
    data["BGP_NEIGHBOR"][f"default|{STRANGER}"] = {"admin_status": "up", "asn": "65000", "name": "x"}


NVUE_NEIGHBOR_66 = '''              "10.30.0.66":
                remote-as: 4200010000
                type: "numbered"
                description: "spine-01:swp2"
                address-family:
                  ipv4-unicast: {enable: "on"}
'''

CASES = [
    # (site, change, what the message says, what the line it points at holds)
    ("eos-remote-as", EOS, _replace("neighbor 10.10.0.34 remote-as 4200010000", "neighbor 10.10.0.34 remote-as 65001"),
     "BGP neighbors with another remote-as: 10.10.0.34 has another remote-as (plan 4200010000)",
     "neighbor 10.10.0.34 remote-as 65001"),
    ("eos-removed-neighbor", EOS, lambda t: "".join(line for line in t.splitlines(keepends=True)
                                                    if "neighbor 10.10.0.36 " not in line),
     "BGP lacks 1 planned session: 10.10.0.36 (AS 4200010000)", "router bgp 4200100000"),
    ("eos-extra-neighbor", EOS, _replace("   maximum-paths 4 ecmp 4\n",
                                         f"   maximum-paths 4 ecmp 4\n   neighbor {STRANGER} remote-as 65000\n"),
     "1 BGP neighbor the plan does not have", f"neighbor {STRANGER} remote-as 65000"),
    ("eos-address", EOS, _replace("ip address 10.10.0.6/31", "ip address 172.16.0.6/31"),
     "fabric port addresses differ: Ethernet4/1 has another address (plan 10.10.0.6/31)", "ip address 172.16.0.6/31"),
    ("eos-swapped-address", EOS, _replace("ip address 10.10.0.6/31", "ip address 10.10.0.4/31"),
     "Ethernet4/1 has 10.10.0.4/31 (plan 10.10.0.6/31)", "ip address 10.10.0.4/31"),
    ("eos-asn", EOS, _replace("router bgp 4200100000", "router bgp 65123"),
     "BGP runs with another ASN, the plan's is 4200100000", "router bgp 65123"),
    ("eos-spine-asn", EOS, _replace("router bgp 4200100000", "router bgp 4200010000"),
     "BGP runs with ASN 4200010000, the plan's is 4200100000", "router bgp 4200010000"),
    ("eos-router-id", EOS, _replace("router-id 10.255.0.1", "router-id 10.99.0.1"),
     "BGP has another router-id, the plan's is 10.255.0.1", "router-id 10.99.0.1"),
    ("eos-maximum-paths", EOS, _replace("maximum-paths 4 ecmp 4", "maximum-paths 1 ecmp 1"),
     "BGP has another maximum-paths, the plan's is 4", "maximum-paths 1 ecmp 1"),
    ("eos-no-maximum-paths", EOS, _replace("   maximum-paths 4 ecmp 4\n", ""),
     "BGP has no maximum-paths (the OS default), the plan's is 4", "router bgp 4200100000"),
    ("eos-loopback", EOS, _replace("   ip address 10.255.0.1/32", "   ip address 10.255.9.9/32"),
     "loopback lacks 10.255.0.1/32; carries 1 address the plan does not have", "ip address 10.255.9.9/32"),
    ("eos-network", EOS, _replace("      network 10.10.0.6/31\n", ""),
     "BGP does not announce 10.10.0.6/31, which the plan does", "address-family ipv4"),
    ("sonic-remote-as", SONIC, _replace('"asn": "4200010000"', '"asn": "65001"'),
     "10.20.0.64 has another remote-as (plan 4200010000)", '"asn": "65001"'),
    ("sonic-removed-neighbor", SONIC, _json(_drop_sonic_neighbor),
     "BGP lacks 1 planned session: 10.20.0.66 (AS 4200010000)", '"BGP_NEIGHBOR": {'),
    ("sonic-extra-neighbor", SONIC, _json(_add_sonic_neighbor), "1 BGP neighbor the plan does not have",
     '"asn": "65000"'),
    ("sonic-address", SONIC, _replace('"Ethernet8|10.20.0.2/31"', '"Ethernet8|172.16.0.2/31"'),
     "Ethernet8 has another address (plan 10.20.0.2/31)", '"Ethernet8|172.16.0.2/31"'),
    ("sonic-asn", SONIC, _replace('"local_asn": "4200100000"', '"local_asn": "65123"'),
     "BGP runs with another ASN, the plan's is 4200100000", '"local_asn": "65123"'),
    ("sonic-router-id", SONIC, _replace('"router_id": "10.255.20.1"', '"router_id": "10.99.0.1"'),
     "BGP has another router-id, the plan's is 10.255.20.1", '"router_id": "10.99.0.1"'),
    ("sonic-maximum-paths", SONIC, _replace('"max_ebgp_paths": "4"', '"max_ebgp_paths": "1"'),
     "BGP has another maximum-paths, the plan's is 4", '"max_ebgp_paths": "1"'),
    ("nvue-remote-as", NVUE, _replace("remote-as: 4200010000", "remote-as: 65001"),
     "10.30.0.64 has another remote-as (plan 4200010000)", "remote-as: 65001"),
    ("nvue-removed-neighbor", NVUE, _replace(NVUE_NEIGHBOR_66, ""),
     "BGP lacks 1 planned session: 10.30.0.66 (AS 4200010000)", "neighbor:"),
    ("nvue-extra-neighbor", NVUE, _replace("            neighbor:\n",
                                           f'            neighbor:\n              "{STRANGER}":\n'
                                           '                remote-as: 65000\n                type: "numbered"\n'),
     "1 BGP neighbor the plan does not have", "remote-as: 65000"),
    ("nvue-address", NVUE, _replace('address: {"10.30.0.2/31": {}}', 'address: {"172.16.0.2/31": {}}'),
     "swp2 has another address (plan 10.30.0.2/31)", '"172.16.0.2/31"'),
    ("nvue-asn", NVUE, _replace("autonomous-system: 4200100000", "autonomous-system: 65123"),
     "BGP runs with another ASN, the plan's is 4200100000", "autonomous-system: 65123"),
    ("nvue-router-id", NVUE, _replace('router-id: "10.255.30.1"', 'router-id: "10.99.0.1"'),
     "BGP has another router-id, the plan's is 10.255.30.1", 'router-id: "10.99.0.1"'),
    ("nvue-maximum-paths", NVUE, _replace("multipaths: {ebgp: 6}", "multipaths: {ebgp: 1}"),
     "BGP has another maximum-paths, the plan's is 6", "multipaths: {ebgp: 1}"),
    # states: a port or a session held down, a session that carries no IPv4, multipath relax
    ("eos-port-shut", EOS, _replace("   description lab04:ens1np0\n   no shutdown", "   description lab04:ens1np0\n   shutdown"),
     "1 fabric port administratively down, up in the plan: Ethernet4/1", "   shutdown"),
    ("eos-session-shut", EOS, _replace("   neighbor 10.10.0.34 description", "   neighbor 10.10.0.34 shutdown\n"
                                       "   neighbor 10.10.0.34 description"),
     "1 planned BGP session administratively shut down: 10.10.0.34", "neighbor 10.10.0.34 shutdown"),
    ("eos-group-shut", EOS, _replace("   maximum-paths 4 ecmp 4\n", "   maximum-paths 4 ecmp 4\n   neighbor SPINES peer group\n"
                                     "   neighbor SPINES shutdown\n   neighbor 10.10.0.36 peer group SPINES\n"),
     "administratively shut down: 10.10.0.36", "neighbor 10.10.0.36 remote-as"),
    ("eos-not-activated", EOS, _replace("      neighbor 10.10.0.36 activate\n", ""),
     "1 planned BGP session not activated for IPv4 unicast (up, but exchanging no route): 10.10.0.36",
     "address-family ipv4"),
    ("eos-deactivated", EOS, _replace("      neighbor 10.10.0.36 activate", "      no neighbor 10.10.0.36 activate"),
     "not activated for IPv4 unicast (up, but exchanging no route): 10.10.0.36", "no neighbor 10.10.0.36 activate"),
    ("eos-relax", EOS, _replace("   maximum-paths 4 ecmp 4\n", "   maximum-paths 4 ecmp 4\n"
                                "   bgp bestpath as-path multipath-relax\n"),
     "BGP multipath relax is on, the plan's is off", "bgp bestpath as-path multipath-relax"),
    ("eos-speed", EOS, _replace("   description lab04:ens1np0\n   no shutdown\n   mtu 9214\n   speed 400g-8",
                                "   description lab04:ens1np0\n   no shutdown\n   mtu 9214\n   speed 200g-4"),
     "fabric ports at another speed: Ethernet4/1 200G (plan 400G)", "speed 200g-4"),
    ("eos-speed-auto", EOS, _replace("   description lab04:ens1np0\n   no shutdown\n   mtu 9214\n   speed 400g-8",
                                     "   description lab04:ens1np0\n   no shutdown\n   mtu 9214\n   speed auto"),
     "fabric ports at another speed: Ethernet4/1 auto or unset (plan 400G)", "speed auto"),
    ("eos-lanes", EOS, _replace("   description lab04:ens1np0\n   no shutdown\n   mtu 9214\n   speed 400g-8",
                                "   description lab04:ens1np0\n   no shutdown\n   mtu 9214\n   speed forced 400g-4"),
     "fabric ports on another lane count: Ethernet4/1 4 lanes (plan 8 lanes)", "speed forced 400g-4"),
    ("sonic-lanes", SONIC, _json(lambda d: d["PORT"]["Ethernet8"].update(lanes="8,9")),
     "fabric ports on another lane count: Ethernet8 2 lanes (plan 8 lanes)", '"lanes": "8,9"'),
    ("sonic-speed", SONIC, _json(lambda d: d["PORT"]["Ethernet8"].update(speed="100000")),
     "fabric ports at another speed: Ethernet8 100G (plan 400G)", '"speed": "100000"'),
    ("nvue-speed", NVUE, _replace('description: "node02:ens1np0"\n        link:\n          mtu: 9216\n'
                                  '          speed: "400G"', 'description: "node02:ens1np0"\n        link:\n'
                                  '          mtu: 9216\n          speed: "200G"'),
     "fabric ports at another speed: swp2 200G (plan 400G)", 'speed: "200G"'),
    ("eos-timers-added", EOS, _replace("   maximum-paths 4 ecmp 4\n", "   maximum-paths 4 ecmp 4\n   timers bgp 30 90\n"),
     "BGP timers differ: 10.10.0.32 keepalive/hold 30/90 s (plan none (the OS default)); ", "timers bgp 30 90"),
    ("sonic-port-down", SONIC, _json(lambda d: d["PORT"]["Ethernet8"].update(admin_status="down")),
     "1 fabric port administratively down, up in the plan: Ethernet8", '"admin_status": "down"'),
    ("sonic-port-default-down", SONIC, _json(lambda d: d["PORT"]["Ethernet8"].pop("admin_status")),
     "1 fabric port administratively down, up in the plan: Ethernet8", '"Ethernet8": {'),
    ("sonic-session-shut", SONIC, _json(lambda d: d["BGP_NEIGHBOR"]["default|10.20.0.66"].update(admin_status="down")),
     "1 planned BGP session administratively shut down: 10.20.0.66", '"admin_status": "down"'),
    ("sonic-not-activated", SONIC, _json(lambda d: d["BGP_NEIGHBOR_AF"].pop("default|10.20.0.66|ipv4_unicast")),
     "not activated for IPv4 unicast (up, but exchanging no route): 10.20.0.66", '"BGP_NEIGHBOR_AF": {'),
    ("sonic-relax", SONIC, _replace('"load_balance_mp_relax": "false"', '"load_balance_mp_relax": "true"'),
     "BGP multipath relax is on, the plan's is off", '"load_balance_mp_relax": "true"'),
    ("nvue-port-down", NVUE, _replace('description: "node02:ens1np0"\n        link:\n          mtu: 9216\n'
                                      '          speed: "400G"\n          state: {up: {}}',
                                      'description: "node02:ens1np0"\n        link:\n          mtu: 9216\n'
                                      '          speed: "400G"\n          state: {down: {}}'),
     "1 fabric port administratively down, up in the plan: swp2", "state: {down: {}}"),
    ("nvue-session-shut", NVUE, _replace('"10.30.0.66":\n', '"10.30.0.66":\n                shutdown: "on"\n'),
     "1 planned BGP session administratively shut down: 10.30.0.66", 'shutdown: "on"'),
    ("nvue-not-activated", NVUE, _replace('description: "spine-01:swp2"\n                address-family:\n'
                                          '                  ipv4-unicast: {enable: "on"}',
                                          'description: "spine-01:swp2"\n                address-family:\n'
                                          '                  ipv4-unicast: {enable: "off"}'),
     "not activated for IPv4 unicast (up, but exchanging no route): 10.30.0.66", 'ipv4-unicast: {enable: "off"}'),
    # how ECMP spreads: DLB or adaptive routing, RoCE QP hashing, the hashed fields
    ("eos-dlb-added", EOS, _replace("hostname leaf-r0-p00-01\n", "hostname leaf-r0-p00-01\n"
                                    "ip hardware fib load-balance distribution dynamic\n"),
     "ECMP members are chosen by dynamic load balancing (DLB), the plan's is the ECMP hash alone",
     "ip hardware fib load-balance distribution dynamic"),
    ("eos-qp-hash-added", EOS, _replace("hostname leaf-r0-p00-01\n", "hostname leaf-r0-p00-01\nload-balance policies\n"
                                        "   load-balance sand profile default\n      fields udp dst-port 4791\n"
                                        "         payload bytes 0,5-7\n"),
     "RoCE QP hashing is on, the plan's is off", "payload bytes 0,5-7"),
    ("sonic-hash-port", SONIC, _json(lambda d: d["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"].remove("L4_SRC_PORT")),
     "ECMP hash fields differ: without L4_SRC_PORT (plan DST_IP, IP_PROTOCOL, L4_DST_PORT, L4_SRC_PORT, SRC_IP)",
     '"ecmp_hash": ['),
    ("sonic-hash-more", SONIC, _json(lambda d: d["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"].extend(["IN_PORT", "INNER_SRC_IP"])),
     "ECMP hash fields differ: also on IN_PORT (plan", '"ecmp_hash": ['),
    # the SKU SONiC lays the ports and buffers out for
    ("sonic-hwsku", SONIC, _json(lambda d: d["DEVICE_METADATA"]["localhost"].update(hwsku="Mellanox-SN5600-O128")),
     "the file names hwsku Mellanox-SN5600-O128, the plan's is ACS-SN5600", '"hwsku": "Mellanox-SN5600-O128"'),
    ("sonic-hwsku-stranger", SONIC, _json(lambda d: d["DEVICE_METADATA"]["localhost"].update(hwsku="s3cr3t-sku")),
     "the file names another hwsku, the plan's is ACS-SN5600", '"hwsku"'),
    ("sonic-hwsku-gone", SONIC, _json(lambda d: d["DEVICE_METADATA"]["localhost"].pop("hwsku")),
     "the file names no hwsku, the plan's is ACS-SN5600", '"DEVICE_METADATA"'),
    ("sonic-hash-gone", SONIC, _json(lambda d: d.pop("SWITCH_HASH")),
     "ECMP hash fields differ: left to the platform's default, the plan hashes on DST_IP, IP_PROTOCOL, "
     "L4_DST_PORT, L4_SRC_PORT, SRC_IP", "{"),
    ("nvue-hash-port", NVUE, _replace('source-port: "on"', 'source-port: "off"'),
     "ECMP hash fields differ: without L4_SRC_PORT (plan", "ecmp-hash:"),
    ("nvue-hash-ingress", NVUE, _replace('destination-port: "on"}', 'destination-port: "on", ingress-interface: on}'),
     "ECMP hash fields differ: also on IN_PORT (plan", "ecmp-hash:"),
    ("nvue-spray-added", NVUE, _replace('    router:\n', '    router:\n      adaptive-routing: {enable: "on"}\n'),
     "ECMP members are chosen by adaptive routing (per-packet spraying), the plan's is the ECMP hash alone",
     "adaptive-routing:"),
]


@pytest.mark.parametrize(("site", "change", "says", "line"), [case[1:] for case in CASES],
                         ids=[case[0] for case in CASES])
def test_a_planted_routing_edit_is_found_at_its_line(site: tuple[str, str], change: Callable[[str], str], says: str,
                                                     line: str, tmp_path: Path) -> None:
    base, file = site
    findings, lines = _findings(base, file, change, tmp_path)
    assert len(findings) == 1, findings
    (finding,) = findings
    assert finding.code == "FG505" and finding.severity == "error"
    assert finding.file.endswith(file) and finding.message.startswith("leaf-r0-p00-01: ")
    assert says in finding.message, finding.message
    assert "\n" not in finding.message and finding.hint
    assert line in lines[finding.line - 1], (finding.line, lines[finding.line - 1])
    for secret in (STRANGER, "65000", "65001", "65123", "172.16.0", "10.99.0.1", "10.255.9.9", "s3cr3t"):
        assert secret not in finding.message, "a deployed value the plan lacks is not echoed"


def test_an_address_on_a_port_the_plan_does_not_address_is_counted(tmp_path: Path) -> None:
    findings, lines = _findings(*EOS, _replace("interface Loopback0\n",
                                               "interface Ethernet30/1\n   no switchport\n   ip address 172.16.9.0/31\n"
                                               "!\ninterface Loopback0\n"), tmp_path)
    (finding,) = findings
    assert "1 port the plan gives no address carry one" in finding.message
    assert "Ethernet30/1" not in finding.message and "172.16" not in finding.message
    assert lines[finding.line - 1] == "   ip address 172.16.9.0/31"


def test_a_whole_underlay_edit_is_one_finding_per_kind(tmp_path: Path) -> None:
    def change(text: str) -> str:
        for old, new in (("router bgp 4200100000", "router bgp 65123"), ("maximum-paths 4 ecmp 4", "maximum-paths 2"),
                         ("neighbor 10.10.0.34 remote-as 4200010000", "neighbor 10.10.0.34 remote-as 65001")):
            text = text.replace(old, new)
        return text
    findings, _ = _findings(*EOS, change, tmp_path)
    assert [f.line for f in findings] == sorted(f.line for f in findings)
    assert len(findings) == 3 and {f.code for f in findings} == {"FG505"}
    assert any("maximum-paths 2, the plan's is 4" in f.message for f in findings), "2 is the lab spines' width"


@pytest.mark.parametrize(("site", "change"), [
    (EOS, _replace("router bgp 4200100000", "router bgp not-a-number")),
    (EOS, _replace("ip address 10.10.0.2/31", "ip address s3cr3t-token")),
    (SONIC, _json(lambda data: data.update(BGP_NEIGHBOR=["not", "a", "table"]))),
    (SONIC, _json(lambda data: data["BGP_NEIGHBOR"].update({"default|10.20.0.64": "s3cr3t-token"}))),
    (NVUE, _replace("            neighbor:\n", "            neighbor: s3cr3t-token\n            old-neighbor:\n")),
    (NVUE, _replace("multipaths: {ebgp: 6}", "multipaths: s3cr3t-token")),
    (EOS, _replace("speed 400g-8", "speed s3cr3t-token")),
    (SONIC, _json(lambda d: d["PORT"]["Ethernet8"].update(speed="s3cr3t-token"))),
    (SONIC, _json(lambda d: d["PORT"]["Ethernet8"].update(speed="9" * 5000))),
    (NVUE, _replace('speed: "400G"', 'speed: "s3cr3t-token"')),
    (EOS, _replace("hostname leaf-r0-p00-01\n", "hostname leaf-r0-p00-01\nload-balance policies\n"
                   "   load-balance sand profile default\n      fields udp dst-port 4791\n"
                   "         payload bytes 5-s3cr3t-token\n")),
    (EOS, _replace("hostname leaf-r0-p00-01\n", "hostname leaf-r0-p00-01\nload-balance policies\n"
                   "   load-balance sand profile default\n      fields udp dst-port 4791\n"
                   "         payload bytes 5-" + "7" * 5000 + "\n")),
    (SONIC, _json(lambda d: d["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"].append("s3cr3t-token"))),
    (SONIC, _json(lambda d: d["SWITCH_HASH"]["GLOBAL"].update(ecmp_hash="s3cr3t-token"))),
    (NVUE, _replace("ecmp-hash: {", "ecmp-hash: s3cr3t-token\n        old-hash: {")),
    (SONIC, _json(lambda d: d["PORT"]["Ethernet8"].update(lanes="8,s3cr3t-token"))),
    (SONIC, _json(lambda d: d["DEVICE_METADATA"]["localhost"].update(hwsku=["s3cr3t-token"]))),
], ids=["eos-asn", "eos-address", "sonic-table", "sonic-entry", "nvue-neighbor", "nvue-multipaths", "eos-speed",
        "sonic-speed", "sonic-speed-digits", "nvue-speed", "eos-payload-bytes", "eos-payload-digits",
        "sonic-hash-field", "sonic-hash-list", "nvue-hash", "sonic-lanes", "sonic-hwsku"])
def test_a_wrong_shaped_underlay_is_unreadable_not_a_crash(site: tuple[str, str], change: Callable[[str], str],
                                                           tmp_path: Path) -> None:
    findings, _ = _findings(*site, change, tmp_path, codes=("FG504", "FG505"))
    assert [f.code for f in findings] == ["FG504"], findings
    assert "s3cr3t" not in findings[0].message


def test_an_eos_speed_without_its_lane_count_is_no_drift(tmp_path: Path) -> None:
    """``speed 400g`` leaves the lanes to the platform, which has one way to run 400G on the port."""
    findings, _ = _findings(*EOS, lambda text: text.replace("speed 400g-8", "speed 400g"), tmp_path)
    assert findings == []


@pytest.mark.parametrize(("edit", "switch", "change", "says", "line"), [
    # planned DLB on the lab's Tomahawk spines, its line removed: nothing else says it, so the file's first line
    (lambda d: d["fabric"]["load_balancing"].update(mode="dlb"), "spine-01.cfg",
     _replace("ip hardware fib load-balance distribution dynamic\n", ""),
     "ECMP members are chosen by the ECMP hash alone, the plan's is dynamic load balancing (DLB)", "! fabgen: "),
    # planned QP hashing on Jericho spines, hashing two of the QP's three bytes
    (lambda d: d["fabric"]["tiers"]["spine"].update(model="7800R3-36D"), "spine-01.cfg",
     _replace("payload bytes 5-7", "payload bytes 5,6"),
     "RoCE QP hashing is off (no default sand profile hashing UDP 4791 on payload bytes 5-7), the plan's is on",
     "payload bytes 5,6"),
    (lambda d: d["fabric"]["tiers"]["spine"].update(model="7800R3-36D"), "spine-01.cfg",
     _replace("load-balance sand profile default", "load-balance sand profile ROCE"),
     "RoCE QP hashing is off", "load-balance policies"),
], ids=["dlb-dropped", "qp-bytes", "qp-profile-renamed"])
def test_a_planned_spread_the_deployed_file_lost_is_found(edit: Callable[[dict[str, Any]], None], switch: str,
                                                          change: Callable[[str], str], says: str, line: str,
                                                          tmp_path: Path) -> None:
    spec = load_spec(edited(edit))
    fabric = plan_fabric(spec)
    root = tmp_path / "collected"
    write_deployed(fabric, root)
    path = root / "switches" / switch
    assert not lint(spec, fabric, deployed=root, config=LintConfig(select=("FG505",))), "fabgen's own file agrees"
    text = change(path.read_text())
    path.write_text(text)
    findings = lint(spec, fabric, deployed=root, config=LintConfig(select=("FG505",)))
    assert [says in f.message for f in findings] == [True], [f.message for f in findings]
    assert line in text.splitlines()[findings[0].line - 1], findings[0].line


def test_planned_adaptive_routing_dropped_on_nvue_is_found(tmp_path: Path) -> None:
    def spray(data: dict[str, Any]) -> None:
        data["fabric"]["load_balancing"]["mode"] = "spray"
    spec = load_spec(edited(spray, "cumulus-pod"))
    fabric = plan_fabric(spec)
    root = tmp_path / "collected"
    write_deployed(fabric, root)
    path = root / "switches" / "leaf-r0-p00-01" / "startup.yaml"
    text = path.read_text()
    assert parse_nvue_routing(text).load_balancing == "spray"
    picture = parse_nvue_routing(text)
    assert picture.adaptive_ports == tuple(sorted(p.name for p in fabric.switch("leaf-r0-p00-01").ports
                                                  if p.peer_kind == "switch")), "every uplink, no host port"
    glob = '\n      adaptive-routing: {enable: "on"}\n'  # the global switch under router (the ports' stand deeper)
    assert text.count(glob) == 1
    uplink = picture.adaptive_ports[0]
    port = text.index(f"\n      {uplink}:\n")
    at = text.index('adaptive-routing: {enable: "on"}', port)
    text = text[:at] + 'adaptive-routing: {enable: "off"}' + text[at + len('adaptive-routing: {enable: "on"}'):]
    path.write_text(text.replace(glob, glob.replace('"on"', '"off"')))
    findings = lint(spec, fabric, deployed=root, config=LintConfig(select=("FG505",)))
    assert sorted(f.message for f in findings) == [
        "leaf-r0-p00-01: 1 fabric port without adaptive routing, on in the plan: " + uplink,
        "leaf-r0-p00-01: ECMP members are chosen by the ECMP hash alone, the plan's is adaptive routing "
        "(per-packet spraying)"]
    lines = path.read_text().splitlines()
    at_port = next(f.line for f in findings if uplink in f.message)
    assert 'adaptive-routing: {enable: "off"}' in lines[at_port - 1]
    assert lines.index(f"      {uplink}:") < at_port - 1 < lines.index(f"      {uplink}:") + 20


def test_readers_follow_the_spread_defaults() -> None:
    assert payload_bytes("5-7") == payload_bytes("5,6,7") == {5, 6, 7}
    assert payload_bytes("0-2,9,60-62") == {0, 1, 2, 9, 60, 61, 62}
    for bad in ("", "7-5", "63", "5-", "-5", "a", "5,,6", "٥"):
        with pytest.raises(ValueError, match="payload bytes"):
            payload_bytes(bad)
    sand = "load-balance policies\n   load-balance sand profile default\n      fields udp dst-port {port}\n" \
           "         payload bytes {bytes}\n"
    assert parse_eos_routing(sand.format(port=4791, bytes="0-10")).qp_hash
    assert not parse_eos_routing(sand.format(port=4792, bytes="5-7")).qp_hash, "another UDP port is not RoCE"
    assert not parse_eos_routing(sand.format(port=4791, bytes="5-6")).qp_hash
    assert parse_eos_routing("ip hardware fib\n   load-balance distribution dynamic\n").load_balancing == "dlb"
    assert parse_eos_routing("hostname x\n").ecmp_hash is None
    eos = parse_eos_routing("interface Ethernet1/1\n   speed 400g-8\ninterface Ethernet2/1\n   speed 400g\n"
                            "interface Ethernet3/1\n   speed 400g-4\n   speed auto\n")
    assert eos.lanes == (("Ethernet1/1", 8),), "a speed without '-N', or auto, states no lane count"
    # NVUE: its defaults hash the 5-tuple; 5.15 spells on/off enabled/disabled; unknown fields hash nothing here
    assert parse_nvue_routing("- set:\n    system: {hostname: x}\n").ecmp_hash == FIVE_TUPLE
    nvue = parse_nvue_routing("- set:\n    system:\n      forwarding:\n        ecmp-hash: {source-port: disabled, "
                              "ingress-interface: enabled, inner-source-ip: on, ipv6-label: off}\n")
    assert nvue.ecmp_hash == ("DST_IP", "IN_PORT", "IP_PROTOCOL", "L4_DST_PORT", "SRC_IP")
    # SONiC: no SWITCH_HASH is the platform's hash; fields a RoCE packet lacks are left out
    assert parse_sonic_routing({}).ecmp_hash is None
    assert parse_sonic_routing({"SWITCH_HASH": {"GLOBAL": {"ecmp_hash": ["INNER_SRC_IP", "SRC_IP"]}}}).ecmp_hash \
        == ("SRC_IP",)


def test_readers_follow_peer_groups_and_bgpcfgd() -> None:
    eos = parse_eos_routing("router bgp 65000.1\n   neighbor FABRIC peer group\n   neighbor FABRIC remote-as 65001\n"
                            "   neighbor 10.0.0.1 peer group FABRIC\n   neighbor 10.0.0.3 peer-group FABRIC\n"
                            "   vrf OTHER\n      neighbor 10.9.9.9 remote-as 1\n")
    assert eos.asn == 65000 * 65536 + 1 and eos.neighbors == (("10.0.0.1", "65001"), ("10.0.0.3", "65001"))
    sonic = parse_sonic_routing({"DEVICE_METADATA": {"localhost": {"bgp_asn": "65010"}},
                                 "LOOPBACK_INTERFACE": {"Loopback0": {}, "Loopback0|10.1.0.1/32": {}},
                                 "BGP_NEIGHBOR": {"10.0.0.1": {"asn": "65001"}, "Vrf1|10.0.0.5": {"asn": "1"}}})
    assert (sonic.asn, sonic.router_id, sonic.neighbors, sonic.max_paths) == (65010, "10.1.0.1",
                                                                              (("10.0.0.1", "65001"),), None)
    nvue = parse_nvue_routing("- set:\n    vrf:\n      default:\n        router:\n          bgp:\n"
                              "            autonomous-system: 65020\n            peer-group:\n"
                              "              up: {remote-as: external}\n            neighbor:\n"
                              "              swp1: {peer-group: up, type: unnumbered}\n")
    assert nvue.asn == 65020 and nvue.neighbors == (("swp1", "external"),) and nvue.router_id is None


def test_readers_follow_state_defaults_and_peer_groups() -> None:
    # EOS: activation is the session's own line, else its group's, else the instance default
    eos = parse_eos_routing("interface Ethernet1/1\n   shutdown\n   no switchport\n   ip address 10.0.0.0/31\n"
                            "interface Ethernet2/1\n   no switchport\n   ip address 10.0.0.2/31\n"
                            "router bgp 65000\n   no bgp default ipv4-unicast\n   neighbor G peer group\n"
                            "   neighbor G shutdown\n   neighbor 10.0.0.1 remote-as 65001\n"
                            "   neighbor 10.0.0.3 peer group G\n   neighbor 10.0.0.3 remote-as 65001\n"
                            "   neighbor 10.0.0.5 remote-as 65001\n   address-family ipv4\n      neighbor G activate\n"
                            "      neighbor 10.0.0.5 activate\n")
    assert (eos.ports_down, eos.shutdown, eos.inactive) == (("Ethernet1/1",), ("10.0.0.3",), ("10.0.0.1",))
    speeds = parse_eos_routing("interface Ethernet1/1\n   speed forced 100gfull\ninterface Ethernet2/1\n   speed 400g\n"
                               "   speed auto\ninterface Ethernet3/1\n   speed 800g-8\n")
    assert speeds.speeds == (("Ethernet1/1", 100_000), ("Ethernet3/1", 800_000))
    # timers: the session's own, else its group's, else the instance's; BFD on only with 'neighbor X bfd'
    timed = parse_eos_routing("router bgp 65000\n   timers bgp 3 9\n   neighbor G peer group\n   neighbor G timers 1 3\n"
                              "   neighbor G bfd\n   neighbor 10.0.0.1 peer group G\n   neighbor 10.0.0.1 remote-as 1\n"
                              "   neighbor 10.0.0.3 remote-as 1\n   neighbor 10.0.0.3 timers 5 15\n"
                              "   neighbor 10.0.0.3 bfd interval 100 min-rx 200 multiplier 4\n"
                              "   neighbor 10.0.0.5 remote-as 1\n")
    assert timed.timers == (("10.0.0.1", 1, 3), ("10.0.0.3", 5, 15), ("10.0.0.5", 3, 9))
    assert timed.bfd == (("10.0.0.1", 300, 300, 3),)
    default_on = parse_eos_routing("router bgp 65000\n   neighbor 10.0.0.1 remote-as 65001\n"
                                   "   neighbor 10.0.0.3 remote-as 65001\n   address-family ipv4\n"
                                   "      no neighbor 10.0.0.3 activate\n")
    assert default_on.inactive == ("10.0.0.3",) and not default_on.multipath_relax
    # SONiC: a port without admin_status is down; bgpcfgd activates every session, relaxes, and may default to down
    bgpcfgd = parse_sonic_routing({"DEVICE_METADATA": {"localhost": {"bgp_asn": "65010", "default_bgp_status": "down"}},
                                   "PORT": {"Ethernet0": {"lanes": "0"}, "Ethernet8": {"admin_status": "up"}},
                                   "BGP_NEIGHBOR": {"10.0.0.1": {"asn": "65001"},
                                                    "10.0.0.3": {"asn": "65001", "admin_status": "up"}}})
    assert (bgpcfgd.ports_down, bgpcfgd.shutdown, bgpcfgd.inactive, bgpcfgd.multipath_relax) == \
        (("Ethernet0",), ("10.0.0.1",), (), True)
    frrcfgd = parse_sonic_routing({"DEVICE_METADATA": {"localhost": {"frr_mgmt_framework_config": "true",
                                                                     "default_bgp_status": "down"}},
                                   "BGP_GLOBALS": {"default": {"local_asn": "65010"}},
                                   "BGP_NEIGHBOR": {"default|10.0.0.1": {"asn": "65001"},
                                                    "default|10.0.0.3": {"asn": "65001", "admin_status": "false"}},
                                   "BGP_NEIGHBOR_AF": {"default|10.0.0.1|ipv4_unicast": {"admin_status": "true"}}})
    assert (frrcfgd.shutdown, frrcfgd.inactive, frrcfgd.multipath_relax) == (("10.0.0.3",), ("10.0.0.3",), False)
    # NVUE: a neighbor takes shutdown and ipv4-unicast from its peer group unless it sets its own; YAML 1.1 booleans
    nvue = parse_nvue_routing("- set:\n    interface:\n      swp1: {link: {state: down}}\n"
                              "      swp2: {link: {state: {up: {}}}}\n"
                              "    vrf:\n      default:\n        router:\n          bgp:\n"
                              "            autonomous-system: 65020\n"
                              "            path-selection: {multipath: {aspath-ignore: on}}\n            peer-group:\n"
                              "              up: {remote-as: external, shutdown: 'on',"
                              " address-family: {ipv4-unicast: {enable: 'off'}}}\n            neighbor:\n"
                              "              10.0.0.1: {peer-group: up}\n"
                              "              10.0.0.3: {peer-group: up, shutdown: 'off',"
                              " address-family: {ipv4-unicast: {enable: 'on'}}}\n")
    assert (nvue.ports_down, nvue.shutdown, nvue.inactive, nvue.multipath_relax) == \
        (("swp1",), ("10.0.0.1",), ("10.0.0.1",), True)


def test_a_port_the_plan_shuts_left_up_is_found(tmp_path: Path) -> None:
    spec, fabric, root = deployed_site("lab", tmp_path)
    path = root / "switches" / "leaf-r3-p00-01.cfg"
    text = path.read_text()
    assert "   description lab04:ens4np0\n   shutdown\n" in text
    path.write_text(text.replace("   description lab04:ens4np0\n   shutdown\n", "   description lab04:ens4np0\n"))
    (finding,) = lint(spec, fabric, deployed=root, config=LintConfig(select=("FG505",)))
    assert "1 port up that the plan shuts (an out-of-service NIC's): Ethernet4/1" in finding.message
    assert "nics_out_of_service" in finding.hint


# ---- one plan, three OSes ---------------------------------------------------------------------------------------


def _on(os_name: str, scheme: str = "rfc7938", timers: bool = False) -> str:
    def edit(data: dict[str, Any]) -> None:
        data["fabric"].setdefault("routing", {})["asn_scheme"] = scheme
        if timers:  # SONiC takes BFD at bfdd's own 300 ms x 3 only
            data["fabric"]["routing"].update(bfd={"interval": "300ms", "multiplier": 3},
                                             timers={"keepalive": 1, "hold": 3})
        for tier in data["fabric"]["tiers"].values():
            tier["os"] = os_name
            if os_name == "sonic":
                tier["hwsku"] = "ACS-SN5600"  # the lab's Arista model is no SONiC SKU
    return edited(edit)


def _neutral(picture: CommonRouting, ports: dict[str, int]) -> CommonRouting:
    """The picture with each port named by its place in the plan: port names are the platform's, not routing.

    The hashed fields, lane counts and SKU are left out: EOS leaves the fields to the platform, NVUE states no
    lanes and only SONiC names its SKU (the test asserts each OS's apart).
    """
    return replace(picture, ecmp_hash=None, lanes=(), hwsku=None, addresses=tuple(sorted((str(ports[port]), value) for port, value in picture.addresses)),
                   ports_down=tuple(sorted(str(ports[port]) for port in picture.ports_down)),
                   speeds=tuple(sorted((str(ports[port]), mbps) for port, mbps in picture.speeds)))


@pytest.mark.parametrize(("scheme", "timers"), [("rfc7938", False), ("unique", False), ("rfc7938", True)],
                         ids=["rfc7938", "unique", "bfd-and-timers"])
def test_one_plan_reads_back_the_same_routing_on_every_os(scheme: str, timers: bool) -> None:
    pictures: dict[str, dict[str, CommonRouting]] = {}
    for os_name, target in (("eos", "eos"), ("sonic", "sonic"), ("cumulus", "nvue")):
        fabric = plan_fabric(load_spec(_on(os_name, scheme, timers)))
        files = render_fabric(fabric, targets=[target])
        parsed = {}
        for switch in fabric.switches:
            if os_name == "eos":
                picture = parse_eos_routing(files[f"switches/{switch.name}.cfg"])
            elif os_name == "sonic":
                picture = parse_sonic_routing(json.loads(files[f"switches/{switch.name}/config_db.json"]))
            else:
                picture = parse_nvue_routing(files[f"switches/{switch.name}/startup.yaml"])
            assert {port for port, _ in picture.addresses} == {p.name for p in switch.ports}, os_name
            assert picture.ecmp_hash == (None if os_name == "eos" else FIVE_TUPLE), os_name
            assert picture.hwsku == (switch.hwsku if os_name == "sonic" else None) and \
                (os_name != "sonic" or switch.hwsku), os_name
            assert (picture.qp_hash, picture.load_balancing) == (False, "ecmp"), "the lab's 7060s have no sand profile"
            assert dict(picture.lanes) == ({} if os_name == "cumulus" else {p.name: 8 for p in switch.ports}), \
                "400G on the 7060DX5's and the SN5600's 8-lane ports; NVUE states no lanes"
            parsed[switch.name] = _neutral(picture, {p.name: i for i, p in enumerate(switch.ports)})
        pictures[os_name] = parsed
    assert pictures["eos"] == pictures["sonic"] == pictures["cumulus"]
    leaf = pictures["eos"]["leaf-r0-p00-01"]
    assert leaf.asn == fabric.switch("leaf-r0-p00-01").bgp.asn == 4200100000
    assert leaf.router_id == "10.255.0.1" and leaf.loopback == ("10.255.0.1/32",)
    assert leaf.max_paths == 4 and len(leaf.neighbors) == 4 and leaf.addresses
    assert not leaf.shutdown and not leaf.inactive and not leaf.ports_down
    assert dict(leaf.speeds) == {str(i): 400_000 for i in range(8)}, "four host ports and four uplinks at 400G"
    # one ASN per switch: a leaf's uplinks lead to spines of different ASNs, which only multipath relax balances
    assert leaf.multipath_relax is (scheme == "unique")
    assert pictures["eos"]["leaf-r3-p00-01"].ports_down == ("3",), "lab04's out-of-service NIC: its port is shut"
    peers = [peer for peer, _ in leaf.neighbors]
    assert leaf.timers == (tuple((peer, 1, 3) for peer in peers) if timers else ())
    assert leaf.bfd == (tuple((peer, 300, 300, 3) for peer in peers) if timers else ())


@pytest.mark.parametrize(("os_name", "target", "file", "old", "new", "line"), [
    # EOS: the interval line left alone turns nothing on, and is where the finding points
    ("eos", "eos", "leaf-r0-p00-01.cfg", "   neighbor 10.10.0.34 bfd\n", "", "neighbor 10.10.0.34 bfd interval"),
    ("sonic", "sonic", "leaf-r0-p00-01/config_db.json", None, None, '"asn": "4200010000"'),
    ("cumulus", "nvue", "leaf-r0-p00-01/startup.yaml", 'bfd: {enable: "on"', 'bfd: {enable: "off"', "bfd:"),
])
def test_bfd_and_timers_the_plan_sets_are_compared(os_name: str, target: str, file: str, old: str | None,
                                                   new: str | None, line: str, tmp_path: Path) -> None:
    spec = load_spec(_on(os_name, timers=True))
    fabric = plan_fabric(spec)
    root = tmp_path / "collected"
    write_deployed(fabric, root)
    path = root / "switches" / file
    text = path.read_text()
    if os_name == "sonic":
        data = json.loads(text)
        del data["BGP_NEIGHBOR"]["default|10.10.0.34"]["bfd"]
        data["BGP_NEIGHBOR"]["default|10.10.0.34"]["holdtime"] = "90"
        text = json.dumps(data, indent=4, sort_keys=True)
    else:
        assert old is not None and new is not None
        if os_name == "cumulus":  # the second session's bfd block: its enable line
            start = text.index('"10.10.0.34":')
            at = text.index(old, start)
            text = text[:at] + new + text[at + len(old):]
        else:
            assert old in text
            text = text.replace(old, new)
    path.write_text(text)
    findings = lint(spec, fabric, deployed=root, config=LintConfig(select=("FG505",)))
    messages = [f.message for f in findings]
    assert any("BFD differ: 10.10.0.34 none (the OS default) (plan tx/rx 300 ms/300 ms x 3)" in m
               for m in messages), messages
    bfd = next(f for f in findings if "BFD differ" in f.message)
    assert line in text.splitlines()[bfd.line - 1], (bfd.line, text.splitlines()[bfd.line - 1])
    if os_name == "sonic":
        assert any("BGP timers differ: 10.10.0.34 keepalive/hold 1/90 s (plan keepalive/hold 1/3 s)" in m
                   for m in messages), messages
    assert len(findings) == (2 if os_name == "sonic" else 1), messages


def test_the_eos_reader_skips_a_ports_other_lines_but_not_its_routing() -> None:
    """A port's description, MTU, profile and switchport lines are skipped unsplit; its address, speed and state
    are read, however the lines around them look."""
    picture = parse_eos_routing(
        "interface Ethernet1/1\n   description ip address 10.9.9.9/31\n   mtu 9214\n   no switchport\n"
        "   speed 400g-8\n   shutdown\n   service-profile P\n   ip address 10.0.0.0/31\n"
        "interface Ethernet2/1\n   switchport mode routed\n      description nested\n   ip  address 10.0.0.2/31\n")
    assert picture.addresses == (("Ethernet1/1", "10.0.0.0/31"), ("Ethernet2/1", "10.0.0.2/31"))
    assert picture.speeds == (("Ethernet1/1", 400_000),) and picture.lanes == (("Ethernet1/1", 8),)
    assert picture.ports_down == ("Ethernet1/1",)
