"""Tests for the NCCL topology checker and schema.

Every lexical rule of NCCL's hand-written parser has a failing sample whose
expected line:col is asserted, so a regression in position tracking shows up
as clearly as a missed rule. Real files published by Azure and AWS must pass.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import require_reference
from hypothesis import given, settings
from hypothesis import strategies as st

from fabgen.errors import Problem
from fabgen.targets.nccl import topo_check
from fabgen.targets.nccl.topo_check import MAX_NODES, check_topology_file, check_topology_xml

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "nccl_topo"
REFERENCE_FILES = [
    "aws-g5.48xl-topo.xml",
    "aws-p4d-24xl-topo.xml",
    "azure-ndv4-topo.xml",
    "azure-ndv5-topo.xml",
]


def wrap(*lines: str) -> str:
    """A <system> around ``lines``, so line 1 is the root and sample lines start at 2."""
    return "\n".join(['<system version="1">', *lines, "</system>"]) + "\n"


def positions(problems: list[Problem]) -> list[tuple[int, int]]:
    return [(p.line, p.col) for p in problems]


def assert_problem(problems: list[Problem], line: int, col: int, text: str) -> None:
    """A problem at exactly line:col whose message mentions ``text``."""
    at = [p for p in problems if (p.line, p.col) == (line, col)]
    assert at, f"no problem at {line}:{col}; got {[str(p) for p in problems]}"
    assert any(text in p.message for p in at), [str(p) for p in at]


# -- files that must pass -------------------------------------------------------------


@pytest.mark.parametrize("name", REFERENCE_FILES)
def test_real_published_files_pass(name: str) -> None:
    path = require_reference("nccl-topo", name)
    assert check_topology_file(path) == []


@pytest.mark.parametrize("name", ["good_full.xml", "good_rail_pci_only.xml"])
def test_good_fixtures_pass(name: str) -> None:
    assert check_topology_file(DATA / name) == []


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('<system version="1"/>\n', id="self-closing-root"),
        pytest.param('<system version="1">\r\n  <cpu numaid="0"/>\r\n</system>\r\n', id="crlf"),
        pytest.param("<system version='1'>\n</system>", id="single-quotes-no-final-newline"),
        pytest.param('<!---->\n<system version="1"/> <!-- trailing -->\n<!-- after -->\n', id="comments"),
        pytest.param(wrap('  <cpu numaid="0"></cpu>'), id="empty-open-close"),
        pytest.param(wrap('  <cpu numaid="0">', '    <nic><net name="eth0"/></nic>', "  </cpu>"), id="nic-under-cpu"),
        pytest.param('<system version="1" name="%s"/>\n' % ("x" * 253), id="value-of-253"),
    ],
)
def test_valid_variants_pass(text: str) -> None:
    assert check_topology_xml(text) == []


# -- NCCL's lexical rules (nccl.md §1.1) -----------------------------------------------

LEXICAL_CASES = [
    # id, text, line, col, message fragment
    ("prolog", '<?xml version="1.0"?>\n<system version="1"/>\n', 1, 1, "XML declaration"),
    ("tab-between-tags", wrap('\t<cpu numaid="0"/>'), 2, 1, "tab character"),
    ("tab-in-tag", wrap('  <cpu\tnumaid="0"/>'), 2, 7, "tab character"),
    ("tab-in-value", '<system version="1" name="a\tb"/>\n', 1, 28, "tab character inside a value"),
    ("newline-between-attrs", wrap('  <cpu numaid="0"', '       arch="x86_64"/>'), 2, 18, "line break inside <cpu>"),
    ("newline-before-gt", '<system version="1"\n>\n</system>\n', 1, 20, "line break inside <system>"),
    ("newline-in-value", '<system version="1" name="a\nb"/>\n', 1, 28, "line break inside a value"),
    ("unquoted-value", wrap("  <cpu numaid=0/>"), 2, 15, "in quotes"),
    ("mismatched-quotes", "<system version='1\">\n</system>\n", 1, 17, "never closed"),
    ("entity", '<system version="1" name="a&amp;b"/>\n', 1, 28, "does not decode entities"),
    ("lt-in-value", '<system version="1" name="a<b"/>\n', 1, 28, "'<' in a value"),
    ("long-value", '<system version="1" name="%s"/>\n' % ("x" * 254), 1, 27, "longer than 253"),
    ("long-name", '<system version="1" %s="x"/>\n' % ("n" * 254), 1, 21, "longer than 253"),
    ("two-spaces", wrap('  <cpu  numaid="0"/>'), 2, 8, "two spaces"),
    ("space-before-slash", wrap('  <cpu numaid="0" />'), 2, 18, "space before '/>'"),
    ("space-before-gt", '<system version="1" >\n</system>\n', 1, 20, "space before '>'"),
    ("no-value", wrap('  <cpu numaid="0" keep/>'), 2, 19, "has no value"),
    ("duplicate-attr", wrap('  <cpu numaid="0" numaid="1"/>'), 2, 19, "duplicate attribute"),
    ("space-in-close-tag", '<system version="1">\n</system >\n', 2, 9, "closing tag"),
    ("mismatched-close", wrap('  <cpu numaid="0">', "  </pci>"), 3, 3, "does not close <cpu>"),
    ("never-closed", '<system version="1">\n  <cpu numaid="0">\n', 2, 3, "never closed"),
    ("text-outside-tags", wrap("  numaid"), 2, 3, "outside a tag"),
    ("bom", '\ufeff<system version="1"/>\n', 1, 1, "byte-order mark"),
    ("equals-in-comment-word", '<!--====\n-->\n<system version="1"/>\n', 1, 5, "first word of a comment"),
    ("unterminated-comment", '<system version="1"/>\n<!-- never closed\n', 2, 1, "comment is never closed"),
    ("doctype", '<!DOCTYPE system>\n<system version="1"/>\n', 1, 1, "markup declaration"),
    ("eof-in-tag", '<system version="1"', 1, 19, "end of file"),
]


@pytest.mark.parametrize(
    ("text", "line", "col", "fragment"),
    [pytest.param(*case[1:], id=case[0]) for case in LEXICAL_CASES],
)
def test_lexical_rule_is_located(text: str, line: int, col: int, fragment: str) -> None:
    assert_problem(check_topology_xml(text, "t.xml"), line, col, fragment)


def test_more_than_16_attributes() -> None:
    line = "  <net " + " ".join(f'a{i}="1"' for i in range(17)) + "/>"
    problems = check_topology_xml(wrap(line))
    assert_problem(problems, 2, line.index("a16") + 1, "more than 16 attributes")


def test_fatal_error_stops_the_scan_like_nccl() -> None:
    """After a fatal error NCCL reads no further; later lines are not reported twice."""
    text = wrap("\t<cpu numaid='0'/>", '  <cpu numaid="01"/>')
    assert positions(check_topology_xml(text)) == [(2, 1)]


def test_only_xml_not_nccl_problem_comes_from_lxml() -> None:
    """'--' inside a comment is fine for NCCL but not XML; lxml reports it."""
    problems = check_topology_xml('<!-- a -- b -->\n<system version="1"/>\n')
    assert len(problems) == 1
    assert problems[0].line == 1 and "not well-formed XML" in problems[0].message


# -- rules over the tree -----------------------------------------------------------------


def test_root_must_be_system() -> None:
    problems = check_topology_xml('<topology version="1"/>\n')
    assert positions(problems) == [(1, 1)]
    assert "root must be <system>" in problems[0].message


def test_empty_file() -> None:
    assert_problem(check_topology_xml(""), 1, 1, "no <system>")


def test_version_required() -> None:
    assert_problem(check_topology_xml("<system/>\n"), 1, 1, 'version="1"')


@pytest.mark.parametrize(
    ("busid", "fragment"),
    [
        ("0000:1A:00.0", "write 0000:1a:00.0"),
        ("1a:00.0", "write 0000:1a:00.0"),
        ("0:1a:0.0", "dddd:bb:dd.f"),
    ],
)
def test_busid_must_be_canonical(busid: str, fragment: str) -> None:
    text = wrap('  <cpu numaid="0">', f'    <pci busid="{busid}"/>', "  </cpu>")
    assert_problem(check_topology_xml(text), 3, 10, fragment)


def test_duplicate_busid_reported_at_second_use() -> None:
    text = wrap(
        '  <cpu numaid="0">',
        '    <pci busid="0000:1b:00.0"/>',
        "  </cpu>",
        '  <cpu numaid="1">',
        '    <pci busid="0000:1b:00.0"/>',
        "  </cpu>",
    )
    problems = check_topology_xml(text)
    assert positions(problems) == [(6, 10)]
    assert "already used at 3:10" in problems[0].message


def test_fake_switch_busids_are_allowed_but_need_class() -> None:
    ok = wrap(
        '  <cpu numaid="0">',
        '    <pci busid="ffff:ff:01.0" class="0x060400" link_speed="16 GT/s" link_width="16">',
        '      <pci busid="0000:17:00.0"/>',
        "    </pci>",
        "  </cpu>",
    )
    assert check_topology_xml(ok) == []
    switch = ok.replace(' class="0x060400"', "")
    assert_problem(check_topology_xml(switch), 3, 5, "must carry class")
    fake_leaf = wrap('  <cpu numaid="0">', '    <pci busid="ffff:ff:07.0"/>', "  </cpu>")
    assert_problem(check_topology_xml(fake_leaf), 3, 5, "made-up bus id")


def test_bare_real_switch_leaf_needs_no_class() -> None:
    """The AWS g5 style: real bus ids, no children, everything auto-detected."""
    assert check_topology_xml(wrap('  <cpu numaid="0">', '    <pci busid="0000:00:16.0"/>', "  </cpu>")) == []


@pytest.mark.parametrize("speed", ["16.0 GT/s", "16 GT/s PCIe", "Gen4", ""])
def test_unknown_link_speed(speed: str) -> None:
    text = wrap('  <cpu numaid="0">', f'    <pci busid="0000:17:00.0" link_speed="{speed}"/>', "  </cpu>")
    assert_problem(check_topology_xml(text), 3, 31, "assumes 8 GT/s")


@pytest.mark.parametrize(("value", "read_as"), [("010", "(8)"), ("08", "(0)"), ("-012", "(-10)")])
def test_leading_zero_is_octal(value: str, read_as: str) -> None:
    problems = check_topology_xml(wrap(f'  <cpu numaid="{value}"/>'))
    assert_problem(problems, 2, 8, read_as)


def test_plain_zero_and_hex_ids_are_not_octal() -> None:
    text = wrap(
        '  <cpu numaid="0">',
        '    <pci busid="0000:17:00.0" class="0x020000" vendor="0x0000" link_width="0"/>',
        "  </cpu>",
    )
    assert check_topology_xml(text) == []


# -- node budget ---------------------------------------------------------------------------


def node_file(nodes: int) -> str:
    """<system>, one <cpu>, and <pci> leaves up to ``nodes`` nodes in all."""
    leaves = [f'    <pci busid="0000:{i // 32:02x}:{i % 32:02x}.0"/>' for i in range(nodes - 2)]
    return wrap('  <cpu numaid="0">', *leaves, "  </cpu>")


def test_node_budget() -> None:
    assert check_topology_xml(node_file(MAX_NODES - 1)) == []
    problems = check_topology_xml(node_file(MAX_NODES))
    # Node 256 is the 254th <pci>, on line 2 + 254.
    assert positions(problems) == [(MAX_NODES, 5)]
    assert "limited to 256 nodes" in problems[0].message


def test_comments_and_ignored_elements_do_not_count() -> None:
    text = node_file(MAX_NODES - 1).replace("</system>", "<!-- one more -->\n</system>")
    assert check_topology_xml(text) == []


# -- the schema ------------------------------------------------------------------------------


def test_schema_failures_are_located() -> None:
    problems = check_topology_file(DATA / "bad_schema.xml")
    assert positions(problems) == [(1, 9), (2, 19), (3, 5), (6, 31), (6, 46), (6, 63)]
    messages = [p.message for p in problems]
    assert "version" in messages[0]
    assert "amd64" in messages[1]
    assert "<gpu>: This element is not expected" in messages[2]
    assert "0x0200" in messages[3]
    assert "'x16' is not a valid value" in messages[4]
    assert "'linkwidth' is not allowed" in messages[5]
    assert problems[2].path == "/system/cpu[1]/gpu"


def test_schema_rejects_version_2() -> None:
    problems = check_topology_xml('<system version="2"/>\n')
    assert positions(problems) == [(1, 9)]


def test_schema_rejects_element_nested_where_nccl_ignores_it() -> None:
    text = wrap('  <cpu numaid="0">', '    <nic><net name="mlx5_0"><gpu/></net></nic>', "  </cpu>")
    problems = check_topology_xml(text)
    assert positions(problems) == [(3, 10)]
    assert "ignore what is inside <net>" in problems[0].message


# -- the fixtures with several problems ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bad_prolog.xml", [(1, 1)]),
        ("bad_tab.xml", [(3, 1)]),
        ("bad_split_tag.xml", [(2, 18)]),
        ("bad_semantics.xml", [(1, 28), (2, 19), (3, 5), (3, 31), (4, 12), (7, 10)]),
    ],
)
def test_bad_fixtures(name: str, expected: list[tuple[int, int]]) -> None:
    problems = check_topology_file(DATA / name)
    assert positions(problems) == expected
    assert all(p.file.endswith(name) for p in problems)


# -- files -----------------------------------------------------------------------------------


def test_non_utf8_file_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "topo.xml"
    path.write_bytes(b'<system version="1">\n  <cpu numaid="0" name="\xe9t\xe9"/>\n</system>\n')
    problems = check_topology_file(path)
    assert len(problems) == 1
    assert (problems[0].line, problems[0].col) == (2, 25)
    assert "not UTF-8" in problems[0].message


def test_unreadable_file_is_one_problem(tmp_path: Path) -> None:
    problems = check_topology_file(tmp_path / "missing.xml")
    assert len(problems) == 1 and "no such file" in problems[0].message


def test_default_file_label() -> None:
    assert str(check_topology_xml("")[0]).startswith("<topology>:1:1: ")


# -- robustness ------------------------------------------------------------------------------

GOOD = (DATA / "good_full.xml").read_text(encoding="utf-8")


@settings(max_examples=300, deadline=None)
@given(
    at=st.integers(min_value=0, max_value=len(GOOD)),
    cut=st.integers(min_value=0, max_value=3),
    insert=st.text(alphabet=" \t\n\r<>/=\"'&!-?x0", max_size=3),
)
def test_any_edit_of_a_good_file_gives_located_problems_never_an_exception(at: int, cut: int, insert: str) -> None:
    text = GOOD[:at] + insert + GOOD[at + cut :]
    for problem in check_topology_xml(text):
        assert problem.line >= 1 and problem.col >= 0 and problem.message


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises(text: str) -> None:
    check_topology_xml(text)


# ---------------------------------------------------------------- the plain-tag shortcut

_NAMES = st.sampled_from(["pci", "cpu", "gpu", "net", "nic", "?x", "!y", "", "x" * 254, 'q"'])
_KEYS = st.sampled_from(["busid", "class", "a", "b", "", "k" * 254, "k\t", "k'"])
_VALUES = st.text(alphabet="0a&<>\t\n '/=", max_size=4) | st.just("v" * 254)
_TAG = st.builds(lambda name, attrs, sep, end: "<" + name + "".join(f'{sep}{k}="{v}"' for k, v in attrs) + end,
                 _NAMES, st.lists(st.tuples(_KEYS, _VALUES), max_size=18), st.sampled_from([" ", " ", "  "]),
                 st.sampled_from([">", ">", "/>", " />", "/ >", ""]))
_TAG_PIECES = st.lists(_TAG | st.sampled_from(["</pci>", "</cpu>", "</ pci>", "</>", "<!-- c -->", "\n", "x"]),
                       max_size=12)


def _both_readers(text: str) -> tuple[list[Problem], list[Problem]]:
    shortcut = topo_check.check_topology_xml(text, "t.xml")
    plain = topo_check._NcclScanner._plain_tag
    try:
        topo_check._NcclScanner._plain_tag = lambda self, lt: None  # type: ignore[method-assign]
        full = topo_check.check_topology_xml(text, "t.xml")
    finally:
        topo_check._NcclScanner._plain_tag = plain  # type: ignore[method-assign]
    return shortcut, full


@pytest.mark.parametrize("tag", [
    '<cpu a="1" a="2">', '<cpu a="&">', '<cpu a="x\ty">', '<cpu a="<">', '<cpu a="1\n2">', "<cpu" + "".join(f' a{i}="1"' for i in range(17)) + ">",
    '<cpu a="' + "v" * 254 + '">', "<cpu " + "k" * 254 + '="1">', "<" + "c" * 254 + ">", '<cpu a="1>2">',
    '<cpu a="1" />', '<cpu  a="1">', '<cpu a="1"/ >', "<cpu a='1'>", '<cpu a="1"b="2">', '<cpu a=1>', "<?xml?>",
    "<cpu\ta='1'>", '<cpu a="1" >', "<cpu/>", '<c"pu a="1">', '<cpu k"="1">', '<cpu =" 1">',
])
def test_plain_tags_read_as_the_full_reader_reads_them(tag: str) -> None:
    """The shortcut for plain tags builds what NCCL's character-by-character reader builds, problems included."""
    shortcut, full = _both_readers(f'<system version="1">\n{tag}\n</cpu>\n</system>\n')
    assert shortcut == full


@settings(max_examples=600, deadline=None)
@given(_TAG_PIECES)
def test_plain_tag_shortcut_agrees_on_generated_text(pieces: list[str]) -> None:
    text = '<system version="1">\n' + "".join(pieces) + "\n</system>\n"
    shortcut, full = _both_readers(text)
    assert shortcut == full
