"""Observed wiring: what the cables really connect, read from LLDP or a cabling CSV.

The linter compares the planned fabric with the wiring a site really has
(FG2xx "observed neighbour differs from the plan"). This module only *reads*
that evidence and turns it into one flat, comparable shape, :class:`ObservedLink`;
it knows nothing about the spec or the plan, so the readers can be tested against
real tool output alone.

Sources
-------
* ``lldpctl`` (lldpd) neighbour output, one file per device, in any of the three
  machine formats it prints: ``-f json``, ``-f json0`` and ``-f keyvalue``
  (see :func:`read_lldp`; real samples and their traps are in
  ``../shared/reference/lldp/``).
* ``cabling.csv`` as fabgen's planner exports it (:data:`CABLING_COLUMNS`), or as
  a site's cabling team hands it over (see :func:`read_cabling_csv`).

Naming the local device
-----------------------
LLDP output names the *neighbour* (its system name) but never the device it was
taken on. :func:`read_lldp` therefore takes the local device name, in this order:

1. the ``local_device`` argument;
2. a ``local-chassis`` document in the same file (``lldpctl -f json show chassis``
   output concatenated with the neighbours, e.g.
   ``{ lldpctl -f json show chassis; lldpctl -f json; } > gpu01.json``);
3. the file name: ``HOSTNAME`` plus any of the suffixes ``.json``, ``.json0``,
   ``.lldp``, ``.keyvalue``, ``.kv``, ``.txt`` (so ``gpu01.json``,
   ``gpu01.lldp.json``, ``gpu01.json0.json``, ``gpu01.keyvalue.txt`` all name
   ``gpu01``; ``gt00001.example.com.json`` names ``gt00001.example.com``).
   See :func:`device_name_from_path`.

Which string names a port
-------------------------
The local port is the interface lldpd received on: the netdev name on a host
(``ens1np0``) and the OS port name on a SONiC or Cumulus switch (``Ethernet0``,
``swp1``). The neighbour's port is taken from the LLDP Port ID when its subtype
names an interface (``ifname``, ``local``, ``ifalias``: what switches send), and
from the Port Description otherwise (subtype ``mac``: Linux lldpd's default,
which puts the netdev name in the description). Known limit: SONiC advertises
``local`` = the PORT table *alias* (``etp1``), not ``Ethernet0``; a link seen from
a SONiC switch's side and from its neighbour's side then does not deduplicate,
and mapping aliases to names is the linter's job (the plan knows them).
"""

from __future__ import annotations

import bisect
import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from fabgen.bounded import (
    MAX_CABLING_ROWS,
    MAX_JSON_DEPTH,
    MAX_WIRING_BYTES,
    DuplicateKey,
    duplicate_position,
    json_depth,
    no_duplicates,
    read_bytes,
    read_text,
    walk_files,
)
from fabgen.errors import FabgenError, Problem
from fabgen.natural import natural_key
from fabgen.wiring_netbox import is_netbox_cable_header, netbox_cable_rows

__all__ = [
    "CABLING_COLUMNS",
    "CABLING_ROLES",
    "LLDP_NAME_SUFFIXES",
    "ObservedLink",
    "Origin",
    "collect_wiring_files",
    "dedupe_links",
    "device_name_from_path",
    "is_cabling_csv",
    "read_cabling_csv",
    "read_lldp",
    "wiring_files",
]

Origin = Literal["lldp", "csv"]

#: Header of ``cabling.csv``, shared by the planner (writer) and this reader.
#: ``a`` is the lower-tier end (host or lower switch), ``b`` the upper one.
CABLING_COLUMNS: Final[tuple[str, ...]] = (
    "a_device",
    "a_port",
    "b_device",
    "b_port",
    "role",
    "rail",
    "speed",
)

#: Allowed values of the ``role`` column, lower tier first.
CABLING_ROLES: Final[tuple[str, ...]] = ("host-leaf", "leaf-spine", "spine-superspine")

