"""Validate SONiC CONFIG_DB JSON (``config_db.json``) against the SONiC YANG models.

Why this exists: a SONiC switch accepts almost any ``config_db.json`` at load time
and then silently ignores what orchagent cannot use, so a typo in a QoS table shows
up as a lossy RoCE fabric, not as an error. The SONiC YANG models (the same ones
``config apply-patch`` and ``yang_config_validation`` use) catch most of those
mistakes, so every SONiC file fabgen renders is checked against them.

How, in four steps (switch.md §2.4 has the research behind each):

1. **Schema index.** All modules in ``yang_dir`` are loaded into one libyang
   context, cached per directory per process (hundreds of switches share it). The
   table -> module/list mapping is *read from the models*: each module has one top
   container named like the module, each child container is a CONFIG_DB table, the
   lists inside it give the key leaves. A list whose only child is another list
   with one key and one value leaf is a "type-1 map" (``DSCP_TO_TC_MAP|ROCE`` ->
   ``{"26": "3"}``), the shape SONiC's ``sonic_yang_ext.py`` hard-codes by name.
2. **Translation** from CONFIG_DB JSON to RFC 7951 YANG JSON: keys ``"a|b"`` are
   split onto the list's key leaves, values are re-typed (8..32-bit integers become
   JSON numbers, 64-bit ones stay strings, booleans become ``true``/``false``), as
   libyang 2.1's strict JSON parser demands. Unknown tables and fields are reported
   here, with a did-you-mean.
3. **Cheap fabgen-side checks** that report *every* instance at once: DSCP range,
   integer ranges, dangling references (leafrefs read from the models, including
   the legacy ``[TABLE|name]`` form), WRED max < min, PFC watchdog timers below the
   poll interval, missing mandatory fields. Each is a subset of what the models
   already forbid, so they never contradict libyang; the one addition is QUEUE's
   ``qindex``, a free string in the model although orchagent needs ``N`` or ``N-M``.
   (Translation also reports non-string values: CONFIG_DB fields are redis
   strings and ``config save`` writes them as such, so a JSON number or boolean
   leaves its spelling to whichever loader stringifies it.)
4. **libyang** validates the whole tree (types, patterns, leafrefs, ``must``,
   ``when``, mandatory). libyang 2.1 stops at the first error, so the offending
   field (or entry) is pruned and the tree re-validated, up to ``max_yang_errors``
   new problems; problems already reported in step 3 are not repeated.

libyang is an optional dependency (``pip install 'fabgen[yang]'``); it is imported
lazily so that the rest of fabgen works without it.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
import threading
from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from json.decoder import scanstring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from fabgen.bounded import MAX_DEPLOYED_BYTES, load_json, read_text
from fabgen.errors import FabgenError, Problem

__all__ = [
    "UNMODELLED_TABLES_ALLOWED",
    "check_sonic_files",
    "validate_config_db",
]

#: CONFIG_DB tables accepted without a YANG model. Deliberately empty: every table
#: fabgen renders for SONiC (QoS, buffers, PFC watchdog, ports, metadata) has a model
#: in the reference set, and a table with no model is far more often a typo
#: (``PORT_QOS_MAPS``) that SONiC would silently ignore than a legitimate table.
#: Callers validating a merged config (fabgen QoS plus a site's BGP tables, say)
#: pass ``allow_tables=`` instead of widening this default.
UNMODELLED_TABLES_ALLOWED: frozenset[str] = frozenset()

#: Leaf-lists that CONFIG_DB stores as one comma-joined string rather than a JSON
#: list (the same exceptions as ``LEAF_LIST_WITH_STRING_VALUE_DICT`` in SONiC's
#: ``sonic_yang_ext.py``, restricted to tables in the QoS model set).
_COMMA_LEAF_LISTS: frozenset[tuple[str, str]] = frozenset(
    {
        ("BUFFER_PORT_EGRESS_PROFILE_LIST", "profile_list"),
        ("BUFFER_PORT_INGRESS_PROFILE_LIST", "profile_list"),
        ("PORT", "adv_speeds"),
        ("PORT", "adv_interface_types"),
    }
)

#: RFC 7951: these integer types are JSON numbers; int64/uint64/decimal64 are strings.
_JSON_NUMBER_TYPES = frozenset({"int8", "int16", "int32", "uint8", "uint16", "uint32"})
_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
}
_INT_RE = re.compile(r"[-+]?[0-9]+")
_DSCP_RE = re.compile(r"0|[1-9][0-9]?")
_LEGACY_REF_RE = re.compile(r"\[([A-Za-z0-9_]+)\|([^\]]*)\]")
_WRED_COLOURS = ("green", "yellow", "red")
_MAX_ITERATIONS = 500  # hard stop for the libyang prune-and-retry loop

#: A CONFIG_DB location: (table, key or None, field or None).
Loc = tuple[str, str | None, str | None]


# --------------------------------------------------------------------------- schema


@dataclass(frozen=True, slots=True)
class _Ref:
    """A leafref (possibly inside a union) to the key of another table's list."""

    table: str
    #: Patterns of the union's other string members; a value matching one of them
    #: ("global", "NULL", "GLOBAL", "CPU") is not a reference.
    alternatives: tuple[re.Pattern[str], ...] = ()
    #: The union also accepts values we cannot pre-check (a string without a
    #: pattern, a number): never report such a value as dangling.
    open: bool = False


