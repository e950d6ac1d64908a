"""``fabgen init``: a commented starter spec that validates and generates as is.

The starter is a Jinja2 template shipped in the package (``fabgen/starter``)
filled from a few numbers, rather than a fixed example file, so that
``--os``, ``--hosts`` and ``--rails`` give a spec whose addressing pools, tier
count and host names fit, and whose per-OS QoS details (SONiC's MTU, Cumulus'
watchdog and ECN units) are the ones that OS's renderer accepts. Every
starter is loaded and planned before it is returned: ``init`` never writes a
spec fabgen itself would reject.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from fabgen.errors import FabgenError, Problem

if TYPE_CHECKING:
    from jinja2 import Template

SwitchOs = Literal["eos", "sonic", "cumulus"]
OS_CHOICES: tuple[SwitchOs, ...] = ("eos", "sonic", "cumulus")
MAX_RAILS = 8
MAX_HOSTS = 8192
_PORTS = 64
"""Radix of every starter switch (64 x 400G)."""


@dataclass(frozen=True)
class _SwitchKind:
    title: str
    model: str
    asic: str | None
    mtu: int


_SWITCHES: dict[str, _SwitchKind] = {
    "eos": _SwitchKind("Arista EOS", "7060DX5-64S", None, 9216),
    # SN5600 runs its default SKU, ACS-SN5600 (64 cages; set tiers.*.hwsku for another);
    # SONiC ports take 9100 at most.
    "sonic": _SwitchKind("SONiC", "SN5600", "spectrum4", 9100),
    "cumulus": _SwitchKind("Cumulus Linux (NVUE)", "SN5600", "spectrum4", 9216),
}

# An 8-GPU HGX-like board: PCIe switch, GPU and NIC bus of each slot (NIC and GPU share the switch).
_BUSES = (("15", "18", "17"), ("27", "2a", "29"), ("37", "3a", "39"), ("59", "5d", "5b"),
          ("97", "9a", "99"), ("a8", "ab", "aa"), ("b7", "ba", "b9"), ("d8", "db", "da"))


def _pool(base: str, needed: int, smallest: int, largest: int) -> str:
    """``base/N``: the smallest prefix between ``largest`` and ``smallest`` with ``needed`` addresses."""
    bits = max(32 - smallest, math.ceil(math.log2(max(needed, 2))))
    return f"{base}/{max(32 - bits, largest)}"


def starter_spec(
    os: SwitchOs = "eos",
    hosts: int = 4,
    rails: int = 4,
    *,
    name: str = "roce-starter",
    file: str = "spec.yaml",
    command_args: str = "",
) -> str:
    """The starter spec as YAML text, checked by loading and planning it."""
    if os not in _SWITCHES:
        raise FabgenError([Problem(f"unknown switch OS {os!r} (choose {', '.join(OS_CHOICES)})", file="fabgen")])
    if not 1 <= rails <= MAX_RAILS:
        raise FabgenError([Problem(f"--rails must be 1..{MAX_RAILS} (one GPU and NIC per rail), got {rails}",
                                   file="fabgen")])
    if not 1 <= hosts <= MAX_HOSTS:
        raise FabgenError([Problem(f"--hosts must be 1..{MAX_HOSTS}, got {hosts}", file="fabgen")])
    kind = _SWITCHES[os]
    sockets = 2 if rails > 1 else 1
    slots = []
    for i in range(rails):
        switch, gpu, nic = _BUSES[(i * len(_BUSES)) // rails]
        slots.append({"index": i, "numa": (i * sockets) // rails, "switch": f"0000:{switch}:00.0",
                      "gpu": f"0000:{gpu}:00.0", "nic": f"0000:{nic}:00.0"})
    hosts_per_leaf = _PORTS // 2  # 1:1: half the leaf's ports face hosts
    leaves = rails * math.ceil(hosts / hosts_per_leaf)
    three_tier = leaves > _PORTS  # a spine reaches every leaf of its pod
    tiers = ["leaf", "spine", "super_spine"] if three_tier else ["leaf", "spine"]
    uplinks = min(hosts, hosts_per_leaf)
    # The planner would pick one spine for a few hosts; two keep the fabric up when one fails.
    spine_count = 2 if not three_tier and uplinks >= 1 and leaves * math.ceil(uplinks / 2) <= _PORTS else None
    from fabgen.plan.addressing import room  # here, not at the top: ``fabgen`` imports this module for every command

    context: dict[str, object] = {  # the template's variables
        "os": os, "os_title": kind.title, "model": kind.model, "asic": kind.asic, "mtu": kind.mtu,
        "hosts": hosts, "rails": rails, "cluster": name, "file": file, "command_args": command_args,
        "sockets": sockets, "slots": slots, "tiers": tiers, "spine_count": spine_count,
        "tier_note": (f"{leaves} leaves are more than one layer of {_PORTS}-port spines can reach: "
                      "pods of leaves and spines, joined by super-spines." if three_tier else ""),
        "host_pattern": f"gpu{{index:0{max(2, len(str(hosts)))}d}}",
        # Stable addressing (fabgen.plan.addressing): a /31 per port of every leaf (and spine, in 3 tiers) and a
        # power-of-two block per tier; no tier outgrows the leaves' block at 1:1.
        "p2p": _pool("10.0.0.0", room(leaves) * _PORTS * 2 * (len(tiers) - 1), 24, 9),
        "loopbacks": "10.255.0.0/16",
        "mgmt": _pool("172.16.0.0", room(hosts) + len(tiers) * room(leaves) + 2, 24, 12),
    }
    commands = [(f"fabgen validate {file}", "check it"),
                (f"fabgen plan {file}", "the fabric in numbers"),
                (f"fabgen generate {file} -o out", "switch configs, NIC scripts, NCCL files"),
                ("fabgen schema -o fabgen-spec.schema.json", "editor completion (first line)")]
    width = max(len(c) for c, _ in commands)
    context.update(
        commands=[(c.ljust(width), note) for c, note in commands],
        hosts_text=_plural(hosts, "host"), nics_text=_plural(rails, "RoCE NIC"), gpus_text=_plural(rails, "GPU"),
    )
    text = _template().render(**context)
    _check(text)
    return text


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _template() -> Template:
    from jinja2 import Environment, StrictUndefined

    source = (Path(__file__).resolve().parent / "starter" / "spec.yaml.j2").read_text(encoding="utf-8")
    env = Environment(undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False)
    return env.from_string(source)


def _check(text: str) -> None:
    """Load and plan the starter: a starter fabgen rejects is fabgen's bug, reported as such."""
    from fabgen.pipeline import load_spec, plan_fabric

    try:
        plan_fabric(load_spec(text))
    except FabgenError as exc:
        raise FabgenError([Problem(f"the starter for these options does not plan: {p}", file="fabgen init")
                           for p in exc.problems]) from None


def write_starter(path: Path, text: str, *, force: bool = False) -> None:
    """Create ``path``; an existing file is kept unless ``force`` (exclusive create, so no race)."""
    try:
        if force:
            path.write_text(text, encoding="utf-8")
        else:
            with path.open("x", encoding="utf-8") as handle:
                handle.write(text)
    except FileExistsError:
        raise FabgenError([Problem("already exists; not overwriting it (use --force)", file=str(path))]) from None
    except OSError as exc:
        raise FabgenError([Problem(f"cannot write: {exc.strerror or exc}", file=str(path))]) from None
