"""Read a NetBox cable CSV as observed wiring (``fabgen lint --wiring netbox-cables.csv``).

Two shapes NetBox produces are accepted, told apart by the header:

- the **import form's columns** (``netbox/dcim/forms/bulk_import.py``,
  ``CableImportForm``): ``side_a_device, side_a_type, side_a_name,
  side_b_device, side_b_type, side_b_name``, what fabgen's ``netbox/cables.csv``
  holds and what NetBox's bulk import takes;
- the **cable list's CSV export** (``netbox/dcim/tables/cables.py``,
  ``CableTable``): ``Device A, Termination A, Device B, Termination B``, the
  columns' verbose names as "Export > All data" writes them.

Other columns are ignored, in any order. A row whose termination is not an
interface (a power port, a console port, a circuit: ``side_a_type`` other than
``dcim.interface``, or no device) is not a data cable and is skipped; a row with
several terminations on one end (NetBox joins them with commas) cannot be one
cable between two ports and is an error, as is a missing device or port name.

This module yields plain tuples, so :mod:`fabgen.wiring` can call it without
an import cycle.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from fabgen.errors import Problem

IMPORT_COLUMNS: Final = ("side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name")
EXPORT_COLUMNS: Final = ("Device A", "Termination A", "Device B", "Termination B")
INTERFACE_TYPE: Final = "dcim.interface"
MAX_ROWS: Final = 500_000

NetboxRow = tuple[str, str, str, str, int]
"""(a device, a port, b device, b port, line)."""


def is_netbox_cable_header(header: Sequence[str]) -> bool:
    cells = {cell.strip() for cell in header}
    return set(IMPORT_COLUMNS) <= cells or set(EXPORT_COLUMNS) <= cells


def netbox_cable_rows(header: Sequence[str], rows: Iterator[tuple[int, list[str]]], src: str
                      ) -> tuple[list[NetboxRow], list[Problem]]:
    """The cables of ``rows`` (``(first line, cells)`` after ``header``) and every problem, located."""
    names = [cell.strip() for cell in header]
    imported = set(IMPORT_COLUMNS) <= set(names)
    columns = IMPORT_COLUMNS if imported else EXPORT_COLUMNS
    index = {name: names.index(name) for name in columns}
    out: list[NetboxRow] = []
    problems: list[Problem] = []
    for count, (line, row) in enumerate(rows, 1):
        if count > MAX_ROWS:
            problems.append(Problem(f"more than {MAX_ROWS} cables; refusing the rest", file=src, line=line))
            break
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(names):
            problems.append(Problem(f"expected {len(names)} fields as the header has, found {len(row)}",
                                    file=src, line=line))
            continue
        cell = {name: row[i].strip() for name, i in index.items()}
        if imported:
            if cell["side_a_type"] != INTERFACE_TYPE or cell["side_b_type"] != INTERFACE_TYPE:
                continue
            ends = (cell["side_a_device"], cell["side_a_name"], cell["side_b_device"], cell["side_b_name"])
            labels = ("side_a_device", "side_a_name", "side_b_device", "side_b_name")
        else:
            if not cell["Device A"] and not cell["Device B"]:
                continue  # a circuit or power feed on both ends: not a data cable
            ends = (cell["Device A"], cell["Termination A"], cell["Device B"], cell["Termination B"])
            labels = EXPORT_COLUMNS
        bad = False
        for value, label in zip(ends, labels, strict=True):
            col = 1 + sum(len(c) + 1 for c in row[:names.index(label)])
            if not value:
                problems.append(Problem(f"{label} is empty", file=src, line=line, col=col, path=label))
                bad = True
            elif "," in value:
                problems.append(Problem(f"{label} names several terminations ({value[:60]}); fabgen reads one "
                                        "cable between two ports", file=src, line=line, col=col, path=label))
                bad = True
        if not bad and (ends[0], ends[1]) == (ends[2], ends[3]):
            problems.append(Problem(f"both ends are {ends[0]}:{ends[1]}", file=src, line=line))
            bad = True
        if not bad:
            out.append((*ends, line))
    return out, problems
