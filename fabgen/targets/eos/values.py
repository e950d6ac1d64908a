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

from fabgen.plan import FabricPlan, Switch
from fabgen.plan.model import QosIntent
from fabgen.targets.eos.headroom import mmu_profile
from fabgen.targets.eos.text import by_address, config_text, config_texts, eos_mtu, natural_key

_PORT_SHAPE = attrgetter("name", "speed", "lanes", "shutdown")
_NAME = attrgetter("name")
_ADDRESS = attrgetter("address")
_DESCRIPTION = attrgetter("description")


class PlanValues:
    """Per-run memo of what many switches share: the sorted order of a port list, one token per QoS policy."""

    def __init__(self, plan: FabricPlan) -> None:
        self.plan = plan
        self.cluster = plan.spec.cluster.name
        self._orders: dict[tuple[str, ...], list[int]] = {}
        self._policies: dict[int, tuple[QosIntent, int]] = {}
        self._keys: dict[tuple[Any, ...], int] = {}

    def _interned(self, key: list[Any]) -> tuple[str, int]:
        """A small stand-in for ``key``, one per distinct key: the shape caches hash it several times per
        switch, and a key holds a tuple per port."""
        return "plan", self._keys.setdefault(tuple(key), len(self._keys))

    def _policy(self, qos: QosIntent) -> int:
        """A token per policy object (kept alive here, so its id is never reused): equal tokens, equal policy."""
        held = self._policies.get(id(qos))
        if held is None:
            held = self._policies[id(qos)] = (qos, len(self._policies))
        return held[1]

    def _port_order(self, switch: Switch) -> list[int]:
        """Indices of ``switch.ports`` in :func:`~fabgen.targets.eos.config.natural_key` order (memoised by names)."""
        names = tuple(map(_NAME, switch.ports))
        order = self._orders.get(names)
        if order is None:
            order = self._orders[names] = sorted(range(len(names)), key=lambda i: natural_key(names[i]))
        return order

    def key_and_values(self, switch: Switch) -> tuple[tuple[str, int], list[str]]:
        """The shape key of ``switch`` and :func:`fabgen.targets.eos.fill.slotted`'s values for it, in its order."""
        qos = switch.qos
        ports = [switch.ports[i] for i in self._port_order(switch)]
        mmu, mmu_note = mmu_profile(switch, eos_mtu(qos.mtu))
        title = config_text(f"{switch.name} ({switch.model}, {switch.tier}) of cluster {self.cluster}")
        values = [title, switch.name, config_text(mmu_note)]
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
                          switch.load_balancing, mmu.name if mmu else None, bool(switch.mgmt),
                          tuple(map(_PORT_SHAPE, ports)), described]
        bgp = switch.bgp
        if bgp is None:
            key.append(None)
            return self._interned(key), values
        neighbors = by_address(bgp.neighbors)
        texts = config_texts(list(map(_DESCRIPTION, neighbors)))
        bfd = (bgp.bfd.interval_ms, bgp.bfd.multiplier) if bgp.bfd else None
        key.append((bgp.keepalive, bgp.hold, bgp.maximum_paths, bgp.multipath_relax, len(bgp.networks), bfd,
                    len(neighbors), True if "" not in texts else tuple(map(bool, texts))))
        values += [str(bgp.asn), bgp.router_id]
        for neighbor, text in zip(neighbors, texts, strict=True):
            values += [neighbor.address, str(neighbor.remote_asn), text] if text else [
                neighbor.address, str(neighbor.remote_asn)]
        values += bgp.networks
        return self._interned(key), values