@dataclass(frozen=True, slots=True)
class _Leaf:
    name: str
    bases: frozenset[str]  # built-in base types, through typedefs/leafrefs/unions
    is_list: bool
    ranges: tuple[tuple[int, int], ...] | None  # only for plain integer leaves
    ref: _Ref | None
    mandatory: bool  # mandatory with no `when` that could switch it off


@dataclass(frozen=True, slots=True)
class _List:
    name: str
    keys: tuple[_Leaf, ...]
    leaves: Mapping[str, _Leaf]  # non-key leaves and leaf-lists
    #: Type-1 map: (inner list name, inner key leaf, inner value leaf).
    inner: tuple[str, _Leaf, _Leaf] | None = None

    @property
    def key_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.keys)


@dataclass(frozen=True, slots=True)
class _Table:
    name: str
    module: str
    lists: tuple[_List, ...]
    containers: Mapping[str, Mapping[str, _Leaf]]  # DEVICE_METADATA|localhost ...


class _Schema:
    """A libyang context plus the CONFIG_DB view of its models; built once per dir."""

    def __init__(self, ly: Any, yang_dir: Path) -> None:
        self.ly = ly
        self.yang_dir = yang_dir
        files = sorted(yang_dir.glob("*.yang"))
        if not files:
            raise FabgenError([Problem(f"no .yang files in {yang_dir}", file=str(yang_dir))])
        names = [f.name[: -len(".yang")].split("@")[0] for f in files]
        # libyang skips when/must paths into modules that are not loaded yet; the
        # QoS models point into DEVICE_METADATA, so it goes first (README).
        names.sort(key=lambda n: n != "sonic-device_metadata")
        self.ctx = ly.Context(str(yang_dir))
        try:
            for name in names:
                self.ctx.load_module(name)
        except ly.LibyangError as exc:
            raise FabgenError(
                [Problem(f"cannot load the YANG models: {exc}", file=str(yang_dir))]
            ) from exc
        self.tables: dict[str, _Table] = {}
        for name in names:
            self._index_module(self.ctx.get_module(name))

    # -- reading the models -------------------------------------------------------

    def _index_module(self, module: Any) -> None:
        ly = self.ly
        top = next(iter(module.children(types=(ly.SNode.CONTAINER,))), None)
        if top is None or top.name() != module.name() or top.config_false():
            return  # helper module (types, extensions) or state data
        for table in top.children(types=(ly.SNode.CONTAINER,)):
            if table.config_false():
                continue
            lists = tuple(self._list(node) for node in table.children(types=(ly.SNode.LIST,)))
            containers = {
                node.name(): self._leaves(node)
                for node in table.children(types=(ly.SNode.CONTAINER,))
            }
            self.tables[table.name()] = _Table(table.name(), module.name(), lists, containers)

    def _leaves(self, node: Any) -> dict[str, _Leaf]:
        ly = self.ly
        return {
            child.name(): self._leaf(child)
            for child in node.children(types=(ly.SNode.LEAF, ly.SNode.LEAFLIST))
        }

    def _list(self, node: Any) -> _List:
        ly = self.ly
        keys = tuple(self._leaf(k) for k in node.keys())  # noqa: SIM118  # a libyang node: keys() are the list keys
        leaves = {
            name: leaf
            for name, leaf in self._leaves(node).items()
            if name not in {k.name for k in keys}
        }
        inner = None
        children = list(node.children(types=(ly.SNode.LIST,)))
        if len(children) == 1 and not leaves:
            child = self._list(children[0])
            if len(child.keys) == 1 and len(child.leaves) == 1 and child.inner is None:
                inner = (child.name, child.keys[0], next(iter(child.leaves.values())))
        return _List(node.name(), keys, leaves, inner)

    def _leaf(self, node: Any) -> _Leaf:
        ly = self.ly
        typ = node.type()
        bases = frozenset(typ.basenames())
        ranges = None
        if typ.basename() in _INT_BOUNDS:
            ranges = _parse_ranges(typ.range(), typ.basename())
        has_when = next(iter(node.when_conditions()), None) is not None
        mandatory = (
            isinstance(node, ly.SLeaf) and node.mandatory() and not node.is_key() and not has_when
        )
        return _Leaf(
            name=node.name(),
            bases=bases,
            is_list=isinstance(node, ly.SLeafList),
            ranges=ranges,
            ref=self._ref(typ),
            mandatory=mandatory,
        )

    def _ref(self, typ: Any) -> _Ref | None:
        ly = self.ly
        if typ.base() == ly.Type.LEAFREF:
            table = _ref_table(typ.leafref_path())
            return _Ref(table) if table else None
        if typ.base() != ly.Type.UNION:
            return None
        table = None
        alternatives: list[re.Pattern[str]] = []
        open_ = False
        for member in typ.union_types():
            if member.base() == ly.Type.LEAFREF:
                table = table or _ref_table(member.leafref_path())
                continue
            patterns = list(member.patterns()) if member.base() == ly.Type.STRING else []
            if not patterns or any(inverted for _, inverted in patterns):
                open_ = True
                continue
            # Each pattern becomes its own alternative (YANG wants all to match):
            # more lenient, so a value is never reported that libyang would accept.
            for pattern, _ in patterns:
                try:
                    alternatives.append(re.compile(pattern))
                except re.error:
                    open_ = True
        if table is None:
            return None
        return _Ref(table, tuple(alternatives), open_)


