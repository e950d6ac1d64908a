"""Read the host network files of a deployed tree, and what fabgen renders for the same hosts, for FG506.

Each host's backend network comes from the ``host-net`` target: one
``hosts/NAME/netplan.yaml``, or one ``hosts/NAME/nm/fabgen-NETDEV.nmconnection``
per NIC for a profile that chooses NetworkManager. Both the collected files and
fabgen's render of the same paths are parsed by the one reader the twin uses
(:mod:`fabgen.targets.hostnet.parse`) into an :class:`NetdevSetup` per interface;
:func:`fabgen.lint.rules.host_drift.host_network_drift` compares the two.

Cost: a 3,072-host tree is one ``render_files`` call for all its hosts, then per
host a text comparison. Files that are fabgen's text but for comment and blank
lines cannot differ from the plan and are not parsed (a YAML parse costs about as
much as a thousand such comparisons); only a host whose files differ in text is
parsed, both sides, and only then are lines looked up for its findings.

A host with none of its planned files in the tree was not collected and is left
out (FG503 speaks of hosts without any file). A keyfile in ``nm/`` that fabgen does
not write is read too: the interface it configures is one the plan may not have.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.errors import FabgenError
from fabgen.targets.routing_common import OCTET

if TYPE_CHECKING:
    from fabgen.plan.model import FabricPlan
    from fabgen.targets.hostnet.parse import HostFileError, Lines, NetdevSetup

HOSTNET_TARGET = "host-net"
_NETPLAN = "/netplan.yaml"
_KEYFILE = ".nmconnection"


@dataclass(frozen=True)
class DeployedInterface:
    """One interface as a deployed file configures it, with the lines of its parts there."""

    setup: NetdevSetup
    file: str
    """The deployed file (a path under the tree)."""
    lines: Lines


@dataclass(frozen=True)
class DeployedHostNetwork:
    """One host's collected host network files and, when they differ from fabgen's in text, both parses."""

    host: str
    files: tuple[str, ...]
    """The deployed files read (paths under the tree)."""
    verbatim: bool = False
    """Every planned file is there and no other, each fabgen's text but for comment and blank lines: no drift."""
    interfaces: tuple[DeployedInterface, ...] = ()
    expected: tuple[NetdevSetup, ...] = ()
    """The parse of what fabgen renders, without the interfaces of a planned file that cannot be read."""
    problems: tuple[tuple[str, str], ...] = ()
    """(file, message) for what cannot be read: a file refused by its parser, a link, fabgen's own render."""


def read_host_networks(base: Path, plan: FabricPlan) -> tuple[DeployedHostNetwork, ...]:
    """The host network files under ``base/hosts`` of every planned host that has any, in name order."""
    from fabgen.lint.deployed import _is_dir, render_collected

    hosts_dir = base / "hosts"
    if not _is_dir(hosts_dir, base):
        return ()
    planned = {h.name for h in plan.hosts if h.network is not None and h.network.interfaces}
    present = sorted(e.name for e in hosts_dir.iterdir() if e.name in planned and _is_dir(e, base))
    if not present:
        return ()
    try:
        rendered = render_collected(plan, HOSTNET_TARGET, present, len(planned))
    except FabgenError as exc:
        why = "not compared: fabgen cannot render its host network: " + "; ".join(p.message for p in exc.problems[:2])
        return tuple(DeployedHostNetwork(name, (), problems=((str(hosts_dir / name), why),)) for name in present)
    by_host: dict[str, dict[str, str]] = {}
    for rel, text in rendered.items():
        if rel.endswith((_NETPLAN, _KEYFILE)):
            by_host.setdefault(rel.split("/")[1], {})[rel] = text
    out = []
    shapes = _Shapes()
    for name in present:
        found = _read_host(base, name, by_host.get(name, {}), shapes)
        if found is not None:
            out.append(found)
    return tuple(out)