#: File-name suffixes stripped to find the local device of an LLDP file.
LLDP_NAME_SUFFIXES: Final[tuple[str, ...]] = (".json", ".json0", ".lldp", ".keyvalue", ".kv", ".txt")

#: Suffixes picked up when :func:`collect_wiring_files` walks a directory.
_WIRING_SUFFIXES: Final[frozenset[str]] = frozenset({".json", ".csv", ".txt", ".kv", ".keyvalue"})

#: More problems than this in one error would bury the first, useful ones.
_MAX_PROBLEMS: Final = 50

_HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_SPEED = re.compile(r"[0-9]+(?:\.[0-9]+)?[GT](?:b|bps)?", re.IGNORECASE)
_RAIL = re.compile(r"[0-9]+")
_WHITESPACE = re.compile(r"\s*")

# Port ID subtypes (lldpd's names) whose value is an interface name chosen by the
# sender; for the others (mac, ip, unhandled) the description is the better name.
_NAMING_PORT_ID_TYPES: Final = frozenset({"ifname", "local", "ifalias"})
# Chassis/Port ID subtypes as lldpd prints them; in keyvalue form they become keys.
_ID_TYPES: Final = frozenset({"ifname", "ifalias", "local", "mac", "ip", "unhandled"})

_NO_LOCAL_NAME = (
    "cannot tell which device this LLDP output was taken on (LLDP names only the "
    "neighbours): name the file HOSTNAME.json, or pass the device name"
)
_NOT_LLDP = (
    "not lldpctl output in json, json0 or keyvalue form (plain `lldpctl` text "
    "cannot be read reliably; collect with `lldpctl -f json`)"
)
_INTERFACES_LISTING = (
    "this is `lldpctl show interfaces` output (the local ports), not neighbours; "
    "collect `lldpctl -f json show neighbors`"
)


@dataclass(frozen=True, slots=True)
class ObservedLink:
    """One cable as some evidence reports it, seen from ``local_device``.

    The same cable may be reported twice, once from each end (host LLDP and
    switch LLDP), with the ends swapped; :meth:`key` is identical for both so
    :func:`dedupe_links` can fold them. ``source``/``line`` locate the evidence
    so a finding can point at it (``line`` 0: unknown).
    """

    local_device: str
    local_port: str
    remote_device: str
    remote_port: str
    source: str
    line: int
    origin: Origin

    def key(self) -> frozenset[tuple[str, str]]:
        """Identity of the cable, independent of which end reported it."""
        return frozenset({(self.local_device, self.local_port), (self.remote_device, self.remote_port)})

    @property
    def where(self) -> str:
        """``source:line`` (or just ``source``) for messages."""
        return f"{self.source}:{self.line}" if self.line else self.source

    def __str__(self) -> str:
        return f"{self.local_device}:{self.local_port} -> {self.remote_device}:{self.remote_port} ({self.where})"


# --------------------------------------------------------------------------- helpers


def _raise(problems: list[Problem]) -> None:
    """Raise one error carrying every problem, capped so the first ones stay visible."""
    if not problems:
        return
    if len(problems) > _MAX_PROBLEMS:
        extra = len(problems) - _MAX_PROBLEMS
        last = problems[_MAX_PROBLEMS - 1]
        problems = [*problems[:_MAX_PROBLEMS], Problem(f"... and {extra} more problems", file=last.file)]
    raise FabgenError(problems)


def _read_text(path: Path) -> str:
    """A regular file of at most :data:`~fabgen.bounded.MAX_WIRING_BYTES`, as UTF-8 (a BOM is tolerated:
    spreadsheets write one)."""
    return read_text(path, MAX_WIRING_BYTES, what="wiring file", bom=True)