def _parse_ranges(text: str | None, base: str) -> tuple[tuple[int, int], ...] | None:
    """``"100..5000 | 6000"`` -> ((100, 5000), (6000, 6000)); None if unbounded."""
    lo_type, hi_type = _INT_BOUNDS[base]
    if not text:
        return ((lo_type, hi_type),)
    parts = []
    try:
        for part in text.split("|"):
            ends = [e.strip() for e in part.split("..")]
            low = lo_type if ends[0] == "min" else int(ends[0])
            high = hi_type if ends[-1] == "max" else int(ends[-1])
            parts.append((low, high))
    except ValueError:
        return ((lo_type, hi_type),)
    return tuple(parts)


def _ref_table(path: str | None) -> str | None:
    """``/prt:sonic-port/prt:PORT/prt:PORT_LIST/prt:name`` -> ``PORT``."""
    if not path or not path.startswith("/"):
        return None
    segments = [s.split(":")[-1] for s in path.strip("/").split("/")]
    return segments[1] if len(segments) == 4 else None


_LOGGING_READY = False
_SCHEMAS: dict[tuple[Path, tuple[tuple[str, int, int], ...]], _Schema] = {}
_SCHEMAS_LOCK = threading.Lock()
_LIBYANG_LOCK = threading.Lock()
"""One lock for every validation, whatever its YANG directory: errors are read from
libyang's process-global logger (a handler swapped in per run), so two runs must
never overlap, even against different contexts."""


def _import_libyang() -> Any:
    """Import libyang lazily: it needs a C library most fabgen users do not have."""
    global _LOGGING_READY
    try:
        import libyang as ly
    except ImportError as exc:
        raise FabgenError(
            "SONiC YANG validation needs the libyang Python bindings: "
            "apt-get install libyang2-dev (Debian/Ubuntu, libyang 2.1.x), then "
            "pip install 'fabgen[yang]' (libyang==2.8.0)"
        ) from exc
    if not _LOGGING_READY:
        # Route errors through Python logging: this is the switch that makes libyang
        # resolve the data path of each error (it does not when errors are only
        # stored). _Run.schema_parse captures them and stops their propagation.
        ly.configure_logging(True, logging.ERROR)
        _LOGGING_READY = True
    return ly


