"""Check an NCCL topology file (``NCCL_TOPO_FILE``) before NCCL ever sees it.

NCCL does not read topology files with an XML parser but with a small
hand-written one (``src/graph/xml.cc``). Well-formed XML can still abort
``ncclCommInit`` (an ``<?xml?>`` prolog, a tab, attributes split over two
lines), and several mistakes are silently ignored (an upper-case bus id, an
unknown ``link_speed``, ``010`` read as octal), so a schema alone is not
enough. The check runs in two passes:

1. ``_NcclScanner`` re-implements NCCL's tokenizer and element handlers
   (research notes: ``shared/reference/nccl.md`` §1.1-1.3) and reports, with
   exact line:col, whatever that parser rejects or misreads, plus the rules
   that need the whole tree (unique bus ids, ``class`` on switches, the node
   budget). It stops at the first error NCCL itself would stop at.
2. lxml parses the text and validates it against ``schemas/nccl-topo.xsd``
   (element nesting, required attributes, value types).

A problem found by both passes is reported once, by the first. The check is
meant to run on every generated file, so both passes are linear and the
schema is compiled once per thread.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from fabgen._resources import resource_path
from fabgen.bounded import MAX_XML_BYTES, read_bytes, xml_declaration_problem
from fabgen.errors import FabgenError, Problem
from fabgen.targets.memo import remember
from fabgen.targets.nccl import topo_proof

if TYPE_CHECKING:  # imported where used: only a file the proof cannot clear needs lxml (10 ms at every start)
    from lxml import etree

__all__ = ["check_topology_file", "check_topology_xml", "nccl_elements", "strtol0"]

# Limits of NCCL 2.30 (xml.h, topo.h). Names and values of 254+ characters are
# fatal; NCCL allocates 256 nodes for the file *and* for what it detects later.
MAX_STR_LEN = 253
MAX_ATTRS = 16
MAX_NODES = 256

# kvDictPciGen (topo.cc): any other string silently becomes 8 GT/s.
LINK_SPEEDS = frozenset(
    {
        "2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s",
        "2.5 GT/s PCIe", "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe",
        "32.0 GT/s PCIe", "64.0 GT/s PCIe",
    }
)  # fmt: skip

# Which child elements each NCCL handler accepts (xml.cc ncclTopoXmlLoad*).
# Anything else is skipped with its subtree and is not counted as a node.
_TOP = "#top"
_HANDLERS: dict[str, frozenset[str]] = {
    _TOP: frozenset({"system"}),
    "system": frozenset({"cpu"}),
    "cpu": frozenset({"pci", "nic"}),
    "pci": frozenset({"pci", "gpu", "nic", "pcilink"}),
    "gpu": frozenset({"nvlink", "c2c"}),
    "nic": frozenset({"net"}),
}
_NO_HANDLERS: frozenset[str] = frozenset()

# Attributes NCCL reads with strtol(value, NULL, 0): a leading 0 means octal.
_INT_ATTRS: dict[str, frozenset[str]] = {
    "cpu": frozenset({"numaid", "familyid", "modelid", "keep"}),
    "pci": frozenset({"link_width", "keep"}),
    "gpu": frozenset({"dev", "sm", "rank", "gdr", "mlopart", "keep"}),
    "nvlink": frozenset({"count"}),
    "c2c": frozenset({"count", "bw"}),
    "nic": frozenset({"keep"}),
    "net": frozenset(
        {"dev", "speed", "port", "maxconn", "gdr", "coll", "net", "gin", "rma", "rail", "plane", "keep"}
    ),
}

_BUSID = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]")
_SHORT_BUSID = re.compile(r"[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-9a-fA-F]")
_OCTAL_LOOKING = re.compile(r"[ \n\r]*[+-]?0[0-9]")
_FAKE_DOMAIN = "ffff"

# Scanning primitives: a run of name characters, as xmlGetToken reads them.
# Tab is excluded only so that it can be reported where it is.
_NAME_RUN = re.compile(r"[^=\t >/\n\r]*")
_COMMENT_WORD = re.compile(r"[^= >/\n\r]*")
_BETWEEN_TAGS = " \n\r"


@dataclass(slots=True)
class _Attr:
    """One attribute as NCCL stores it; ``pos`` is the offset of its name."""

    name: str
    value: str | None
    pos: int


@dataclass(slots=True)
class _Tag:
    """An open or self-closing tag; ``attrs`` holds every attribute written."""

    name: str
    pos: int
    attrs: list[_Attr]
    single: bool

    def attr(self, name: str) -> _Attr | None:
        """First attribute called ``name``, the one NCCL's xmlGetAttr returns."""
        for a in self.attrs[:MAX_ATTRS]:
            if a.name == name:
                return a
        return None