class _Lines:
    """Offset -> 1-based line number, for locating things found by offset."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)


def device_name_from_path(path: Path) -> str | None:
    """Local device named by an LLDP file's name, or None if it names none.

    ``HOSTNAME`` followed by any of :data:`LLDP_NAME_SUFFIXES` (stripped from the
    end, case-insensitively, repeatedly): ``gpu01.lldp.json`` -> ``gpu01``.
    """
    name = Path(path).name
    while True:
        base, dot, ext = name.rpartition(".")
        if dot and base and f".{ext.lower()}" in LLDP_NAME_SUFFIXES:
            name = base
        else:
            break
    return name if _HOSTNAME.fullmatch(name) else None


# --------------------------------------------------------------------------- LLDP


@dataclass(frozen=True, slots=True)
class _Neighbour:
    """A neighbour before the local device name is known (it may come last)."""

    local_port: str
    remote_device: str
    remote_port: str
    line: int


def _as_list(value: Any) -> list[Any]:
    """``-f json`` drops one-element lists; put them back."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _obj(value: Any) -> Any:
    """The single object of a json0 one-element list, or the object itself."""
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _text(value: Any) -> str | None:
    """A leaf string in either variant: ``"x"`` (json) or ``[{"value": "x"}]`` (json0)."""
    value = _obj(value)
    if isinstance(value, dict):
        value = _obj(value.get("value"))
    return value if isinstance(value, str) else None


def _remote_port(id_type: str | None, id_value: str | None, descr: str | None) -> str | None:
    """Pick the string that names the neighbour's port (see the module docstring)."""
    id_value = (id_value or "").strip() or None
    descr = (descr or "").strip() or None
    if id_type in _NAMING_PORT_ID_TYPES and id_value:
        return id_value
    return descr or id_value


def _neighbour(
    local_port: str,
    chassis_name: str | None,
    chassis_id: str | None,
    port_id_type: str | None,
    port_id: str | None,
    port_descr: str | None,
    line: int,
    src: str,
    problems: list[Problem],
) -> _Neighbour | None:
    """Validate one neighbour's fields; a missing system name falls back to the chassis id."""
    remote_device = (chassis_name or "").strip() or (chassis_id or "").strip()
    remote_port = _remote_port(port_id_type, port_id, port_descr)
    if not local_port.strip():
        problems.append(Problem("neighbour on an interface with an empty name", file=src, line=line))
        return None
    if not remote_device:
        problems.append(
            Problem(f"neighbour on {local_port} has neither a system name nor a chassis id", file=src, line=line)
        )
        return None
    if not remote_port:
        problems.append(
            Problem(f"neighbour on {local_port} has neither a port id nor a port description", file=src, line=line)
        )
        return None
    return _Neighbour(local_port, remote_device, remote_port, line)


def _json_chassis(raw: Any) -> tuple[str | None, dict[str, Any]] | None:
    """``(system name, chassis body)`` from any chassis shape lldpd prints.

    json0 and name-less json: ``{"id": {...}, "name": ..., ...}``;
    json with a system name: ``{"leaf01": {"id": {...}, ...}}``.
    """
    chassis = _obj(raw)
    if not isinstance(chassis, dict):
        return None
    ident = _obj(chassis.get("id"))
    if (isinstance(ident, dict) and ("type" in ident or "value" in ident)) or _text(chassis.get("name")) is not None:
        return _text(chassis.get("name")), chassis
    if len(chassis) == 1:
        ((name, body),) = chassis.items()
        body = _obj(body)
        if isinstance(body, dict):
            return name, body
    return None


def _json_chassis_id(chassis: dict[str, Any]) -> str | None:
    ident = _obj(chassis.get("id"))
    return _text(ident) if isinstance(ident, dict) else _text(chassis.get("id"))


def _json_entries(section: dict[str, Any]) -> Iterator[tuple[str, Any, bool]]:
    """``(interface name, body, keyed)`` for each neighbour entry of an ``lldp`` section.

    ``-f json`` keys an entry by its name (``{"ens1np0": {...}}``), as one object
    when there is a single neighbour and a list of such objects otherwise;
    ``-f json0`` always lists objects with a ``"name"`` field. Both are accepted
    everywhere, and so is an object keyed by several interface names.
    """
    for item in _as_list(section.get("interface")):
        if not isinstance(item, dict):
            yield "", item, False
            continue
        name = item.get("name")
        if isinstance(name, str) and any(k in item for k in ("via", "chassis", "port", "status", "rid")):
            yield name, item, False
            continue
        for key, body in item.items():
            for one in _as_list(body):
                yield key, one, True


