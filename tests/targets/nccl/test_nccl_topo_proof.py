"""The schema proof (:mod:`fabgen.targets.nccl.topo_proof`) never claims valid what lxml would reject.

Faults are planted in good files (real and generated): values of every kind
near the edge of each type, attributes moved to other elements, elements
renamed or emptied the long way round; and whole trees are drawn at random from
the schema's names. For each, the check with the proof reports exactly the
problems of the check that always runs lxml, and whenever the proof says valid,
lxml's schema says valid. The proof's tables are compared with the XSD itself.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from fabgen._resources import resource_path
from fabgen.errors import Problem
from fabgen.targets.nccl import topo_check, topo_proof

DATA = Path(__file__).resolve().parents[3] / "tests" / "data" / "nccl_topo"
XS = "{http://www.w3.org/2001/XMLSchema}"


def _full_check(text: str) -> list[Problem]:
    """The check as it was before the proofs: the scanner, then lxml and the schema, on every file."""
    proved, lines = topo_check._proved_valid, topo_check._clean_by_lines
    try:
        topo_check._proved_valid = lambda scanner: False  # type: ignore[assignment]
        topo_check._clean_by_lines = lambda text: False  # type: ignore[assignment]
        return topo_check.check_topology_xml(text, "t.xml")
    finally:
        topo_check._proved_valid, topo_check._clean_by_lines = proved, lines


def _proof_says_valid(text: str) -> bool:
    scanner = topo_check._NcclScanner(text, "t.xml")
    scanner.scan()
    return topo_check._proved_valid(scanner)


def _lxml_valid(text: str) -> bool:
    try:
        root = etree.fromstring(text.encode("utf-8", "surrogatepass"))
    except etree.XMLSyntaxError:
        return False
    return bool(topo_check._schema().validate(root))


def _agree(text: str) -> bool:
    """The same problems with and without the proofs; a proved file is one lxml accepts, and one the line proof
    (:func:`topo_check._clean_by_lines`) calls clean is one the full check finds nothing in. True if proved."""
    full = _full_check(text)
    assert topo_check.check_topology_xml(text, "t.xml") == full
    proved = _proof_says_valid(text)
    if proved:
        assert _lxml_valid(text), text
    if topo_check._clean_by_lines(text):
        assert full == [] and proved, text
        LINE_PROVED.append(text)
    return proved


LINE_PROVED: list[str] = []
"""Every text the line proof called clean in this session (a test asserts some edits are)."""


def _generated() -> str:
    from conftest import EXAMPLES

    import fabgen.pipeline as pipeline
    from fabgen.targets.render import render_files

    plan = pipeline.plan_fabric(pipeline.load_spec(EXAMPLES / "lab" / "spec.yaml"))
    files, _ = render_files(plan, ["nccl-topo"])
    return next(iter(files.values()))


GOOD = [(DATA / name).read_text(encoding="utf-8") for name in ("good_full.xml", "good_rail_pci_only.xml")]


@pytest.fixture(scope="module")
def generated() -> str:
    return _generated()


def test_generated_and_good_files_are_proved(generated: str) -> None:
    """The shortcut is taken where it matters: fabgen's own output (and the hand-written good samples)."""
    assert _agree(generated)
    for text in GOOD:
        assert _agree(text)
    assert topo_check._clean_by_lines(generated)  # and by the line proof, without the scanner's objects
    assert topo_check._clean_by_lines(GOOD[1])


EDGE_VALUES = [
    "", " ", "0", "1", "-1", "+1", "01", "00", " 1", "1 ", "2147483647", "2147483648", "-2147483648",
    "-2147483649", "99999999999", "1.5", "-1.5", ".5", "1.", "1e3", "NaN", "INF", "0x1f", "0X060400", "0x060400",
    "0x06040", "0x0604000", "0x10de", "0x10DE", "0x10d", "0000:15:00.0", "0000:15:00.A", "0000:15:0.0",
    "15:00.0", "fffffff:ffff:ff", "ffff:ff:00.0", "ffffffff", "0xffffffffffffffff", "1ffffffffffffffff",
    "0000ffff,ffffffff", "ffff,ffff", "ffffffff,", "x86_64", "x86_64 ", "arm64", "ppc64le", "GenuineIntel",
    "  Shanghai  ", "Shanghai", "32.0 GT/s PCIe", "32 GT/s", "32.0 GT/s", "mlx5_0", "a'b", "a>b", "é", "\x7f",
    "n" * 253, "n" * 254, "a&amp;b", "a\tb",
]
ATTRIBUTES = sorted({name for _, attributes, _ in topo_proof.ELEMENTS.values() for name in attributes} | {"xmlns", "bogus"})
ELEMENT_NAMES = [*sorted(topo_proof.ELEMENTS), "bogus"]
_ATTR = re.compile(r' ([a-z_]+)="([^"]*)"')
_START = re.compile(r"<([a-z]+)[ />]")


