"""What a SONiC switch cannot take, refused at validation with the spec's line.

Run by :func:`fabgen.pipeline.plan_fabric` through the target's ``limits``, so
``fabgen validate`` refuses a spec before any file is written:

* a hwsku fabgen does not know (SONiC's swss and syncd would not start: they
  mount ``/usr/share/sonic/device/$PLATFORM/$HWSKU``), with a did-you-mean;
* a tier ``asic`` other than the SKU's platform's, or ASIC constants in ``buffers``
  (buffermgrd uses the platform's ASIC_TABLE; nothing fabgen writes can change them);
* a tier speed no port of the SKU runs at, or more ports than the SKU has;
* a port name (from ``fabric.cabling``) that is not one of the SKU's ports;
* a cable longer than the traditional buffer model's lookup table covers, or a
  shared headroom pool with the traditional model (its table reserves full xoff);

* PFC watchdog timers outside ``sonic-pfcwd.yang``'s ranges (:data:`WATCHDOG`).
"""

from __future__ import annotations

from fabgen.errors import Problem
from fabgen.plan.model import FabricPlan, Switch, TierName
from fabgen.source import DataPath, spec_problem
from fabgen.spec.buffers import asic_key
from fabgen.spec.fabric import Tier
from fabgen.targets.qos_common import WatchdogLimits, watchdog_limit_problems
from fabgen.targets.sonic.routing_limits import routing_limit_problems
from fabgen.targets.sonic.sku import (
    SKUS,
    Sku,
    fabric_ports,
    lanes_per_port,
    lookup_cable,
    resolve_hwsku,
    sku_hint,
)

__all__ = ["WATCHDOG", "plan_limits", "sonic_limits", "tier_of"]

WATCHDOG = WatchdogLimits(
    "SONiC", (100, 5_000), (100, 60_000), (100, 1_000), 1, ("drop", "forward"),
    "SONiC's YANG takes detection_time 100-5000 ms, restoration_time 100-60000 ms and POLL_INTERVAL "
    "100-1000 ms, not above either", poll_at_most_timers=True)

_TIERS: tuple[TierName, ...] = ("leaf", "spine", "super_spine")
PLATFORM_FIELDS = frozenset({"cell_size", "pipeline_latency_kb", "mac_phy_delay_kb", "peer_response_time_kb",
                             "gearbox_delay_ns"})
"""``tiers.*.buffers`` fields a SONiC switch of a known SKU takes from its platform, never from the spec."""


def tier_of(plan: FabricPlan, name: TierName) -> Tier | None:
    return getattr(plan.spec.fabric.tiers, name)  # type: ignore[no-any-return]


def plan_limits(plan: FabricPlan) -> list[Problem]:
    """The target's limits: the SKUs, ports and buffers, then the watchdog."""
    if not any(s.os == "sonic" for s in plan.switches):
        return []
    return [*sonic_limits(plan), *watchdog_limit_problems(plan, "sonic", WATCHDOG), *routing_limit_problems(plan)]


def sonic_limits(plan: FabricPlan) -> list[Problem]:
    """Every refusal of the plan's SONiC switches (empty when there are none)."""
    problems: list[Problem] = []
    skus: dict[str, Sku] = {}
    for name in _TIERS:
        tier = tier_of(plan, name)
        if tier is None or tier.os != "sonic":
            continue
        sku = _tier_sku(plan, name, tier, problems)
        if sku is not None:
            skus[name] = sku
    for switch in plan.switches:
        sku = skus.get(switch.tier) if switch.os == "sonic" else None
        if sku is not None:
            problems.extend(_ports(plan, switch, sku))
    return problems