class _Locator:
    """Best-effort lines for JSON entries: search forward for each entry's name in order."""

    def __init__(self, text: str, lines: _Lines) -> None:
        self._text = text
        self._lines = lines
        self._cursor = 0

    def seek(self, offset: int) -> None:
        self._cursor = offset

    def find(self, name: str, keyed: bool) -> int:
        """Line of ``"name": {`` (json) or ``"name": "name"`` (json0) after the previous find.

        Plain string search with a look around the hit: compiling a pattern per
        entry was most of the reading time on large captures.
        """
        text = self._text
        quoted = json.dumps(name, ensure_ascii=False)
        pos = self._cursor
        while (at := text.find(quoted, pos)) >= 0:
            after = at + len(quoted)
            if keyed:
                found = text[after : after + 64].lstrip().startswith(":")
            else:
                before = text[max(0, at - 64) : at].rstrip()
                found = before.endswith(":") and before[:-1].rstrip().endswith('"name"')
            if found:
                self._cursor = after
                return self._lines.line(at)
            pos = at + 1
        return self._lines.line(self._cursor)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_documents(text: str, src: str, lines: _Lines) -> list[tuple[Any, int]]:
    """Every JSON document in the file with its start offset (lldpctl may print several)."""
    # a repeated interface key hides a cable; NaN and Infinity are not JSON
    decoder = json.JSONDecoder(object_pairs_hook=no_duplicates, parse_constant=_not_json)
    docs: list[tuple[Any, int]] = []
    pos = 0
    while True:
        blank = _WHITESPACE.match(text, pos)
        pos = blank.end() if blank else pos
        if pos >= len(text):
            return docs
        try:
            doc, end = decoder.raw_decode(text, pos)
        except DuplicateKey as exc:
            line, col = duplicate_position(text, exc.key, pos)
            message = f"duplicate key {json.dumps(exc.key)[:80]}; JSON keeps only the last one, hiding the first"
            raise FabgenError([Problem(message, file=src, line=line, col=col)]) from None
        except json.JSONDecodeError as exc:
            raise FabgenError([Problem(f"invalid JSON: {exc.msg}", file=src, line=exc.lineno, col=exc.colno)]) from None
        except ValueError as exc:  # e.g. an integer beyond Python's digit limit
            raise FabgenError([Problem(f"invalid JSON: {exc}", file=src, line=lines.line(pos))]) from None
        except RecursionError:
            raise FabgenError([Problem("invalid JSON: nested too deeply", file=src, line=lines.line(pos))]) from None
        if json_depth(doc) > MAX_JSON_DEPTH:
            raise FabgenError([Problem(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", file=src,
                                       line=lines.line(pos))])
        docs.append((doc, pos))
        pos = end


