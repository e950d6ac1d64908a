"""A JSON Patch (RFC 6902) that puts fabgen's CONFIG_DB on a running SONiC switch, and nothing else.

Why: every whole-file way to apply ``config_db.json`` is wrong on a live switch.
``config load`` merges, so SONiC's factory PGs and queues (``Ethernet0|3-4``)
stay beside fabgen's; ``config reload`` flushes CONFIG_DB and takes management,
loopbacks, BGP and users with it; ``config qos reload`` regenerates every QoS
and buffer table from the SKU's templates, deleting fabgen's. The Generic
Config Updater (``config apply-patch``) validates a patch against the YANG
models and applies only the change, so fabgen computes that change against the
switch's own running CONFIG_DB (``show runningconfiguration all``).

What fabgen owns, and so what the patch may add, replace or remove:

* **entries of fabgen's ports** in the per-port tables (:data:`PORT_TABLES`:
  ``PORT_QOS_MAP``, ``QUEUE``, ``BUFFER_PG``, ``BUFFER_QUEUE``, the profile
  lists, ``PFC_WD``, ``INTERFACE``): replaced by fabgen's, and removed when
  fabgen writes no such entry (SONiC's ``Ethernet0|3-4`` PG beside fabgen's
  ``Ethernet0|3``; every ``PFC_WD`` entry of its ports when the watchdog is
  off). Entries of other ports are kept;
* **named objects fabgen writes** (maps, schedulers, WRED and buffer profiles,
  pools, ``LOSSLESS_TRAFFIC_PATTERN|AZURE`` ...): replaced whole. Objects of other
  names (SONiC's ``AZURE`` maps) are kept: other ports may still use them;
* **fields fabgen writes** of shared entries (:data:`FIELD_TABLES`: a port's
  speed, MTU, FEC, description and admin status; ``CABLE_LENGTH|AZURE`` per port;
  ``DEVICE_METADATA|localhost`` ``buffer_model`` and ``default_pfcwd_status``;
  ``FLEX_COUNTER_TABLE|PFCWD``): set; the entry's other fields are kept.

Everything else in the device's CONFIG_DB is untouched, fabgen's routing tables
included (:data:`fabgen.targets.sonic.routing.ROUTING_TABLES`: BGP, loopback,
management, neighbours, hash): changing the management address or the BGP
sessions of a live switch through the same patch as its QoS would cut the
session applying it, so those go in by ``config_db.json`` at provisioning. A base whose hwsku,
platform or port lanes differ from fabgen's is refused (:class:`PatchRefused`):
a patch cannot change a SKU or a breakout, and applying one to the wrong
switch is the mistake this check catches.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fabgen.errors import FabgenError, Problem
from fabgen.targets.sonic.routing import ROUTING_TABLES

__all__ = ["FIELD_TABLES", "PORT_TABLES", "PatchRefused", "desired_config", "gcu_patch", "gcu_patch_text",
           "patched_tables"]

PORT_TABLES: frozenset[str] = frozenset({
    "PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST", "PFC_WD", "INTERFACE",
})
"""Tables keyed by port (``Ethernet0``, ``Ethernet0|3``, ``Ethernet0|10.0.0.1/31``)."""

FIELD_TABLES: dict[str, frozenset[str] | None] = {
    "PORT": frozenset({"admin_status", "description", "fec", "mtu", "speed", "autoneg"}),
    "DEVICE_METADATA": frozenset({"buffer_model", "default_pfcwd_status"}),
    "CABLE_LENGTH": None,
    "FLEX_COUNTER_TABLE": None,
}
"""Tables whose entries fabgen shares with SONiC: only these fields (None: every field fabgen writes)."""

_MUST_MATCH = {"DEVICE_METADATA": ("hwsku", "platform"), "PORT": ("lanes",)}


class PatchRefused(FabgenError):
    """The base is not the switch fabgen's file is for (another SKU, platform or breakout)."""


