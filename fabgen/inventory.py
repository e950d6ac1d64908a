"""Devices as Ansible sees them: an inventory, and the files that belong to one device.

The inventory is derived from the plan, not from the spec text, so it names the
same switches the renderers configure and carries the addresses the planner
assigned. It is emitted in a fixed order (plan order for devices, numeric order
for pods, rails and planes) so regenerating it for an unchanged spec changes no
byte and a reviewer sees only real changes.

:func:`device_files` answers "which rendered files does this device need",
which the Ansible plugins and ``fabgen diff`` both ask. It goes by each
target's declared scope (host, profile, switch, cluster), never by target name,
so targets added later are picked up without touching this module.
"""

from __future__ import annotations

import fnmatch
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from fabgen.errors import FabgenError, Problem
from fabgen.plan import FabricPlan

Kind = Literal["host", "switch"]

_GLOB_CHARS = frozenset("*?[")


def _address(cidr: str | None) -> str | None:
    """``192.0.2.7/24`` -> ``192.0.2.7``: Ansible connects to an address, not a prefix."""
    return cidr.split("/", 1)[0] if cidr else None


def _flow(items: list[int]) -> list[int]:
    """A short list printed on one line (``[0, 1, 2, 3]``), as a person would write it."""
    from ruamel.yaml.comments import CommentedSeq

    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def _compact(facts: dict[str, Any]) -> dict[str, Any]:
    """Drop facts that do not apply (a spine has no rail) instead of writing nulls."""
    return {k: v for k, v in facts.items() if v is not None}


def host_vars(fabric: FabricPlan) -> dict[str, dict[str, Any]]:
    """Per-device variables, keyed by device name, in plan order (hosts, then switches)."""
    result: dict[str, dict[str, Any]] = {}
    for host in fabric.hosts:
        result[host.name] = _compact({
            "ansible_host": _address(host.mgmt),
            "fabgen_kind": "host",
            "fabgen_profile": host.profile,
            "fabgen_pod": host.pod,
            "fabgen_rails": _flow(sorted({n.rail for n in host.nics if n.rail is not None and n.in_service})),
        })
    for switch in fabric.switches:
        result[switch.name] = _compact({
            "ansible_host": _address(switch.mgmt),
            "fabgen_kind": "switch",
            "fabgen_tier": switch.tier,
            "fabgen_os": switch.os,
            "fabgen_model": switch.model,
            "fabgen_pod": switch.pod,
            "fabgen_rail": switch.rail,
            "fabgen_plane": switch.plane,
            "fabgen_loopback": _address(switch.loopback),
        })
    return result


def inventory(fabric: FabricPlan) -> dict[str, Any]:
    """The inventory as plain data, in Ansible's YAML inventory shape.

    Groups: ``hosts``; ``switches`` with a child per tier (``leaf``, ``spine``,
    ``super_spine``); one per switch OS (``eos``, ``sonic``, ``cumulus``); one per
    pod (``pod_0``: its hosts and switches), rail (``rail_0``: its leaves) and
    plane (``plane_0``: its spines and super-spines). Variables are defined once,
    under ``hosts`` or the tier group; other groups only list members, except
    that ``hosts`` and each OS group carry how Ansible connects to their devices
    (:mod:`fabgen.ansible.connections`), with a comment saying why.
    """
    from fabgen.ansible.connections import HOSTS, SWITCH_OS

    facts = host_vars(fabric)
    tiers: dict[str, dict[str, Any]] = {}
    for switch in fabric.switches:
        tiers.setdefault(switch.tier, {})[switch.name] = facts[switch.name]
    order = ("leaf", "spine", "super_spine")
    children: dict[str, Any] = {
        "hosts": _with_vars("hosts", HOSTS, {"hosts": {h.name: facts[h.name] for h in fabric.hosts}}),
    }
    if tiers:
        children["switches"] = {"children": {t: {"hosts": tiers[t]} for t in order if t in tiers}}

    members: dict[tuple[int, str, int], list[str]] = {}
    """(rank, group prefix or name, number) -> device names; rank orders the families."""
    for switch in fabric.switches:
        members.setdefault((0, switch.os, 0), []).append(switch.name)
    for host in fabric.hosts:
        members.setdefault((1, "pod", host.pod), []).append(host.name)
    for switch in fabric.switches:
        if switch.pod is not None:
            members.setdefault((1, "pod", switch.pod), []).append(switch.name)
        if switch.rail is not None:
            members.setdefault((2, "rail", switch.rail), []).append(switch.name)
        if switch.plane is not None:
            members.setdefault((3, "plane", switch.plane), []).append(switch.name)
    for (rank, name, number), names in sorted(members.items()):
        group = name if rank == 0 else f"{name}_{number}"
        entry = {"hosts": dict.fromkeys(names)}
        children[group] = _with_vars(name, SWITCH_OS[name], entry) if rank == 0 and name in SWITCH_OS else entry
    return {"all": {"vars": {"fabgen_cluster": fabric.spec.cluster.name}, "children": children}}