def _parse_json(text: str, src: str) -> tuple[list[_Neighbour], str | None, list[Problem]]:
    """Neighbours and the ``local-chassis`` name (if present) from ``-f json``/``-f json0`` text.

    The variants are told apart by the top-level ``lldp`` value: a list in json0,
    an object in json. Both are then read through the same shape-tolerant
    accessors, so a file mixing the forms (hand-edited) still reads.
    """
    lines = _Lines(text)
    locator = _Locator(text, lines)
    problems: list[Problem] = []
    neighbours: list[_Neighbour] = []
    local_name: str | None = None
    for doc, start in _json_documents(text, src, lines):
        doc_line = lines.line(start)
        locator.seek(start)
        if not isinstance(doc, dict):
            problems.append(Problem(f"expected a JSON object from lldpctl; {_NOT_LLDP}", file=src, line=doc_line))
            continue
        if "local-chassis" in doc:
            holder = _obj(doc["local-chassis"])
            found = _json_chassis(holder.get("chassis")) if isinstance(holder, dict) else None
            if found is None or not (found[0] or "").strip():
                problems.append(Problem("local-chassis carries no system name", file=src, line=doc_line))
            else:
                local_name = (found[0] or "").strip()
            continue
        if "lldp" not in doc:
            keys = ", ".join(sorted(doc)[:3]) or "nothing"
            problems.append(Problem(f'no top-level "lldp" key (found {keys}); {_NOT_LLDP}', file=src, line=doc_line))
            continue
        if not isinstance(doc["lldp"], (dict, list)):
            problems.append(Problem('"lldp" is neither an object nor a list', file=src, line=doc_line))
            continue
        for section in _as_list(doc["lldp"]):
            if not isinstance(section, dict):
                problems.append(Problem('unrecognised "lldp" section: expected an object', file=src, line=doc_line))
                continue
            for name, body, keyed in _json_entries(section):
                line = locator.find(name, keyed) if name else doc_line
                if not isinstance(body, dict) or not name:
                    problems.append(Problem("unrecognised interface entry under lldp.interface", file=src, line=line))
                    continue
                if "via" not in body and "status" in body:
                    problems.append(Problem(_INTERFACES_LISTING, file=src, line=line))
                    return neighbours, local_name, problems
                if "chassis" not in body or "port" not in body:
                    problems.append(
                        Problem(
                            f'interface {name}: no neighbour "chassis"/"port" '
                            "(is this `lldpctl show neighbors` output?)",
                            file=src,
                            line=line,
                        )
                    )
                    continue
                chassis = _json_chassis(body["chassis"])
                port = _obj(body["port"])
                if chassis is None or not isinstance(port, dict):
                    problems.append(
                        Problem(f"interface {name}: unrecognised chassis or port shape", file=src, line=line)
                    )
                    continue
                chassis_name, chassis_body = chassis
                port_id = _obj(port.get("id"))
                if not isinstance(port_id, dict):
                    port_id = {"value": port_id}
                found_n = _neighbour(
                    name,
                    chassis_name,
                    _json_chassis_id(chassis_body),
                    _text(port_id.get("type")),
                    _text(port_id.get("value")),
                    _text(port.get("descr")),
                    line,
                    src,
                    problems,
                )
                if found_n is not None:
                    neighbours.append(found_n)
    return neighbours, local_name, problems


# keyvalue: ``lldp.<ifname>.<field>[.<sub>]=value``; interface names may contain dots
# (VLAN subinterfaces), so the name is the shortest prefix followed by a known field.
_KV_FIELDS = "via|rid|age|alias|status|chassis|port|vlan|ppvid|pi|lldp-med|unknown-tlvs|ttl"
_KV_KEY = re.compile(rf"lldp\.(?P<iface>.+?)\.(?P<field>{_KV_FIELDS})(?:\.(?P<sub>.+))?")
_KV_LINE = re.compile(r"[A-Za-z0-9_-]+(?:\.[^=]*)?=")


@dataclass(slots=True)
class _KvRecord:
    iface: str
    line: int
    via: bool = False
    status: bool = False
    chassis_name: str | None = None
    chassis_id: str | None = None
    port_id_type: str | None = None
    port_id: str | None = None
    port_descr: str | None = None