def _distinct_spots(text: str) -> list[re.Match[str]]:
    """One attribute per (element, attribute name): the same pair elsewhere in the file is the same test."""
    spots: dict[tuple[str, str], re.Match[str]] = {}
    for spot in _ATTR.finditer(text):
        element = _START.findall(text[:spot.start() + 1])[-1]
        spots.setdefault((element, spot[1]), spot)
    return list(spots.values())


@pytest.mark.parametrize("index", range(len(GOOD) + 1))
def test_every_edge_value_in_every_attribute_agrees(index: int, generated: str) -> None:
    """Each attribute of a good file, set in turn to each edge value: proof and lxml agree, problems equal."""
    text = [*GOOD, generated][index]
    proved = lines = 0
    for spot in _distinct_spots(text):
        for value in EDGE_VALUES:
            before = len(LINE_PROVED)
            proved += _agree(text[:spot.start(2)] + value + text[spot.end(2):])
            lines += len(LINE_PROVED) > before
    assert proved  # some edits stay valid, so the proof's acceptance is tested too, not only its refusals
    assert lines or index == 0  # the same of the line proof, on the files of fabgen's shape


@pytest.mark.parametrize("index", range(len(GOOD) + 1))
def test_attributes_renamed_dropped_and_elements_renamed_agree(index: int, generated: str) -> None:
    text = [*GOOD, generated][index]
    for spot in _distinct_spots(text):
        _agree(text[:spot.start()] + text[spot.end():])  # dropped (a required one, sometimes)
        for name in ATTRIBUTES:
            _agree(text[:spot.start(1)] + name + text[spot.end(1):])
    for spot in list({m[1]: m for m in _START.finditer(text)}.values()):
        for name in ELEMENT_NAMES:
            renamed = text[:spot.start(1)] + name + text[spot.end(1):]
            close = f"</{spot[1]}>"
            at = renamed.find(close, spot.end())
            if at >= 0 and not text[spot.start():text.find(">", spot.start()) + 1].endswith("/>"):
                renamed = renamed[:at] + f"</{name}>" + renamed[at + len(close):]
            _agree(renamed)
    for at in [m.start() for m in re.finditer("/>", text)][:12]:
        name = _START.findall(text[:at])[-1]
        _agree(text[:at] + f"></{name}>" + text[at + 2:])  # an empty element written open and closed
        _agree(text[:at] + f">\n</{name}>" + text[at + 2:])


def test_comments_agree() -> None:
    for body in [" ok ", " a--b ", " ends- ", "", "-", " \x01 ", " é ", " \ufffe ", " tab\t "]:
        _agree(f"<!--{body}-->\n" + GOOD[0])


_VALUE = st.sampled_from(EDGE_VALUES) | st.text(alphabet="0123456789abcdefx.:-, GT/sPCIe", max_size=12)


@st.composite
def _tree(draw: st.DrawFn, depth: int = 0) -> str:
    name = draw(st.sampled_from(["system"] if depth == 0 else ELEMENT_NAMES))
    known = topo_proof.ELEMENTS.get(name, (frozenset(), {}, frozenset()))
    keys = draw(st.lists(st.sampled_from([*sorted(known[1]), "bogus"]),
                         unique=True, max_size=4))
    if name in topo_proof.ELEMENTS:
        keys = sorted(set(keys) | set(topo_proof.ELEMENTS[name][2])) if draw(st.booleans()) else keys
    attrs = "".join(f' {key}="{draw(_VALUE)}"' for key in keys)
    if depth >= 3 or not draw(st.booleans()):
        return f"<{name}{attrs}/>" if draw(st.integers(0, 4)) else f"<{name}{attrs}></{name}>"
    children = draw(st.lists(_tree(depth + 1), max_size=3))
    return f"<{name}{attrs}>\n" + "".join(child + "\n" for child in children) + f"</{name}>"


