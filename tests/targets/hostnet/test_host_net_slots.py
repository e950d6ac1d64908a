"""host-net's check by slots (fabgen/targets/hostnet/slots.py): a vouched netplan file must get the full check's answer.

Each fault is planted in one host's plan values (an address, a next hop, a
rule's source, a leaf or port name, an interface name, an MTU), in a host
rendered after others of its shape, so the fill and the slot proof run; the
file's problems must then be exactly those the full check finds in a copy of
the same text (a distinct string object, never vouched for), and the render
must fail where the full render fails.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any

import pytest

from fabgen.errors import Problem
from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.plan.model import BackendInterface, Host
from fabgen.targets.base import RenderContext
from fabgen.targets.environment import environment
from fabgen.targets.hostnet import slots
from fabgen.targets.hostnet.config import TARGET, check_host_network_file, own_sysctl, render_host_network
from tests.helpers import example


@cache
def _plan() -> FabricPlan:
    return plan_fabric(load_spec(example("lab")))


def _copy(text: str) -> str:
    """An equal string that is another object: the full check, never a vouched one."""
    return "".join([text[:1], text[1:]])


def _render(context: RenderContext, host: Host) -> tuple[dict[str, str] | None, type[BaseException] | None]:
    try:
        return TARGET.render(context, host), None
    except Exception as exc:  # the full render refuses such a value too: compared below
        return None, type(exc)


Edit = Callable[[BackendInterface], BackendInterface]


def _first(field: str, value: Any) -> Edit:
    return lambda i: replace(i, **{field: value})


def _route(field: str, value: str, index: int = -1) -> Edit:
    def edit(i: BackendInterface) -> BackendInterface:
        routes = list(i.routes)
        routes[index] = replace(routes[index], **{field: value})
        return replace(i, routes=tuple(routes))
    return edit


def _rule(value: str) -> Edit:
    return lambda i: replace(i, rule=replace(i.rule, source=value))


FAULTS: dict[str, Edit] = {
    "address octet 300": _first("address", "300.1.2.3/31"),
    "address length 33": _first("address", "10.0.0.1/33"),
    "address leading zero": _first("address", "10.0.0.01/31"),
    "via leading zero": _route("via", "10.0.0.010"),
    "rule source leading zero": _rule("010.0.0.1/32"),
    "address five parts": _first("address", "10.0.0.1.5/31"),
    "address with a blank": _first("address", "10.0.0.1/31 x"),
    "address with a colon": _first("address", "10.0.0.1: 31"),
    "address with a comma and equals": _first("address", "10.0.0.1,a=b"),
    "address with a hash": _first("address", "10.0.0.1/31 #x"),
    "address with a newline": _first("address", "10.0.0.1/31\n  - x"),
    "address with a quote": _first("address", '10.0.0.1/31"'),
    "address empty": _first("address", ""),
    "address only a length": _first("address", "/31"),
    "address a name": _first("address", "leaf-01"),
    "via not an address": _route("via", "10.0.0.1/31"),
    "via octet 256": _route("via", "10.0.256.1"),
    "route to without length": _route("to", "10.0.0.0"),
    "route from with length": _route("source", "10.0.0.1/32"),
    "rule source bare": _rule("10.0.0.1"),
    "rule source with a colon": _rule("a: b"),
    "leaf with a colon": _first("leaf", "leaf: {x}"),
    "leaf with a newline": _first("leaf", "leaf\nnetwork: {}"),
    "port with a hash": _first("leaf_port", "Ethernet1/1 # x"),
    "port with braces": _first("leaf_port", "{0}"),
    "netdev with a colon": _first("netdev", "ens1: x"),
    "netdev with a newline": _first("netdev", "ens1\nnp0"),
    "mtu too large": _first("mtu", 99999),
    "mtu too small": _first("mtu", 1000),
    "leaf a sentinel": _first("leaf", "fabgen-sentinel-0000-"),
}


UNSEEN = {"leaf with a colon", "port with a hash", "port with braces", "leaf a sentinel"}
"""Faults the full check does not report either: text in a comment netplan never reads. The slot path must
agree, not do better or worse."""


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_planted_fault_is_found_exactly_as_the_full_check_finds_it(fault: str) -> None:
    plan = _plan()
    hosts = [h for h in plan.hosts if h.network is not None and h.network.config == "netplan"
             and h.network.interfaces]
    assert len(hosts) >= 3
    context = RenderContext(plan=plan, env=environment())
    for n, host in enumerate(hosts[:2]):  # the shape, then its first filled host: the proof and a clean verdict
        for path, text in TARGET.render(context, host).items():
            assert (slots.PROVED_CLEAN.holds(path, text)) == (n == 1 and path.endswith("/netplan.yaml")), path
            assert check_host_network_file(path, text) == []
    assert any(s.proof for s in context.cache["host-net-shapes"].values()), "the slot proof did not run"
    edit = FAULTS[fault]
    for host in hosts[2:4]:  # twice: a fault that makes a new shape is then filled too
        net = host.network
        assert net is not None
        bad = replace(host, network=replace(net, interfaces=(edit(net.interfaces[0]), *net.interfaces[1:])))
        files, error = _render(context, bad)
        try:
            full: dict[str, str] | None = render_host_network(plan.spec.cluster.name, bad, context.env,
                                                              own_sysctl(plan.spec, bad))
            full_error: type[BaseException] | None = None
        except Exception as exc:
            full, full_error = None, type(exc)
        assert (files, error) == (full, full_error)
        if files is None:
            continue
        for path, text in files.items():
            found: list[Problem] = check_host_network_file(path, text)
            assert found == check_host_network_file(path, _copy(text)), (fault, path)
        assert any(check_host_network_file(p, _copy(t)) for p, t in files.items()) != (fault in UNSEEN), fault


def test_the_proof_refuses_a_value_outside_a_quoted_string() -> None:
    """A shape that puts a value anywhere but a whole quoted YAML string (or a comment) proves nothing."""
    good = '# host fabgen-sentinel-0001-\nnetwork:\n  x: "fabgen-sentinel-0000-"\n'
    assert slots.NetplanProof("hosts/fabgen-sentinel-0001-/netplan.yaml", good).ok
    for bad in ('  x: fabgen-sentinel-0000-\n', '  x: "a fabgen-sentinel-0000-"\n', '  x: "fabgen-sentinel-0000-/31"\n',
                '  fabgen-sentinel-0000-: "x"\n', '  x: "fabgen-sentinel-00000-"\n'):
        assert not slots.NetplanProof("hosts/h/netplan.yaml", good + bad).ok, bad
    assert not slots.NetplanProof("hosts/h/fabgen-x.nmconnection", good).ok


@pytest.mark.parametrize("value", [
    "10.0.0.1", "10.0.0.1/31", "255.255.255.255/32", "0.0.0.0", "256.0.0.1", "10.0.0.01", "1.2.3", "1.2.3.4.5",
    "1.2.3.4/", "1.2.3.4//", "1.2.3.4 x", "1.2.3.4,5", "1.2.3.45", "01.2.3.4", "1.2.3.4/31/32", "x1.2.3.4", "/31",
])
def test_the_signature_replaces_exactly_what_the_address_pass_replaces(value: str) -> None:
    """The tab-led pattern over the values must replace a value's head exactly when the quote-led one does in text."""
    from fabgen.targets.hostnet.config import _QUOTED_ADDRESS, _QUOTED_PLACEHOLDER

    proof = slots.NetplanProof("hosts/h/netplan.yaml", 'a: "fabgen-sentinel-0000-"\n')
    signature = proof.signature([value])
    assert signature is not None
    in_text = _QUOTED_ADDRESS.sub(_QUOTED_PLACEHOLDER, f'a: "{value}"\n')
    assert in_text == 'a: "' + signature[1:-1].replace("\x00", _QUOTED_PLACEHOLDER[1:]) + '"\n'


