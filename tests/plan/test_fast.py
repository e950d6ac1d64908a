"""The plan's hot loops build frozen objects through slot twins (fabgen.plan._fast): the same objects as the constructors."""

from __future__ import annotations

import dataclasses
import ipaddress
import pickle
from typing import Any

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan._fast import blank, maker, replaced
from fabgen.plan.model import BackendInterface, BgpNeighbor, Host, HostNic, HostRoute, HostRule, Link, SwitchPort
from fabgen.plan.nic_intent import HostNicIntent
from tests.helpers import edited, example


def _built(cls: type, values: tuple[Any, ...]) -> Any:
    item = maker(cls)(*values)
    item.__class__ = cls
    return item


SAMPLES: list[tuple[type, tuple[Any, ...]]] = [
    (Link, ("gt1", "ens1np0", "leaf-1", "Ethernet1/1", "host-leaf", 0, 400, "10.0.0.1/31", "10.0.0.0/31", False, None)),
    (SwitchPort, ("Ethernet1/1", 1, (0, 1, 2, 3), 400, "down", "gt1", "ens1np0", "host", "10.0.0.0/31", "10.0.0.1", 0,
                  "gt1:ens1np0", True, 3)),
    (HostNic, ("mlx5_0", "ens1np0", "0000:17:00.0", 0, 0, 400, 1, True, "10.0.0.1/31", "leaf-1", "Ethernet1/1")),
    (HostRoute, ("10.0.0.0/31", None, "10.0.0.1", 100)),
    (HostRule, (1000, "10.0.0.1/32", 100)),
]


@pytest.mark.parametrize(("cls", "values"), SAMPLES, ids=[c.__name__ for c, _ in SAMPLES])
def test_twin_builds_what_the_constructor_builds(cls: type, values: tuple[Any, ...]) -> None:
    made, real = _built(cls, values), cls(*values)
    assert type(made) is cls
    assert made == real and hash(made) == hash(real) and repr(made) == repr(real)
    assert dataclasses.astuple(made) == dataclasses.astuple(real)
    assert pickle.loads(pickle.dumps(made)) == real
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.__setattr__(dataclasses.fields(cls)[0].name, "other")


@pytest.mark.parametrize(("cls", "values"), SAMPLES, ids=[c.__name__ for c, _ in SAMPLES])
def test_blank_twin_builds_what_the_constructor_builds(cls: type, values: tuple[Any, ...]) -> None:
    """A blank twin set slot by slot, then given the frozen class: the constructor's object, as frozen."""
    made = blank(cls)()
    for field, value in zip(cls.__slots__, values, strict=True):
        setattr(made, field, value)
    made.__class__ = cls
    real = cls(*values)
    assert type(made) is cls and made == real and hash(made) == hash(real) and repr(made) == repr(real)
    assert pickle.loads(pickle.dumps(made)) == real
    for field in cls.__slots__:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(made, field, "other")
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(made, field)
    assert made == real


@pytest.mark.parametrize("twin", [maker, blank], ids=["maker", "blank"])
def test_twins_are_slotless_subclasses(twin: Any) -> None:
    """Why the twins subclass the frozen class: ``__class__`` assignment then checks the layout by walking up to
    it, not slot name by slot name; a twin that added a slot (or a ``__dict__``) could not become the class."""
    made_class = twin(SwitchPort)
    assert made_class.__mro__[1] is SwitchPort and made_class.__dict__["__slots__"] == ()
    assert made_class.__basicsize__ == SwitchPort.__basicsize__ and not hasattr(object.__new__(made_class), "__dict__")


def test_twin_takes_every_field() -> None:
    """A field added to a plan class must be given in the hot loop too, not silently defaulted."""
    with pytest.raises(TypeError):
        maker(SwitchPort)(*SAMPLES[1][1][:-2])  # shutdown and cable_m have defaults on SwitchPort


def test_maker_refuses_what_it_cannot_build_faithfully() -> None:
    with pytest.raises(TypeError, match="__post_init__"):
        maker(HostNicIntent)  # its checks would be skipped

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(slots=True)
    class Mutable:
        a: int

    for cls in (NoSlots, Mutable):
        with pytest.raises(TypeError, match="frozen dataclass with slots"):
            maker(cls)


def test_planned_objects_are_the_plan_classes() -> None:
    plan = plan_fabric(load_spec(example("lab")))
    host = plan.hosts[0]
    assert type(host) is Host and all(type(n) is HostNic for n in host.nics)
    assert host.network is not None
    for iface in host.network.interfaces:
        assert type(iface) is BackendInterface and type(iface.rule) is HostRule
        assert all(type(r) is HostRoute for r in iface.routes)
        rebuilt = BackendInterface(**{f.name: getattr(iface, f.name) for f in dataclasses.fields(BackendInterface)})
        assert rebuilt == iface
    assert all(type(link) is Link for link in plan.links)
    assert all(type(p) is SwitchPort for s in plan.switches for p in s.ports)