def _parse_keyvalue(text: str, src: str) -> tuple[list[_Neighbour], str | None, list[Problem]]:
    """Neighbours from ``lldpctl -f keyvalue``: one ``key=value`` per line.

    A neighbour starts where the interface changes, or where ``via`` repeats on
    the same interface (two neighbours on one port). ``local-chassis.chassis.name``
    (from ``show chassis``) names the local device.
    """
    problems: list[Problem] = []
    records: list[_KvRecord] = []
    local_name: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        key, eq, value = raw.partition("=")
        if not eq:
            problems.append(Problem(f"expected key=value; {_NOT_LLDP}", file=src, line=number))
            continue
        if key.startswith("local-chassis."):
            if key == "local-chassis.chassis.name" and value.strip():
                local_name = value.strip()
            continue
        if not key.startswith("lldp."):
            problems.append(Problem(f"unrecognised lldpctl keyvalue key {key!r}", file=src, line=number))
            continue
        match = _KV_KEY.fullmatch(key)
        if match is None:
            continue  # a field this reader does not know (newer lldpd): not needed for links
        iface, field, sub = match["iface"], match["field"], match["sub"]
        current = records[-1] if records else None
        if current is None or current.iface != iface or (field == "via" and current.via):
            current = _KvRecord(iface, number)
            records.append(current)
        if field == "via":
            current.via = True
        elif field == "status":
            current.status = True
        elif field == "chassis":
            if sub == "name":
                current.chassis_name = value
            elif sub in _ID_TYPES:
                current.chassis_id = value
        elif field == "port":
            if sub == "descr":
                current.port_descr = value
            elif sub in _ID_TYPES:
                current.port_id_type, current.port_id = sub, value
    neighbours: list[_Neighbour] = []
    for record in records:
        if record.status and not record.via:
            problems.append(Problem(_INTERFACES_LISTING, file=src, line=record.line))
            break
        if record.chassis_name is None and record.chassis_id is None:
            problems.append(
                Problem(f"interface {record.iface}: no neighbour chassis in this output", file=src, line=record.line)
            )
            continue
        found = _neighbour(
            record.iface,
            record.chassis_name,
            record.chassis_id,
            record.port_id_type,
            record.port_id,
            record.port_descr,
            record.line,
            src,
            problems,
        )
        if found is not None:
            neighbours.append(found)
    return neighbours, local_name, problems


def _first_line(text: str) -> tuple[int, str]:
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            return number, line.strip()
    return 0, ""


def read_lldp(path: Path, local_device: str | None = None) -> list[ObservedLink]:
    """Links one device reports via LLDP, from ``lldpctl`` output in a file.

    Formats (detected from the content, not the name): ``-f json`` (whose shape
    changes with the neighbour count: one neighbour is an object, several a
    list; the chassis is keyed by the neighbour's system name), ``-f json0``
    (every element a list, leaves ``{"value": ...}``) and ``-f keyvalue``.
    Several JSON documents in one file are read in turn.

    The local device is ``local_device``, else a ``local-chassis`` document in
    the file, else the file name convention ``HOSTNAME[.lldp][.json0].json`` /
    ``HOSTNAME.keyvalue.txt`` (see the module docstring). A neighbour without a
    system name is named by its chassis id (usually a MAC address) so it still
    shows up as unexpected. Links come in file order, one per neighbour, not
    deduplicated (that is :func:`dedupe_links`'s job).

    Raises :class:`FabgenError` with located problems for anything unreadable.
    """
    path = Path(path)
    src = str(path)
    text = _read_text(path)
    stripped = text.lstrip()
    if not stripped:
        if path.suffix.lower() == ".json":
            # lldpctl -f json prints {"lldp": {}} with no neighbours: empty means a failed capture.
            raise FabgenError([Problem('empty file; lldpctl -f json prints at least {"lldp": {}}', file=src)])
        return []  # lldpctl -f keyvalue prints nothing when there are no neighbours
    if stripped[0] in "{[":
        neighbours, file_name, problems = _parse_json(text, src)
    else:
        number, first = _first_line(text)
        if first.startswith("<"):
            message = "XML output (lldpctl -f xml) is not supported; collect with `lldpctl -f json`"
            raise FabgenError([Problem(message, file=src, line=number)])
        if first.split(",")[:2] == list(CABLING_COLUMNS[:2]):
            message = "this is a cabling CSV, not LLDP output; read it with read_cabling_csv / as a .csv file"
            raise FabgenError([Problem(message, file=src, line=number)])
        if not _KV_LINE.match(first):
            raise FabgenError([Problem(_NOT_LLDP, file=src, line=number)])
        neighbours, file_name, problems = _parse_keyvalue(text, src)
    device = (local_device or "").strip() or file_name or device_name_from_path(path)
    if neighbours and not device:
        problems.insert(0, Problem(_NO_LOCAL_NAME, file=src))
    _raise(problems)
    assert device or not neighbours
    return [
        ObservedLink(device or "", n.local_port, n.remote_device, n.remote_port, src, n.line, "lldp")
        for n in neighbours
    ]


