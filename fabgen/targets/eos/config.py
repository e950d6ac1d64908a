"""Arista EOS target: ``switches/NAME.cfg`` and ``switches/NAME.session`` for every switch whose OS is ``eos``.

The ``.session`` applies the ``.cfg`` to a live switch inside a configuration
session that resets only fabgen's sections (:mod:`fabgen.targets.eos.session`).

The plan says *what* a switch does; this module decides *how EOS spells it*
and hands the templates an :class:`EosConfig` whose every value is final text
or a number (AVD's "structured config" step). The templates under
``templates/eos/`` only print it, one template per feature, in EOS CLI order.

EOS-specific decisions made here, each for a reason:

* All 64 DSCPs are mapped. EOS's default map already sends DSCP 24-31 to
  traffic class 3; mapping only the DSCPs a class names would leave 24, 25 and
  27-31 in the lossless class, which the plan does not intend.
* ECN thresholds are written in ``bytes``: the plan holds bytes, and the unit
  then carries no KB-vs-KiB doubt.
* Watchdog times are seconds, as EOS takes them (0.2, not 200 ms).
* EOS's largest IP MTU is 9214 (Arista pyeapi: 68-9214). A larger plan MTU
  (the spec's default 9216 suits SONiC and Cumulus) is lowered to 9214, and the
  config says so in a comment.
* The QoS profile name is derived from the policy: ``FABGEN-QOS`` for the
  fabric's policy, ``FABGEN-QOS-<8 hex of the policy>`` for a switch override,
  so two policies never share a name and a name never depends on order.
* RoCE QP hashing (UDP 4791, BTH bytes 5-7 = destination QP) exists only as a
  ``load-balance sand profile`` on Jericho-family ("sand") platforms, EOS
  4.33.1F or later (AVD schema). It is written into the ``default`` sand
  profile, which EOS applies to every port. Elsewhere the config says why not
  in a comment. DLB is ``ip hardware fib load-balance distribution dynamic``
  where the platform has it (:mod:`fabgen.platforms`); ``dlb`` on
  another platform, and ``spray`` anywhere, are refused at validation
  (``limits.py``), so nothing here degrades silently.
* PFC headroom is a chip-wide ``platform trident mmu queue profile`` on
  Trident/Tomahawk platforms, sized from the longest lossless cable, and a
  comment elsewhere (:mod:`fabgen.targets.eos.headroom`).
* ``router bgp`` is in the form Arista AVD renders (``tests/targets/eos/
  test_pyavd.py`` compares line for line): ``no bgp default ipv4-unicast`` and
  one ``neighbor X activate`` per session under ``address-family ipv4``, so a
  session exchanges IPv4 routes because the config says so, not by default;
  the announced prefixes are ``network`` statements, exactly the plan's
  ``BgpIntent.networks`` (loopback /32, in-service host /31s). AVD's own
  designs use ``redistribute connected route-map`` plus a prefix-list instead;
  ``network`` needs no policy objects, cannot leak a connected subnet the plan
  did not list, and is what the twin's FRR runs, so one form is tested twice.
  Multipath relax is ``bgp bestpath as-path multipath-relax``, which AVD's
  schema does not model: it is a ``bgp_defaults`` line there.
"""

from __future__ import annotations

import hashlib
from decimal import Decimal

from jinja2 import Environment

from fabgen.natural import natural_key
from fabgen.plan import FabricPlan, Switch
from fabgen.plan.model import QosIntent, WatchdogIntent
from fabgen.platforms import features, management_port
from fabgen.targets.base import ReadBack, RenderContext, Target
from fabgen.targets.eos.check import check_eos_config as check_eos_config
from fabgen.targets.eos.fill import MARK, render_filled, slotted
from fabgen.targets.eos.headroom import mmu_profile
from fabgen.targets.eos.limits import ECMP, interface_speed, plan_limits
from fabgen.targets.eos.model import (
    BTH_DEST_QP_BYTES,
    ROCE_UDP_PORT,
    BfdTimers,
    BgpNeighborConfig,
    DscpMap,
    Ecn,
    EosConfig,
    EthernetInterface,
    IpInterface,
    LoadBalance,
    QosProfile,
    RouterBgp,
    SandProfile,
    TxQueue,
    TxQueueMap,
    Watchdog,
)
from fabgen.targets.eos.parse import parse_eos_switch
from fabgen.targets.eos.parse_routing import parse_eos_routing
from fabgen.targets.eos.session import TEMPLATE as SESSION_TEMPLATE
from fabgen.targets.eos.session import config_body, render_session_parts, resets, session_name, session_path
from fabgen.targets.eos.slots import Vouchers
from fabgen.targets.eos.text import EOS_MAX_MTU as EOS_MAX_MTU
from fabgen.targets.eos.text import SAFE_TEXT as SAFE_TEXT
from fabgen.targets.eos.text import by_address, config_text, eos_mtu
from fabgen.targets.eos.values import PlanValues

