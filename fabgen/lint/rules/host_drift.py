"""FG506 deployed host network drift: a host's backend NICs as its collected netplan or keyfiles configure them.

The comparison is of parses (:mod:`fabgen.lint.deployed_hostnet`), so order,
comments and quoting are not drift; a route, rule, address or MTU that is not the
plan's is. A message shows a deployed value only when the plan has it too (an
address swapped between two NICs); anything else a file holds is "another"
value or a count, never its text: a deployed file may hold anything, and lint
output goes to CI logs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabgen.lint.context import LintContext, plural
from fabgen.lint.finding import Hit, Location

if TYPE_CHECKING:
    from fabgen.lint.deployed_hostnet import DeployedHostNetwork, DeployedInterface
    from fabgen.targets.hostnet.parse import NetdevSetup

_HINT = "re-install the generated host network files (fabgen generate), or put the change in the spec"
_ROUTE_FIELDS = (("to", "to"), ("via", "via"), ("from", "source"), ("table", "table"), ("scope", "scope"),
                 ("on-link", "onlink"), ("metric", "metric"))
_RULE_FIELDS = (("from", "source"), ("to", "to"), ("table", "table"), ("priority", "priority"))
_ROUTE_PAIRS: tuple[Callable[[Any], tuple[Any, ...]], ...] = (lambda r: (r.to, r.table), lambda r: (r.to,))
"""How a route the plan has is matched with one it does not, to say which field changed: same destination and
table first, then same destination."""
_RULE_PAIRS: tuple[Callable[[Any], tuple[Any, ...]], ...] = (lambda r: (r.table,), lambda r: (r.source, r.to))


def host_network_drift(ctx: LintContext) -> Iterator[Hit]:
    """A host's deployed backend network (netplan or NetworkManager keyfiles) differs from the plan.

    What it checks:
        With ``--deployed DIR``, each host's ``hosts/NAME/netplan.yaml`` (or its
        ``hosts/NAME/nm/fabgen-NETDEV.nmconnection`` keyfiles, for a profile that
        uses NetworkManager) is read as netplan (resp. NetworkManager) reads it and
        compared with what fabgen renders for that host, interface by interface:
        MTU, IPv6 link-local addressing, addresses, routes (to, via, from,
        table, scope, on-link, metric) and
        routing-policy rules (from, to, table, priority). A planned interface that
        is not configured is named; interfaces the plan does not have are counted.
        Order, comments and quoting do not matter; a file that cannot be read is
        reported too.

    Why it matters:
        Each backend NIC needs its own routing table and the rule that sends its
        address's traffic there: one NIC without its route or rule, or with the
        wrong gateway, answers RDMA connections from the wrong interface or not at
        all, and a collective spanning that host hangs for the whole job.

    Example:
        # DIR/hosts/lab01/netplan.yaml, edited on the host
        routes:
          - to: "10.10.0.0/24"
            via: "10.10.0.2"

    Fix:
        Re-install the generated files (``netplan apply`` or ``nmcli connection
        reload``), or, if the change was intended, make it in the spec.
    """
    if ctx.deployed is None:
        return
    root = ctx.deployed.root
    for network in ctx.deployed.host_networks:
        yield from _host(network, root)


def _host(network: DeployedHostNetwork, root: str) -> Iterator[Hit]:
    from fabgen.lint.deployed_hostnet import known_values

    host = network.host
    for file, message in network.problems:
        yield Hit(f"{host}: {message}", Location(file, 1, 1), "collect the file again, or re-install it")
    if network.verbatim:
        return
    known = known_values(network.expected)
    planned = {s.netdev for s in network.expected}
    deployed: dict[str, DeployedInterface] = {}
    others: list[DeployedInterface] = []
    for interface in network.interfaces:
        name = interface.setup.netdev
        if name in deployed:
            who = name if name in planned else "an interface the plan does not have"
            yield Hit(f"{host}: {who} is configured again (first in {Path(deployed[name].file).name})",
                      _at(interface), "configure each interface in one file")
        else:
            deployed[name] = interface
            if name not in planned:
                others.append(interface)
    if others:
        # not named: an interface name the plan does not have is the file's, not the plan's
        yield Hit(f"{host}: {plural(len(others), 'interface')} the plan does not have "
                  f"{'is' if len(others) == 1 else 'are'} configured", _at(others[0]),
                  "remove it, or add the NIC to the spec")
    for expected in network.expected:
        found = deployed.get(expected.netdev)
        if found is None:
            where = _missing_at(network, expected, root)
            gone = "" if where.line else f" (no {Path(expected.origin).name} in the tree)"
            yield Hit(f"{host}: planned interface {expected.netdev} is not configured{gone}", where, _HINT)
            continue
        yield from _interface(f"{host}: {expected.netdev}", found, expected, known)


def _interface(who: str, deployed: DeployedInterface, expected: NetdevSetup, known: set[str]) -> Iterator[Hit]:
    setup = deployed.setup
    if setup.mtu != expected.mtu:
        has = "no MTU" if setup.mtu is None else _shown("MTU", setup.mtu, known)
        plan = "none" if expected.mtu is None else str(expected.mtu)
        yield Hit(f"{who} has {has} (plan {plan})", _at(deployed, ("mtu", 0)), _HINT)
    if setup.link_local != expected.link_local:
        yield Hit(f"{who} has IPv6 link-local addressing {_on(setup.link_local)} (plan {_on(expected.link_local)})",
                  _at(deployed, ("link-local", 0)),
                  "the plan keeps backend NICs IPv4-only (netplan link-local: [], NetworkManager [ipv6] "
                  "method=disabled): re-install the generated files")
    missing = [a for a in expected.addresses if a not in setup.addresses]
    extra = [(i, a) for i, a in enumerate(setup.addresses) if a not in expected.addresses]
    for address in missing:
        if extra:
            index, other = extra.pop(0)
            yield Hit(f"{who} has {_shown('address', other, known)} instead of {address}",
                      _at(deployed, ("addresses", index)), _HINT)
        else:
            yield Hit(f"{who} lacks the address {address}", _at(deployed), _HINT)
    if extra:
        yield Hit(f"{who} has {plural(len(extra), 'address')} the plan does not have",
                  _at(deployed, ("addresses", extra[0][0])), _HINT)
    yield from _items(who, deployed, "route", "routes", setup.routes, expected.routes, _ROUTE_FIELDS, _ROUTE_PAIRS,
                      known)
    yield from _items(who, deployed, "routing-policy rule", "routing-policy", setup.rules, expected.rules,
                      _RULE_FIELDS, _RULE_PAIRS, known)


def _items(who: str, deployed: DeployedInterface, noun: str, part: str, have: Sequence[Any], want: Sequence[Any],
           fields: tuple[tuple[str, str], ...], pairs: tuple[Callable[[Any], tuple[Any, ...]], ...],
           known: set[str]) -> Iterator[Hit]:
    """Routes or rules, compared as sets: each planned one that is changed (paired with a deployed one the plan does
    not have by ``pairs``) or missing, then the deployed ones left over, counted."""
    missing = [item for item in want if item not in have]
    extra = [(index, item) for index, item in enumerate(have) if item not in want]
    for item in missing:
        match = next((pair for key in pairs for pair in extra if key(pair[1]) == key(item)), None)
        if match is None:
            yield Hit(f"{who} lacks the {noun} {_describe(item, fields)}", _at(deployed), _HINT)
            continue
        extra.remove(match)
        changes = [_change(name, getattr(match[1], attr), getattr(item, attr), known) for name, attr in fields
                   if getattr(match[1], attr) != getattr(item, attr)]
        yield Hit(f"{who}: the {noun} {_describe(item, fields)} has " + ", ".join(changes),
                  _at(deployed, (part, match[0])), _HINT)
    if extra:
        yield Hit(f"{who} has {plural(len(extra), noun)} the plan does not have",
                  _at(deployed, (part, extra[0][0])), _HINT)


def _describe(item: Any, fields: tuple[tuple[str, str], ...]) -> str:
    """A planned route or rule in netplan's words: ``to 10.10.0.0/24 via 10.10.0.0 from 10.10.0.1 table 100``."""
    words = []
    for name, attr in fields:
        value = getattr(item, attr)
        if value is True:
            words.append(name)
        elif value is not None and value is not False:
            words.append(f"{name} {value}")
    return " ".join(words)


def _change(name: str, value: object, planned: object, known: set[str]) -> str:
    plan = "none" if planned is None else _word(planned)
    if isinstance(value, bool):
        return f"{name} {_word(value)} (plan {plan})"
    return f"no {name} (plan {plan})" if value is None else f"{_shown(name, value, known)} (plan {plan})"


def _on(value: bool) -> str:
    return "on" if value else "off"


def _word(value: object) -> str:
    return "yes" if value is True else "no" if value is False else str(value)


def _shown(name: str, value: object, known: set[str]) -> str:
    """``via 10.10.0.64`` when the plan has that value too (a swap), else ``another via``: a deployed value may be
    anything, a secret too."""
    return f"{name} {value}" if str(value) in known else f"another {name}"


def _at(interface: DeployedInterface, part: tuple[str, int] = ("", 0)) -> Location:
    return Location(interface.file, interface.lines.get(part) or interface.lines.get(("", 0)) or 1, 1)


def _missing_at(network: DeployedHostNetwork, expected: NetdevSetup, root: str) -> Location:
    """The planned file when it was collected (a netplan file without the interface), else where it should be."""
    path = str(Path(root) / expected.origin)
    return Location(path, 1, 1) if path in network.files else Location(path, 0, 0)
