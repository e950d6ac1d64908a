"""``switches/NAME.session``: a configuration session that rewrites fabgen's sections and touches nothing else.

Three claims, each tested: the session's body is the ``.cfg`` itself (parsed
back the same by fabgen's EOS parser); its prologue resets only sections that
body writes again (checked by ``check_session``, which catches a planted
reset); and, played against a running config that holds an operator's own
interfaces, users and management VRF, the session leaves those exactly as
they were while fabgen's sections end up exactly as the ``.cfg`` has them
(a stale line an earlier run left in a fabgen interface is gone).
"""

from __future__ import annotations

import pytest

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.eos.config import check_eos_config
from fabgen.targets.eos.parse import parse_eos_interfaces, parse_eos_qos
from fabgen.targets.eos.session import split_session
from tests.helpers import example

Blocks = dict[str, list[str]]


@pytest.fixture(scope="module")
def lab() -> dict[str, str]:
    plan = plan_fabric(load_spec(example("lab")))
    return render_fabric(plan, ["eos"], [s.name for s in plan.switches if s.os == "eos"])


def _blocks(text: str) -> Blocks:
    """Top-level command -> its indented lines; comments, ``!`` and ``end`` left out."""
    blocks: Blocks = {}
    header = ""
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("!") or line == "end":
            continue
        if line.startswith(" "):
            blocks[header].append(line)
        else:
            header = line
            blocks.setdefault(line, [])
    return blocks


def _play(running: Blocks, session: str) -> Blocks:
    """What EOS commits, at the level this test needs: resets first, then the body merged in."""
    _, prologue, body = split_session(session)
    result = {k: list(v) for k, v in running.items()}
    for line in prologue:
        if line.startswith("default interface "):
            result[line.removeprefix("default ")] = []
        elif line == "no router bgp":
            for key in [k for k in result if k.startswith("router bgp ")]:
                del result[key]
        else:
            result.pop(line.removeprefix("no "), None)
    for header, children in _blocks(body).items():
        kept = result.setdefault(header, [])
        kept += [c for c in children if c not in kept]
    return result


def test_the_body_is_the_config(lab: dict[str, str]) -> None:
    for name in [p.removeprefix("switches/").removesuffix(".cfg") for p in lab if p.endswith(".cfg")]:
        cfg, session = lab[f"switches/{name}.cfg"], lab[f"switches/{name}.session"]
        _, prologue, body = split_session(session)
        assert body == cfg
        assert parse_eos_interfaces(body) == parse_eos_interfaces(cfg)
        assert parse_eos_qos(body) == parse_eos_qos(cfg)
        assert check_eos_config(f"switches/{name}.session", session) == []
        ports = [i for i in parse_eos_interfaces(cfg) if i.startswith(("Ethernet", "Loopback"))]
        assert [p.removeprefix("default interface ") for p in prologue if p.startswith("default ")] == ports
        assert not any("Management" in p for p in prologue)  # an operator's vrf on it must survive


def test_a_reset_of_a_section_the_session_does_not_write_is_refused(lab: dict[str, str]) -> None:
    session = lab["switches/leaf-r0-p00-01.session"]
    for planted, why in (("default interface Ethernet9/1", "resets a section the session does not write again"),
                         ("no qos profile OPERATOR", "resets a section the session does not write again"),
                         ("default interface Management1", "would erase an operator's vrf and ACLs")):
        broken = session.replace("no router bgp\n", f"no router bgp\n{planted}\n", 1)
        problems = check_eos_config("switches/leaf-r0-p00-01.session", broken)
        assert len(problems) == 1 and problems[0].message.startswith(f"'{planted}' {why}"), problems
    assert check_eos_config("x.session", session.replace("show session-config diffs\n", ""))


def test_played_against_a_running_config_only_fabgens_sections_change(lab: dict[str, str]) -> None:
    cfg, session = lab["switches/leaf-r0-p00-01.cfg"], lab["switches/leaf-r0-p00-01.session"]
    operator = {
        "username admin privilege 15 role network-admin secret sha512 $6$x": [],
        "interface Ethernet9/1": ["   description not-fabgens", "   switchport access vlan 10"],
        "interface Management1": ["   vrf MGMT", "   ip address 192.0.2.1/24"],
        "qos profile OPERATOR": ["   qos trust cos"],
        "management api http-commands": ["   no shutdown"],
    }
    running = {**_blocks(cfg), **operator}
    running["interface Ethernet1/1"] = [*running["interface Ethernet1/1"], "   description stale-from-an-old-run"]
    running["router bgp 4200000000"] = ["   neighbor 10.9.9.9 remote-as 1"]
    after = _play(running, session)
    for header, children in operator.items():
        if header != "interface Management1":
            assert after[header] == children, header
    assert after["interface Management1"][0] == "   vrf MGMT"  # kept; fabgen only sets its address
    for header, children in _blocks(cfg).items():
        if header != "interface Management1":
            assert after[header] == children, header  # the stale description and the old BGP are gone
    assert "router bgp 4200000000" not in after


def test_a_bad_body_line_is_reported_at_its_line_in_the_session(lab: dict[str, str]) -> None:
    session = lab["switches/leaf-r0-p00-01.session"]
    broken = session.replace("   mtu 9214\n", "   mtu 99999\n", 1)
    problems = check_eos_config("s.session", broken)
    line = broken.splitlines().index("   mtu 99999") + 1
    assert [(p.line, "mtu" in p.message) for p in problems] == [(line, True)]