@settings(max_examples=300, deadline=None)
@given(_tree())
def test_random_trees_of_schema_names_agree(tree: str) -> None:
    _agree(tree + "\n")


def test_tables_are_the_schema() -> None:
    """Element nesting, attributes, their types, required and fixed ones, enumerations and patterns: the XSD's."""
    xsd = etree.parse(str(resource_path("schemas", "nccl-topo.xsd"))).getroot()
    types = {t.get("name"): t for t in xsd.iter(f"{XS}complexType")}
    element_type = {e.get("name"): e.get("type") for e in xsd.iter(f"{XS}element")}
    assert [e.get("name") for e in xsd.findall(f"{XS}element")] == ["system"]
    derived = {}
    fixed = {}
    for name, type_name in element_type.items():
        node = types[type_name]
        children = frozenset(e.get("name") for e in node.iter(f"{XS}element"))
        attributes = {a.get("name"): a.get("type", "") for a in node.findall(f"{XS}attribute")}
        required = frozenset(a.get("name") for a in node.findall(f"{XS}attribute") if a.get("use") == "required")
        fixed.update({(name, a.get("name")): a.get("fixed") for a in node.findall(f"{XS}attribute") if a.get("fixed")})
        for choice in node.findall(f"{XS}choice"):
            assert (choice.get("minOccurs"), choice.get("maxOccurs")) == ("0", "unbounded")
        derived[name] = (children, attributes, required)
    assert derived == topo_proof.ELEMENTS
    assert fixed == topo_proof.FIXED
    simple = {t.get("name"): t for t in xsd.iter(f"{XS}simpleType")}
    for name, values in topo_proof._ENUMS.items():
        assert frozenset(e.get("value") for e in simple[name].iter(f"{XS}enumeration")) == values
    for name, pattern in topo_proof._PATTERNS.items():
        assert pattern.pattern.replace("(?:", "(") == "|".join(p.get("value") for p in simple[name].iter(f"{XS}pattern"))
    used = {kind for _, attributes, _ in topo_proof.ELEMENTS.values() for kind in attributes.values()}
    assert used - {"xs:int", "xs:float", "xs:string"} == set(simple)
    assert [r.get("base") for r in simple["Count"]] == ["xs:int"] and simple["Count"][0][0].get("value") == "0"
    assert [(f.tag, f.get("value")) for f in simple["NetName"][0]] == [(f"{XS}minLength", "1"), (f"{XS}maxLength", "253")]


def _lines_of_fabgen_shape(generated: str) -> list[str]:
    """Good files of the line proof's shape: fabgen's (made-up switch bus ids), the same with real ones, the
    rail sample, and the sample with every element NCCL reads, its one tag-and-comment line split."""
    real = re.sub(r"ffff:ff:0(\d)\.0", r"0000:e\1:00.0", generated)
    return [generated, real, GOOD[1], GOOD[0].replace("> <!-- switch peer -->", ">")]


