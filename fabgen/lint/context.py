"""What every rule reads: the spec, the plan, optional evidence, and shared indexes.

Rules are small functions; the indexes they share (which switches carry which
QoS policy, where a host's NCCL variable was written, which spec entry planned a
cable) are computed here once, lazily, so that a rule costs one pass over the
plan even on a 3,072-host fabric.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from fabgen.lint.finding import Location
from fabgen.source import DataPath, format_path

if TYPE_CHECKING:
    from fabgen.lint.deployed import Deployed
    from fabgen.lint.observed import Observed
    from fabgen.plan.model import FabricPlan, Host, Link, QosIntent, Switch
    from fabgen.source import SourceDoc
    from fabgen.spec import ClusterSpec
    from fabgen.spec.hosts import HostOverride
    from fabgen.spec.qos import QosPolicy


def preview(names: Sequence[str], limit: int = 3) -> str:
    """``a, b, c and 5 more``: enough names to find the devices, short enough to read."""
    shown = ", ".join(names[:limit])
    rest = len(names) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def hosts_phrase(hosts: Sequence[str]) -> str:
    """``host lab01`` or ``3 hosts (lab01, lab02, lab03)``."""
    return f"host {hosts[0]}" if len(hosts) == 1 else f"{len(hosts)} hosts ({preview(hosts)})"


_T = TypeVar("_T")
_T_co = TypeVar("_T_co", covariant=True)  # a key of list[X] is a key of object: the dict below holds all


@dataclass(frozen=True, eq=False)
class MemoKey(Generic[_T_co]):
    """One slot of :attr:`LintContext.memo`, declared by the rule module that fills it, typed by what it holds.

    The key object itself (identity, not ``name``) is the key, so two modules cannot collide on a string, and the
    context needs no import of the rules' result types (rules import the context, never the reverse).
    """

    name: str
    """For debugging only."""


class LintMemo:
    """Values several rules of one family compute once per run and share, each under its owner's :class:`MemoKey`.

    The ``cast`` on reading is the typed boundary: a value is only ever stored through :meth:`put` or
    :meth:`setdefault` under a key of its own type, so reading it back as that type is sound.
    """

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[MemoKey[object], object] = {}

    def get(self, key: MemoKey[_T]) -> _T | None:
        return cast("_T | None", self._values.get(key))

    def put(self, key: MemoKey[_T], value: _T) -> _T:
        self._values[key] = value
        return value

    def setdefault(self, key: MemoKey[_T], default: _T) -> _T:
        return cast("_T", self._values.setdefault(key, default))


OS_NAMES = {"eos": "an EOS", "sonic": "a SONiC", "cumulus": "a Cumulus"}
"""Switch OS with its article, for messages."""


@dataclass(frozen=True)
class QosGroup:
    """Switches that carry the same QoS policy: the default one or one ``switch_overrides`` entry."""

    qos: QosIntent
    policy: QosPolicy
    path: DataPath
    """``("qos",)`` or ``("fabric", "switch_overrides", i, "qos")``."""
    switches: tuple[Switch, ...]

    @property
    def is_override(self) -> bool:
        return self.path[:2] == ("fabric", "switch_overrides")

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.switches]

    @property
    def oses(self) -> list[str]:
        return sorted({s.os for s in self.switches})

    def label(self) -> str:
        """``on 12 switches (leaf-r0-p00-01, ...)`` / ``on switch spine-01``."""
        if len(self.switches) == 1:
            return f"on switch {self.switches[0].name}"
        return f"on {len(self.switches)} switches ({preview(self.names)})"

    def class_path(self, name: str, *fields: str | int) -> DataPath:
        return (*self.path, "classes", name, *fields)


class LintContext:
    """Inputs of one lint run plus lazily built indexes. Read-only for rules."""

    def __init__(self, spec: ClusterSpec, plan: FabricPlan, wiring: Observed | None = None,
                 deployed: Deployed | None = None) -> None:
        self.spec = spec
        self.plan = plan
        self.doc: SourceDoc | None = spec.source if spec.source is not None else plan.source
        self.file = self.doc.file if self.doc is not None else "<spec>"
        self.wiring = wiring
        self.deployed = deployed
        self.memo = LintMemo()
        """Per-run cache for values several rules of one family share."""
        self._envs: dict[str, dict[str, str]] = {}

    # ------------------------------------------------------------------ locations

    def written(self, path: DataPath) -> bool:
        """True when the spec text has a node at ``path`` (not just a default)."""
        doc = self.doc
        return doc is not None and (path in doc.value_positions or path in doc.key_positions)

    def at(self, path: DataPath, *, key: bool = False, note: str = "") -> Location:
        """The spec location of ``path`` (or of its nearest written ancestor)."""
        if self.doc is None:
            return Location(self.file, 0, 0, format_path(path), note)
        if not key and path and path in self.doc.key_positions and self._is_container(path):
            key = True  # a block mapping's value starts on its first child's line: point at its key
        line, col = self.doc.locate(path, key=key)
        return Location(self.file, line, col, format_path(path), note)

    def _is_container(self, path: DataPath) -> bool:
        node = self.doc.data if self.doc is not None else None
        for part in path:
            try:
                node = node[part]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return False
        return isinstance(node, (dict, list))

    def first_written(self, *paths: DataPath) -> DataPath:
        """The first of ``paths`` written in the spec, else the last one (located by its ancestor).

        Without a source document nothing is "written": the first (most precise) path is named.
        """
        if self.doc is None:
            return paths[0]
        for path in paths:
            if self.written(path):
                return path
        return paths[-1]

    # ------------------------------------------------------------------ switches and QoS

    @cached_property
    def switches(self) -> dict[str, Switch]:
        return {s.name: s for s in self.plan.switches}

    @cached_property
    def qos_groups(self) -> tuple[QosGroup, ...]:
        """Default policy first, then overrides in spec order; only groups with switches."""
        overrides = self.spec.fabric.switch_overrides
        members: dict[tuple[str | int, ...], list[Switch]] = {}
        for switch in self.plan.switches:
            members.setdefault(switch.qos_path, []).append(switch)
        order = [("qos",), *(("fabric", "switch_overrides", i, "qos") for i in range(len(overrides)))]
        groups = []
        for path in order:
            switches = members.get(path)
            if not switches:
                continue
            policy = self.spec.qos if path == ("qos",) else overrides[path[2]].qos  # type: ignore[index]
            groups.append(QosGroup(switches[0].qos, policy, path, tuple(switches)))
        return tuple(groups)

    # ------------------------------------------------------------------ hosts and NCCL

    @cached_property
    def nccl_version(self) -> tuple[int, ...]:
        from fabgen.targets.nccl.variables import parse_version

        return parse_version(self.spec.nccl.version)

    def override_of(self, host: Host) -> HostOverride | None:
        return self.spec.hosts[host.group].overrides.get(host.name)

    def host_path(self, host: Host) -> DataPath:
        """The host's override entry when it has one, else its host group."""
        if self.override_of(host) is not None:
            return ("hosts", host.group, "overrides", host.name)
        return ("hosts", host.group)

    def env(self, host: Host) -> dict[str, str]:
        """The host's NCCL environment as a dict (derived values with hand-set ones on top)."""
        cache = self._envs
        env = cache.get(host.name)
        if env is None:
            env = cache[host.name] = dict(host.nccl_env)
        return env

    def env_path(self, host: Host, name: str) -> DataPath | None:
        """Where the spec sets ``name`` for ``host`` (its override, then ``nccl.env``); None when derived."""
        override = self.override_of(host)
        if override is not None and name in override.nccl_env:
            return ("hosts", host.group, "overrides", host.name, "nccl_env", name)
        if name in self.spec.nccl.env:
            return ("nccl", "env", name)
        return None

    def hand_set_env(self) -> Iterable[tuple[DataPath, str, bool | int | str, list[str]]]:
        """Every hand-set NCCL variable: (path, name, value as written, hosts it reaches)."""
        overridden: dict[str, set[str]] = {}
        per_group: list[tuple[int, str, HostOverride]] = []
        for gindex, group in enumerate(self.spec.hosts):
            for host, override in group.overrides.items():
                per_group.append((gindex, host, override))
                for name in override.nccl_env:
                    overridden.setdefault(name, set()).add(host)
        all_hosts = [h.name for h in self.plan.hosts]
        for name, value in self.spec.nccl.env.items():
            shadowed = overridden.get(name, set())
            yield ("nccl", "env", name), name, value, [h for h in all_hosts if h not in shadowed]
        for gindex, host, override in per_group:
            for name, value in override.nccl_env.items():
                yield ("hosts", gindex, "overrides", host, "nccl_env", name), name, value, [host]

    # ------------------------------------------------------------------ links

    @cached_property
    def cable_paths(self) -> dict[frozenset[tuple[str, str]], DataPath]:
        """Explicit cables of ``fabric.cabling`` by their two ends."""
        out: dict[frozenset[tuple[str, str]], DataPath] = {}
        for index, cable in enumerate(self.spec.fabric.cabling):
            a = tuple(cable.a.split(":", 1))
            b = tuple(cable.b.split(":", 1))
            out.setdefault(frozenset({a, b}), ("fabric", "cabling", index))  # type: ignore[arg-type]
        return out

    def link_path(self, link: Link) -> DataPath:
        """Where a link was planned: its ``fabric.cabling`` entry, the host's group, or the tiers."""
        if link.explicit:
            found = self.cable_paths.get(frozenset({(link.a_device, link.a_port), (link.b_device, link.b_port)}))
            if found is not None:
                return found
        if link.role == "host-leaf":
            host = self.plan.host(link.a_device) if link.a_device in self.hosts else None
            if host is not None:
                return self.host_path(host)
        return ("fabric", "tiers")

    @cached_property
    def _ends(self) -> tuple[dict[tuple[str, str], Link], dict[tuple[str, str], list[Link]]]:
        first: dict[tuple[str, str], Link] = {}
        shared: dict[tuple[str, str], list[Link]] = {}
        for link in self.plan.links:
            for end in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
                owner = first.setdefault(end, link)
                if owner is not link:
                    shared.setdefault(end, [owner]).append(link)
        return first, shared

    @property
    def link_at(self) -> dict[tuple[str, str], Link]:
        """The (first) planned link at each end."""
        return self._ends[0]

    @property
    def shared_ends(self) -> dict[tuple[str, str], list[Link]]:
        """Ends that carry more than one planned link, with all their links in plan order."""
        return self._ends[1]

    @cached_property
    def hosts(self) -> dict[str, Host]:
        return {h.name: h for h in self.plan.hosts}

    def tier_path(self, tier: str, *fields: str) -> DataPath:
        return ("fabric", "tiers", tier, *fields)