TEMPLATE = "eos/switch.cfg.j2"
DSCPS_PER_LINE = 8
"""DSCP values per ``qos map dscp`` line: short lines that read well and stay within any CLI limit."""
WATCHDOG_ACTIONS = {"drop": "drop"}
"""Plan action -> EOS action. EOS has drop, notify-only and errdisable; nothing forwards a stuck queue."""


# -- derivations ------------------------------------------------------------------------


def seconds(ms: int) -> str:
    """``200`` ms -> ``"0.2"``; exact, no float rounding, no exponent."""
    return format((Decimal(ms) / 1000).normalize(), "f")


def profile_name(plan: FabricPlan, qos: QosIntent) -> str:
    """``FABGEN-QOS`` for the fabric policy; a content-derived name for any other."""
    if qos == plan.qos:
        return "FABGEN-QOS"
    digest = hashlib.sha256(repr(qos).encode()).hexdigest()[:8].upper()
    return f"FABGEN-QOS-{digest}"


def is_sand(switch: Switch) -> bool:
    """Jericho-family ("sand") platform: the only one with ``load-balance sand profile``."""
    return features(switch.model, switch.asic)[0]


def has_dlb(switch: Switch) -> bool:
    """A platform with ``ip hardware fib load-balance distribution dynamic``."""
    return features(switch.model, switch.asic)[1]


def _dscp_maps(qos: QosIntent) -> tuple[DscpMap, ...]:
    maps: list[DscpMap] = []
    for tc in sorted(set(qos.dscp_to_priority)):
        dscps = [d for d, p in enumerate(qos.dscp_to_priority) if p == tc]
        for start in range(0, len(dscps), DSCPS_PER_LINE):
            maps.append(DscpMap(tuple(dscps[start:start + DSCPS_PER_LINE]), tc))
    return tuple(maps)


def _watchdog(wd: WatchdogIntent) -> Watchdog:
    """Seconds for EOS; an action EOS lacks (refused at validation when on, see limits.py) is left out when off."""
    action = WATCHDOG_ACTIONS.get(wd.action)
    return Watchdog(wd.enabled, seconds(wd.detect_ms), seconds(wd.restore_ms), seconds(wd.poll_ms), action)


def _tx_queues(qos: QosIntent) -> tuple[TxQueue, ...]:
    """One per class: classes sharing a queue are refused at validation (limits.py)."""
    queues = []
    for c in sorted(qos.classes, key=lambda c: c.queue):
        ecn = None
        if c.ecn_min is not None and c.ecn_max is not None:
            ecn = Ecn(c.ecn_min, c.ecn_max, "bytes", c.ecn_probability or 100, 0)
        role = f", {c.role}" if c.role not in ("other", c.name) else ""
        lossless = ", lossless" if c.lossless else ""
        queues.append(TxQueue(c.queue, config_text(f"class {c.name}{role}{lossless}"), c.strict,
                              None if c.strict else c.weight, ecn))
    return tuple(queues)


def _load_balance(switch: Switch) -> LoadBalance:
    notes: list[str] = []
    sand = None
    if switch.roce_qp_hash:
        if is_sand(switch):
            notes.append(f"RoCE QP hashing: UDP {ROCE_UDP_PORT} hashed on BTH bytes {BTH_DEST_QP_BYTES} "
                         "(destination QP), EOS 4.33.1F or later")
            sand = SandProfile("default", ROCE_UDP_PORT, BTH_DEST_QP_BYTES)
        else:
            notes.append(f"RoCE QP hashing not configured: {switch.model} is not a Jericho (sand) platform, "
                         "so ECMP hashes the 5-tuple (RoCE NICs vary the UDP source port per QP)")
    # limits.py refuses spray, and dlb on a platform without it, at fabric.load_balancing.mode.
    dynamic = switch.load_balancing == "dlb" and has_dlb(switch)
    if dynamic:
        notes.append("dynamic load balancing: ECMP members chosen by port load (EOS 4.30.2F or later)")
    return LoadBalance(tuple(config_text(n) for n in notes), sand, dynamic)


def _router_bgp(switch: Switch) -> RouterBgp | None:
    bgp = switch.bgp
    if bgp is None:
        return None
    bfd = BfdTimers(bgp.bfd.interval_ms, bgp.bfd.multiplier) if bgp.bfd else None
    timers = (bgp.keepalive, bgp.hold) if bgp.keepalive is not None and bgp.hold is not None else None
    # Sorted by address, numerically: EOS shows them so, and AVD renders them so (natural sort on ip_address).
    neighbors = tuple(BgpNeighborConfig(n.address, n.remote_asn, config_text(n.description), bfd)
                      for n in by_address(bgp.neighbors))
    return RouterBgp(bgp.asn, bgp.router_id, timers, bgp.maximum_paths, bgp.multipath_relax, neighbors,
                     bgp.networks)


