"""Read back what the NVUE target writes: check it against NVUE's schema, parse its QoS.

Three readers over one schema:

* :func:`check_nvue_startup` checks a ``startup.yaml`` against the subset of
  NVUE's object model fabgen emits: known keys at each level, value types, and
  the ranges NVIDIA documents (``nv set`` reference and the "New Commands"
  lists of the Cumulus Linux 5.x release notes, which print each leaf's range,
  e.g. ``nv set qos pfc-watchdog polling-interval 100-5000``), plus the few
  cross-field rules the user guide states (DWRR percents and pool memory sum
  to at most 100, PFC watchdog only on a ``swp`` with PFC).
* :func:`parse_nv_set` turns the ``nv set`` lines of ``nvue.sh`` into the same
  tree, walking the schema to tell a key from a value, so the two files can be
  compared; :func:`check_nvue_script` validates that tree like the YAML.
* :func:`parse_nvue_qos` reduces a ``startup.yaml`` to :class:`CommonQos`, the
  OS-neutral picture every switch renderer is compared with.

Target release: the Cumulus Linux 5.x object model as spelled in 5.6 to 5.14
(``ecn enable|disable``; 5.15 renamed several leaves to ``enabled|disabled``).
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from fabgen.errors import Problem
from fabgen.targets.memo import remember
from fabgen.targets.nvue.subset import read_subset
from fabgen.targets.qos_common import WATCHDOG_OFF, CommonQos, used_queues

PROFILE = "default-global"
"""NVUE's default QoS profile: applies to every port that names no other profile."""

# ---- the schema -------------------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """A scalar: an integer in a range, one of some words, or one line of text."""

    kind: str
    """``int``, ``enum`` or ``text``."""
    lo: int = 0
    hi: int = 0
    words: tuple[str, ...] = ()
    pattern: str = ""

    def problem(self, value: object) -> str | None:
        """Why ``value`` does not fit, or None."""
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                return f"expected an integer {self.lo}..{self.hi}, got {value!r}"
            if not self.lo <= value <= self.hi:
                return f"{value} is outside {self.lo}..{self.hi}"
            return None
        if not isinstance(value, str):
            return f"expected a string, got {value!r}"
        if self.kind == "enum":
            return None if value in self.words else f"{value!r} is not one of {', '.join(self.words)}"
        if not re.fullmatch(self.pattern, value):
            return f"{value!r} is not a valid value here"
        return None

    def from_word(self, word: str) -> object:
        """The typed value an ``nv set`` argument stands for."""
        if self.kind == "int" and re.fullmatch(r"-?\d+", word):
            return int(word)
        return word


@dataclass(frozen=True)
class Key:
    """What the keys of a collection look like (an interface name, a DSCP, a prefix)."""

    what: str
    pattern: str = ""
    lo: int = 0
    hi: int = -1
    prefix: bool = False

    def problem(self, key: object) -> str | None:
        text = str(key) if isinstance(key, int) and not isinstance(key, bool) else key
        if not isinstance(text, str):
            return f"{self.what} {key!r} is not a string"
        if self.prefix:
            try:
                ipaddress.ip_interface(text)
            except ValueError:
                return f"{text!r} is not an address with a prefix length"
            return None if "/" in text else f"{text!r} has no prefix length"
        if self.hi >= self.lo:
            if not re.fullmatch(r"\d+", text) or not self.lo <= int(text) <= self.hi:
                return f"{self.what} {text!r} is not an integer {self.lo}..{self.hi}"
            return None
        return None if re.fullmatch(self.pattern, text) else f"{text!r} is not a valid {self.what}"


@dataclass(frozen=True)
class Obj:
    """A mapping with fixed keys; ``Obj()`` is NVUE's empty-object marker ``{}``."""

    fields: Mapping[str, Node] = field(default_factory=dict)
    one_of: bool = False
    """Exactly one key must be present (``link state: {up: {}}``)."""


@dataclass(frozen=True)
class Coll:
    """A mapping keyed by ids: interfaces, DSCP values, traffic classes, prefixes."""

    key: Key
    item: Node


Node = Leaf | Obj | Coll