# --------------------------------------------------------------------------- CSV


def _column(row: Sequence[str], index: int) -> int:
    """1-based character column of field ``index`` (exact unless fields are quoted)."""
    return 1 + sum(len(field) + 1 for field in row[:index])


def _check_row(row: list[str], line: int, src: str, problems: list[Problem]) -> ObservedLink | None:
    """Validate one data row; every bad field is reported, not only the first."""
    if len(row) != len(CABLING_COLUMNS):
        message = f"expected {len(CABLING_COLUMNS)} fields ({','.join(CABLING_COLUMNS)}), found {len(row)}"
        problems.append(Problem(message, file=src, line=line))
        return None
    cells = dict(zip(CABLING_COLUMNS, (cell.strip() for cell in row), strict=True))
    before = len(problems)

    def bad(column: str, message: str) -> None:
        col = _column(row, CABLING_COLUMNS.index(column))
        problems.append(Problem(message, file=src, line=line, col=col, path=column))

    for column in ("a_device", "a_port", "b_device", "b_port"):
        if not cells[column]:
            bad(column, f"{column} is empty")
    if cells["role"] not in CABLING_ROLES:
        bad("role", f"role {cells['role']!r} is not one of {', '.join(CABLING_ROLES)}")
    if cells["rail"] and not _RAIL.fullmatch(cells["rail"]):
        bad("rail", f"rail {cells['rail']!r} is not a non-negative integer (leave it empty for no rail)")
    if not _SPEED.fullmatch(cells["speed"]):
        bad("speed", f"speed {cells['speed']!r} is not a link speed like 400G")
    a_end, b_end = (cells["a_device"], cells["a_port"]), (cells["b_device"], cells["b_port"])
    if len(problems) == before and a_end == b_end:
        bad("b_port", f"both ends are {a_end[0]}:{a_end[1]}")
    if len(problems) != before:
        return None
    return ObservedLink(*a_end, *b_end, source=src, line=line, origin="csv")


def read_cabling_csv(path: Path) -> list[ObservedLink]:
    """Links of a ``cabling.csv`` (:data:`CABLING_COLUMNS`), ``a`` end as local.

    The header must be exactly :data:`CABLING_COLUMNS` (a renamed or reordered
    column would silently swap ends otherwise). Blank lines are skipped; cells
    are stripped of surrounding spaces; every bad row is reported with its line
    (the record's first line) and column. ``role``, ``rail`` and ``speed`` are
    validated here but not carried: :class:`ObservedLink` is what both evidence
    kinds share.
    """
    path = Path(path)
    src = str(path)
    text = _read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    problems: list[Problem] = []
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise FabgenError([Problem(f"malformed CSV header: {exc}", file=src, line=reader.line_num or 1)]) from None
    expected = ",".join(CABLING_COLUMNS)
    if header is None:
        raise FabgenError([Problem(f"empty file; expected the header {expected}", file=src, line=1)])
    if is_netbox_cable_header(header):  # NetBox's cable import columns or its cable list export
        return _netbox_links(header, reader, src)
    if [cell.strip() for cell in header] != list(CABLING_COLUMNS):
        message = f"header must be exactly {expected}; found {','.join(header)}"
        raise FabgenError([Problem(message, file=src, line=1, col=1)])
    links: list[ObservedLink] = []
    rows = 0
    end = reader.line_num
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            problems.append(Problem(f"malformed CSV: {exc}", file=src, line=reader.line_num))
            break
        start, end = end + 1, reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        rows += 1
        if rows > MAX_CABLING_ROWS:
            problems.append(Problem(f"more than {MAX_CABLING_ROWS} cables; refusing the rest", file=src, line=start))
            break
        link = _check_row(row, start, src, problems)
        if link is not None:
            links.append(link)
    _raise(problems)
    return links


