"""csv_text is csv.writer's bytes, and plain_shape accepts exactly the texts of header-wide unquoted rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.cabling import cabling_csv
from fabgen.targets.csv_text import csv_text, plain_shape
from fabgen.targets.netbox.files import check
from tests.helpers import example

# Mostly name-like cells, with the characters that make QUOTE_MINIMAL quote (and some that do not) mixed in.
CELL = st.text(alphabet=st.sampled_from([*"ab9-./ :", ",", '"', "\n", "\r", "\t", "é", "'"]), max_size=6)


def _writer(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    st.lists(st.text(alphabet="abc_", min_size=1, max_size=4), min_size=n, max_size=n),
    st.lists(st.lists(CELL, min_size=n - 1, max_size=n + 1), max_size=5))))
def test_csv_text_is_the_writers_bytes(case: tuple[list[str], list[list[str]]]) -> None:
    columns, rows = case
    if not any("\r" in cell for row in rows for cell in row):
        assert csv_text(columns, rows) == _writer(columns, rows)
    parsed = list(csv.reader(io.StringIO(csv_text(columns, rows), newline=""), strict=True))
    assert parsed == [columns, *map(list, rows)]  # reads back as written


def test_a_carriage_return_is_quoted_so_the_row_reads_back_whole() -> None:
    """csv.writer leaves it bare with "\\n" line ends, and the reader then breaks the row in two."""
    text = csv_text(["a", "b"], [["x\ry", "1"], ["2", "3"]])
    assert text == 'a,b\n"x\ry","1"\n2,3\n'
    assert list(csv.reader(io.StringIO(text, newline=""))) == [["a", "b"], ["x\ry", "1"], ["2", "3"]]


def test_a_cell_needing_quotes_is_quoted() -> None:
    assert csv_text(["a", "b"], [["x,y", "1"], ["line\nbreak", 'say "hi"']]) == \
        'a,b\n"x,y",1\n"line\nbreak","say ""hi"""\n'


@given(st.text(alphabet=st.sampled_from(list("ab,\n\"\r")), max_size=30), st.integers(1, 4))
def test_plain_shape_means_every_row_has_the_width(text: str, width: int) -> None:
    if plain_shape(text, width):
        assert text.endswith("\n")
        assert '"' not in text and "\r" not in text
        assert all(len(row) == width for row in csv.reader(io.StringIO(text, newline=""), strict=True))


@given(st.lists(st.lists(CELL, min_size=5, max_size=7), max_size=6))
def test_netbox_check_fast_path_agrees_with_parsing_every_row(rows: list[list[str]]) -> None:
    path, header = "netbox/8-ip-addresses.csv", ["address", "status", "device", "interface", "is_primary",
                                                 "description"]
    text = _writer(header, rows)
    parsed = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    wrong = [n for n, row in enumerate(parsed[1:], 2) if len(row) != len(header)]
    assert [p.line for p in check(path, text)] == wrong
    assert [p.line for p in check(path, text.replace("\n", ",\n", 1))] == [1, *wrong]


def test_cabling_quotes_a_port_name_the_join_would_break() -> None:
    plan = plan_fabric(load_spec(example("lab")))
    link = replace(plan.links[0], a_port='x,"y"\nz')
    text = cabling_csv(replace(plan, links=(link, *plan.links[1:])))
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    assert rows[1][1] == 'x,"y"\nz' and all(len(row) == 7 for row in rows)
    assert text == _writer(list(rows[0]), rows[1:])
