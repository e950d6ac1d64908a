"""The floor: EOS configs written with plain string joins, no templates.

It starts from the structured config the ``eos`` target renders in full
(:func:`fabgen.targets.eos.config.eos_config`) and must produce the same bytes
(``bench/run.py`` asserts it). The target itself builds that config once per
shape only and fills the others from values read off the plan
(:mod:`fabgen.targets.eos.values`), so it can beat this floor.
"""

from __future__ import annotations

from fabgen.plan import FabricPlan
from fabgen.targets.eos.config import eos_config
from fabgen.targets.eos.session import resets, session_name, session_path


def _config(c) -> str:  # type: ignore[no-untyped-def]
    out = [f"! fabgen: {c.title}", "! generated from the cluster spec: change the spec, not this file"]
    out += [f"! {n}" for n in c.notes]
    out += ["!", f"hostname {c.hostname}", "!"]
    out += [f"qos map dscp {' '.join(map(str, m.dscps))} to traffic-class {m.traffic_class}" for m in c.dscp_maps]
    out += [f"qos map traffic-class {m.traffic_class} to tx-queue {m.tx_queue}" for m in c.tx_queue_maps]
    for p in c.qos_profiles:
        out += ["!", f"qos profile {p.name}", f"   qos trust {p.trust}"]
        if p.pfc_enabled:
            out.append("   priority-flow-control on")
            out += [f"   priority-flow-control priority {x} no-drop" for x in p.no_drop_priorities]
        else:
            out.append("   no priority-flow-control")
        w = p.watchdog
        if w.enabled:
            out += ["   priority-flow-control pause watchdog",
                    f"   priority-flow-control pause watchdog port timer timeout {w.timeout} polling-interval "
                    f"{w.polling_interval} recovery-time {w.recovery_time}",
                    f"   priority-flow-control pause watchdog port action {w.action}"]
        for q in p.tx_queues:
            out += ["   !", f"   tx-queue {q.id}", f"      !! {q.comment}"]
            out += ["      priority strict"] if q.strict else ["      no priority", f"      bandwidth percent {q.bandwidth_percent}"]
            if q.ecn:
                e = q.ecn
                out.append(f"      random-detect ecn minimum-threshold {e.minimum} {e.units} maximum-threshold "
                           f"{e.maximum} {e.units} max-mark-probability {e.probability} weight {e.weight}")
    d = c.watchdog_defaults
    out += ["!", f"priority-flow-control pause watchdog default timeout {d.timeout}",
            f"priority-flow-control pause watchdog default recovery-time {d.recovery_time}",
            f"priority-flow-control pause watchdog default polling-interval {d.polling_interval}"]
    if d.action:
        out.append(f"priority-flow-control pause watchdog action {d.action}")
    out += ["!", f"! {c.mmu_note}"]
    if c.mmu:
        out += [f"platform trident mmu queue profile {c.mmu.name}", f"   ingress headroom bytes {c.mmu.headroom_bytes}",
                "!", f"platform trident mmu queue profile {c.mmu.name} apply"]
    lb = c.load_balance
    if lb.notes or lb.sand_profile:
        out.append("!")
        out += [f"! {n}" for n in lb.notes]
        if lb.sand_profile:
            s = lb.sand_profile
            out += ["load-balance policies", f"   load-balance sand profile {s.name}",
                    f"      fields udp dst-port {s.udp_dst_port}", f"         payload bytes {s.payload_bytes}"]
    for i in c.ethernet_interfaces:
        out += ["!", f"interface {i.name}"]
        if i.description:
            out.append(f"   description {i.description}")
        out += ["   shutdown" if i.shutdown else "   no shutdown", f"   mtu {i.mtu}", f"   speed {i.speed}", "   no switchport",
                f"   ip address {i.address}", f"   service-profile {i.service_profile}"]
    out += ["!", f"interface {c.loopback.name}", f"   ip address {c.loopback.address}"]
    if c.management:
        out += ["!", f"interface {c.management.name}", f"   ip address {c.management.address}"]
    out += ["!", "ip routing"]
    if lb.dynamic:
        out.append("ip hardware fib load-balance distribution dynamic")
    b = c.router_bgp
    if b:
        out += ["!", f"router bgp {b.asn}", f"   router-id {b.router_id}", "   no bgp default ipv4-unicast"]
        if b.timers:
            out.append(f"   timers bgp {b.timers[0]} {b.timers[1]}")
        out.append(f"   maximum-paths {b.maximum_paths} ecmp {b.maximum_paths}")
        if b.multipath_relax:
            out.append("   bgp bestpath as-path multipath-relax")
        for n in b.neighbors:
            out.append(f"   neighbor {n.address} remote-as {n.remote_as}")
            if n.bfd:
                out += [f"   neighbor {n.address} bfd",
                        f"   neighbor {n.address} bfd interval {n.bfd.interval} min-rx {n.bfd.interval} "
                        + f"multiplier {n.bfd.multiplier}"]
            if n.description:
                out.append(f"   neighbor {n.address} description {n.description}")
        out += ["   !", "   address-family ipv4"]
        out += [f"      neighbor {n.address} activate" for n in b.neighbors]
        out += [f"      network {p}" for p in b.networks]
    out += ["!", "end"]
    return "\n".join(out) + "\n"


def _session(c, cfg: str) -> str:  # type: ignore[no-untyped-def]
    name = session_name(cfg)
    prologue = resets([p.name for p in c.qos_profiles], c.mmu.name if c.mmu else None,
                      [i.name for i in c.ethernet_interfaces] + [c.loopback.name], c.router_bgp is not None)
    head = [f"! fabgen: {c.title}",
            "! apply path: a configuration session. It starts from the running config, so every line fabgen does",
            "! not write stays as it is; each section fabgen owns is reset below, then written again from the .cfg.",
            "! Nothing changes until the session is committed (see the end of this file).",
            f"configure session {name}", *prologue]
    tail = ["show session-config diffs",
            "! Review the diff above. Nothing is committed yet. To apply with an automatic rollback:",
            f"!   configure session {name}", "!   commit timer 00:10:00",
            "! then confirm before the timer ends, once the switch is still reachable:",
            f"!   configure session {name} commit", f"! or discard it: configure session {name} abort", "end"]
    return "\n".join(head) + "\n" + cfg[:-len("end\n")] + "\n".join(tail) + "\n"


def floor_files(plan: FabricPlan) -> dict[str, str]:
    """``switches/NAME.cfg`` and ``.session`` for every EOS switch, like the ``eos`` target (without its checks)."""
    files = {}
    for s in plan.switches:
        if s.os == "eos":
            c = eos_config(plan, s)
            cfg = files[f"switches/{s.name}.cfg"] = _config(c)
            files[session_path(s.name)] = _session(c, cfg)
    return dict(sorted(files.items()))
