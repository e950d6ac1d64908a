"""The eBGP underlay and load balancing of a Cumulus switch as NVUE ``set`` tree sections.

Kept beside ``config.py`` (QoS, interfaces), which appends these sections to the
tree it builds, so both files (``startup.yaml``, ``nvue.sh``) print them.
Spelled as Cumulus Linux 5.6-5.14 spells them (``enable on``; 5.15 renamed
these leaves ``state enabled``), from NVIDIA's NVUE command reference:

* ``router bgp autonomous-system`` and ``router-id`` (global), ``vrf default
  router bgp`` with one numbered ``neighbor ADDR`` per session (``remote-as``
  the peer's number rather than ``external``, so a miscabled peer is refused by
  BGP instead of accepted; ``description``; ``timers keepalive|hold`` and
  ``bfd enable|detect-multiplier|min-rx-interval|min-tx-interval`` when planned);
  ``address-family ipv4-unicast`` with one ``network`` per planned prefix (the
  same explicit list as EOS and the twin's FRR, instead of ``redistribute
  connected``) and ``multipaths ebgp`` (1-128); ``path-selection multipath
  aspath-ignore on`` where the plan needs multipath relax.
* ECMP hashing: ``system forwarding ecmp-hash`` on the 5-tuple, written out
  (the defaults are the same) so the spread of RoCE queue pairs, which differ
  in UDP source port, does not rest on a default. Source and destination are set
  alike, which keeps Cumulus's symmetric hashing on.
* Adaptive routing for ``spray``: per-packet path choice by queue and port load
  (NVIDIA's "Adaptive Routing"), on every fabric port that is an ECMP member
  (switch-to-switch ports) and globally. Its documented limits are refused at
  validation (``limits.py``): Spectrum-4 only, 200G and 400G links only, no
  bonds or subinterfaces (fabgen plans neither). Enabling it restarts
  ``switchd``; the script's comment says so. NVUE has no load-aware per-flow
  mode, so ``dlb`` is refused.
"""

from __future__ import annotations

from fabgen.plan.model import Switch, SwitchPort

Path = tuple[str, ...]
Tree = dict[str, object]
Section = tuple[Path, Tree, tuple[str, ...]]

ON = "on"
ECMP_HASH = ("source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port")


def adaptive_routing(switch: Switch) -> bool:
    """Adaptive routing is NVUE's spelling of ``spray`` (limits.py refuses it where NVUE cannot)."""
    return switch.load_balancing == "spray"


def port_routing(switch: Switch, port: SwitchPort) -> Tree | None:
    """The ``interface swpN router`` object of a fabric port, or None."""
    if adaptive_routing(switch) and port.peer_kind == "switch":
        return {"adaptive-routing": {"enable": ON}}
    return None


def forwarding_section(switch: Switch) -> Section:
    return (("system", "forwarding"), {"ecmp-hash": {field: ON for field in ECMP_HASH}}, (
        "ECMP hash on the 5-tuple: RoCE gives every queue pair its own UDP source port.",
    ))


def routing_sections(switch: Switch) -> list[Section]:
    """``router`` (BGP globals, adaptive routing) and ``vrf default router bgp``, when the plan routes."""
    sections: list[Section] = []
    bgp = switch.bgp
    router: Tree = {}
    if bgp is not None:
        router["bgp"] = {"enable": ON, "autonomous-system": bgp.asn, "router-id": bgp.router_id}
    if adaptive_routing(switch):
        router["adaptive-routing"] = {"enable": ON}
    if router:
        notes: list[str] = ["eBGP underlay: this switch's ASN and router-id (its loopback)."] if bgp else []
        if adaptive_routing(switch):
            notes.append("Adaptive routing (per-packet, load-aware) for load_balancing spray; enabling it "
                         "restarts switchd.")
        sections.append((("router",), router, tuple(notes)))
    if bgp is None:
        return sections
    neighbors: Tree = {}
    for n in bgp.neighbors:
        body: Tree = {"remote-as": n.remote_asn, "type": "numbered"}
        if n.description:
            body["description"] = n.description
        if bgp.keepalive is not None and bgp.hold is not None:
            body["timers"] = {"keepalive": bgp.keepalive, "hold": bgp.hold}
        if bgp.bfd is not None:
            body["bfd"] = {"enable": ON, "detect-multiplier": bgp.bfd.multiplier,
                           "min-rx-interval": bgp.bfd.interval_ms, "min-tx-interval": bgp.bfd.interval_ms}
        body["address-family"] = {"ipv4-unicast": {"enable": ON}}
        neighbors[n.address] = body
    vrf_bgp: Tree = {"enable": ON, "neighbor": neighbors, "address-family": {"ipv4-unicast": {
        "enable": ON,
        "network": {prefix: {} for prefix in bgp.networks},
        "multipaths": {"ebgp": bgp.maximum_paths},
    }}}
    if bgp.multipath_relax:
        vrf_bgp["path-selection"] = {"multipath": {"aspath-ignore": ON}}
    summary = ("One numbered session per planned /31; announce the loopback and in-service host subnets; "
             f"ECMP over up to {bgp.maximum_paths} paths"
             + ("; multipath across peer ASNs (aspath-ignore)." if bgp.multipath_relax else "."),)
    sections.append((("vrf",), {"default": {"router": {"bgp": vrf_bgp}}}, summary))
    return sections
