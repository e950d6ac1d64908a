"""``fabric.ipam``: pinned addresses kept in a site's own file, read once at validation.

Why a separate file: many sites keep loopbacks and management addresses in an
IPAM and export them; copying them into the spec by hand drifts. The file is
read here (validation may do I/O, the planner may not) and every row keeps its
own ``file:line``, so a conflict the planner finds later points at the row.

Formats, chosen by the extension:

- CSV with a header naming ``device`` and any of ``loopback``, ``mgmt``
  (empty cells pin nothing);
- YAML, a mapping ``device: {loopback: ..., mgmt: ...}``.
"""

from __future__ import annotations

import csv
import io
import ipaddress
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen.bounded import MAX_CABLING_ROWS, read_text
from fabgen.errors import FabgenError, Problem, SpecError
from fabgen.source import SourceDoc, load_source

if TYPE_CHECKING:
    from _csv import Reader as CsvReader

MAX_BYTES = 16 * 1024 * 1024
_FIELDS = ("loopback", "mgmt")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


@dataclass(frozen=True, slots=True)
class IpamRow:
    device: str
    field: str
    """``loopback`` or ``mgmt``."""
    address: ipaddress.IPv4Address
    file: str
    line: int
    col: int

    def problem(self, message: str) -> Problem:
        return Problem(message, file=self.file, line=self.line, col=self.col)


def _path(doc: SourceDoc, name: str) -> Path:
    base = Path(doc.file).parent if doc.file not in ("<string>", "<spec>", "-") else Path.cwd()
    return base / name


def _valid_device(name: str) -> bool:
    return 0 < len(name) <= 63 and name[0].isalnum() and set(name) <= _NAME_CHARS


def read_ipam(doc: SourceDoc, name: str) -> tuple[IpamRow, ...]:
    """Every pinned address of the file, or a :class:`SpecError` at the spec's ``ipam`` line or the file's row."""
    path = _path(doc, name)
    try:
        text = read_text(path, MAX_BYTES, what="IPAM file")
    except FabgenError as exc:  # a FIFO, a device, too large, not UTF-8: said at the spec's line
        reason = "; ".join(p.message for p in exc.problems)
        raise SpecError([doc.problem(f"cannot read the IPAM file {name}: {reason}", ("fabric", "ipam"))]) from None
    rows = _csv(str(path), text) if path.suffix == ".csv" else _yaml(str(path), text)
    seen: dict[tuple[str, str], IpamRow] = {}
    problems = []
    for row in rows:
        first = seen.setdefault((row.device, row.field), row)
        if first is not row:
            problems.append(row.problem(f"{row.device} has a second {row.field} (first at line {first.line})"))
    if problems:
        raise SpecError(problems)
    return tuple(rows)


def _address(text: str, file: str, line: int, col: int, device: str, field: str) -> IpamRow:
    try:
        address = ipaddress.IPv4Address(text.strip())
    except ValueError:
        raise SpecError([Problem(f"{device}: {field} {text.strip()!r} is not an IPv4 address",
                                 file=file, line=line, col=col)]) from None
    return IpamRow(device, field, address, file, line, col)


def _csv(file: str, text: str) -> list[IpamRow]:
    reader = csv.reader(io.StringIO(text))
    records = _records(reader, file)
    header = next(records, None)
    if header is None or "device" not in [h.strip() for h in header]:
        raise SpecError([Problem("the IPAM CSV needs a header with a 'device' column", file=file, line=1, col=1)])
    names = [h.strip() for h in header]
    unknown = [h for h in names if h not in ("device", *_FIELDS)]
    if unknown:
        raise SpecError([Problem(f"unknown IPAM column {unknown[0]!r} (known: device, loopback, mgmt)",
                                 file=file, line=1, col=1)])
    rows: list[IpamRow] = []
    for count, cells in enumerate(records):
        line = reader.line_num
        if count >= MAX_CABLING_ROWS:
            raise SpecError([Problem(f"more than {MAX_CABLING_ROWS} rows", file=file, line=line, col=1)])
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(names):
            raise SpecError([Problem(f"row has {len(cells)} cells, the header {len(names)}", file=file, line=line, col=1)])
        record = dict(zip(names, (c.strip() for c in cells), strict=True))
        device = record["device"]
        if not _valid_device(device):
            raise SpecError([Problem(f"{device!r} is not a device name", file=file, line=line, col=1)])
        for field in _FIELDS:
            value = record.get(field, "")
            if value:
                rows.append(_address(value, file, line, names.index(field) + 1, device, field))
    return rows


def _records(reader: CsvReader, file: str) -> Iterator[list[str]]:
    """``reader``'s rows; a record the csv module refuses (a field over its 128 KiB limit, a NUL) is a
    located problem, not a traceback."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise SpecError([Problem(f"malformed CSV: {exc}", file=file, line=reader.line_num or 1, col=1)]) from None
        yield row


def _yaml(file: str, text: str) -> list[IpamRow]:
    source = load_source(file, text=text)
    data = source.data
    if not isinstance(data, dict):
        raise SpecError([Problem("the IPAM YAML is a mapping of device: {loopback, mgmt}", file=file, line=1, col=1)])
    rows: list[IpamRow] = []
    for device, entry in data.items():
        if not isinstance(device, str) or not _valid_device(device):
            raise SpecError([source.problem(f"{device!r} is not a device name", (device,), key=True)])
        if not isinstance(entry, dict):
            raise SpecError([source.problem(f"{device}: expected a mapping of loopback and mgmt", (device,))])
        for field, value in entry.items():
            if field not in _FIELDS:
                raise SpecError([source.problem(f"{device}: unknown key {field!r} (known: loopback, mgmt)",
                                                (device, field), key=True)])
            line, col = source.locate((device, field))
            rows.append(_address(str(value), file, line, col, device, str(field)))
    return rows
