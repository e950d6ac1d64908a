"""FG4xx NCCL: hand-set variables and what NCCL really makes of them.

NCCL never complains: a misspelt variable is ignored, ``0106`` is octal 70, an
out-of-range timeout falls back or wraps. The variables checked here are the
ones a person wrote: ``nccl.env``, host overrides' ``nccl_env``, and (with
``--deployed``) every value in a host's deployed ``nccl.conf``/``nccl.env`` that
differs from the plan. Values fabgen derives are its own responsibility and are
not re-checked. Spec validation already refuses the hard errors of the spec's
own variables; these rules then see only what validation let through.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabgen.lint.context import LintContext, MemoKey, plural, preview
from fabgen.lint.finding import Hit, Location
from fabgen.source import DataPath

if TYPE_CHECKING:
    from fabgen.targets.nccl.variables import VarIssue

AR_MODES = ("dlb", "spray")
"""Load-balancing modes in which switches may send one flow's packets over several paths."""


@dataclass(frozen=True)
class EnvItem:
    """One variable someone wrote, where, and which hosts it reaches."""

    name: str
    value: bool | int | str
    hosts: tuple[str, ...]
    path: DataPath | None
    """Spec path; None for a deployed file."""
    location: Location
    """Where the value is (the key's place is ``key_location``)."""
    key_location: Location


_ENV_ITEMS: MemoKey[list[EnvItem]] = MemoKey("NCCL env items")
_ENV_ISSUES: MemoKey[list[tuple[EnvItem, str, VarIssue]]] = MemoKey("NCCL env issues")


def env_items(ctx: LintContext) -> list[EnvItem]:
    """Hand-set spec variables, then deployed values that differ from the plan."""
    cached = ctx.memo.get(_ENV_ITEMS)
    if cached is not None:
        return cached
    items = [
        EnvItem(name, value, tuple(hosts), path, ctx.at(path), ctx.at(path, key=True))
        for path, name, value, hosts in ctx.hand_set_env()
        if hosts
    ]
    if ctx.deployed is not None:
        shared: dict[tuple[str, str, str, int], list[str]] = {}  # a profile's copy: one item for all its hosts
        for host_name, files in sorted(ctx.deployed.hosts.items()):
            host = ctx.hosts.get(host_name)
            planned = ctx.env(host) if host is not None else {}
            for env in files:
                for name, (value, line) in env.values.items():
                    if planned.get(name) == value:
                        continue
                    if env.profile:
                        shared.setdefault((env.file, name, value, line), []).append(host_name)
                        continue
                    where = Location(env.file, line, 1)
                    items.append(EnvItem(name, value, (host_name,), None, where, where))
        for (file, name, value, line), hosts in shared.items():
            where = Location(file, line, 1)
            items.append(EnvItem(name, value, tuple(hosts), None, where, where))
    ctx.memo.put(_ENV_ITEMS, items)
    return items


def _issues(ctx: LintContext) -> list[tuple[EnvItem, str, VarIssue]]:
    """(item, rule code, VarIssue) for every issue of every item, computed once."""
    cached = ctx.memo.get(_ENV_ISSUES)
    if cached is not None:
        return cached
    from fabgen.targets.nccl.variables import KNOWN_VARS, OTHER_DOCUMENTED_VARS, check_nccl_var

    out: list[tuple[EnvItem, str, VarIssue]] = []
    version = ctx.spec.nccl.version
    for item in env_items(ctx):
        known = item.name in KNOWN_VARS
        for issue in check_nccl_var(item.name, item.value, version):
            if not known:
                if item.name in OTHER_DOCUMENTED_VARS:
                    continue  # real but outside the catalog: nothing to say
                code = "FG401"
            elif "octal" in issue.message:
                code = "FG403"
            elif item.name == "NCCL_IB_GID_INDEX" and issue.severity == "warning":
                code = "FG404"
            else:
                code = "FG402" if issue.severity == "error" else "FG407"
            out.append((item, code, issue))
    ctx.memo.put(_ENV_ISSUES, out)
    return out


_DEFAULT_HINTS = {
    "FG401": "remove it, or correct the name",
    "FG402": "use a value NCCL accepts (the message gives the range)",
    "FG403": "write the number without leading zeros",
    "FG404": "remove it",
    "FG407": "check the value against the NCCL documentation of nccl.version",
}


def _unshown(text: str, item: EnvItem) -> str:
    """``text`` without a deployed value: the plan does not have it, and a report (a CI log) must not show what a
    device's file holds; the finding's file:line points at it."""
    value = str(item.value)
    if item.path is not None or not value:
        return text
    return re.sub(rf"(?<![A-Za-z0-9_]){re.escape(value)}(?![A-Za-z0-9_])", "(the deployed value)", text)


