"""netbox's f-string rows: the csv writer's bytes when no cell needs quoting, the writer itself when one does.

The target joins f-string rows (``plain_lines``) and keeps them only when
``joined_plain``'s counts show no cell held a comma, newline, quote or carriage
return; such a text is vouched for, so its output check is an identity test.
Here the joins must equal the csv writer over the cell tuples (``_cells``) for
every example, and a value with one of those four characters, planted in a
switch port, a host or a link, must send every file through the writer,
unvouched, each reading back as its cells and checked in full exactly as a copy of
it is.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import replace
from functools import cache

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan import FabricPlan
from fabgen.targets.netbox import files as netbox
from tests.helpers import EXAMPLE_NAMES, LARGE_EXAMPLES, example
from tests.targets.test_csv_text import _writer


@cache
def _plan(name: str) -> FabricPlan:
    return plan_fabric(load_spec(example(name)))


def _by_writer(plan: FabricPlan) -> dict[str, str]:
    cells = netbox._cells(plan)
    for (path, _, columns), rows in zip(netbox.FILES, cells, strict=True):
        assert {len(row) for row in rows} <= {len(columns)}, path
    return {path: _writer(columns, rows) for (path, _, columns), rows in zip(netbox.FILES, cells, strict=True)}


def _copy(text: str) -> str:
    return "".join([text[:1], text[1:]])


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n not in LARGE_EXAMPLES])
def test_the_joined_rows_are_the_csv_writers_bytes_and_vouched(name: str) -> None:
    """(lab's host descriptions hold a comma: the writer's path, on a real example.)"""
    plan = _plan(name)
    files = netbox.netbox_files(plan)
    assert files == _by_writer(plan)
    plain = not any('"' in text for text in files.values())
    assert plain == (name not in QUOTED), name
    for path, text in files.items():
        assert netbox.PROVED_CLEAN.holds(path, text) == plain, path
        assert netbox.check(path, text) == [] == netbox.check(path, _copy(text))


QUOTED = {"lab"}
"""The examples with a value the csv writer quotes (a host's description ``mlx5_3 optic failed, RMA open``)."""


def _port(value: str) -> Callable[[FabricPlan], FabricPlan]:
    def edit(plan: FabricPlan) -> FabricPlan:
        switch = plan.switches[-1]
        ports = (*switch.ports[:-1], replace(switch.ports[-1], description=value))
        return replace(plan, switches=(*plan.switches[:-1], replace(switch, ports=ports)))
    return edit


def _host(value: str) -> Callable[[FabricPlan], FabricPlan]:
    return lambda plan: replace(plan, hosts=(*plan.hosts[:-1], replace(plan.hosts[-1], description=value)))


def _link(value: str) -> Callable[[FabricPlan], FabricPlan]:
    return lambda plan: replace(plan, links=(replace(plan.links[0], role=value), *plan.links[1:]))


FAULTS = {
    "port description with a comma": _port("a,b"), "port description with a newline": _port("a\nb,c,d,e,f,g"),
    "host description with a quote": _host('say "hi"'), "host description with a carriage return": _host("a\rb"),
    "link role with a comma": _link("fabric,x"), "port description of two commas": _port(",,"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_value_needing_quotes_goes_through_the_writer(fault: str) -> None:
    plan = FAULTS[fault](_plan("sonic-pod"))
    files = netbox.netbox_files(plan)
    if "carriage" not in fault:  # (the writer would leave a carriage return bare: csv_text quotes its row)
        assert files == _by_writer(plan)
    assert any('"' in text for text in files.values())
    for (path, _, columns), rows in zip(netbox.FILES, netbox._cells(plan), strict=True):
        text = files[path]
        assert list(csv.reader(io.StringIO(text, newline=""), strict=True)) == [list(columns), *map(list, rows)]
        assert not netbox.PROVED_CLEAN.holds(path, text), path
        assert netbox.check(path, text) == [] == netbox.check(path, _copy(text)), path


def test_the_target_and_its_floor_write_the_same_bytes() -> None:
    from bench.floor_netbox import floor_files

    plan = _plan("sonic-pod")  # (the floor does not quote: an example with nothing to quote)
    assert floor_files(plan) == netbox.netbox_files(plan)