def _read_host(base: Path, name: str, planned: dict[str, str], shapes: _Shapes) -> DeployedHostNetwork | None:
    from fabgen.lint.deployed import _is_dir, read_collected

    if not planned:
        return None
    extra = []
    nm = base / "hosts" / name / "nm"
    if any(rel.endswith(_KEYFILE) for rel in planned) and _is_dir(nm, base):
        extra = sorted(f"hosts/{name}/nm/{entry.name}" for entry in nm.iterdir()
                       if entry.name.endswith(_KEYFILE) and not entry.name.startswith("."))
        extra = [rel for rel in extra if rel not in planned]
    rels = [rel for rel in planned if os.path.lexists(base / rel)] + extra
    if not rels:
        return None  # not collected
    files = tuple(str(base / rel) for rel in rels)
    texts: dict[str, str] = {}
    problems: list[tuple[str, str]] = []
    for rel in rels:
        text, why = read_collected(base / rel, base)
        if text is None:
            problems.append((str(base / rel), why))
        else:
            texts[rel] = text
    if not problems and not extra and len(texts) == len(planned) and \
            all(texts[rel] == text for rel, text in planned.items()):
        return DeployedHostNetwork(name, files, verbatim=True)

    from fabgen.targets.hostnet.parse import HostFileError

    expected: list[NetdevSetup] = []
    for rel, text in planned.items():
        try:
            expected.extend(setup for setup, _ in shapes.parse(rel, text))
        except HostFileError as exc:
            problems.append((str(base / rel), f"not compared: fabgen cannot read its own {rel} back: {exc.reason}"))
    known = known_values(expected)
    refused = {rel for rel in rels if rel not in texts}  # a link, a FIFO: its interfaces are not compared
    interfaces: list[DeployedInterface] = []
    for rel, text in texts.items():
        try:
            interfaces.extend(DeployedInterface(setup, str(base / rel), lines)
                              for setup, lines in shapes.parse(rel, text, located=True))
        except HostFileError as exc:
            refused.add(rel)
            problems.append((str(base / rel), _refusal(rel, exc, known)))
    return DeployedHostNetwork(name, files, False, tuple(interfaces),
                               tuple(s for s in expected if s.origin not in refused), tuple(problems))


_ADDRESS = re.compile(rf"(?<![\w.:/]){OCTET}(?:\.{OCTET}){{3}}(?:/(?:3[0-2]|[12]?\d))?(?![\w.:/])")
"""An IPv4 address in canonical form (as ``ipaddress`` prints it), with or without a prefix length, standing
alone. Another spelling (``10.0.0.01``, ``/033``) is no address here: it stays in the skeleton, compared as text."""
_UUID = re.compile(r"(?<![\w-])[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}(?![\w-])")
"""A keyfile's ``uuid``: each host's own, and no value of the parse."""
_TOKENS = {
    # (?=[#\d]) first: a position that starts none is passed over without trying each (four times faster)
    True: re.compile(rf"(?=[#\d])((?:^|(?<=[ \t]))#[^\n]*|{_ADDRESS.pattern})", re.MULTILINE),  # YAML comments
    False: re.compile(rf"(?=[#\da-f])(^#[^\n]*|{_ADDRESS.pattern}|{_UUID.pattern})", re.MULTILINE),  # '#' first
}
"""What tells files of one shape apart: addresses, UUIDs and comments (fabgen's name the host, leaves, ports)."""
_NOT_IN_COMMENT = re.compile("[\"'\\\\\r\v\f\x1c-\x1e\x85\u2028\u2029]")
"""Quotes, escapes and line breaks: without them a comment's text ends nothing and starts nothing, wherever it is."""


class _Shapes:
    """Parses by shape: a file that differs from one parsed before only in addresses, UUIDs and comments is not
    parsed again.

    Hosts of one network shape render alike but for those, and a fleet's collected files are alike too (all as
    rendered, or all edited by one tool); a parse costs about 40 ms, so 3,072 hosts, both sides, would take
    minutes. A file is split at those tokens (:data:`_TOKENS`); the rest, its skeleton, keys the parse of the
    first file seen with it. Another file of that skeleton gets that parse with its own addresses put in when
    that is what the parser would return: its tokens are of the same kinds, addresses and UUIDs correspond one
    to one, each address in canonical form (:data:`_ADDRESS`; so every check the parser made passes alike and
    no two values become equal or unequal), ``0.0.0.0`` (a keyfile's "no gateway") only for ``0.0.0.0``; a
    comment is the same, or holds no quote, escape or line break on either side (so it is a comment in both, or
    text inside the same scalar of both); and every parsed value that holds an address or a UUID is one whole
    token. Otherwise the file is parsed.
    """

    def __init__(self) -> None:
        self._seen: dict[tuple[bool, tuple[str, ...]], _Shape] = {}

    def parse(self, rel: str, text: str, located: bool = False) -> list[tuple[NetdevSetup, Lines]]:
        """``[(setup, lines)]`` of one file (lines only when ``located``); raises :class:`HostFileError`."""
        from fabgen.targets.hostnet.parse import keyfile_lines, netplan_lines, parse_keyfile_setup, parse_netplan

        netplan = rel.endswith(_NETPLAN)
        parts = _TOKENS[netplan].split(text)
        tokens = parts[1::2]
        key = (netplan, tuple(parts[0::2]))
        shape = self._seen.get(key)
        setups = shape.fill(tokens, rel) if shape is not None else None
        if setups is None:
            setups = parse_netplan(rel, text) if netplan else [parse_keyfile_setup(rel, text)]
            # a '#' in a name would be a comment's text in the next file: never taken from the first
            if shape is None and not any("#" in s.netdev for s in setups):
                shape = self._seen[key] = _Shape(tokens, setups)
        if not located:
            return [(setup, {}) for setup in setups]
        lines = shape.lines if shape is not None else None
        if lines is None:  # once per skeleton: the lines of a file are those of its skeleton
            lines = netplan_lines(text) if netplan else {setups[0].netdev: keyfile_lines(text)}
            if shape is not None:
                shape.lines = lines
        return [(setup, lines.get(setup.netdev, {})) for setup in setups]