def test_the_key_is_equal_exactly_when_the_signature_is() -> None:
    """:meth:`NetplanProof.key` reads each value the reference repeats once: equal keys must mean equal full
    signatures (one verdict), and among hosts that repeat their values as the reference did (``r``) or not
    (``f``), equal signatures equal keys (no needless verdict)."""
    shape = "".join(f'a{n}: "fabgen-sentinel-{n:04d}-"\n' for n in range(4)) + '# "fabgen-sentinel-0004-"\n'
    reference = ["10.0.0.1", "10.0.0.1", "10.0.0.0/31", "10.0.0.1", "leaf"]
    proof = slots.NetplanProof("hosts/h/netplan.yaml", shape, reference)
    assert proof.ok
    variants = [reference, ["10.0.0.3", "10.0.0.3", "10.0.0.2/31", "10.0.0.3", "x"],
                ["10.0.0.3", "10.0.0.5", "10.0.0.2/31", "10.0.0.3", "x"], ["10.0.0.3", "10.0.0.3", "10.0.0.2/31",
                                                                          "10.0.0.03", "x"],
                ["10.0.0.3", "10.0.0.3", "10.0.0.2/32", "10.0.0.3", "x"], ["1.2.3.4", "5.6.7.8", "9.9.9.9/31", "1.1.1.1", "y"],
                ["10.0.0.01", "10.0.0.01", "10.0.0.2/31", "10.0.0.01", "x"], ["a", "a", "b", "a", "x"]]
    for one in variants:
        for other in variants:
            key, other_key = proof.key(one), proof.key(other)
            assert key is not None and other_key is not None
            same = proof.signature(one) == proof.signature(other)
            assert (key == other_key) == (same and key[0] == other_key[0]), (one, other)
    assert proof.key(variants[1]) == proof.key(reference) and str(proof.key(variants[1]))[0] == "r"
    assert str(proof.key(variants[2]))[0] == "f"  # the repeat broken: the full signature