def _pointer(*parts: str) -> str:
    """RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1`` (``INTERFACE|Ethernet0|10.0.0.1/31``)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def _check_same_switch(base: Mapping[str, Any], ours: Mapping[str, Any]) -> None:
    problems = []
    for table, fields in _MUST_MATCH.items():
        for key, entry in ours.get(table, {}).items():
            have = base.get(table, {}).get(key)
            if have is None:
                if table == "PORT":
                    problems.append(Problem(f"the device has no port {key}: its breakout is not the SKU's "
                                            "fabgen planned (a patch cannot add ports)", file="base"))
                continue
            for field in fields:
                if field in entry and field in have and str(have[field]) != str(entry[field]):
                    problems.append(Problem(f"{table}|{key} {field} is {have[field]!r} on the device, fabgen "
                                            f"wrote {entry[field]!r}: not the switch this file is for", file="base"))
    if problems:
        raise PatchRefused(problems)


def patched_tables(ours: Mapping[str, Any]) -> dict[str, Any]:
    """The part of fabgen's CONFIG_DB the live patch carries: everything but the routing tables."""
    return {table: entries for table, entries in ours.items() if table not in ROUTING_TABLES}


def desired_config(base: Mapping[str, Any], ours: Mapping[str, Any]) -> dict[str, Any]:
    """The device's CONFIG_DB after fabgen's file is applied under the ownership rules above."""
    ours = patched_tables(ours)
    _check_same_switch(base, ours)
    result: dict[str, Any] = {t: {k: dict(v) for k, v in entries.items()} for t, entries in base.items()}
    ports = set(ours.get("PORT", {}))
    for table in sorted(PORT_TABLES - set(ours)):  # e.g. no PFC_WD with the watchdog off: none on fabgen's ports
        current = result.get(table, {})
        for key in [k for k in current if k.split("|", 1)[0] in ports]:
            del current[key]
    for table, entries in ours.items():
        current = result.setdefault(table, {})
        if table in FIELD_TABLES:
            allowed = FIELD_TABLES[table]
            for key, entry in entries.items():
                merged = dict(current.get(key, {}))
                merged.update({f: v for f, v in entry.items() if allowed is None or f in allowed})
                current[key] = merged
            continue
        if table in PORT_TABLES:
            for key in [k for k in current if k.split("|", 1)[0] in ports and k not in entries]:
                del current[key]
        for key, entry in entries.items():
            current[key] = dict(entry)
    return {t: entries for t, entries in result.items() if entries}


def gcu_patch(base: Mapping[str, Any], ours: Mapping[str, Any]) -> list[dict[str, Any]]:
    """RFC 6902 operations taking ``base`` (the device's CONFIG_DB) to :func:`desired_config`.

    Whole entries are added, replaced or removed (GCU orders the operations
    itself); removals come first, then additions, each in sorted order, so the
    same inputs give the same patch byte for byte.
    """
    desired = desired_config(base, ours)
    removes: list[dict[str, Any]] = []
    writes: list[dict[str, Any]] = []
    for table in sorted(set(base) | set(desired)):
        have, want = base.get(table, {}), desired.get(table, {})
        if not want:
            removes.append({"op": "remove", "path": _pointer(table)})
            continue
        if not have:
            writes.append({"op": "add", "path": _pointer(table), "value": want})
            continue
        for key in sorted(set(have) | set(want)):
            if key not in want:
                removes.append({"op": "remove", "path": _pointer(table, key)})
            elif key not in have:
                writes.append({"op": "add", "path": _pointer(table, key), "value": want[key]})
            elif dict(have[key]) != want[key]:
                writes.append({"op": "replace", "path": _pointer(table, key), "value": want[key]})
    return removes + writes


def gcu_patch_text(base: Mapping[str, Any], ours: Mapping[str, Any]) -> str:
    """The patch as ``config apply-patch`` reads it: JSON, 4-space indent, final newline."""
    return json.dumps(gcu_patch(base, ours), indent=4, sort_keys=True) + "\n"