class _Shape:
    __slots__ = ("lines", "setups", "tokens")

    def __init__(self, tokens: list[str], setups: list[NetdevSetup]) -> None:
        self.tokens = tokens
        self.setups = setups
        self.lines: dict[str, Lines] | None = None

    def fill(self, tokens: list[str], rel: str) -> list[NetdevSetup] | None:
        """The first file's parse with ``tokens`` in place of its own, or None where that is not sure."""
        mapping: dict[str, str] = {}
        for old, new in zip(self.tokens, tokens, strict=True):
            kind = _kind(old)
            if kind != _kind(new):
                return None
            if kind == "#":
                if old != new and not (_plain(old) and _plain(new)):
                    return None
            elif mapping.setdefault(old, new) != new or (old == "0.0.0.0") != (new == "0.0.0.0"):
                return None
        if len(set(mapping.values())) != len(mapping):
            return None
        try:
            return [_mapped(setup, mapping, rel) for setup in self.setups]
        except LookupError:
            return None


def _kind(token: str) -> str:
    """A comment, a UUID, an address with a prefix length or one without."""
    return "#" if token.startswith("#") else "-" if "-" in token else "/" if "/" in token else "."


def _plain(comment: str) -> bool:
    return _NOT_IN_COMMENT.search(comment) is None


def _mapped(setup: NetdevSetup, mapping: dict[str, str], rel: str) -> NetdevSetup:
    def put(value: str | None) -> str | None:
        if value is None or value in mapping:
            return None if value is None else mapping[value]
        if _ADDRESS.search(value) or _UUID.search(value):
            raise LookupError(value)  # an address inside a longer value: parse the file
        return value

    def put_all(values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(str(put(value)) for value in values)

    return replace(setup, netdev=str(put(setup.netdev)), origin=rel, addresses=put_all(setup.addresses),
                   routes=tuple(replace(r, to=str(put(r.to)), via=put(r.via), source=put(r.source))
                                for r in setup.routes),
                   rules=tuple(replace(r, source=put(r.source), to=put(r.to)) for r in setup.rules))


def known_values(setups: list[NetdevSetup] | tuple[NetdevSetup, ...]) -> set[str]:
    """Every value the plan has for these interfaces, as text: what a message may show of a deployed file."""
    known: set[str] = set()
    for s in setups:
        known.update((s.netdev, str(s.mtu)))
        for address in s.addresses:
            known.update((address, address.partition("/")[0]))
        for route in s.routes:
            known.update(str(v) for v in (route.to, route.via, route.source, route.table, route.scope, route.metric))
        for rule in s.rules:
            known.update(str(v) for v in (rule.source, rule.to, rule.table, rule.priority))
    known.discard("None")
    return known


_UNQUOTED = (
    (re.compile(r"(not of the form fabgen writes: ).*$"), r"\1..."),  # a route, a rule: its repr
    (re.compile(r"(must be an integer, not ).*$"), r"\1another value"),  # a number, a list, a mapping
    (re.compile(r"(network\.)\S+( is not a key)"), r"\1...\2"),  # an unquoted key
)
"""Where a parser's message shows a value of the file without quotes (so :func:`redact` does not see it)."""


def _refusal(rel: str, exc: HostFileError, known: set[str]) -> str:
    """The parser's reason, with no value of the file the plan does not have: the interface is named only when
    planned, every other value (quoted or in one of the places :data:`_UNQUOTED` knows) becomes ``...``."""
    from fabgen.lint.deployed import redact

    reason = redact(exc.reason, known)
    for pattern, replacement in _UNQUOTED:
        reason = pattern.sub(replacement, reason)
    netdev = exc.origin[len(rel) + 2:] if exc.origin.startswith(rel + ": ") else ""
    if netdev:
        reason = f"{netdev if netdev in known else 'an interface the plan does not have'}: {reason}"
    kind = "netplan" if rel.endswith(_NETPLAN) else "a NetworkManager keyfile"
    return f"cannot read this file as {kind}: {reason}"