ENABLE = Leaf("enum", words=("enable", "disable"))
ON_OFF = Leaf("enum", words=("on", "off"))
"""5.6-5.14 booleans of routing and forwarding (``enable on``); 5.15 spells them ``state enabled``."""
IPV4 = r"(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}"
ASN = Leaf("int", 1, 4_294_967_295)
SP = Key("switch priority", lo=0, hi=7)
TC = Key("traffic class", lo=0, hi=7)
EMPTY = Obj()
PROFILE_ID = Key("profile name", pattern=r"[A-Za-z0-9_-]{1,64}")
SPEEDS = ("auto", "10M", "100M", "1G", "10G", "25G", "40G", "50G", "100G", "200G", "400G", "800G")
HOSTNAME = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
ONE_LINE = r"[^\x00-\x1f\x7f]*"

INTERFACE = Obj({
    "type": Leaf("enum", words=("swp", "eth", "bond", "loopback", "svi", "sub", "peerlink", "tunnel")),
    "description": Leaf("text", pattern=ONE_LINE),
    "link": Obj({
        "mtu": Leaf("int", 552, 9216),
        "speed": Leaf("enum", words=SPEEDS),
        "state": Obj({"up": EMPTY, "down": EMPTY}, one_of=True),
    }),
    "ip": Obj({"address": Coll(Key("address", prefix=True), EMPTY)}),
    "qos": Obj({"pfc-watchdog": Obj({"state": ENABLE})}),
    "router": Obj({"adaptive-routing": Obj({"enable": ON_OFF})}),
})

QOS = Obj({
    "mapping": Coll(PROFILE_ID, Obj({
        "trust": Leaf("enum", words=("l2", "l3", "port", "both")),
        "port-default-sp": Leaf("int", 0, 7),
        "dscp": Coll(Key("DSCP", lo=0, hi=63), Obj({"switch-priority": Leaf("int", 0, 7)})),
        "pcp": Coll(Key("PCP", lo=0, hi=7), Obj({"switch-priority": Leaf("int", 0, 7)})),
    })),
    "egress-queue-mapping": Coll(PROFILE_ID, Obj({
        "switch-priority": Coll(SP, Obj({"traffic-class": Leaf("int", 0, 7)})),
    })),
    "traffic-pool": Coll(Key("traffic pool", pattern=r"[A-Za-z0-9_-]{1,64}"), Obj({
        "memory-percent": Leaf("int", 1, 100),
        "switch-priority": Coll(SP, EMPTY),
    })),
    "pfc": Coll(PROFILE_ID, Obj({
        "switch-priority": Coll(SP, EMPTY),
        "tx": ENABLE,
        "rx": ENABLE,
        "cable-length": Leaf("int", 1, 100_000),
    })),
    "congestion-control": Coll(PROFILE_ID, Obj({
        "traffic-class": Coll(TC, Obj({
            "ecn": ENABLE,
            "red": ENABLE,
            # Bytes; NVUE documents no range, the buffer fields beside it are 0..4294967295.
            "min-threshold": Leaf("int", 1, 4_294_967_295),
            "max-threshold": Leaf("int", 1, 4_294_967_295),
            "probability": Leaf("int", 0, 100),
        })),
    })),
    "egress-scheduler": Coll(PROFILE_ID, Obj({
        "traffic-class": Coll(TC, Obj({
            "mode": Leaf("enum", words=("dwrr", "strict")),
            "bw-percent": Leaf("int", 0, 100),
        })),
    })),
    "pfc-watchdog": Obj({
        "polling-interval": Leaf("int", 100, 5000),
        "robustness": Leaf("int", 1, 1000),
    }),
})