def _hits(ctx: LintContext, code: str, *, at_key: bool = False) -> Iterator[Hit]:
    for item, found, issue in _issues(ctx):
        if found != code:
            continue
        where = "" if item.path is None or len(item.hosts) == len(ctx.plan.hosts) else \
            f" (on {plural(len(item.hosts), 'host')}: {preview(list(item.hosts))})"
        hint = issue.hint or _DEFAULT_HINTS[code]
        yield Hit(_unshown(f"{issue.message}{where}", item),
                  item.key_location if at_key else item.location, _unshown(hint, item))


def unknown_variable(ctx: LintContext) -> Iterator[Hit]:
    """An NCCL variable NCCL does not know.

    What it checks:
        Every hand-set (or deployed) variable name must be a variable NCCL reads;
        close misspellings get a did-you-mean.

    Why it matters:
        NCCL ignores unknown variables without a word: ``NCCL_IB_HCAS`` leaves
        NCCL_IB_HCA unset, so NCCL uses every RDMA device, frontend ones included,
        and nobody notices until performance does.

    Example:
        # hosts/lab01/nccl.conf, as deployed
        NCCL_IB_HCAA==mlx5_0:1,mlx5_1:1

    Fix:
        Correct the name (see the hint), or remove the line.
    """
    yield from _hits(ctx, "FG401", at_key=True)


def invalid_value(ctx: LintContext) -> Iterator[Hit]:
    """An NCCL variable with a value NCCL rejects, ignores or misreads.

    What it checks:
        Every hand-set (or deployed) value against fabgen's catalog of NCCL
        variables: ranges (``NCCL_IB_TIMEOUT`` 0-31, ``NCCL_IB_RETRY_CNT`` 0-7),
        numbers with trailing text, unknown enum names, malformed interface lists,
        variables that were removed.

    Why it matters:
        NCCL parses integers with ``strtoll`` and keeps what it can: ``22s`` is 22,
        ``fast`` is 0, a retry count of 8 wraps in a 3-bit field; a removed variable
        simply does nothing (nccl.md §3.1).

    Example:
        # hosts/lab01/nccl.conf, as deployed
        NCCL_IB_TIMEOUT=40

    Fix:
        Use a value in the documented range (the message names it).
    """
    yield from _hits(ctx, "FG402")


def octal_value(ctx: LintContext) -> Iterator[Hit]:
    """An NCCL number with a leading zero, which NCCL reads as octal.

    What it checks:
        Integer values written with a leading ``0`` (``0106``).

    Why it matters:
        NCCL reads integers with ``strtoll(..., 0)``: ``NCCL_IB_TC=0106`` is 70, which
        is DSCP 17, a lossy class, while every reader of the file sees 106.

    Example:
        # hosts/lab01/nccl.conf, as deployed
        NCCL_IB_TC=0106

    Fix:
        Write the number without leading zeros.
    """
    yield from _hits(ctx, "FG403")


def gid_index_set(ctx: LintContext) -> Iterator[Hit]:
    """NCCL_IB_GID_INDEX set for an NCCL that picks the GID itself.

    What it checks:
        ``NCCL_IB_GID_INDEX`` set by hand when ``nccl.version`` is 2.21 or later.

    Why it matters:
        Since 2.21 NCCL selects the IPv4 RoCEv2 GID on its own and the NCCL docs say
        not to set the index. A fixed index breaks as soon as a host's GID table
        differs (an extra address, a VF, a container namespace): the GID is then
        RoCEv1 or link-local and connections time out (nccl.md §4.1).

    Example:
        nccl:
          version: 2.23.4
          env: {NCCL_IB_GID_INDEX: 3}

    Fix:
        Remove it; steer the choice with ``NCCL_IB_ADDR_RANGE`` (fabgen sets it to
        the fabric's point-to-point pool) if hosts have several addresses.
    """
    yield from _hits(ctx, "FG404", at_key=True)


def _ar_on(ctx: LintContext) -> dict[DataPath | None, list[str]]:
    """Hosts that enable adaptive routing, by where the spec enables it."""
    from fabgen.targets.nccl.variables import nccl_strtoll

    groups: dict[DataPath | None, list[str]] = {}
    for host in ctx.plan.hosts:
        raw = ctx.env(host).get("NCCL_IB_ADAPTIVE_ROUTING")
        if raw is not None and nccl_strtoll(raw).value == 1:
            groups.setdefault(ctx.env_path(host, "NCCL_IB_ADAPTIVE_ROUTING"), []).append(host.name)
    return groups