def _tier_sku(plan: FabricPlan, name: TierName, tier: Tier, problems: list[Problem]) -> Sku | None:
    base: DataPath = ("fabric", "tiers", name)
    hwsku = resolve_hwsku(tier.model, tier.hwsku)
    sku = SKUS.get(hwsku)
    where = (*base, "hwsku") if tier.hwsku else (*base, "model")
    if sku is None:
        problems.append(spec_problem(plan.source, f"{name} tier: SONiC has no hwsku {hwsku!r} that fabgen knows"
                                     f"{sku_hint(hwsku)} (set fabric.tiers.{name}.hwsku)", where))
        return None
    if tier.asic is not None and asic_key(tier.asic) not in (sku.asic, ""):
        problems.append(spec_problem(plan.source, f"{name} tier: {hwsku} is a {sku.asic} platform ({sku.platform}); "
                                     f"buffermgrd computes headroom with its ASIC_TABLE, not {tier.asic}'s",
                                     (*base, "asic")))
    ports = fabric_ports(sku, tier.speed)
    if not ports:
        problems.append(spec_problem(plan.source, f"{name} tier: no port of {hwsku} runs at {tier.speed}G",
                                     (*base, "speed")))
        return None
    if lanes_per_port(sku, tier.speed) is None:
        problems.append(spec_problem(plan.source, f"{name} tier: the {tier.speed}G ports of {hwsku} differ in "
                                     "lane count; fabgen cannot name them by one rule", (*base, "speed")))
        return None
    if tier.ports > len(ports):
        problems.append(spec_problem(plan.source, f"{name} tier: {hwsku} has {len(ports)} ports at "
                                     f"{tier.speed}G, not {tier.ports}", (*base, "ports")))
    buffers = tier.buffers
    for field in sorted(PLATFORM_FIELDS & (buffers.model_fields_set if buffers is not None else set())):
        problems.append(spec_problem(plan.source, f"{name} tier: SONiC takes {field} from {sku.platform}'s "
                                     "ASIC_TABLE (asic_table.j2) and gearbox config, not from CONFIG_DB; fabgen "
                                     "cannot set it, remove it", (*base, "buffers", field)))
    if buffers is not None and buffers.model == "traditional" and buffers.shared_headroom_pool:
        problems.append(spec_problem(plan.source, f"{name} tier: the traditional buffer model takes headroom "
                                     f"from {hwsku}'s pg_profile_lookup.ini, which reserves full xoff per PG; "
                                     "a shared headroom pool needs the dynamic model",
                                     (*base, "buffers", "shared_headroom_pool")))
    return sku


def _cable_index(plan: FabricPlan, device: str, port: str) -> int | None:
    end = f"{device}:{port}"
    return next((i for i, c in enumerate(plan.spec.fabric.cabling) if end in (c.a, c.b)), None)


def _ports(plan: FabricPlan, switch: Switch, sku: Sku) -> list[Problem]:
    problems = []
    tier = tier_of(plan, switch.tier)
    traditional = tier is not None and tier.buffers is not None and tier.buffers.model == "traditional"
    for port in switch.ports:
        path: DataPath = ("fabric", "tiers", switch.tier, "ports")
        index = _cable_index(plan, switch.name, port.name)
        if index is not None:
            path = ("fabric", "cabling", index)
        if sku.port(port.name) is None:
            problems.append(spec_problem(plan.source, f"{switch.name}: {port.name!r} is not a port of {sku.name} "
                                         f"(SONiC names them {sku.ports[0].name}, {sku.ports[1].name}, ...)", path))
            continue
        speed = port.speed * 1000
        if traditional and switch.qos.lossless_priorities and lookup_cable(sku, speed, port.cable_m) is None:
            longest = max((c for s, c, _ in sku.pg_lookup if s == speed), default=0)
            where = path if index is not None else (*switch.qos_path, "cable_length")
            problems.append(spec_problem(plan.source, f"{switch.name}: {port.name} has a {port.cable_m} m cable "
                                         f"at {port.speed}G; {sku.name}'s pg_profile_lookup.ini (traditional "
                                         f"buffer model) covers {longest} m at most", where))
    return problems