def _with_vars(group: str, variables: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with ``vars`` first, and the reason for them as a comment above (ruamel keeps it)."""
    from ruamel.yaml.comments import CommentedMap

    from fabgen.ansible.connections import COMMENTS

    result = CommentedMap([("vars", dict(variables)), *entry.items()])
    if group in COMMENTS:
        result.yaml_set_comment_before_after_key("vars", before=COMMENTS[group], indent=6)
    return result


def inventory_yaml(fabric: FabricPlan, source: str | None = None) -> str:
    """The inventory as YAML text, with a header saying where it came from."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt", pure=True)
    yaml.default_flow_style = False
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    out = io.StringIO()
    origin = f" from {source}" if source else ""
    out.write(f"# Ansible inventory of cluster {fabric.spec.cluster.name}, generated by `fabgen inventory`{origin}.\n"
              "# Regenerate it rather than edit it: devices, groups and addresses follow the spec.\n")
    yaml.dump(inventory(fabric), out)
    return out.getvalue()


def device_kind(fabric: FabricPlan, name: str) -> Kind | None:
    """``host``, ``switch``, or None when the plan has no such device."""
    try:
        fabric.host(name)
        return "host"
    except KeyError:
        pass
    try:
        fabric.switch(name)
        return "switch"
    except KeyError:
        return None


def device_names(fabric: FabricPlan, patterns: Sequence[str]) -> list[str]:
    """Hosts and switches matching any pattern (globs), plan order; an exact name must exist."""
    names = [h.name for h in fabric.hosts] + [s.name for s in fabric.switches]
    problems: list[Problem] = []
    chosen: list[str] = []
    for pattern in patterns:
        if not _GLOB_CHARS & set(pattern) and device_kind(fabric, pattern) is None:
            problems.append(Problem(f"no host or switch named {pattern!r} in cluster {fabric.spec.cluster.name}"
                                    f"{_did_you_mean(pattern, names)}", file=_spec_file(fabric)))
    if problems:
        raise FabgenError(problems)
    for name in names:
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            chosen.append(name)
    return chosen


def device_files(
    fabric: FabricPlan,
    patterns: Sequence[str],
    targets: Iterable[str] | None = None,
    templates: Path | None = None,
    kind: Kind | None = None,
) -> dict[str, str]:
    """``{relpath: text}`` a set of devices needs, as ``fabgen generate`` would lay it out.

    A host gets its own files and those of its profile (the NCCL topology XML is
    rendered once per profile and shared); a switch gets its own. Cluster-wide
    files (cabling) belong to no device. ``kind`` refuses devices of the other
    kind, so a host filter applied to a switch is an error, not an empty dict.
    """
    from fabgen.targets.registry import targets as all_targets
    from fabgen.targets.render import render_files

    names = device_names(fabric, patterns)
    if kind is not None:
        wrong = [n for n in names if device_kind(fabric, n) != kind]
        if wrong and not any(_GLOB_CHARS & set(p) for p in patterns):
            other = "fabgen.fabgen.switch_config" if kind == "host" else "fabgen.fabgen.host_files"
            raise FabgenError([Problem(f"{wrong[0]!r} is not a {kind} (use {other})", file=_spec_file(fabric))])
        names = [n for n in names if n not in wrong]
    if not names:
        return {}
    profiles = sorted({fabric.host(n).profile for n in names if device_kind(fabric, n) == "host"})
    scope = {t.name: t.scope for t in all_targets()}
    wanted = set(names)
    files, owners = render_files(fabric, targets, [*names, *profiles], templates)
    chosen: dict[str, str] = {}
    for path, text in files.items():
        target, device = owners[path]
        kind_of = scope.get(target)
        if (kind_of in ("host", "switch") and device in wanted) or (kind_of == "profile" and device in profiles):
            chosen[path] = text
    return chosen


def _spec_file(fabric: FabricPlan) -> str:
    return fabric.source.file if fabric.source is not None else "<spec>"


def _did_you_mean(name: str, names: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, names, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