# Routing, from NVIDIA's NVUE command reference (BGP, BFD, ECMP and adaptive routing pages): the ranges
# it prints (multipaths ebgp 1-128, bfd detect-multiplier 2-255, intervals 50-60000 ms, timers in seconds).
BGP_NEIGHBOR = Obj({
    "remote-as": ASN,
    "type": Leaf("enum", words=("numbered", "unnumbered")),
    "description": Leaf("text", pattern=ONE_LINE),
    "timers": Obj({"keepalive": Leaf("int", 0, 65535), "hold": Leaf("int", 0, 65535)}),
    "bfd": Obj({
        "enable": ON_OFF,
        "detect-multiplier": Leaf("int", 2, 255),
        "min-rx-interval": Leaf("int", 50, 60000),
        "min-tx-interval": Leaf("int", 50, 60000),
    }),
    "address-family": Obj({"ipv4-unicast": Obj({"enable": ON_OFF})}),
})
ROUTER = Obj({
    "bgp": Obj({"enable": ON_OFF, "autonomous-system": ASN, "router-id": Leaf("text", pattern=IPV4)}),
    "adaptive-routing": Obj({"enable": ON_OFF}),
})
VRF = Coll(Key("vrf name", pattern=r"default|[A-Za-z][A-Za-z0-9_-]{0,14}"), Obj({"router": Obj({"bgp": Obj({
    "enable": ON_OFF,
    "neighbor": Coll(Key("neighbor address", pattern=IPV4), BGP_NEIGHBOR),
    "address-family": Obj({"ipv4-unicast": Obj({
        "enable": ON_OFF,
        "network": Coll(Key("network", prefix=True), EMPTY),
        "multipaths": Obj({"ebgp": Leaf("int", 1, 128)}),
    })}),
    "path-selection": Obj({"multipath": Obj({"aspath-ignore": ON_OFF})}),
})})}))
FORWARDING = Obj({"ecmp-hash": Obj({name: ON_OFF for name in (
    "source-ip", "destination-ip", "ip-protocol", "source-port", "destination-port", "ipv6-label",
    "ingress-interface")})})

SET_SCHEMA = Obj({
    "system": Obj({"hostname": Leaf("text", pattern=HOSTNAME), "forwarding": FORWARDING}),
    "qos": QOS,
    "interface": Coll(Key("interface name", pattern=r"lo|eth\d+|swp\d+(s\d+)?"), INTERFACE),
    "router": ROUTER,
    "vrf": VRF,
})
"""The part of NVUE's object model under ``set`` that fabgen writes."""

# ---- loading ------------------------------------------------------------------


class NvueFormatError(ValueError):
    """The text is not a startup.yaml (or nv set script) of the shape NVUE reads."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line
        """1-based line of the offending ``nv set`` command; 0 when unknown."""


def _load(text: str) -> list[Any]:
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        doc = yaml.load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise NvueFormatError(f"not valid YAML: {exc.problem}{where}") from None
    except YAMLError as exc:
        raise NvueFormatError(f"not valid YAML: {' '.join(str(exc).split())}") from None
    return _document(doc)


def _document(doc: Any) -> list[Any]:
    """``doc`` as startup.yaml's list of items; ruamel's (a CommentedSeq) or :func:`read_subset`'s (a list)."""
    if not isinstance(doc, list) or not doc:
        raise NvueFormatError("startup.yaml is a list of '- set:' (and '- header:') items")
    return doc


def _set_items(doc: list[Any]) -> Iterator[tuple[int, Any]]:
    for index, item in enumerate(doc):
        if not isinstance(item, Mapping) or len(item) != 1 or next(iter(item)) not in ("set", "header"):
            raise NvueFormatError(f"item {index} is not a '- set:' or '- header:' mapping")
        if "set" in item:
            yield index, item["set"]


def _plain(node: Any) -> Any:
    """ruamel's round-trip types (CommentedMap, ScalarInt, quoted strings) as plain Python."""
    if isinstance(node, Mapping):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, str):
        return str(node)
    return node


def load_set_tree(text: str) -> dict[str, Any]:
    """The ``set`` part of a startup.yaml as plain dicts (several ``set`` items merged)."""
    return _set_tree(list(_set_items(_load(text))))