@dataclass(slots=True)
class _Close:
    """A closing tag; NCCL requires it to name the element it closes."""

    name: str
    pos: int


@dataclass(slots=True)
class _Node:
    """An element NCCL keeps (it has a handler), i.e. one of its XML nodes."""

    tag: _Tag
    children: list[_Node] = field(default_factory=list)


@dataclass(slots=True)
class _Frame:
    """One xmlLoadSub call: the open element and the handlers it accepts."""

    tag: _Tag | None
    node: _Node | None
    handlers: frozenset[str]


class _Fatal(Exception):
    """NCCL's parser would stop here; so does the scan."""

    def __init__(self, pos: int, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


class _NcclScanner:
    """NCCL's topology-file parser, reporting problems instead of failing.

    The methods mirror xml.cc: ``_next_node`` is xmlGetNode, ``_token`` is
    xmlGetToken, ``_value`` is xmlGetValue and ``scan`` is xmlLoadSub with its
    handler tables, made iterative so deep nesting cannot exhaust the stack.
    """

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.n = len(text)
        self.file = file
        self.pos = 0
        self.problems: list[Problem] = []
        self.tags: list[_Tag] = []
        self.roots: list[_Node] = []
        self.fatal = False
        self.plain = True
        """Every tag took :meth:`_plain_tag`'s shape (a precondition of :func:`topo_proof.schema_valid`)."""
        self.comments: list[str] = []
        self._line_starts = [0]
        start = text.find("\n")
        while start >= 0:
            self._line_starts.append(start + 1)
            start = text.find("\n", start + 1)

    # -- positions and reporting -------------------------------------------

    def loc(self, pos: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        index = bisect_right(self._line_starts, pos) - 1
        return index + 1, pos - self._line_starts[index] + 1

    def report(self, pos: int, message: str) -> None:
        line, col = self.loc(pos)
        self.problems.append(Problem(message, self.file, line, col))

    def _where(self, pos: int) -> str:
        line, col = self.loc(pos)
        return f"{line}:{col}"

    # -- the tree: xmlLoadSub ------------------------------------------------

    def scan(self) -> None:
        """Read the whole file the way NCCL does, then check the tree it built."""
        try:
            self._load()
        except _Fatal as stop:
            self.fatal = True
            self.report(stop.pos, stop.message)
        self._check_tree()

    def _load(self) -> None:
        stack = [_Frame(None, None, _HANDLERS[_TOP])]
        count = 0
        while True:
            frame = stack[-1]
            item = self._next_node()
            if item is None:
                if frame.tag is not None:
                    raise _Fatal(frame.tag.pos, f"<{frame.tag.name}> is never closed")
                return
            if isinstance(item, _Close):
                if frame.tag is None:
                    raise _Fatal(item.pos, f"closing tag </{item.name}> without an open element")
                if item.name != frame.tag.name:
                    raise _Fatal(
                        item.pos,
                        f"</{item.name}> does not close <{frame.tag.name}> "
                        f"opened at {self._where(frame.tag.pos)}",
                    )
                stack.pop()
                continue
            tag = item
            self.tags.append(tag)
            if tag.name not in frame.handlers:
                if frame.tag is None:
                    self.report(tag.pos, f"top-level <{tag.name}> is ignored by NCCL: the root must be <system>")
                if not tag.single:
                    stack.append(_Frame(tag, None, _NO_HANDLERS))
                continue
            node = _Node(tag)
            if frame.node is None:
                self.roots.append(node)
            else:
                frame.node.children.append(node)
            count += 1
            if count == MAX_NODES:
                # NCCL checks the budget before reading each further tag (and
                # there is always one more read), so node 256 already fails.
                raise _Fatal(
                    tag.pos,
                    f"node {MAX_NODES}: NCCL's parser is limited to {MAX_NODES} nodes "
                    f"(at most {MAX_NODES - 1} in the file, fewer once NCCL adds the "
                    "GPUs and NICs it detects)",
                )
            if not tag.single:
                stack.append(_Frame(tag, node, _HANDLERS.get(tag.name, _NO_HANDLERS)))

    # -- tags: xmlGetNode ------------------------------------------------------

    def _next_node(self) -> _Tag | _Close | None:
        text, n = self.text, self.n
        while True:
            pos = self.pos
            while pos < n and text[pos] in _BETWEEN_TAGS:
                pos += 1
            self.pos = pos
            if pos >= n:
                return None
            char = text[pos]
            if char != "<":
                raise _Fatal(pos, _stray(char))
            if text.startswith("!--", pos + 1):
                self._skip_comment(pos)
                continue
            return self._tag(pos)

    def _skip_comment(self, lt: int) -> None:
        """xmlSkipComment, including its traps on the comment's first word.

        NCCL first reads ``!--word`` as an element name, so an ``=`` in that
        word, or a word longer than a name may be, is fatal.
        """
        start = lt + 1
        end = _run_end(_COMMENT_WORD, self.text, start)
        if end >= self.n:
            raise _Fatal(lt, "comment is never closed with '-->'")
        if self.text[end] == "=":
            raise _Fatal(
                end,
                "'=' in the first word of a comment: NCCL's parser reads that word as a "
                "tag name and fails; put a space before it",
            )
        if end - start > MAX_STR_LEN:
            raise _Fatal(
                lt,
                f"first word of a comment is longer than {MAX_STR_LEN} characters: "
                "NCCL's parser fails; break it with a space",
            )
        close = self.text.find("-->", lt + 4)
        if close < 0:
            raise _Fatal(lt, "comment is never closed with '-->'")
        self.comments.append(self.text[lt + 4:close])
        self.pos = close + 3

    def _tag(self, lt: int) -> _Tag | _Close:
        fast = self._plain_tag(lt)
        if fast is not None:
            return fast
        self.plain = False
        self.pos = lt + 1
        name, _, last = self._token(value_allowed=False)
        if name.startswith("?"):
            raise _Fatal(lt, "XML declaration <?...?> is not supported by NCCL's parser; remove it")
        if name.startswith("!"):
            raise _Fatal(lt, f"markup declaration <{name} ...> is not understood by NCCL's parser")
        if name == "" and last == "/":
            closing, _, last = self._token(value_allowed=False)
            if last != ">":
                raise _Fatal(
                    self.pos - 1,
                    f"unexpected {last!r} in closing tag </{closing}>: NCCL wants '</{closing}>' exactly",
                )
            return _Close(closing, lt)
        if name == "":
            raise _Fatal(lt + 1, "'<' must be followed directly by an element name")

        attrs: list[_Attr] = []
        seen: set[str] = set()
        while last == " ":
            key_pos = self.pos
            key, value, last = self._token(value_allowed=True)
            ended_on = self.text[key_pos] if key_pos < self.n else ""
            if key == "" and value is None:
                if ended_on in "/>":
                    end = "'/>'" if ended_on == "/" else "'>'"
                    self.report(key_pos - 1, f"space before {end}: NCCL stores it as an empty attribute")
                elif ended_on == " ":
                    self.report(key_pos, "two spaces between attributes: NCCL stores an empty attribute")
                else:  # a line break follows; the fatal error below explains it
                    continue
            elif key == "":
                self.report(key_pos, "attribute without a name")
            elif value is None:
                self.report(key_pos, f"attribute '{key}' has no value: NCCL reads it as empty")
            if len(attrs) == MAX_ATTRS:
                self.report(
                    key_pos,
                    f"more than {MAX_ATTRS} attributes on <{name}>: NCCL ignores this one and those after it",
                )
            if key and key in seen:
                self.report(key_pos, f"duplicate attribute '{key}': NCCL uses the first one")
            seen.add(key)
            attrs.append(_Attr(key, value, key_pos))

        single = False
        if last == "/":
            single = True
            junk_pos = self.pos
            junk, _, last = self._token(value_allowed=False)
            if junk:
                self.report(junk_pos, f"unexpected '{junk}' between '/' and '>'")
        if last != ">":
            where = self.pos - 1
            if last in "\n\r":
                raise _Fatal(
                    where,
                    f"line break inside <{name}>: NCCL's parser needs the whole start tag, "
                    "all attributes included, on one line",
                )
            raise _Fatal(where, f"expected '>' to end <{name}>, got {last!r}")
        # Only the first MAX_ATTRS are stored by NCCL; keep the rest for locating schema errors.
        return _Tag(name, lt, attrs, single)

    def _plain_tag(self, lt: int) -> _Tag | _Close | None:
        """The tag at ``lt`` if it is of the plain shape fabgen writes, else None (the full reader takes it).

        Plain: a name, single-spaced ``key="value"`` pairs of distinct keys, then
        ``>`` or ``/>``, with every name and value within NCCL's lengths and no
        value holding a character the reader reports. On such a tag the
        character-by-character reader reports nothing and builds this same tag,
        so one regular expression match stands in for it (tests prove the two agree).
        """
        text = self.text
        gt = text.find(">", lt)
        if gt < 0:
            return None
        if text.startswith("</", lt):
            name = text[lt + 2:gt]
            if len(name) > MAX_STR_LEN or not _PLAIN_NAME.fullmatch(name):
                return None
            self.pos = gt + 1
            return _Close(name, lt)
        match = _PLAIN_TAG.match(text, lt)
        if match is None or match.end() != gt + 1 or len(match[1]) > MAX_STR_LEN:
            return None  # a '>' inside a value ends the match early: never plain
        attrs: list[_Attr] = []
        seen: set[str] = set()
        for pair in _PLAIN_ATTR.finditer(text, match.start(2), match.end(2)):
            key, value = pair[1], pair[2]
            if len(key) > MAX_STR_LEN or len(value) > MAX_STR_LEN or key in seen:
                return None
            seen.add(key)
            attrs.append(_Attr(key, value, pair.start(1)))
        if len(attrs) > MAX_ATTRS:
            return None
        self.pos = gt + 1
        return _Tag(match[1], lt, attrs, match[3] == "/")

    def _token(self, value_allowed: bool) -> tuple[str, str | None, str]:
        """xmlGetToken: a name up to ``' ' > / \\n \\r``, or ``name="value"``.

        Returns (name, value or None, the character after the token); like
        NCCL, that character is consumed and decides what comes next.
        """
        start = self.pos
        end = _run_end(_NAME_RUN, self.text, start)
        if end >= self.n:
            raise _Fatal(min(start, self.n - 1), "unexpected end of file inside a tag")
        if end - start > MAX_STR_LEN:
            raise _Fatal(start, f"name longer than {MAX_STR_LEN} characters: NCCL's parser fails")
        char = self.text[end]
        if char == "\t":
            raise _Fatal(end, "tab character: NCCL's parser only accepts single spaces inside a tag")
        name = self.text[start:end]
        if char != "=":
            self.pos = end + 1
            return name, None, char
        if not value_allowed:
            raise _Fatal(end, f"unexpected '=' after the element name '{name}'")
        value = self._value(end + 1)
        return name, value, self.text[self.pos - 1]

    def _value(self, pos: int) -> str:
        """xmlGetValue: a quoted value, taken literally (no entities, no escapes)."""
        if pos >= self.n:
            raise _Fatal(self.n - 1, "unexpected end of file inside a tag")
        quote = self.text[pos]
        if quote not in "\"'":
            raise _Fatal(pos, "value must be in quotes: NCCL's parser fails on unquoted values")
        close = self.text.find(quote, pos + 1)
        if close < 0:
            raise _Fatal(pos, f"value opened with {quote} is never closed")
        value = self.text[pos + 1 : close]
        if len(value) > MAX_STR_LEN:
            raise _Fatal(pos + 1, f"value longer than {MAX_STR_LEN} characters: NCCL's parser fails")
        for char, message in _VALUE_TRAPS:
            index = value.find(char)
            if index >= 0:
                self.report(pos + 1 + index, message)
        if close + 1 >= self.n:
            raise _Fatal(close, "unexpected end of file inside a tag")
        self.pos = close + 2
        return value

    # -- the tree: rules over the nodes NCCL keeps ----------------------------

    def _check_tree(self) -> None:
        if not self.roots and not self.fatal and not self.problems:
            self.report(0, "no <system> element: NCCL would load nothing from this file")
        for extra in self.roots[1:]:
            self.report(extra.tag.pos, "second <system>: a topology file has exactly one root")
        busids: dict[str, int] = {}
        for root in self.roots:
            version = root.tag.attr("version")
            if version is None:
                self.report(root.tag.pos, '<system> needs version="1" (NCCL refuses the file without it)')
            elif version.value != "1":
                self.report(version.pos, f'version="{version.value}": NCCL only reads version="1"')
            stack = list(reversed(root.children))  # document order, so "first" means first
            while stack:
                node = stack.pop()
                self._check_node(node, busids)
                stack.extend(reversed(node.children))

    def _check_node(self, node: _Node, busids: dict[str, int]) -> None:
        tag = node.tag
        for attr in tag.attrs[:MAX_ATTRS]:
            if attr.name in _INT_ATTRS.get(tag.name, _NO_HANDLERS) and attr.value is not None:
                self._check_int(attr)
        if tag.name != "pci":
            return
        busid = tag.attr("busid")
        if busid is not None and busid.value is not None:
            self._check_busid(busid, busids)
        is_switch = any(child.tag.name == "pci" for child in node.children)
        is_fake = busid is not None and (busid.value or "").startswith(_FAKE_DOMAIN + ":")
        if (is_switch or is_fake) and tag.attr("class") is None:
            kind = "children (a PCI switch)" if is_switch else "a made-up bus id (domain ffff)"
            self.report(
                tag.pos,
                f'<pci> with {kind} must carry class (e.g. class="0x060400"): '
                "NCCL can only read the class of a real device from sysfs",
            )
        speed = tag.attr("link_speed")
        if speed is not None and speed.value not in LINK_SPEEDS:
            self.report(
                speed.pos,
                f'link_speed="{speed.value}" is not one of NCCL\'s strings, so NCCL assumes 8 GT/s; '
                'use e.g. "16.0 GT/s PCIe", "32.0 GT/s PCIe" or "64.0 GT/s PCIe"',
            )

    def _check_busid(self, attr: _Attr, seen: dict[str, int]) -> None:
        value = attr.value or ""
        if not _BUSID.fullmatch(value):
            if _BUSID.fullmatch(value.lower()):
                hint = f"NCCL compares bus ids as exact strings against lower-case ones: write {value.lower()}"
            elif _SHORT_BUSID.fullmatch(value):
                hint = f"NCCL needs the 4-digit domain: write 0000:{value.lower()}"
            else:
                hint = "NCCL's form is dddd:bb:dd.f, lower-case hex, e.g. 0000:17:00.0"
            self.report(attr.pos, f"bus id '{value}' would never match a device: {hint}")
            return
        if value in seen:
            self.report(
                attr.pos,
                f"bus id {value} already used at {self._where(seen[value])}: "
                "NCCL finds PCI nodes by bus id and would only see the first",
            )
        else:
            seen[value] = attr.pos

    def _check_int(self, attr: _Attr) -> None:
        value = attr.value or ""
        if _OCTAL_LOOKING.match(value):
            body = value.strip()
            meant = ("-" if body.startswith("-") else "") + (body.lstrip("+-").lstrip("0") or "0")
            self.report(
                attr.pos,
                f'{attr.name}="{value}": a leading 0 makes NCCL read it as octal '
                f"({strtol0(value)}); write {meant}",
            )


_PLAIN_NAME = re.compile(r'[^=\t >/\n\r"]+')
_PLAIN_ATTR_TEXT = r' ([^=\t >/\n\r"]+)="([^"\t\n&<>]*)"'
_PLAIN_TAG = re.compile(r'<([^=\t >/\n\r"?!][^=\t >/\n\r"]*)((?:' + _PLAIN_ATTR_TEXT.replace("(", "(?:") + r')*)(/?)>')
_PLAIN_ATTR = re.compile(_PLAIN_ATTR_TEXT)
"""The plain shape of :meth:`_NcclScanner._plain_tag`: :data:`_NAME_RUN`'s name characters, without quotes,
single-spaced ``key="value"`` pairs whose values hold none of :data:`_VALUE_TRAPS` (nor '>'); one match per tag."""

_VALUE_TRAPS: tuple[tuple[str, str], ...] = (
    ("\t", "tab character inside a value: NCCL keeps it literally"),
    ("\n", "line break inside a value: NCCL keeps it literally"),
    ("&", "'&' in a value: NCCL does not decode entities, so '&amp;' would reach it literally"),
    ("<", "'<' in a value is not valid XML"),
)
_TRAP_CHARS = re.compile("[" + re.escape("".join(char for char, _ in _VALUE_TRAPS)) + "]")


def _run_end(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """End of the run of ``pattern`` characters starting at ``pos``."""
    match = pattern.match(text, pos)
    return match.end() if match else pos


def _stray(char: str) -> str:
    """Why a character between tags stops NCCL's parser."""
    if char == "\t":
        return "tab character: NCCL's parser only accepts spaces and line breaks between tags"
    if char == "\ufeff":
        return "byte-order mark: NCCL's parser expects '<' as the very first byte"
    return f"text {char!r} outside a tag: NCCL's parser expects '<'"


def strtol0(text: str) -> int:
    """What C's ``strtol(text, NULL, 0)`` returns: how NCCL reads an integer attribute (``0x`` hex, a leading ``0``
    octal)."""
    body = text.lstrip(" \n\r\t")
    sign = -1 if body.startswith("-") else 1
    body = body.lstrip("+-")
    if body[:2].lower() == "0x":
        base, body = 16, body[2:]
    elif body.startswith("0"):
        base = 8
    else:
        base = 10
    digits = "0123456789abcdef"[:base]
    end = 0
    while end < len(body) and body[end].lower() in digits:
        end += 1
    return sign * int(body[:end], base) if end else 0


# -- pass 2: well-formedness and the schema --------------------------------------

_SCHEMA_MESSAGE = re.compile(r"Element '([^']+)'(?:, attribute '([^']+)')?: (.*)", re.DOTALL)


_per_thread = threading.local()


@cache
def _schema_document() -> etree._ElementTree:
    from lxml import etree

    return etree.parse(str(resource_path("schemas", "nccl-topo.xsd")))


def _schema() -> etree.XMLSchema:
    """The compiled schema, once per thread: the check runs on every generated
    file, and a validator keeps its error log, so threads must not share one."""
    from lxml import etree

    schema: etree.XMLSchema | None = getattr(_per_thread, "schema", None)
    if schema is None:
        schema = _per_thread.schema = etree.XMLSchema(_schema_document())
    return schema


def _proved_valid(scanner: _NcclScanner) -> bool:
    """The scanner's clean read of plain tags proves lxml would find nothing (:mod:`.topo_proof`)."""
    return (scanner.plain and not scanner.problems and not scanner.fatal
            and all(map(topo_proof.comment_proved, scanner.comments))
            and topo_proof.schema_valid(scanner.roots, len(scanner.tags)))


def _schema_problems(text: str, file: str, scanner: _NcclScanner) -> list[Problem]:
    """Well-formedness and schema errors, minus those the scanner already explained.

    lxml (and the schema, compiled on first use) only when the scanner's tree does not prove the file valid.
    """
    if _proved_valid(scanner):
        return []
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
    try:
        root = etree.fromstring(text.encode("utf-8", "surrogatepass"), parser)
    except etree.XMLSyntaxError:
        if scanner.fatal:
            return []  # same cause as the scanner's error, which is more precise
        taken = {p.line for p in scanner.problems}
        for entry in parser.error_log:
            if entry.line not in taken:
                return [Problem(f"not well-formed XML: {entry.message}", file, entry.line, entry.column)]
        return []
    schema = _schema()
    if schema.validate(root):
        return []
    by_line: dict[int, list[_Tag]] = {}
    for tag in scanner.tags:
        by_line.setdefault(scanner.loc(tag.pos)[0], []).append(tag)
    problems = []
    for entry in schema.error_log:
        line, col, message = _locate(entry, by_line, scanner)
        problems.append(Problem(message, file, line, col, entry.path or ""))
    return problems


def _locate(
    entry: etree._LogEntry, by_line: dict[int, list[_Tag]], scanner: _NcclScanner
) -> tuple[int, int, str]:
    """Line, column and message of a schema error, pointing at the attribute when named.

    libxml2 gives only the line of the element; the scanner knows the columns.
    """
    line, col = entry.line, 0
    message = entry.message.strip()
    match = _SCHEMA_MESSAGE.match(message)
    if match is None:
        return line, col, f"schema: {message}"
    element, attribute, detail = match.groups()
    for tag in by_line.get(line, []):
        if tag.name != element:
            continue
        pos = tag.pos
        for attr in tag.attrs:
            if attribute is not None and attr.name == attribute:
                pos = attr.pos
                break
        col = scanner.loc(pos)[1]
        break
    if "This element is not expected" in detail:
        detail += " NCCL would silently ignore it with everything inside it."
    elif "content type is empty" in detail:
        detail += f" NCCL would silently ignore what is inside <{element}>."
    elif attribute is not None and "is not allowed" in detail:
        detail += " NCCL ignores unknown attributes."
    subject = f"<{element}>" if attribute is None else f"<{element}> attribute '{attribute}'"
    return line, col, f"schema: {subject}: {detail}"


# -- the line-by-line proof --------------------------------------------------------

_LINE_TAG = re.compile(r' *<([a-z][a-z0-9]*)((?: [a-z_]+="[^"\t\n\r&<>]*")*)(/?)>')
_LINE_ATTR = re.compile(r' ([a-z_]+)="([^"]*)"')
_LINE_CLOSE = re.compile(r" *</([a-z][a-z0-9]*)>")
_BUSID_LINES = re.compile(f"(?:{_BUSID.pattern}\n)*")
"""Bus ids one per line, each of :data:`_BUSID`'s form: what :func:`_value_clean` asks of a ``<pci>`` bus id."""
_FAKE_DOMAIN_COLON = _FAKE_DOMAIN + ":"
_BUSID_OPEN = ' busid="'
_SOME_BUSID = "0000:00:00.0"
"""The bus id a line is judged with (:func:`_line_kind`): any of :data:`_BUSID`'s form gets the same verdict."""
_COMMENT, _CLOSE, _OPEN, _EMPTY = "comment", "close", "open", "empty"
_Kind = tuple[str, str, bool]
"""What one line is: (comment, close, open or empty (``<x .../>``), its element, whether it carries ``class``)."""
_LINES: dict[str, _Kind | None] = {}
"""A line, its first bus id's value cut out -> :func:`_line_kind` of it, None when the line proves nothing."""
_MAX_LINES = 4096
_NESTING = frozenset((parent, child) for parent, children in _HANDLERS.items() for child in children
                     if parent == _TOP or child in topo_proof.ELEMENTS[parent][0])
"""(parent, child) pairs that NCCL has a handler for and the schema allows (the top: only ``<system>``)."""


_VALUE_RULES: dict[tuple[str, str], tuple[str, str | None, bool]] = {
    (element, key): (kind, topo_proof.FIXED.get((element, key)), key in _INT_ATTRS.get(element, _NO_HANDLERS))
    for element, (_, attributes, _) in topo_proof.ELEMENTS.items() for key, kind in attributes.items()}
"""(element, attribute) -> (the schema's type, its fixed value or None, whether NCCL reads it with ``strtol``)."""


def _value_clean(element: str, key: str, value: str) -> bool:
    """Every single-value rule: the schema's type (and fixed value), NCCL's octal trap, bus id form, link speed."""
    kind, fixed, integer = _VALUE_RULES[element, key]
    return (len(value) <= MAX_STR_LEN and topo_proof.value_proved(kind, value)
            and (fixed is None or value == fixed)
            and not (integer and _OCTAL_LOOKING.match(value))
            and not (element == "pci" and key == "busid" and not _BUSID.fullmatch(value))
            and not (element == "pci" and key == "link_speed" and value not in LINK_SPEEDS))


def _shape_clean(element: str, busid_first: bool, rest: str) -> tuple[bool, bool]:
    """(Whether the attributes are known, distinct, few enough, hold the required and each value is clean;
    whether ``class`` is among them), for a tag whose attributes are ``rest``, after a bus id if ``busid_first``.

    The bus id's value is judged by the caller, with every bus id of the file. A bus id anywhere but first is
    not proved: the caller would not see it, to tell a bus id used twice or a made-up one without ``class``.
    """
    _, attributes, required = topo_proof.ELEMENTS[element]
    pairs = _LINE_ATTR.findall(rest)
    keys = [key for key, _ in pairs]
    names = set(keys)
    if busid_first:
        keys.append("busid")
        names.add("busid")
    elif "busid" in names:
        return False, "class" in names
    if not (len(keys) <= MAX_ATTRS and len(names) == len(keys) and names <= attributes.keys() and required <= names):
        return False, "class" in names
    for key, value in pairs:
        if not _value_clean(element, key, value):
            return False, "class" in names
    return True, "class" in names


def _line_kind(line: str) -> _Kind | None:
    """What ``line`` is, if it is one tag or one comment that every rule judging a line alone accepts; else None.

    A tag: known element, plain ``key="value"`` pairs (:func:`_shape_clean`), an
    element that must be empty written ``<x/>``. Where it sits in the tree is the
    caller's, line after line.
    """
    tag = _LINE_TAG.fullmatch(line)
    if tag is None:
        close = _LINE_CLOSE.fullmatch(line)
        if close is not None:
            return _CLOSE, close[1], False
        start = len(line) - len(line.lstrip(" "))
        if (line.startswith("<!-- ", start) and line.find("-->", start + 4) == len(line) - 3
                and topo_proof.comment_proved(line[start + 4:-3])):
            return _COMMENT, "", False
        return None
    name, attrs, single = tag[1], tag[2], tag[3] == "/"
    rule = topo_proof.ELEMENTS.get(name)
    if rule is None or not (rule[0] or single):
        return None
    busid_first = attrs.startswith(_BUSID_OPEN)
    clean, has_class = _shape_clean(name, busid_first, attrs[attrs.index('"', 8) + 1:] if busid_first else attrs)
    return (_EMPTY if single else _OPEN, name, has_class) if clean else None


def _clean_by_lines(text: str) -> bool:
    """True only if :func:`check_topology_xml` finds nothing: a proof from one pass over lines, or "cannot tell".

    Why: the scanner builds a tag, attribute and node object per element and
    the schema proof walks them again, three times printing the file. A file
    of the shape fabgen writes (one tag or one ``<!-- -->`` comment per line,
    spaces before it and nothing after, lower-case names, plain ``key="value"``
    pairs) is judged here line by line: every rule of the scanner (handlers,
    nesting, node budget, octal, bus ids and their uniqueness, link speeds,
    ``class`` on switches and made-up bus ids) and of
    :func:`topo_proof.schema_valid` (known elements and attributes, typed
    values, required and fixed ones, empty elements written ``<x/>``, one
    ``<system>`` root). These accept a subset of what the two passes accept;
    on anything else (any doubt) it answers False and the full check runs, so
    a file with a problem always gets the scanner's and lxml's own messages.

    What a line is alone (:func:`_line_kind`, a regular expression and each
    value's rules) is judged once per process for each distinct line with its
    first bus id's value cut out, the one value that differs between a
    profile's many ``<pci>`` lines: it is judged with :data:`_SOME_BUSID` in
    that place, which gets the verdict of any bus id of :data:`_BUSID`'s form,
    and every value cut out must be of that form (all at once, at the end, with
    their uniqueness), or the answer is False. Where the line sits (nesting,
    roots, nodes, ``class`` on a switch, a made-up bus id) is judged for every
    line. ``tests/targets/nccl/test_nccl_topo_proof.py`` and
    ``test_nccl_topo_check.py`` plant faults and show that this never says
    clean where the full check reports a problem, and that what it says does not
    depend on the lines it judged before.
    """
    stack: list[tuple[str, bool]] = []  # open elements: (name, carries class)
    roots = nodes = 0
    busids: list[str] = []
    known = _LINES
    for line in text.split("\n"):
        if not line:
            continue
        busid = ""
        at = line.find(_BUSID_OPEN)
        if at >= 0:  # cut the value out: the line is known by the rest
            at += len(_BUSID_OPEN)
            end = line.find('"', at)
            if end < 0:
                return False
            busid = line[at:end]
            busids.append(busid)
            line = line[:at] + line[end:]
        if line in known:
            kind = known[line]
        else:
            kind = remember(known, line, _line_kind(line if at < 0 else line[:at] + _SOME_BUSID + line[at:]),
                            _MAX_LINES)
        if kind is None:
            return False
        what, name, has_class = kind
        if busid.startswith(_FAKE_DOMAIN_COLON) and not has_class:
            return False
        if what == _COMMENT:
            continue
        if what == _CLOSE:
            if not stack or stack.pop()[0] != name:
                return False
            continue
        parent, parent_class = stack[-1] if stack else (_TOP, False)
        if (parent, name) not in _NESTING or (name == "pci" and parent == "pci" and not parent_class):
            return False  # no handler, not in the schema, or a switch (a <pci> with a <pci> inside) without class
        nodes += 1
        roots += not stack
        if nodes >= MAX_NODES:
            return False
        if what == _OPEN:
            stack.append((name, has_class))
    # Every bus id at once: the scanner's form (the schema's BusId is the same pattern) and none used twice.
    return (roots == 1 and not stack and len(set(busids)) == len(busids)
            and _BUSID_LINES.fullmatch("".join(busid + "\n" for busid in busids)) is not None)


# -- public API -----------------------------------------------------------------------


def check_topology_xml(text: str, file: str = "<topology>") -> list[Problem]:
    """Every reason NCCL would reject, ignore or misread this topology file.

    Returns problems sorted by position, each with a 1-based line and column;
    an empty list means NCCL reads the file as written.
    """
    declared = xml_declaration_problem(text, file)
    if declared is not None:
        return [declared]
    if _clean_by_lines(text):
        return []
    scanner = _NcclScanner(text, file)
    scanner.scan()
    problems = list(scanner.problems)
    reported = {(p.line, p.col) for p in problems}
    for problem in _schema_problems(text, file, scanner):
        if (problem.line, problem.col) not in reported:
            reported.add((problem.line, problem.col))
            problems.append(problem)
    problems.sort(key=lambda p: (p.line, p.col))
    return problems


def nccl_elements(text: str, file: str = "<topology>") -> tuple[list[tuple[int, str, dict[str, str], int]],
                                                                 list[Problem]]:
    """The elements NCCL keeps from ``text``, in document order: (depth, element, attributes, line); and what NCCL's
    parser refuses or misreads in it (the first pass of :func:`check_topology_xml`, not fabgen's schema).

    The attributes are what NCCL's ``xmlGetAttr`` returns: the first of each
    name among the first :data:`MAX_ATTRS`. ``lint --deployed`` reads a
    collected file back with it; where NCCL's parser would stop, the elements
    are those before.
    """
    if (declared := xml_declaration_problem(text, file)) is not None:
        return [], [declared]
    scanner = _NcclScanner(text, file)
    scanner.scan()
    out: list[tuple[int, str, dict[str, str], int]] = []
    stack = [(0, root) for root in reversed(scanner.roots)]
    while stack:
        depth, node = stack.pop()
        attrs: dict[str, str] = {}
        for attr in node.tag.attrs[:MAX_ATTRS]:
            attrs.setdefault(attr.name, attr.value or "")
        out.append((depth, node.tag.name, attrs, scanner.loc(node.tag.pos)[0]))
        stack.extend((depth + 1, child) for child in reversed(node.children))
    return out, sorted(scanner.problems, key=lambda p: (p.line or 0, p.col or 0))


def check_topology_file(path: Path) -> list[Problem]:
    """:func:`check_topology_xml` on a file; unreadable or non-UTF-8 input is one problem."""
    file = str(path)
    try:
        data = read_bytes(path, MAX_XML_BYTES, what="topology file")
    except FabgenError as error:
        return error.problems
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        line = data.count(b"\n", 0, error.start) + 1
        col = len(data[line_start : error.start].decode("utf-8")) + 1
        return [Problem(f"not UTF-8: byte 0x{data[error.start]:02x} cannot be decoded", file, line, col)]
    return check_topology_xml(text, file)