def _structure_faults(text: str) -> list[str]:
    """Faults the line proof judges by structure, not by one value: nesting, roots, bus ids, class, layout."""
    lines = text.split("\n")
    pci = [i for i, line in enumerate(lines) if line.lstrip().startswith("<pci ")]
    busids = re.findall(r'busid="([^"]*)"', text)
    faults = [
        text.replace(busids[1], busids[0], 1),  # a bus id used twice
        text.replace(busids[-1], busids[0]),
        re.sub(r' class="0x060400"', "", text, count=1),  # a switch without class
        text.replace(busids[0], "ffff:ff:0f.0", 1),  # made-up bus id
        re.sub(r'(busid="ffff:[^"]*") class="[^"]*"', r"\1", text, count=1),  # made-up bus id without class
        text.replace("</cpu>", "", 1), text.replace("</pci>", "</cpu>", 1), text.replace("</system>", ""),
        text + '<system version="1">\n</system>\n', text + "</system>\n", "</pci>\n" + text,
        text.replace("\n", "\r\n"), text.replace("\n", "\n\n"), text.rstrip("\n"), text.replace("  <", "\t<", 1),
        text.replace(">\n", "> \n", 1), text.replace(">\n", "><!-- x -->\n", 1), text.replace("\n", " ", 1),
        text.replace("\n  <cpu", "\n  <bogus/>\n  <cpu", 1), text.replace("\n  <cpu", "\n  <nic/>\n  <cpu", 1),
        text.replace("\n  <cpu", "\n  <pcilink target=\"0000:01:00.0\"/>\n  <cpu", 1),
        text.replace('<system version="1">', '<system version="1" version="1">'),
        text.replace('<system version="1">', "<system>"), text.replace('<system version="1">', "<System version=\"1\">"),
        text.replace("/>", "></pci>", 1), text.replace("/>", ">", 1), "\ufeff" + text, " " + text,
        "", "\n", lines[0] + "\n", text.replace('<system version="1">', '<cpu numaid="0">', 1),
    ]
    if pci:
        at = pci[-1]
        for extra in ('<gpu dev="0" sm="90"/>', '<nic>', '<net name="mlx5_0"/>', '<pci busid="0000:01:00.0"/>',
                      '<nvlink target="0000:01:00.0" count="1" tclass="0x030200"/>', '<c2c count="1" bw="1"/>',
                      '<pcilink target="0000:01:00.0"></pcilink>', '<pcilink target="0000:01:00.0"/>',
                      '<nic><net name="x"/></nic>', '<nic>\n<net name="x"></net>\n</nic>', '<nic>\n<net name="x"/>\n</nic>',
                      '<pci busid="ffff:ff:0e.0" link_speed="32.0 GT/s PCIe"/>',
                      '<pci busid="ffff:ff:0e.0" class="0x060400" link_speed="32.0 GT/s PCIe"/>',
                      '<pci busid="0000:01:00.0">\n<pci busid="0000:02:00.0"/>\n</pci>',
                      '<pci busid="0000:01:00.0" class="0x060400">\n<pci busid="0000:02:00.0"/>\n</pci>'):
            faults.append("\n".join([*lines[:at], "      " + extra, *lines[at:]]))
    for empty in re.findall(r"<(nvlink|c2c|net|pcilink)( [^>]*)/>", text)[:4]:
        faults.append(text.replace(f"<{empty[0]}{empty[1]}/>", f"<{empty[0]}{empty[1]}></{empty[0]}>", 1))
    for body in [" ok ", " a--b ", " ends- ", "", " \x01 ", " é ", " a=b ", "=x ", " \ufffe ", " -- "]:
        faults += [f"<!--{body}-->\n" + text, text + f"<!--{body}-->\n", text.replace("\n  <cpu", f"\n<!--{body}-->\n  <cpu", 1)]
    return faults


def test_structure_faults_agree_with_the_line_proof(generated: str) -> None:
    """Faults planted in the structure of fabgen-shaped files: the line proof says clean only where the full check
    finds nothing (and it does say clean for some, so its acceptance is tested too)."""
    clean = 0
    for text in _lines_of_fabgen_shape(generated):
        for fault in _structure_faults(text):
            _agree(fault)
            clean += topo_check._clean_by_lines(fault)
    assert clean


def test_every_edge_value_agrees_with_the_line_proof(generated: str) -> None:
    """Each attribute of each fabgen-shaped file set to each edge value: the line proof never says clean where
    the full check finds a problem."""
    for text in _lines_of_fabgen_shape(generated):
        for spot in _distinct_spots(text):
            for value in EDGE_VALUES:
                _agree(text[:spot.start(2)] + value + text[spot.end(2):])


def test_the_node_budget_by_lines() -> None:
    """255 nodes pass, 256 do not: the line proof counts nodes as NCCL's parser does."""
    head = '<system version="1">\n  <cpu numaid="0" arch="x86_64">\n'
    for count in (254, 255, 256):  # count nodes: system, cpu and count - 2 leaves
        leaves = "".join(f'    <pci busid="0000:{i // 256:02x}:{i % 256 // 8:02x}.{i % 8}" link_speed="32.0 GT/s PCIe"/>\n'
                         for i in range(count - 2))
        text = head + leaves + "  </cpu>\n</system>\n"
        assert _agree(text) == (count < 256) and topo_check._clean_by_lines(text) == (count < 256)


_EDIT_ALPHABET = ' \t\n\r<>/="\'&!-?x0fF.:c'


@settings(max_examples=400, deadline=None)
@given(which=st.integers(0, 3), at=st.integers(0, 10_000), cut=st.integers(0, 4),
       insert=st.text(alphabet=_EDIT_ALPHABET, max_size=3))