def adaptive_routing_unsupported(ctx: LintContext) -> Iterator[Hit]:
    """Hosts use adaptive routing but the fabric hashes flows (ECMP).

    What it checks:
        ``NCCL_IB_ADAPTIVE_ROUTING=1`` on any host while
        ``fabric.load_balancing.mode`` is ``ecmp``.

    Why it matters:
        NCCL's adaptive-routing mode changes how it posts RDMA writes so that
        packets may arrive out of order; it pays off only when switches spread a
        flow's packets over paths (``dlb`` or ``spray``). Over ECMP it buys nothing
        and leaves the hosts configured for a fabric they are not on.

    Example:
        fabric:
          load_balancing: {mode: ecmp}
        nccl:
          env: {NCCL_IB_ADAPTIVE_ROUTING: 1}

    Fix:
        Remove the variable, or switch the fabric to ``dlb``/``spray`` where the
        switches support it.
    """
    mode = ctx.spec.fabric.load_balancing.mode
    if mode in AR_MODES:
        return
    for path, hosts in _ar_on(ctx).items():
        yield Hit(
            f"NCCL_IB_ADAPTIVE_ROUTING=1 on {plural(len(hosts), 'host')} ({preview(hosts)}), but the fabric "
            f"load-balances with {mode}, which keeps each flow on one path",
            ctx.at(path, key=True) if path else ctx.at(("nccl", "env")),
            "remove it, or set fabric.load_balancing.mode to a mode the switches have (dlb on EOS Tomahawk 4/5, "
            "spray on Cumulus Spectrum-4)",
            (ctx.at(ctx.first_written(("fabric", "load_balancing", "mode"), ("fabric",)), note="load balancing"),),
        )


def spray_without_adaptive_routing(ctx: LintContext) -> Iterator[Hit]:
    """The fabric sprays packets but hosts do not expect reordering.

    What it checks:
        With ``fabric.load_balancing.mode: spray``, every host should set
        ``NCCL_IB_ADAPTIVE_ROUTING=1``.

    Why it matters:
        Per-packet spraying delivers a flow's packets out of order. Without NCCL's
        adaptive-routing mode (and a NIC that places out-of-order data), RoCE's
        go-back-N treats every reordering as loss and retransmits, and throughput
        collapses.

    Example:
        fabric:
          load_balancing: {mode: spray}

    Fix:
        Set ``NCCL_IB_ADAPTIVE_ROUTING: 1`` in ``nccl.env``, or load-balance per flow.
    """
    if ctx.spec.fabric.load_balancing.mode != "spray":
        return
    enabled = {h for hosts in _ar_on(ctx).values() for h in hosts}
    missing = [h.name for h in ctx.plan.hosts if h.name not in enabled]
    if missing:
        yield Hit(
            f"the fabric sprays packets (adaptive routing on its Cumulus switches, the only OS fabgen renders "
            f"spray on), but {plural(len(missing), 'host')} ({preview(missing)}) do not set "
            "NCCL_IB_ADAPTIVE_ROUTING=1: reordered packets look like loss to RoCE",
            ctx.at(ctx.first_written(("fabric", "load_balancing", "mode"), ("fabric",))),
            "set NCCL_IB_ADAPTIVE_ROUTING: 1 in nccl.env",
        )


def cross_nic_on_rail_fabric(ctx: LintContext) -> Iterator[Hit]:
    """NCCL_CROSS_NIC=1 on a rail-optimized fabric.

    What it checks:
        ``NCCL_CROSS_NIC`` set by hand to 1 when the fabric has more than one rail.

    Why it matters:
        With 1, NCCL may connect NIC *r* of one host to NIC *s* of another: that
        traffic leaves the rail's leaves and crosses the spines, which rail
        optimization is meant to spare, and where rails are not interconnected it
        cannot connect at all (QP timeouts, nccl.md §4.4). fabgen sets 0.

    Example:
        fabric: {rails: 4}
        nccl:
          env: {NCCL_CROSS_NIC: 1}

    Fix:
        Remove the variable (fabgen sets 0 for multi-rail fabrics), or use 2
        (prefer the same rail).
    """
    if ctx.spec.fabric.rails < 2:
        return
    for item in env_items(ctx):
        if item.name == "NCCL_CROSS_NIC" and str(item.value).strip() == "1" and item.path is not None:
            yield Hit(
                f"NCCL_CROSS_NIC=1 on a {ctx.spec.fabric.rails}-rail fabric lets NCCL pair NICs of different rails; "
                "that traffic crosses the spines",
                item.location,
                "remove it (fabgen sets 0), or use 2",
            )


def suspicious_value(ctx: LintContext) -> Iterator[Hit]:
    """An NCCL variable that works, but probably not as meant.

    What it checks:
        The warnings of fabgen's NCCL catalog for hand-set (or deployed) values: a
        variable this ``nccl.version`` does not read yet, a deprecated one, prefix
        matching in an interface list (``mlx5_1`` also matches ``mlx5_10``), values
        outside the usual band, ECN bits 11 in a traffic class.

    Why it matters:
        Each of these is accepted silently by NCCL and does something other than
        what the line suggests.

    Example:
        nccl:
          env: {NCCL_IB_HCA: "mlx5_0,mlx5_1,mlx5_2,mlx5_3"}

    Fix:
        Follow the hint (usually: write the exact form, or drop the variable).
    """
    yield from _hits(ctx, "FG407")