def eos_config(plan: FabricPlan, switch: Switch) -> EosConfig:
    """The structured config of one EOS switch."""
    qos = switch.qos
    watchdog = _watchdog(qos.watchdog)
    tx_queues = _tx_queues(qos)
    profile = QosProfile(
        name=profile_name(plan, qos),
        trust=qos.trust,
        pfc_enabled=bool(qos.lossless_priorities),
        no_drop_priorities=tuple(qos.lossless_priorities),
        watchdog=watchdog,
        tx_queues=tx_queues,
    )
    mtu = eos_mtu(qos.mtu)
    notes = []
    if mtu != qos.mtu:
        notes.append(f"mtu: the policy asks {qos.mtu}, above the EOS maximum IP MTU, so fabric ports use {mtu}")
    interfaces = tuple(
        EthernetInterface(port.name, config_text(port.description), mtu, interface_speed(switch, port),
                          port.address, profile.name, port.shutdown)
        for port in sorted(switch.ports, key=lambda p: natural_key(p.name))
    )
    management = None
    if switch.mgmt:
        management = IpInterface(management_port(switch.model), switch.mgmt)
    title = f"{switch.name} ({switch.model}, {switch.tier}) of cluster {plan.spec.cluster.name}"
    mmu, mmu_note = mmu_profile(switch, mtu)
    return EosConfig(
        title=config_text(title),
        notes=tuple(config_text(n) for n in notes),
        hostname=switch.name,
        dscp_maps=_dscp_maps(qos),
        tx_queue_maps=tuple(TxQueueMap(p, qos.priority_to_queue[p]) for p in sorted({c.priority for c in qos.classes})),
        qos_profiles=(profile,),
        watchdog_defaults=profile.watchdog,
        load_balance=_load_balance(switch),
        ethernet_interfaces=interfaces,
        loopback=IpInterface("Loopback0", switch.loopback),
        management=management,
        router_bgp=_router_bgp(switch),
        mmu=mmu,
        mmu_note=config_text(mmu_note),
    )


# -- target -----------------------------------------------------------------------------


def render_eos(env: Environment, plan: FabricPlan, switch: Switch) -> str:
    """The text of ``switches/NAME.cfg``."""
    return env.get_template(TEMPLATE).render(eos=eos_config(plan, switch))


def _render(context: RenderContext, switch: Switch) -> dict[str, str]:
    """The ``.cfg`` and the configuration session that applies it without touching anything else.

    Both are rendered once per shape and filled in per switch (:mod:`fabgen.targets.eos.fill`) with values
    read from the plan (:mod:`fabgen.targets.eos.values`); the structured config is built only where a switch
    is rendered in full: the first of its shape, or every switch under a template overlay. The session's shape
    key is the config's: its prologue resets exactly the sections that key fixes.
    """
    env = context.env
    plan_values: PlanValues = context.cache.get("eos-values") or context.cache.setdefault(
        "eos-values", PlanValues(context.plan))
    key, values = plan_values.key_and_values(switch)
    built: list[EosConfig] = []

    def eos() -> EosConfig:
        if not built:
            built.append(eos_config(context.plan, switch))
        return built[0]

    def cfg_shape() -> tuple[str, list[str]]:
        shape, slots = slotted(eos())
        return env.get_template(TEMPLATE).render(eos=shape), slots

    cfg, cfg_pieces = render_filled(context, key, values, TEMPLATE,
                                    lambda: env.get_template(TEMPLATE).render(eos=eos()), cfg_shape)
    title, name = values[0], session_name(cfg)
    body = cfg[:-len("end\n")] if cfg.endswith("\nend\n") else config_body(cfg)

    def prologue() -> list[str]:
        config = eos()
        return resets([p.name for p in config.qos_profiles], config.mmu.name if config.mmu else None,
                      [i.name for i in config.ethernet_interfaces] + [config.loopback.name],
                      config.router_bgp is not None)

    def session_shape() -> tuple[str, list[str]]:
        return render_session_parts(env, f"{MARK}0{MARK}", f"{MARK}1{MARK}", prologue(), f"{MARK}2{MARK}"), [
            eos().title, name, body]

    session, session_pieces = render_filled(context, key, [title, name, body], SESSION_TEMPLATE,
                                            lambda: render_session_parts(env, eos().title, name, prologue(), body),
                                            session_shape)
    paths = f"switches/{switch.name}.cfg", session_path(switch.name)
    if cfg_pieces and session_pieces:
        vouchers: Vouchers = context.cache.get("eos-vouchers") or context.cache.setdefault("eos-vouchers", Vouchers())
        vouchers.vouch(key, (paths[0], cfg, cfg_pieces, values), (paths[1], session, session_pieces, [title, name]))
    return {paths[0]: cfg, paths[1]: session}


TARGET = Target(
    name="eos",
    scope="switch",
    summary="Arista EOS configuration per switch: QoS maps, RoCE qos profile (PFC, watchdog, ECN), interfaces, "
            "load balancing, router bgp; and the configure session that applies only those sections",
    render=_render,
    applies=lambda switch: switch.os == "eos",
    check=check_eos_config,
    read_back=ReadBack("eos", "switches/{name}.cfg", parse_eos_switch, "text", parse_eos_routing),
    limits=plan_limits,
    layout_limits=ECMP.layout_problems,
)