def _set_tree(items: list[tuple[int, Any]]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for index, body in items:
        if body is not None and not isinstance(body, Mapping):
            raise NvueFormatError(f"item {index}: 'set' must hold a mapping")
        _merge(tree, _plain(body) if body is not None else {})
    return tree


def _merge(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    for key, value in other.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value

# ---- checking ---------------------------------------------------------------------


@dataclass
class _Checker:
    file: str
    problems: list[Problem] = field(default_factory=list)

    def add(self, message: str, where: tuple[int, int], path: tuple[str, ...]) -> None:
        self.problems.append(Problem(message, file=self.file, line=where[0], col=where[1], path=".".join(path)))

    def walk(self, node: Node, value: Any, path: tuple[str, ...], where: tuple[int, int]) -> None:
        if isinstance(node, Leaf):
            if isinstance(value, Mapping | list):
                self.add("expected a value, got a mapping or list", where, path)
                return
            message = node.problem(value)
            if message:
                self.add(message, where, path)
            return
        if value is None:
            value = {}
        if not isinstance(value, Mapping):
            self.add(f"expected a mapping, got {value!r}", where, path)
            return
        if isinstance(node, Obj) and node.one_of and len(value) != 1:
            self.add(f"exactly one of {', '.join(node.fields)} is expected", where, path)
        for key, child in value.items():
            key_where = _position(value, key, where, key=True)
            child_where = _position(value, key, where)
            name = str(key)
            if isinstance(node, Obj):
                if not isinstance(key, str) or key not in node.fields:
                    known = ", ".join(node.fields) or "nothing (an empty object)"
                    self.add(f"unknown key {key!r} (expected {known})", key_where, path)
                    continue
                self.walk(node.fields[key], child, (*path, name), child_where)
            else:
                message = node.key.problem(key)
                if message:
                    self.add(message, key_where, path)
                    continue
                self.walk(node.item, child, (*path, name), child_where)


def _position(parent: Any, name: Any, fallback: tuple[int, int], *, key: bool = False) -> tuple[int, int]:
    """1-based (line, col) of ``parent[name]`` (its key with ``key``), else ``fallback``."""
    lc = getattr(parent, "lc", None)
    if lc is None:
        return fallback
    try:
        if isinstance(parent, CommentedSeq):
            line, col = lc.item(name)
        else:
            line, col = lc.key(name) if key else lc.value(name)
    except (KeyError, TypeError, IndexError):
        return fallback
    return line + 1, col + 1


def _semantics(tree: Mapping[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """Cross-field rules NVIDIA's user guide states for these leaves."""
    found: list[tuple[str, tuple[str, ...]]] = []
    qos = _dict(tree.get("qos"))
    for profile, body in _dict(qos.get("egress-scheduler")).items():
        total = sum(_int(tc.get("bw-percent")) for tc in _dicts(_dict(body).get("traffic-class")))
        if total > 100:
            found.append((f"bw-percent of the traffic classes sums to {total}; at most 100",
                          ("qos", "egress-scheduler", profile)))
    pools = _dict(qos.get("traffic-pool"))
    total = sum(_int(_dict(p).get("memory-percent")) for p in pools.values())
    if total > 100:
        found.append((f"memory-percent of the traffic pools sums to {total}; at most 100", ("qos", "traffic-pool")))
    owner: dict[str, str] = {}
    for name, pool in pools.items():
        for sp in map(str, _dict(_dict(pool).get("switch-priority"))):
            if sp in owner:
                found.append((f"switch-priority {sp} is in pools {owner[sp]} and {name}", ("qos", "traffic-pool")))
            owner[sp] = name
    for profile, body in _dict(qos.get("congestion-control")).items():
        for tc, conf in _dict(_dict(body).get("traffic-class")).items():
            low, high = _dict(conf).get("min-threshold"), _dict(conf).get("max-threshold")
            if isinstance(low, int) and isinstance(high, int) and low >= high:
                found.append((f"min-threshold {low} is not below max-threshold {high}",
                              ("qos", "congestion-control", profile, "traffic-class", str(tc))))
    pfc_on = bool(_dict(_dict(_dict(qos.get("pfc")).get(PROFILE)).get("switch-priority")))
    for name, conf in _dict(tree.get("interface")).items():
        state = _dict(_dict(_dict(conf).get("qos")).get("pfc-watchdog")).get("state")
        where = ("interface", str(name), "qos", "pfc-watchdog")
        if state == "enable" and _dict(conf).get("type") != "swp":
            found.append(("PFC watchdog can only be enabled on a swp interface", where))
        if state == "enable" and not pfc_on:
            found.append(("PFC watchdog needs PFC on the port (qos pfc default-global switch-priority)", where))
    return found


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _dicts(value: Any) -> list[Mapping[str, Any]]:
    return [_dict(v) for v in _dict(value).values()]


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def check_nvue_startup(path: str, text: str) -> list[Problem]:
    """Problems of a startup.yaml against the NVUE schema subset above; [] when it is fine.

    The text is first read by :func:`read_subset`; only when it is outside the
    emitter's subset, or its tree has a problem, does ruamel read it again, so
    every problem is reported from ruamel's tree with its line and column.
    """
    fast = read_subset(text)
    if fast is not None and fast_clean(path, fast):
        return []
    try:
        doc = _load(text)
    except NvueFormatError as exc:
        return [Problem(str(exc), file=path, line=1, col=1)]
    return check_startup_doc(path, doc)


_last_clean: list[Any] = [None]
"""The last set tree a check found clean, as plain data from :func:`read_subset` or :func:`parse_nv_set`.

Why: a switch's startup.yaml, patch.yaml and nvue.sh carry one set tree, and
what the schema and :func:`_semantics` say of a tree depends on its data
alone, so a tree equal to one found clean (a dict compare, in C) is clean."""


def fast_clean(path: str, doc: list[Any]) -> bool:
    """Whether :func:`check_startup_doc` finds :func:`read_subset`'s ``doc`` clean."""
    body = doc[0].get("set") if len(doc) == 1 and isinstance(doc[0], dict) and len(doc[0]) == 1 else None
    return _clean(body) if isinstance(body, dict) else not check_startup_doc(path, doc)


def _clean(tree: dict[str, Any]) -> bool:
    """Whether the schema and :func:`_semantics` find nothing in the plain set ``tree`` (a copy-free check)."""
    if tree == _last_clean[0]:
        return True
    if not _fits(SET_SCHEMA, tree) or _semantics(tree):
        return False
    _last_clean[0] = tree
    return True


def _fits(node: Node, value: Any) -> bool:
    """Whether :meth:`_Checker.walk` finds no problem in ``value``: its verdict, without its messages.

    Why: it is the schema check of every switch's tree (each differs from the
    last in its names and addresses), and the walk's positions, messages and
    ``Mapping`` tests cost more than the verdict. The same tests in the same
    order, on the exact types of plain data (``dict``, ``str``, ``int``,
    ``None``); any other value (a ``Mapping`` that is no ``dict``, a list, a
    bool) is judged by the walk itself. ``tests/targets/nvue/test_fits.py``
    compares the two on planted faults and random edits.
    """
    kind = type(value)
    if isinstance(node, Leaf):
        if kind is int:
            return node.kind == "int" and node.lo <= value <= node.hi
        if kind is str:
            if node.kind == "enum":
                return value in node.words
            return node.kind == "text" and _compiled(node.pattern).fullmatch(value) is not None
        return not isinstance(value, Mapping | list) and node.problem(value) is None
    if value is None:
        return not (isinstance(node, Obj) and node.one_of)
    if kind is not dict:
        checker = _Checker("")
        checker.walk(node, value, (), (0, 0))
        return not checker.problems
    if isinstance(node, Obj):
        if node.one_of and len(value) != 1:
            return False
        fields = node.fields
        for key, item in value.items():
            if type(key) is not str or (child := fields.get(key)) is None or not _fits(child, item):
                return False
        return True
    key_node, child = node.key, node.item
    for key, item in value.items():  # noqa: SIM110  # not all(): a generator frame resumed per key costs more
        if not _key_fits(key_node, key) or not _fits(child, item):
            return False
    return True


_IPV4_PREFIX = re.compile(IPV4 + r"/(3[0-2]|[12]?[0-9])")
"""An IPv4 address with a prefix length as fabgen prints one: what ``ipaddress.ip_interface`` reads, with a ``/``."""


def _key_fits(node: Key, key: object) -> bool:
    """Whether :meth:`Key.problem` finds nothing; a ``str`` key in a plain spelling (an IPv4 prefix as fabgen
    prints one, ASCII digits) or of a pattern without its ``re`` cache lookup, any other by ``Key.problem``."""
    if type(key) is not str:
        return node.problem(key) is None
    if node.prefix:
        return _IPV4_PREFIX.fullmatch(key) is not None or node.problem(key) is None
    if node.hi >= node.lo and key.isascii() and key.isdigit():
        return node.lo <= int(key) <= node.hi
    if node.hi >= node.lo:
        return node.problem(key) is None
    return _compiled(node.pattern).fullmatch(key) is not None


def _compiled(pattern: str) -> re.Pattern[str]:
    """``re.fullmatch(pattern, ...)``'s compiled pattern, without its cache lookup by (type, pattern, flags)."""
    found = _PATTERNS.get(pattern)
    if found is None:
        found = _PATTERNS[pattern] = re.compile(pattern)
    return found


_PATTERNS: dict[str, re.Pattern[str]] = {}


def check_startup_doc(path: str, doc: Any) -> list[Problem]:
    """:func:`check_nvue_startup` of a loaded document (positions only where ``doc`` is ruamel's)."""
    try:
        items = list(_set_items(_document(doc)))
    except NvueFormatError as exc:
        return [Problem(str(exc), file=path, line=1, col=1)]
    if not items:
        return [Problem("no '- set:' item", file=path, line=1, col=1)]
    checker = _Checker(path)
    for index, body in items:
        checker.walk(SET_SCHEMA, body, ("set",), _position(doc, index, (1, 1)))
    if checker.problems:
        return checker.problems
    for message, where in _semantics(_set_tree(items)):
        line, col = _locate(items, where)
        checker.problems.append(Problem(message, file=path, line=line, col=col, path=".".join(("set", *where))))
    return checker.problems


def _locate(items: list[tuple[int, Any]], where: tuple[str, ...]) -> tuple[int, int]:
    """1-based position of the key at ``where`` in the first ``set`` item that has it."""
    for _, body in items:
        node, found = body, (1, 1)
        for name in where:
            if not isinstance(node, Mapping) or name not in node:
                break
            found = _position(node, name, found, key=True)
            node = node[name]
        else:
            return found
    return 1, 1

# ---- nv set lines -------------------------------------------------------------------


def parse_nv_set(script: str) -> dict[str, Any]:
    """The tree the ``nv set`` lines of a script build, typed as the schema says.

    A word is a key while the schema says the path continues and a value once
    it reaches a leaf; a path that ends on an object or collection sets it
    empty (``nv set qos pfc default-global switch-priority 3`` -> ``{'3': {}}``).
    Raises :class:`NvueFormatError` for a line the schema does not know.
    """
    tree: dict[str, Any] = {}
    for number, line in enumerate(script.splitlines(), start=1):
        stripped = line.strip()
        if not stripped.startswith("nv set "):
            continue
        placement = _PLACEMENTS.get(stripped)
        if placement is None:
            remember(_PLACEMENTS, stripped, _insert(tree, _words(stripped, number)[2:], number), _PLACEMENTS_MAX)
        else:
            _place(tree, placement, number)
    return tree


Placement = tuple[tuple[str, ...], str | None, object]
"""Where an ``nv set`` line puts its value: the containers' keys, then the leaf and its typed value (or None)."""
_PLACEMENTS: dict[str, Placement] = {}
"""Each line's placement, walked through the schema once: switches repeat most of each other's lines."""
_PLACEMENTS_MAX = 1 << 15


_PLAIN_WORDS = re.compile(r"nv set(?: [\w@%+=:,./-]+)+", re.ASCII)
"""A line of words ``shlex.quote`` leaves bare: no quote, escape, ``#`` or other whitespace, so
``shlex.split`` would only cut it at its single spaces."""


def _words(line: str, number: int) -> list[str]:
    """``shlex.split(line, comments=True)``; a line of bare words is cut at its spaces (shlex costs 0.1 ms)."""
    if _PLAIN_WORDS.fullmatch(line):
        return line.split(" ")
    try:
        return shlex.split(line, comments=True)
    except ValueError as exc:
        raise NvueFormatError(f"line {number}: {exc}", number) from None


def _insert(tree: dict[str, Any], words: list[str], number: int) -> Placement:
    node: Node = SET_SCHEMA
    here = tree
    value_at = len(words) - 2
    for index, word in enumerate(words):
        if isinstance(node, Obj):
            field = node.fields.get(word)
            if field is None:
                raise NvueFormatError(f"line {number}: unknown key {word!r}", number)
            if isinstance(field, Leaf):
                if index != value_at:
                    raise NvueFormatError(f"line {number}: {word} takes exactly one value", number)
                here[word] = value = field.from_word(words[-1])
                return tuple(words[:index]), word, value
            node = field
        elif isinstance(node, Coll):
            node = node.item
        else:
            raise NvueFormatError(f"line {number}: unexpected {word!r} after a value", number)
        child = here.get(word)
        if type(child) is not dict:
            child = _container(here, word, number)
        here = child
    if isinstance(node, Leaf):
        raise NvueFormatError(f"line {number}: missing value", number)
    return tuple(words), None, None


def _place(tree: dict[str, Any], placement: Placement, number: int) -> None:
    """:func:`_insert` again for a line it placed before: the schema said yes then, only the tree can say no."""
    keys, leaf, value = placement
    here = tree
    for word in keys:
        child = here.get(word)
        if type(child) is not dict:
            child = _container(here, word, number)
        here = child
    if leaf is not None:
        here[leaf] = value


def _container(here: dict[str, Any], word: str, number: int) -> dict[str, Any]:
    """``here[word]``, a new empty mapping if there is none; the callers look up a ``dict`` first themselves."""
    child = here.setdefault(word, {})
    if not isinstance(child, dict):
        raise NvueFormatError(f"line {number}: {word!r} is both a value and a container", number)
    return child


def check_nvue_script(path: str, text: str) -> list[Problem]:
    """Problems of an nvue.sh: bash strict mode, and every ``nv set`` line against the schema."""
    problems = []
    if not text.startswith("#!/usr/bin/env bash\n") and not text.startswith("#!/bin/bash\n"):
        problems.append(Problem("a bash script starts with #!/usr/bin/env bash", file=path, line=1, col=1))
    if not re.search(r"^set -euo pipefail$", text, re.MULTILINE):
        problems.append(Problem("missing 'set -euo pipefail'", file=path, line=1, col=1))
    try:
        tree = parse_nv_set(text)
    except NvueFormatError as exc:
        return [*problems, Problem(str(exc), file=path, line=exc.line)]
    if _clean(tree):
        return problems
    checker = _Checker(path)
    checker.walk(SET_SCHEMA, tree, ("set",), (0, 0))
    checker.problems.extend(Problem(m, file=path, path=".".join(("set", *p))) for m, p in _semantics(tree))
    return problems + checker.problems


def check_nvue_output(path: str, text: str) -> list[Problem]:
    """The target's validator: startup.yaml and nvue.sh each against the schema."""
    if path.endswith(".yaml"):
        return check_nvue_startup(path, text)
    if path.endswith(".sh"):
        return check_nvue_script(path, text)
    return [Problem("the nvue target writes only startup.yaml and nvue.sh", file=path)]

# ---- QoS picture ----------------------------------------------------------------------

# Factory defaults of Cumulus Linux 5.x (user guide, "Quality of Service"), used for
# every table a file leaves out: a collection the file sets replaces its default whole.
DEFAULT_POLLING_MS = 100
DEFAULT_ROBUSTNESS = 3
DEFAULT_MTU = 9216
DEFAULT_ECN = {"0": {"ecn": "enable", "min-threshold": 150_000, "max-threshold": 1_500_000, "probability": 100}}
DEFAULT_SCHEDULER = {str(tc): {"mode": "dwrr", "bw-percent": 12 if tc % 2 == 0 else 13} for tc in range(8)}


def parse_nvue_qos(startup_yaml_text: str) -> CommonQos:
    """The QoS a switch running this startup.yaml applies, as a :class:`CommonQos`.

    ``dscp_to_tc`` is the switch priority of each DSCP (fabgen's "traffic
    class" of a DSCP), the ECN and scheduler tables are keyed by NVUE traffic
    class (the egress queue). NVUE has no watchdog restore time or action: a
    queue is restored after one polling interval without pause frames and the
    action is always drop, so those come out as ``polling-interval`` and
    ``drop``; detection is ``polling-interval * robustness``. The watchdog counts
    as enabled when every swp port has it on (else :data:`WATCHDOG_OFF`); MTU is
    the smallest swp MTU.
    """
    tree = load_set_tree(startup_yaml_text)
    qos = _dict(tree.get("qos"))
    mapping = _dict(_dict(qos.get("mapping")).get(PROFILE))
    trust = mapping.get("trust", "l2")
    dscp = _dict(mapping.get("dscp"))
    port_sp = _int(mapping.get("port-default-sp"))

    def priority(value: int) -> int:
        if trust in ("l3", "both"):
            return _int(_dict(dscp.get(str(value))).get("switch-priority", value // 8))
        return port_sp

    pfc = _dict(_dict(qos.get("pfc")).get(PROFILE))
    ecn_tcs = _dict(_dict(_dict(qos.get("congestion-control")).get(PROFILE)).get("traffic-class", DEFAULT_ECN))
    ecn_conf = {int(tc): _dict(c) for tc, c in ecn_tcs.items()}
    ecn = tuple(sorted(
        (tc, _int(c.get("min-threshold", 150_000)), _int(c.get("max-threshold", 1_500_000)),
         _int(c.get("probability", 100)))
        for tc, c in ecn_conf.items() if c.get("ecn", "enable") == "enable"
    ))
    # switch priority -> traffic class (the egress queue); a priority the file leaves out keeps its own number
    egress = _dict(_dict(_dict(qos.get("egress-queue-mapping")).get(PROFILE)).get("switch-priority"))
    dscp_to_tc = tuple(priority(d) for d in range(64))
    tc_to_queue = used_queues(dscp_to_tc, lambda sp: _int(_dict(egress.get(str(sp))).get("traffic-class", sp)))
    sched = _dict(_dict(_dict(qos.get("egress-scheduler")).get(PROFILE)).get("traffic-class", DEFAULT_SCHEDULER))
    strict = frozenset(int(tc) for tc, c in sched.items() if _dict(c).get("mode") == "strict")
    weights = tuple(sorted(
        (int(tc), _int(_dict(c).get("bw-percent"))) for tc, c in sched.items()
        if _dict(c).get("mode", "dwrr") == "dwrr" and _int(_dict(c).get("bw-percent")) > 0
    ))
    watchdog = _dict(qos.get("pfc-watchdog"))
    poll = _int(watchdog.get("polling-interval", DEFAULT_POLLING_MS))
    robustness = _int(watchdog.get("robustness", DEFAULT_ROBUSTNESS))
    ports = [_dict(c) for c in _dict(tree.get("interface")).values() if _dict(c).get("type") == "swp"]
    if not ports:
        raise NvueFormatError("no swp interface: nothing to read a port MTU or watchdog state from")
    enabled = all(_dict(_dict(p.get("qos")).get("pfc-watchdog")).get("state") == "enable" for p in ports)
    return CommonQos(
        dscp_to_tc=dscp_to_tc,
        lossless=frozenset(int(sp) for sp in _dict(pfc.get("switch-priority"))),
        ecn=ecn,
        strict=strict,
        weights=weights,
        watchdog=(True, poll * robustness, poll, "drop") if enabled else WATCHDOG_OFF,
        mtu=min(_int(_dict(p.get("link")).get("mtu", DEFAULT_MTU)) for p in ports),
        tc_to_queue=tc_to_queue,
        trust=_TRUST.get(str(trust), str(trust)),
    )


_TRUST = {"l3": "dscp", "l2": "pcp", "both": "both", "port": "none"}
"""NVUE's ``qos mapping ... trust`` -> :attr:`~fabgen.targets.qos_common.CommonQos.trust` (``port``: every packet
gets the port's default priority, nothing of the packet is trusted)."""