def _schema(yang_dir: Path) -> _Schema:
    """The cached schema for ``yang_dir``; rebuilt only if a model file changed."""
    ly = _import_libyang()
    root = Path(yang_dir).resolve()
    if not root.is_dir():
        raise FabgenError([Problem("YANG model directory not found", file=str(root))])
    stamp = tuple(
        (f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in sorted(root.glob("*.yang"))
    )
    key = (root, stamp)
    with _SCHEMAS_LOCK:
        schema = _SCHEMAS.get(key)
        if schema is None:
            for old in [k for k in _SCHEMAS if k[0] == root]:
                del _SCHEMAS[old]
            schema = _SCHEMAS[key] = _Schema(ly, root)
        return schema


# --------------------------------------------------------------------- translation


@dataclass(slots=True)
class _Entry:
    """One CONFIG_DB entry, translated; pruned in place by the retry loop."""

    table: _Table
    key: str
    lst: _List | None  # None for a container entry (DEVICE_METADATA|localhost)
    container: str | None
    key_values: dict[str, Any]  # key leaf -> YANG JSON value
    fields: dict[str, Any]  # CONFIG_DB field -> YANG JSON value
    raw: dict[str, Any]  # CONFIG_DB field -> string (or list of strings)

    def leaf(self, name: str) -> _Leaf | None:
        """The model leaf behind a CONFIG_DB field (or a key leaf) of this entry."""
        if self.lst is None:
            return self.table.containers[self.container or ""].get(name)
        for k in self.lst.keys:
            if k.name == name:
                return k
        if self.lst.inner is not None:
            return self.lst.inner[2]
        return self.lst.leaves.get(name)


def _to_yang(leaf: _Leaf, value: str) -> Any:
    """Re-type one CONFIG_DB string for libyang's strict RFC 7951 JSON parser."""
    if leaf.bases & _JSON_NUMBER_TYPES and _INT_RE.fullmatch(value):
        return int(value)
    if "boolean" in leaf.bases and value in ("true", "false"):
        return value == "true"
    if "empty" in leaf.bases and value == "":
        return [None]
    return value


def _to_str(value: Any) -> str:
    """A JSON scalar as CONFIG_DB would store it (``true``, not Python's ``True``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _Run:
    """One validation of one file: translation, checks, libyang loop."""

    def __init__(
        self,
        schema: _Schema,
        data: Mapping[str, Any],
        file: str,
        positions: Mapping[tuple[str, ...], tuple[int, int]],
        allow_tables: frozenset[str],
    ) -> None:
        self.schema = schema
        self.data = data
        self.file = file
        self.positions = positions
        self.allow_tables = allow_tables
        self.problems: list[Problem] = []
        self.reported: set[Loc] = set()
        self.locs: list[Loc] = []  # parallel to problems
        self.checked: list[Loc] = []  # locations step 3 found bad: pruned before step 4
        # Entries and tables that are out of the YANG tree (malformed, or removed for
        # an error already reported): references to them are not reported again.
        self.pruned: set[tuple[str, str]] = set()
        self.broken_tables: set[str] = set()
        self.entries: dict[tuple[str, str], _Entry] = {}

    # -- problems -------------------------------------------------------------------

    def report(self, loc: Loc, message: str) -> None:
        table, key, fld = loc
        parts = [p for p in (table, key, fld) if p is not None]
        line, col = 0, 0
        for n in range(len(parts), 0, -1):
            if tuple(parts[:n]) in self.positions:
                line, col = self.positions[tuple(parts[:n])]
                break
        path = "." + table + "".join(f"[{json.dumps(p)}]" for p in parts[1:])
        self.problems.append(Problem(message, file=self.file, line=line, col=col, path=path))
        self.locs.append(loc)
        self.reported.add(loc)
        if fld is not None:  # a field problem also covers "the entry has a problem"
            self.reported.add((table, key, None))

    @staticmethod
    def where(table: str, key: str | None) -> str:
        return table if key is None else f"{table}|{key}"

    # -- step 2: translation ---------------------------------------------------------

    def translate(self) -> None:
        for table_name, content in self.data.items():
            table = self.schema.tables.get(table_name)
            if table is None:
                if table_name not in self.allow_tables:
                    hint = _did_you_mean(table_name, self.schema.tables)
                    self.report(
                        (table_name, None, None),
                        f'unknown table "{table_name}": no YANG model for it in '
                        f"{self.schema.yang_dir}{hint}",
                    )
                continue
            if not isinstance(content, Mapping):
                self.report((table_name, None, None), f"{table_name}: must be an object of entries")
                self.broken_tables.add(table_name)
                continue
            for key, fields in content.items():
                self.translate_entry(table, str(key), fields)

    def translate_entry(self, table: _Table, key: str, fields: Any) -> None:
        loc: Loc = (table.name, key, None)
        where = self.where(table.name, key)
        if not isinstance(fields, Mapping):
            self.report(loc, f"{where}: an entry must be an object of field: value")
            self.pruned.add((table.name, key))
            return
        lst, container, key_values = None, None, {}
        if key in table.containers:
            container = key
        else:
            parts = key.split("|")
            lst = next((x for x in table.lists if len(x.keys) == len(parts)), None)
            if lst is None:
                self.report(loc, f"{where}: {_key_shapes(table)}")
                self.pruned.add((table.name, key))
                return
            key_values = {
                k.name: _to_yang(k, part.strip()) for k, part in zip(lst.keys, parts, strict=True)
            }
        entry = _Entry(table, key, lst, container, key_values, {}, {})
        for name, value in fields.items():
            name = str(name)
            floc: Loc = (table.name, key, name)
            leaf = entry.leaf(name)
            if leaf is None or (lst is not None and lst.inner is None and name in key_values):
                known = table.containers[container] if container else (lst.leaves if lst else {})
                self.report(
                    floc,
                    f'{where}: unknown field "{name}" (not in the {table.name} '
                    f"model){_did_you_mean(name, known)}",
                )
                continue
            if isinstance(value, list) and leaf.is_list:
                items = [_to_str(v) for v in value]
            elif isinstance(value, (Mapping, list)):
                self.report(
                    floc, f"{where}: {name}: must be a string, not a JSON {type(value).__name__}"
                )
                continue
            else:
                if value is None:
                    self.report(
                        floc, f"{where}: {name}: null is not a CONFIG_DB value; leave the field out"
                    )
                    continue
                if not isinstance(value, str):
                    self.report(
                        floc,
                        f"{where}: {name}: CONFIG_DB values are strings; write "
                        f"{json.dumps(_to_str(value))}, not {json.dumps(value)}",
                    )
                text = _to_str(value)
                items = None
                if leaf.is_list:
                    sep = "," if (table.name, name) in _COMMA_LEAF_LISTS else None
                    items = [s.strip() for s in text.split(sep)] if sep else [text]
            if items is not None:
                entry.raw[name] = items
                entry.fields[name] = [_to_yang(leaf, v) for v in items]
            else:
                entry.raw[name] = text
                entry.fields[name] = _to_yang(leaf, text)
        self.entries[(table.name, key)] = entry

    # -- step 3: cheap checks that report every instance -----------------------------

    def check(self) -> None:
        first = len(self.problems)
        # Reference targets are the input's one-part keys, translated or not: an
        # entry with its own problem still exists, so naming it is not a second one.
        keys_by_table = {
            str(table): {str(k) for k in content if "|" not in str(k)}
            for table, content in self.data.items()
            if isinstance(content, Mapping)
        }
        for entry in list(self.entries.values()):
            self.check_entry(entry, keys_by_table)
        self.check_wred()
        self.check_pfcwd()
        self.checked = self.locs[first:]

    def check_entry(self, entry: _Entry, keys_by_table: dict[str, set[str]]) -> None:
        table, key = entry.table.name, entry.key
        where = self.where(table, key)
        if entry.lst is not None:
            for leaf, part in zip(entry.lst.keys, key.split("|"), strict=True):
                self.check_ref(
                    entry, leaf, part.strip(), (table, key, None), leaf.name, keys_by_table
                )
                if table == "QUEUE" and leaf.name == "qindex" and not _is_index_range(part):
                    # The model leaves qindex a free string (its custom validation is
                    # commented out upstream); orchagent needs "N" or "N-M".
                    self.report(
                        (table, key, None),
                        f'{where}: queue index "{part}" must be a number or a range "N-M"',
                    )
            if entry.lst.inner is not None:
                _, ikey, ival = entry.lst.inner
                for fld, value in entry.raw.items():
                    loc: Loc = (table, key, fld)
                    if "dscp" in (ikey.name, ival.name):
                        dscp = fld if ikey.name == "dscp" else value
                        if not (_DSCP_RE.fullmatch(dscp) and int(dscp) <= 63):
                            self.report(loc, f'{where}: DSCP "{dscp}" is not an integer 0..63')
                            continue
                    if not self.check_int(loc, where, ikey, fld, ikey.name):
                        continue
                    self.check_int(loc, where, ival, value, f"{ival.name} (of {ikey.name} {fld})")
                    self.check_ref(entry, ikey, fld, loc, ikey.name, keys_by_table)
                return
        for fld, value in entry.raw.items():
            spec = entry.leaf(fld)
            assert spec is not None  # translate() kept only modelled fields
            loc = (table, key, fld)
            values = value if isinstance(value, list) else [value]
            for item in values:
                if not self.check_int(loc, where, spec, item, fld):
                    break
                if not self.check_ref(entry, spec, item, loc, fld, keys_by_table):
                    break
        leaves = (
            entry.table.containers[entry.container].values()
            if entry.container is not None
            else (entry.lst.leaves.values() if entry.lst else ())
        )
        for leaf in leaves:
            if leaf.mandatory and leaf.name not in entry.raw:
                self.report(
                    (table, key, leaf.name), f'{where}: mandatory field "{leaf.name}" is missing'
                )

    def check_int(self, loc: Loc, where: str, leaf: _Leaf, value: str, what: str) -> bool:
        if leaf.ranges is None or (loc in self.reported):
            return True
        if not _INT_RE.fullmatch(value):
            self.report(loc, f'{where}: {what} "{value}" is not an integer')
            return False
        number = int(value)
        if not any(low <= number <= high for low, high in leaf.ranges):
            allowed = " or ".join(f"{lo}..{hi}" for lo, hi in leaf.ranges)
            self.report(loc, f"{where}: {what} {number} is outside the allowed range {allowed}")
            return False
        return True

    def check_ref(
        self,
        entry: _Entry,
        leaf: _Leaf,
        value: str,
        loc: Loc,
        label: str,
        keys_by_table: dict[str, set[str]],
    ) -> bool:
        """A reference must name an existing entry; reported once per location."""
        ref = leaf.ref
        if ref is None or ref.open or ref.table in self.broken_tables:
            return True
        if any(p.fullmatch(value) for p in ref.alternatives):
            return True
        targets = keys_by_table.get(ref.table, set())
        if value in targets:
            return True
        if loc in self.reported:
            return False
        where = self.where(entry.table.name, entry.key)
        legacy = _LEGACY_REF_RE.fullmatch(value)
        if legacy:
            message = (
                f'{where}: {label} uses the legacy reference form "{value}"; the YANG '
                f'leafref needs the plain name "{legacy.group(2)}"'
            )
        else:
            hint = _did_you_mean(value, targets) or _known(ref.table, targets)
            message = f'{where}: {label} "{value}" names no {ref.table} entry{hint}'
        self.report(loc, message)
        return False

    def check_wred(self) -> None:
        for (table, key), entry in self.entries.items():
            if table != "WRED_PROFILE":
                continue
            where = self.where(table, key)
            for colour in _WRED_COLOURS:
                low_f, high_f = f"{colour}_min_threshold", f"{colour}_max_threshold"
                high = entry.raw.get(high_f)
                if high is None or (table, key, high_f) in self.reported:
                    continue
                low = entry.raw.get(low_f)
                if low is None:
                    self.report(
                        (table, key, high_f),
                        f"{where}: {high_f} is set without {low_f}; the model's "
                        f'"max >= min" check then fails, so set both',
                    )
                elif (
                    _INT_RE.fullmatch(str(low))
                    and _INT_RE.fullmatch(str(high))
                    and int(high) < int(low)
                ):
                    self.report(
                        (table, key, high_f),
                        f"{where}: {high_f} {high} is below {low_f} {low} (bytes); "
                        "the model requires max >= min",
                    )

    def check_pfcwd(self) -> None:
        glob = self.entries.get(("PFC_WD", "GLOBAL"))
        poll = glob.raw.get("POLL_INTERVAL") if glob else None
        if not isinstance(poll, str) or not _INT_RE.fullmatch(poll):
            return
        for (table, key), entry in self.entries.items():
            if table != "PFC_WD" or key == "GLOBAL":
                continue
            for fld in ("detection_time", "restoration_time"):
                value = entry.raw.get(fld)
                loc: Loc = (table, key, fld)
                if (
                    isinstance(value, str)
                    and _INT_RE.fullmatch(value)
                    and int(value) < int(poll)
                    and loc not in self.reported
                ):
                    self.report(
                        loc,
                        f"{self.where(table, key)}: {fld} {value} ms is below "
                        f"PFC_WD|GLOBAL POLL_INTERVAL {poll} ms",
                    )

    # -- step 4: libyang, pruned and retried ---------------------------------------

    def serialize(self) -> tuple[str, list[Loc | None]]:
        """YANG JSON text with one entry per line, and the CONFIG_DB location per line.

        libyang 2.1 reports parse errors with a line number but, for a bad list key,
        without the key in the path; one entry per line turns that line number back
        into the CONFIG_DB entry.
        """
        by_module: dict[str, dict[str, list[_Entry]]] = {}
        for entry in self.entries.values():
            by_module.setdefault(entry.table.module, {}).setdefault(entry.table.name, []).append(
                entry
            )
        lines: list[tuple[str, Loc | None]] = [("{", None)]
        modules = []
        for module, tables in by_module.items():
            blocks = []
            for table_name, entries in tables.items():
                groups: dict[str, list[list[tuple[str, Loc | None]]]] = {}
                for entry in entries:
                    group = entry.container if entry.lst is None else entry.lst.name
                    groups.setdefault(group or "", []).append(self.entry_lines(entry))
                inner = []
                for group, items in groups.items():
                    if group in self.schema.tables[table_name].containers:
                        inner.append(items[0])  # a container has one entry
                    else:
                        inner.append([(f'"{group}": [', None), *_join(items), ("]", None)])
                blocks.append([(f'"{table_name}": {{', None), *_join(inner), ("}", None)])
            modules.append([(f'"{module}:{module}": {{', None), *_join(blocks), ("}", None)])
        lines.extend(_join(modules))
        lines.append(("}", None))
        return "\n".join(text for text, _ in lines), [loc for _, loc in lines]

    def entry_lines(self, entry: _Entry) -> list[tuple[str, Loc | None]]:
        loc: Loc = (entry.table.name, entry.key, None)
        if entry.lst is None:
            return [(f"{json.dumps(entry.container)}: {json.dumps(entry.fields)}", loc)]
        if entry.lst.inner is None:
            return [(json.dumps({**entry.key_values, **entry.fields}), loc)]
        name, ikey, ival = entry.lst.inner
        head = json.dumps(entry.key_values)[:-1] + f', "{name}": ['
        items: list[list[tuple[str, Loc | None]]] = [
            [
                (
                    json.dumps({ikey.name: _to_yang(ikey, fld), ival.name: value}),
                    (entry.table.name, entry.key, fld),
                )
            ]
            for fld, value in entry.fields.items()
        ]
        return [(head, loc), *_join(items), ("]}", loc)]

    def validate(self, max_new: int) -> None:
        pruned = self.pruned
        # What step 3 found is already reported and is a subset of the model's rules:
        # remove it first, so that each libyang pass can only find something new.
        for loc in self.checked:
            self.prune(loc, pruned)
        new = 0
        for _ in range(_MAX_ITERATIONS):
            if not self.entries:
                return
            text, line_locs = self.serialize()
            error = self.schema_parse(text)
            if error is None:
                return
            message, where = error
            locs = self.locate(where, line_locs)
            if not locs:
                self.report(
                    ("(config)", None, None), f"YANG validation failed: {message} ({where})"
                )
                return
            for n, loc in enumerate(locs):
                if self.cascaded(loc, pruned):
                    # It depends on an entry already dropped for its own error:
                    # drop it too, silently, and so on down the chain.
                    locs[n] = (loc[0], loc[1], None)
                elif loc not in self.reported:
                    self.report(
                        loc, f"{self.where(loc[0], loc[1])}: {self.describe(loc)}{message} [YANG]"
                    )
                    new += 1
            if new >= max_new:
                self.report(
                    (locs[0][0], None, None),
                    f"stopped after {new} YANG errors; fix these and run again",
                )
                return
            if not all(self.prune(loc, pruned) for loc in locs):
                return

    def schema_parse(self, text: str) -> tuple[str, str] | None:
        """Parse and validate; (message, location) of the first error, or None."""
        ly = self.schema.ly
        records: list[tuple[str, str]] = []
        handler = _Capture(records)
        logger = logging.getLogger("libyang")
        propagate = logger.propagate
        logger.addHandler(handler)
        logger.propagate = False
        try:
            node = self.schema.ctx.parse_data_mem(text, "json", strict=True, validate_present=True)
        except ly.LibyangError as exc:
            return records[0] if records else (str(exc), "")
        finally:
            logger.removeHandler(handler)
            logger.propagate = propagate
        if node is not None:
            node.free()
        return None

    def locate(self, where: str, line_locs: list[Loc | None]) -> list[Loc]:
        """Turn libyang's ``Data location "/m:m/T/L[k='v']/f", line number N`` into locs."""
        match = re.match(r'(Data|Schema) location "(.*)"(?:, line number (\d+))?', where)
        if not match:
            return []
        kind, path, line = match.group(1), match.group(2), match.group(3)
        segments = [
            (name.split(":")[-1], re.findall(r"\[[^=\]]+=(?:'([^']*)'|\"([^\"]*)\")\]", preds))
            for name, preds in re.findall(
                r"/([^/\[]+)((?:\[[^=\]]+=(?:'[^']*'|\"[^\"]*\")\])*)", path
            )
        ]
        if len(segments) < 2:
            return []
        table = segments[1][0]
        line_loc = None
        if line and 0 < int(line) <= len(line_locs):
            line_loc = line_locs[int(line) - 1]
        key: str | None = None
        fld: str | None = None
        schema_table = self.schema.tables.get(table)
        if len(segments) >= 3 and schema_table is not None:
            name, preds = segments[2]
            lst = next((x for x in schema_table.lists if x.name == name), None)
            if name in schema_table.containers:
                key = name
            elif lst is not None and len(preds) == len(lst.keys):
                key = "|".join(a or b for a, b in preds)
            elif line_loc is not None and line_loc[0] == table:
                key = line_loc[1]  # libyang stopped inside the key: no full predicate
        if len(segments) >= 4:
            name, preds = segments[3]
            entry = self.entries.get((table, key or ""))
            inner = entry.lst.inner if entry and entry.lst else None
            if inner is not None and name == inner[0]:
                if preds:
                    fld = str(preds[0][0] or preds[0][1])
                elif line_loc is not None and line_loc[:2] == (table, key):
                    fld = line_loc[2]
            elif entry is None or entry.lst is None or name not in entry.lst.key_names:
                fld = name  # a key leaf stays None: the problem is the entry's key
        if kind == "Schema" and key is None and fld is not None:
            # A missing mandatory leaf: libyang names the schema node, not the
            # entry, so find every entry that lacks it.
            missing: list[Loc] = [
                (table, e.key, fld)
                for (t, _), e in self.entries.items()
                if t == table and fld not in e.raw and e.leaf(fld) is not None
            ]
            return missing or [(table, None, fld)]
        if key is None and line_loc is not None and line_loc[0] == table:
            key = line_loc[1]
        return [(table, key, fld)]

    def describe(self, loc: Loc) -> str:
        """``field "value": `` for a message, so that libyang's text has its context."""
        table, key, fld = loc
        if fld is None:
            return ""
        entry = self.entries.get((table, key or ""))
        if entry is None or fld not in entry.raw:
            return f"{fld}: "
        value = entry.raw[fld]
        if entry.lst is not None and entry.lst.inner is not None:
            _, ikey, ival = entry.lst.inner
            return f'{ikey.name} "{fld}" -> {ival.name} "{value}": '
        shown = ",".join(value) if isinstance(value, list) else value
        return f'{fld} "{shown}": '

    def cascaded(self, loc: Loc, pruned: set[tuple[str, str]]) -> bool:
        """True if the error only says that an entry we pruned is now missing."""
        table, key, fld = loc
        entry = self.entries.get((table, key or ""))
        if entry is None:
            return False
        checks: list[tuple[_Leaf, Any]] = []
        if fld is None and entry.lst is not None:
            checks = list(zip(entry.lst.keys, entry.key.split("|"), strict=True))
        elif fld is not None and entry.lst is not None and entry.lst.inner is not None:
            _, ikey, ival = entry.lst.inner  # type-1 map: the field is the inner key
            checks = [(ikey, fld), (ival, entry.raw.get(fld))]
        elif fld is not None and (leaf := entry.leaf(fld)) is not None:
            checks = [(leaf, entry.raw.get(fld))]
        for leaf, value in checks:
            if leaf.ref is None or value is None:
                continue
            values = value if isinstance(value, list) else [value]
            if leaf.ref.table in self.broken_tables:
                return True
            if any((leaf.ref.table, str(v)) in pruned for v in values):
                return True
        return False

    def prune(self, loc: Loc, pruned: set[tuple[str, str]]) -> bool:
        """Remove what libyang rejected so the next pass can find the next error."""
        table, key, fld = loc
        if key is None:
            doomed = [k for k in self.entries if k[0] == table]
            for k in doomed:
                pruned.add(k)
                del self.entries[k]
            return bool(doomed)
        entry = self.entries.get((table, key))
        if entry is None:
            return False
        if fld is not None and fld in entry.fields and fld not in entry.key_values:
            del entry.fields[fld]
            entry.raw.pop(fld, None)
            return True
        pruned.add((table, key))
        del self.entries[(table, key)]
        return True


class _Capture(logging.Handler):
    """Collects libyang's (message, location) pairs during one parse."""

    def __init__(self, records: list[tuple[str, str]]) -> None:
        super().__init__(logging.ERROR)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        if len(args) == 2:
            self.records.append((str(args[0]), str(args[1])))
        else:
            self.records.append((record.getMessage(), ""))


def _join(blocks: list[list[tuple[str, Loc | None]]]) -> list[tuple[str, Loc | None]]:
    """Concatenate JSON line blocks with commas between them."""
    out: list[tuple[str, Loc | None]] = []
    for n, block in enumerate(blocks):
        if n < len(blocks) - 1:
            text, loc = block[-1]
            block = [*block[:-1], (text + ",", loc)]
        out.extend(block)
    return out


def _is_index_range(text: str) -> bool:
    match = re.fullmatch(r"([0-9]+)(?:-([0-9]+))?", text.strip())
    if match is None:
        return False
    return int(match.group(1)) <= int(match.group(2) or match.group(1))


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def _known(table: str, keys: set[str]) -> str:
    if not keys:
        return f" ({table} is empty)"
    shown = sorted(keys)
    more = ", ..." if len(shown) > 6 else ""
    return f" (it has: {', '.join(shown[:6])}{more})"


def _key_shapes(table: _Table) -> str:
    shapes = [f'"{"|".join(lst.key_names)}" ({lst.name})' for lst in table.lists]
    if table.containers:
        shapes.append(" or ".join(f'"{c}"' for c in table.containers))
    return f"key does not match the {table.name} model, which expects " + " or ".join(shapes)


# -------------------------------------------------------------------- public API


def validate_config_db(
    data: object,
    yang_dir: Path,
    file: str = "config_db.json",
    *,
    positions: Mapping[tuple[str, ...], tuple[int, int]] | None = None,
    allow_tables: Iterable[str] = (),
    max_yang_errors: int = 20,
) -> list[Problem]:
    """Every problem found in one CONFIG_DB document; empty when it is valid.

    ``data`` is the parsed ``config_db.json`` (not modified). ``yang_dir`` holds the
    SONiC models (one libyang context per directory is cached for the process).
    ``positions`` maps ``(table,)``, ``(table, key)`` and ``(table, key, field)`` to
    1-based ``(line, col)`` in ``file`` (``check_sonic_files`` computes them); without
    it problems carry no line. ``allow_tables`` extends
    :data:`UNMODELLED_TABLES_ALLOWED`. ``max_yang_errors`` bounds the libyang
    prune-and-retry loop (each round re-validates the whole document).

    Raises :class:`~fabgen.errors.FabgenError` if libyang is not installed or the
    models cannot be loaded: a broken validator is a usage error, not a finding.
    """
    schema = _schema(yang_dir)
    if not isinstance(data, Mapping):
        return [Problem("config_db.json must be a JSON object of tables", file=file)]
    run = _Run(
        schema,
        data,
        file,
        positions or {},
        UNMODELLED_TABLES_ALLOWED | frozenset(allow_tables),
    )
    with _LIBYANG_LOCK:
        run.translate()
        run.check()
        run.validate(max_yang_errors)
    return sorted(run.problems, key=lambda p: (p.line == 0, p.line, p.col))


def check_sonic_files(paths: list[Path], yang_dir: Path) -> list[Problem]:
    """Validate each ``config_db.json``; the body of ``fabgen check-sonic``.

    Read errors, JSON syntax errors and duplicate keys (JSON keeps the last one
    silently, which hides a hand edit) are problems too, with their line.
    """
    problems: list[Problem] = []
    for path in paths:
        name = str(path)
        try:  # a regular file, bounded; depth-limited JSON (duplicates are located below)
            text = read_text(path, MAX_DEPLOYED_BYTES, what="config_db.json")
            data = load_json(text, name, duplicates=True)
        except FabgenError as exc:
            problems.extend(exc.problems)
            continue
        positions, duplicates = _key_positions(text)
        for keys, (line, col) in duplicates:
            problems.append(
                Problem(
                    f'duplicate key "{keys[-1]}"; JSON keeps only the last one',
                    file=name,
                    line=line,
                    col=col,
                    path="." + keys[0] + "".join(f"[{json.dumps(k)}]" for k in keys[1:]),
                )
            )
        problems.extend(validate_config_db(data, yang_dir, file=name, positions=positions))
    return problems


def _key_positions(
    text: str,
) -> tuple[dict[tuple[str, ...], tuple[int, int]], list[tuple[tuple[str, ...], tuple[int, int]]]]:
    """Line and column of every table, entry and field key (depth <= 3) in ``text``.

    Only called on text ``json.loads`` accepted, so it can be a small scanner.
    """
    positions: dict[tuple[str, ...], tuple[int, int]] = {}
    duplicates: list[tuple[tuple[str, ...], tuple[int, int]]] = []
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    space = re.compile(r"[ \t\n\r]*")
    decoder = json.JSONDecoder()

    def where(index: int) -> tuple[int, int]:
        line = bisect_right(line_starts, index)
        return line, index - line_starts[line - 1] + 1

    def walk(i: int, path: tuple[str, ...]) -> int:
        i = space.match(text, i + 1).end()  # type: ignore[union-attr]
        if text[i] == "}":
            return i + 1
        while True:
            start = i
            key, i = scanstring(text, i + 1)
            here = (*path, key)
            if here in positions:
                duplicates.append((here, where(start)))
            positions[here] = where(start)
            i = space.match(text, i).end() + 1  # type: ignore[union-attr]
            i = space.match(text, i).end()  # type: ignore[union-attr]
            if text[i] == "{" and len(here) < 3:
                i = walk(i, here)
            else:
                _, i = decoder.raw_decode(text, i)
            i = space.match(text, i).end()  # type: ignore[union-attr]
            if text[i] == ",":
                i = space.match(text, i + 1).end()  # type: ignore[union-attr]
                continue
            return i + 1

    try:
        start = space.match(text).end()  # type: ignore[union-attr]
        if text.startswith("{", start):
            walk(start, ())
    except (ValueError, IndexError):  # pragma: no cover - json.loads accepted it
        return {}, []
    return positions, duplicates