@pytest.mark.parametrize("name", ["lab", "sonic-pod", "cumulus-pod", "llama3-24k"])
def test_every_slot_of_a_planned_port_link_and_neighbor_is_set(name: str) -> None:
    """Ports, links, BGP neighbours and hosts' NICs, backend interfaces, routes and rules are built slot by slot
    (fabgen.plan._fast.blank): a field the planner forgets stays unset."""
    plan = plan_fabric(load_spec(example(name)))
    neighbors = [n for s in plan.switches if s.bgp for n in s.bgp.neighbors]
    ports = [p for s in plan.switches for p in s.ports]
    interfaces = [i for h in plan.hosts if h.network for i in h.network.interfaces]
    routes = [r for i in interfaces for r in i.routes]
    rules = [i.rule for i in interfaces]
    nics = [n for h in plan.hosts for n in h.nics]
    for cls, items in ((SwitchPort, ports), (Link, plan.links), (BgpNeighbor, neighbors), (HostNic, nics),
                       (BackendInterface, interfaces), (HostRoute, routes), (HostRule, rules)):
        assert items and all(type(item) is cls for item in items)
        assert not {field for item in items for field in cls.__slots__ if not hasattr(item, field)}, cls
        assert items[0] == cls(**{field: getattr(items[0], field) for field in cls.__slots__})


def test_a_forgotten_slot_is_loud() -> None:
    port = blank(SwitchPort)()
    port.name = "Ethernet1/1"
    port.__class__ = SwitchPort
    with pytest.raises(AttributeError):
        repr(port)


def test_replaced_is_dataclasses_replace() -> None:
    port = SwitchPort(*SAMPLES[1][1])
    assert replaced(port, shutdown=False, cable_m=7) == dataclasses.replace(port, shutdown=False, cable_m=7)
    assert type(replaced(port)) is SwitchPort and replaced(port) == port
    with pytest.raises(TypeError, match="no field 'nope'"):
        replaced(port, nope=1)


def test_for_host_is_replace_of_the_host_name() -> None:
    """HostNicIntent.for_host copies through a twin that skips __post_init__: it must equal a checked replace."""
    intent = plan_fabric(load_spec(example("lab"))).hosts[0].nic_intent
    assert intent is not None
    copied = intent.for_host("other-host")
    assert type(copied) is HostNicIntent
    assert copied == dataclasses.replace(intent, host="other-host")
    with pytest.raises(dataclasses.FrozenInstanceError):
        copied.__setattr__("host", "x")
    with pytest.raises(ValueError, match="not safe"):
        intent.for_host("bad\nname")


def test_replaced_on_a_one_field_class() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class One:
        a: int

    assert replaced(One(1), a=2) == One(2) and replaced(One(1)) == One(1)


def _out_of_scheme_cable(data: dict[str, Any]) -> None:
    """A cable to a leaf port the layout gives another NIC's position: that position's /31 is the cable's now, so
    the NIC the layout put there gets one from the top of the pool (the spill). (Two cables on one port, the
    case this used, are refused at load now.)"""
    data["fabric"]["cabling"] = [{"a": "gpu01:ens1np0", "b": "leaf-r0-p00-01:Ethernet32"}]


@pytest.mark.parametrize("path", [example("lab"), example("sonic-pod"), "spill"])
def test_every_link_b_end_is_the_lower_address_of_its_31(path: Any) -> None:
    """The host network takes a NIC's on-link /31 straight from its link's ``b`` (leaf) end: it must be the
    /31's lower address, which is also the subnet's, for the automatic layout and the spilled cables alike."""
    fabric = plan_fabric(load_spec(edited(_out_of_scheme_cable, "sonic-pod") if path == "spill" else path))
    for link in fabric.links:
        a, b = ipaddress.ip_interface(link.a_address), ipaddress.ip_interface(link.b_address)
        assert a.network == b.network and b.ip == b.network.network_address and int(a.ip) == int(b.ip) + 1, link
    checked = 0
    for host in fabric.hosts:
        assert host.network is not None
        for iface in host.network.interfaces:
            on_link = iface.routes[0]
            assert on_link.via is None
            assert on_link.to == str(ipaddress.ip_interface(iface.address).network)
            assert on_link.to.split("/")[0] == iface.gateway
            checked += 1
    assert checked
    if path == "spill":
        top = fabric.spec.fabric.addressing.p2p[-2]
        assert any(link.b_address == f"{top}/31" for link in fabric.links)