def _netbox_links(header: list[str], reader: Any, src: str) -> list[ObservedLink]:
    """A NetBox cable CSV (:mod:`fabgen.wiring_netbox`) as links, ``a`` end as local."""

    def rows() -> Iterator[tuple[int, list[str]]]:
        end = reader.line_num
        for row in reader:
            start, end = end + 1, reader.line_num
            yield start, row

    try:
        found, problems = netbox_cable_rows(header, rows(), src)
    except csv.Error as exc:
        raise FabgenError([Problem(f"malformed CSV: {exc}", file=src, line=reader.line_num)]) from None
    _raise(problems)
    return [ObservedLink(a, ap, b, bp, source=src, line=line, origin="csv") for a, ap, b, bp, line in found]


# --------------------------------------------------------------------------- together


def _rank(link: ObservedLink) -> tuple[bool, str, int]:
    """Which report of a duplicated cable to keep: LLDP (seen on the device) first."""
    return (link.origin != "lldp", link.source, link.line)


def _order(link: ObservedLink) -> tuple[Any, ...]:
    return (
        natural_key(link.local_device),
        natural_key(link.local_port),
        natural_key(link.remote_device),
        natural_key(link.remote_port),
        link.source,
        link.line,
    )


def dedupe_links(links: Iterable[ObservedLink]) -> list[ObservedLink]:
    """One link per cable, in a stable order independent of the input order.

    Reports of the same cable (same :meth:`ObservedLink.key`) fold into one: the
    LLDP report over the CSV row, then the one from the lexically first source,
    then the first line. The result is sorted naturally (``swp2`` before
    ``swp10``) by local end, then remote end.
    """
    best: dict[frozenset[tuple[str, str]], ObservedLink] = {}
    for link in links:
        key = link.key()
        current = best.get(key)
        if current is None or _rank(link) < _rank(current):
            best[key] = link
    return sorted(best.values(), key=_order)


def wiring_files(top: Path) -> list[Path]:
    """Wiring files under ``top``: sorted walk, hidden entries skipped, known suffixes only.

    The walk never leaves ``top`` (see :func:`fabgen.bounded.walk_files`); a link out of it, a FIFO or a
    device is an error, as is a directory of more than :data:`~fabgen.bounded.MAX_WALK_FILES` files.
    """
    found, problems = walk_files(top, keep=lambda name: Path(name).suffix.lower() in _WIRING_SUFFIXES)
    _raise(problems)
    return found


def is_cabling_csv(path: Path) -> bool:
    """A ``.csv`` name, or a first line that starts like the cabling header."""
    if path.suffix.lower() == ".csv":
        return True
    try:
        head = read_bytes(path, MAX_WIRING_BYTES, what="wiring file")[:200]
    except FabgenError:
        return False  # the reader reports why
    first = head.decode("utf-8-sig", errors="replace").partition("\n")[0]
    return first.startswith(f"{CABLING_COLUMNS[0]},{CABLING_COLUMNS[1]},")


def collect_wiring_files(paths: Iterable[Path | str]) -> tuple[list[Path], list[Problem]]:
    """The files to read for ``paths``, and the problems of those that cannot be.

    Directories are walked recursively in sorted order, taking ``*.json``,
    ``*.csv``, ``*.txt``, ``*.kv`` and ``*.keyvalue`` files (hidden entries
    skipped, links out of the tree not followed); files named explicitly are
    read whatever their name (a link among them is refused when read).
    """
    files: list[Path] = []
    problems: list[Problem] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            try:
                files.extend(wiring_files(path))
            except FabgenError as exc:
                problems.extend(exc.problems)
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            problems.append(Problem("no such file or directory", file=str(path)))
    return files, problems