def test_any_edit_of_a_fabgen_shaped_file_agrees(which: int, at: int, cut: int, insert: str) -> None:
    text = _lines_of_fabgen_shape(_generated_once())[which]
    at %= len(text) + 1
    _agree(text[:at] + insert + text[at + cut:])


_GENERATED: list[str] = []


def _generated_once() -> str:
    if not _GENERATED:
        _GENERATED.append(_generated())
    return _GENERATED[0]


def test_a_bus_id_that_is_not_first_is_left_to_the_full_check(generated: str) -> None:
    """The line proof reads a line's bus id only as its first attribute: one written later (used twice, or made
    up without class) is not proved, and the full check reports what is wrong with it (the line proof had called
    both clean: it judged such a bus id's value but never counted it among the file's bus ids)."""
    leaf = next(line for line in generated.split("\n") if line.endswith("/>") and "<pci " in line)
    busid = re.search(r' busid="([^"]*)"', leaf)
    assert busid is not None

    def later(value: str) -> str:
        return leaf.replace(busid[0], "").replace("/>", f' busid="{value}"/>')

    classless = re.sub(r' class="[^"]*"', "", later("ffff:ff:0e.0"))
    twice = generated.replace(leaf, f"{leaf}\n{later(busid[1])}", 1)
    made_up = generated.replace(leaf, f"{leaf}\n{classless}", 1)
    for text in (generated.replace(leaf, later(busid[1]), 1), twice, made_up):
        assert not topo_check._clean_by_lines(text)
        _agree(text)
    assert any("already used" in p.message for p in _full_check(twice))
    assert _full_check(made_up)


_BUSID_FORM = r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]"


@settings(max_examples=400, deadline=None)
@given(which=st.integers(0, 3), line=st.integers(0, 200), at=st.integers(0, 300), cut=st.integers(0, 3),
       insert=st.text(alphabet=_EDIT_ALPHABET, max_size=3), busid=st.from_regex(_BUSID_FORM, fullmatch=True))
def test_a_line_is_judged_alike_with_any_bus_id_of_the_form(which: int, line: int, at: int, cut: int, insert: str,
                                                            busid: str) -> None:
    """What the line proof remembers of a line is judged with its first bus id's value replaced by
    _SOME_BUSID: any line, edited at random, judged with any bus id of the form in that place, gets that verdict."""
    lines = _lines_of_fabgen_shape(_generated_once())[which].split("\n")
    text = lines[line % len(lines)]
    at %= len(text) + 1
    text = text[:at] + insert + text[at + cut:]
    start = text.find(' busid="') + 8
    end = text.find('"', start)
    if start < 8 or end < 0:
        return
    judged = topo_check._line_kind(text[:start] + topo_check._SOME_BUSID + text[end:])
    assert topo_check._line_kind(text[:start] + busid + text[end:]) == judged
    assert topo_check._line_kind(text[:start] + "ffff" + busid[4:] + text[end:]) == judged


@settings(max_examples=300, deadline=None)
@given(which=st.integers(0, 3), at=st.integers(0, 10_000), cut=st.integers(0, 4),
       insert=st.text(alphabet=_EDIT_ALPHABET, max_size=3), busid=st.text(alphabet='0123456789abcdefF:.x" ', max_size=14))
def test_the_line_proof_says_the_same_whatever_it_judged_before(which: int, at: int, cut: int, insert: str,
                                                                busid: str) -> None:
    """An edit of a fabgen-shaped file (and the same with one bus id set to anything): the line proof answers the
    same judging it first in the process as after every line of the good files, and agrees with the full check."""
    texts = _lines_of_fabgen_shape(_generated_once())
    text = texts[which]
    at %= len(text) + 1
    edited = text[:at] + insert + text[at + cut:]
    found = re.search(r'busid="([^"]*)"', edited)
    other = edited if found is None else edited[:found.start(1)] + busid + edited[found.end(1):]
    saved = dict(topo_check._LINES)
    try:
        for fault in (edited, other):
            topo_check._LINES.clear()
            first = topo_check._clean_by_lines(fault)
            for good in texts:
                assert topo_check._clean_by_lines(good)
            assert topo_check._clean_by_lines(fault) == first
            _agree(fault)
    finally:
        topo_check._LINES.clear()
        topo_check._LINES.update(saved)
