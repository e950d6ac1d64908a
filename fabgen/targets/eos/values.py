"""One switch's shape key and slot values, read straight from the plan, in the order the shape's slots need them.

Why not from :func:`fabgen.targets.eos.config.eos_config`: building the full
structured config (a frozen dataclass per port, per neighbour, per queue) costs
more than filling the text it renders, and once a shape is known only its
values are needed. Here every per-switch value is computed as ``eos_config``
computes it (the same :func:`~fabgen.targets.eos.config.config_text`,
:func:`~fabgen.targets.eos.limits.interface_speed`, port and neighbour order),
and everything that steers a template is put in the key as the plan's own
fields; the policy-wide parts (DSCP maps, queues, profile name, notes) are one
token per distinct QoS policy, since they are functions of it alone.

Why it stays byte-identical: :func:`fabgen.targets.eos.fill.render_filled`
renders the first switch of each key in full through ``eos_config`` and the
unchanged templates, and keeps the shape only if this module's values are
exactly :func:`fabgen.targets.eos.fill.slotted`'s for that switch and fill it
to the same text; any other outcome renders that key in full for every switch.
Two switches with one key have equal structured configs apart from the values
slotted, because every input of the other fields is in the key.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from fabgen.natural import natural_key
from fabgen.plan import FabricPlan, Switch
from fabgen.plan.model import QosIntent
from fabgen.targets.eos.headroom import MmuProfile, mmu_profile
from fabgen.targets.eos.text import by_address, config_text, config_texts, eos_mtu

_NAME = attrgetter("name")
_SPEED = attrgetter("speed")
_LANES = attrgetter("lanes")
_SHUTDOWN = attrgetter("shutdown")
_CABLE = attrgetter("cable_m")
_ADDRESS = attrgetter("address")
_DESCRIPTION = attrgetter("description")
_REMOTE_ASN = attrgetter("remote_asn")


class PlanValues:
    """Per-run memo of what many switches share: a port list's order and shape, a headroom profile, one token per
    QoS policy."""

    def __init__(self, plan: FabricPlan) -> None:
        self.plan = plan
        self.cluster = plan.spec.cluster.name
        self._ports: dict[tuple[tuple[Any, ...], ...], tuple[list[int], int]] = {}
        self._mmus: dict[tuple[Any, ...], tuple[MmuProfile | None, str]] = {}
        self._asns: dict[tuple[int, ...], list[str]] = {}
        """Neighbour AS lists, spelt: most of a tier's switches have one, and the same strings each time let
        :mod:`fabgen.targets.eos.slots` tell a repeated list by identity."""
        self._both: dict[tuple[Any, ...], tuple[list[int], int, MmuProfile | None, str]] = {}
        self._policies: dict[int, tuple[QosIntent, int]] = {}
        self._keys: dict[tuple[Any, ...], int] = {}

    def _interned(self, key: list[Any]) -> tuple[str, int]:
        """A small stand-in for ``key``, one per distinct key: the shape caches hash it several times per
        switch."""
        return "plan", self._keys.setdefault(tuple(key), len(self._keys))

    def _policy(self, qos: QosIntent) -> int:
        """A token per policy object (kept alive here, so its id is never reused): equal tokens, equal policy."""
        held = self._policies.get(id(qos))
        if held is None:
            held = self._policies[id(qos)] = (qos, len(self._policies))
        return held[1]

    def _port_layout(self, switch: Switch, names: tuple[str, ...]) -> tuple[list[int], int]:
        """Indices of ``switch.ports`` in :func:`~fabgen.natural.natural_key` order, and a token for
        what of them steers the template (each port's name, speed, number of lanes and shutdown, in that order;
        :func:`~fabgen.targets.eos.limits.interface_speed` reads only how many lanes a port has).

        Memoised by the columns themselves (a few C-level maps), so no per-port tuple is built once a layout
        is known: every switch of a tier has one. Equal columns, equal token; two switches whose ports differ
        only in order get two tokens, which costs a shape, never a wrong one."""
        columns = (names, tuple(map(_SPEED, switch.ports)), tuple(map(len, map(_LANES, switch.ports))),
                   tuple(map(_SHUTDOWN, switch.ports)))
        layout = self._ports.get(columns)
        if layout is None:
            order = sorted(range(len(names)), key=lambda i: natural_key(names[i]))
            layout = self._ports[columns] = (order, len(self._ports))
        return layout

    def _mmu(self, switch: Switch, names: tuple[str, ...]) -> tuple[MmuProfile | None, str]:
        """:func:`~fabgen.targets.eos.headroom.mmu_profile` and its cleaned note, memoised by everything it reads:
        the policy (lossless priorities, MTU), the platform, and each port's name, speed and cable."""
        memo = (self._policy(switch.qos), switch.model, switch.asic, names, tuple(map(_SPEED, switch.ports)),
                tuple(map(_CABLE, switch.ports)))
        found = self._mmus.get(memo)
        if found is None:
            mmu, note = mmu_profile(switch, eos_mtu(switch.qos.mtu))
            found = self._mmus[memo] = (mmu, config_text(note))
        return found

    def _ports_and_mmu(self, switch: Switch) -> tuple[list[int], int, MmuProfile | None, str]:
        """:meth:`_port_layout` and :meth:`_mmu` at once, memoised by the union of what they read: a switch
        whose ports repeat a known switch's columns builds each column once and looks up one key, not two."""
        ports = switch.ports
        speeds = tuple(map(_SPEED, ports))
        memo = (self._policy(switch.qos), switch.model, switch.asic, tuple(map(_NAME, ports)), speeds,
                tuple(map(len, map(_LANES, ports))), tuple(map(_SHUTDOWN, ports)), tuple(map(_CABLE, ports)))
        found = self._both.get(memo)
        if found is None:
            found = self._both[memo] = (*self._port_layout(switch, memo[3]), *self._mmu(switch, memo[3]))
        return found

    def key_and_values(self, switch: Switch) -> tuple[tuple[str, int], list[str]]:
        """The shape key of ``switch`` and :func:`fabgen.targets.eos.fill.slotted`'s values for it, in its order."""
        qos = switch.qos
        order, layout, mmu, mmu_note = self._ports_and_mmu(switch)
        ports = [switch.ports[i] for i in order]
        title = config_text(f"{switch.name} ({switch.model}, {switch.tier}) of cluster {self.cluster}")
        values = [title, switch.name, mmu_note]
        if mmu:
            values.append(str(mmu.headroom_bytes))
        descriptions = config_texts(list(map(_DESCRIPTION, ports)))
        addresses = list(map(_ADDRESS, ports))
        described: tuple[bool, ...] | bool = True
        if "" in descriptions:
            described = tuple(map(bool, descriptions))
            for text, address in zip(descriptions, addresses, strict=True):
                if text:
                    values.append(text)
                values.append(address)
        else:
            pairs = [""] * (2 * len(ports))
            pairs[0::2] = descriptions
            pairs[1::2] = addresses
            values += pairs
        values.append(switch.loopback)
        if switch.mgmt:
            values.append(switch.mgmt)
        key: list[Any] = [self._policy(qos), switch.model, switch.asic, switch.speed, switch.roce_qp_hash,
                          switch.load_balancing, mmu.name if mmu else None, bool(switch.mgmt), layout, described]
        bgp = switch.bgp
        if bgp is None:
            key.append(None)
            return self._interned(key), values
        neighbors = by_address(bgp.neighbors)
        texts = config_texts(list(map(_DESCRIPTION, neighbors)))
        bfd = (bgp.bfd.interval_ms, bgp.bfd.multiplier) if bgp.bfd else None
        every = "" not in texts
        key.append((bgp.keepalive, bgp.hold, bgp.maximum_paths, bgp.multipath_relax, len(bgp.networks), bfd,
                    len(neighbors), True if every else tuple(map(bool, texts))))
        values += [str(bgp.asn), bgp.router_id]
        numbers = tuple(map(_REMOTE_ASN, neighbors))
        asns = self._asns.get(numbers)
        if asns is None:
            asns = self._asns[numbers] = list(map(str, numbers))
        if every:  # address, AS and description of each, by three slice assignments
            triples = [""] * (3 * len(neighbors))
            triples[0::3] = map(_ADDRESS, neighbors)
            triples[1::3] = asns
            triples[2::3] = texts
            values += triples
        else:
            for neighbor, asn, text in zip(neighbors, asns, texts, strict=True):
                values += [neighbor.address, asn, text] if text else [neighbor.address, asn]
        values += bgp.networks
        return self._interned(key), values
