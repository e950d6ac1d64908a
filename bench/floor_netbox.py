"""The floor of ``netbox``: the same rows as :func:`fabgen.targets.netbox.files.netbox_files`, joined by commas.

No csv module and no quoting: the 24k fabric's names and descriptions hold no
comma, quote or newline, so a plain join is the same bytes there (``bench/run.py``
asserts it); the difference in time is what the csv writer and the output check cost.
"""

from __future__ import annotations

from fabgen.plan import FabricPlan
from fabgen.targets.netbox.files import FILES, INTERFACE_TYPES, ROLE_COLORS, loopback_name, manufacturer, slug
from fabgen.wiring_netbox import INTERFACE_TYPE

_TIER_ROLE = {"leaf": "leaf", "spine": "spine", "super_spine": "super-spine"}


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``{netbox/N-KIND.csv: text}`` like the ``netbox`` target (without its output check)."""
    site = plan.spec.cluster.name
    types = dict.fromkeys([(manufacturer(s), s.model) for s in plan.switches]
                          + [("Generic", h.profile) for h in plan.hosts])
    roles = ["gpu-host", *dict.fromkeys(_TIER_ROLE[s.tier] for s in plan.switches)]
    devices = [f"{s.name},{_TIER_ROLE[s.tier]},{manufacturer(s)},{s.model},planned,{site},{s.os} {s.tier}"
               for s in plan.switches]
    devices += [f"{h.name},gpu-host,Generic,{h.profile},planned,{site},{h.description}" for h in plan.hosts]
    interfaces, addresses = [], []
    for s in plan.switches:
        lo = loopback_name(s)
        interfaces.append(f"{s.name},{lo},virtual,,,true,loopback")
        addresses.append(f"{s.loopback},active,{s.name},{lo},true,loopback")
        interfaces += [f"{s.name},{p.name},{INTERFACE_TYPES.get(p.speed, 'other')},{p.speed * 1_000_000},{s.qos.mtu},"
                       f"{'false' if p.shutdown else 'true'},{p.description}" for p in s.ports]
    mtu = plan.qos.mtu
    interfaces += [f"{h.name},{n.netdev},{INTERFACE_TYPES.get(n.speed, 'other')},{n.speed * 1_000_000},{mtu},"
                   f"{'true' if n.in_service else 'false'},{n.name} rail {n.rail}"
                   for h in plan.hosts for n in h.nics if n.rail is not None]
    t = INTERFACE_TYPE
    cables = [f"{k.a_device},{t},{k.a_port},{k.b_device},{t},{k.b_port},planned" for k in plan.links]
    for k in plan.links:
        addresses += [f"{k.a_address},active,{k.a_device},{k.a_port},,{k.role} to {k.b_device}",
                      f"{k.b_address},active,{k.b_device},{k.b_port},,{k.role} to {k.a_device}"]
    rows = [[f"{site},{slug(site)},planned"], [f"{m},{slug(m)}" for m in dict.fromkeys(m for m, _ in types)],
            [f"{r},{slug(r)},{ROLE_COLORS[r]}" for r in roles],
            [f"{m},{model},{slug(f'{m}-{model}')},1" for m, model in types], devices, interfaces, cables, addresses]
    return {path: "\n".join([",".join(columns), *lines]) + "\n" for (path, _, columns), lines in zip(FILES, rows, strict=True)}
