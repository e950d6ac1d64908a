"""The two per-host NCCL environment files: ``nccl.conf`` and the systemd ``nccl.env``.

Both must hand NCCL byte-identical values, but their readers disagree on almost
everything:

* NCCL's conf reader (``setEnvFile``, misc/param.cc, 2.30.7) reads ``fgets`` chunks
  of at most 4095 bytes, strips one ``\\n`` and then one ``\\r``, skips a line only if
  column 0 is ``#``, splits at the first ``=``, keeps every other byte (spaces,
  quotes, ``export``), cuts name and value at 1023 bytes, and applies each pair with
  ``setenv(name, value, 0)`` -- so the *first* assignment of a name wins.
* systemd's ``EnvironmentFile=`` reader (``parse_env_file_internal``, src/basic/env-file.c)
  skips blank and ``#``/``;`` comment lines even when indented, trims whitespace
  around keys and unquoted values, understands ``'...'``, ``"..."`` and backslash
  escapes, joins lines ending in ``\\``, drops assignments whose name or value is
  invalid (``env_assignment_is_valid``), and lets the *last* assignment win.

fabgen therefore writes values that need no interpretation in ``nccl.conf`` and
backslash-escapes them in ``nccl.env``. Unquoted backslash escapes (``\\X`` -> ``X``)
are the one systemd rule that has not changed across versions; what a backslash
means inside double quotes changed in v241 and again in v247 (systemd PRs #11427,
#17027). The escaped characters also cover the POSIX shell's special characters,
so ``set -a; . nccl.env`` in a shell yields the same values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from fabgen.errors import FabgenError, Problem
from fabgen.targets.nccl.variables import format_value

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""Names both readers accept: systemd's ``env_name_is_valid`` and what NCCL's setenv stores."""
NCCL_CHUNK_BYTES = 4095
"""``fgets(line, 4096, ...)``: longer lines are read as several "lines"."""
NCCL_FIELD_BYTES = 1023
"""``char envVar[1024]``/``envValue[1024]`` in ``setEnvFile``."""

_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
"""Bytes neither file can carry: C0/C1 controls except tab (systemd rejects them; newline
and CR end a line), Unicode line/paragraph separators (editors and some tools break
lines there), lone surrogates (not encodable as UTF-8)."""
_SYSTEMD_ESCAPE = re.compile(r"""[ \t\\'"$`#;&|<>()*?\[\]~{}!]""")
"""Characters escaped in ``nccl.env``: systemd needs ``\\``, quotes and whitespace escaped;
the rest are escaped so a POSIX shell reads the file the same way."""


@dataclass(frozen=True, slots=True)
class EnvEntry:
    """One assignment as a reader saw it; ``line`` is 1-based in the file's text."""

    name: str
    value: str
    line: int


# --------------------------------------------------------------------------- writing


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _check_env(env: Mapping[str, object], header: list[str], file: str) -> tuple[str, _Formatted]:
    """``(first header line as a comment, the rest of both files)``, or FabgenError listing everything neither
    file format can carry."""
    rest = _format_rest(tuple(header[1:]), tuple(env.items()))
    first = _header_problem(header[0]) if header else None
    if first is not None or rest.problems:
        raise FabgenError([*([Problem(first, file=file, path="header[0]")] if first is not None else []),
                           *(Problem(message, file=file, path=path) for message, path in rest.problems)])
    return (_comment(header[0]) + "\n" if header else ""), rest


@dataclass(frozen=True, slots=True)
class _Formatted:
    """Both files after their first line, or what neither file can carry."""

    problems: tuple[tuple[str, str], ...]
    """(message, where: ``header[N]`` or the variable) of everything refused; all of it is checked."""
    conf: str
    env: str


def _format_rest(header: tuple[str, ...], items: tuple[tuple[object, object], ...]) -> _Formatted:
    """Check and print header lines 2.. and the assignments (``header`` here starts at the file's second line)."""
    problems = [(message, f"header[{index}]") for index, line in enumerate(header, start=1)
                if (message := _header_problem(line)) is not None]
    values = _assignments(items, problems)
    comments = "".join(_comment(line) + "\n" for line in header)
    return _Formatted(tuple(problems), comments + "".join(f"{name}={value}\n" for name, value in values),
                      comments + "".join(f"{name}={systemd_escape(value)}\n" for name, value in values))


def _header_problem(line: str) -> str | None:
    if _UNSAFE.search(line):
        return "header line contains a line break or control character"
    if line.endswith("\\"):
        return "header line ends with '\\': systemd before v254 continues the comment onto the next line"
    if _utf8_len(_comment(line)) > NCCL_CHUNK_BYTES:
        return f"header line longer than {NCCL_CHUNK_BYTES} bytes: NCCL would read its tail as a new line"
    return None


def _assignments(items: tuple[tuple[object, object], ...], problems: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The assignments both files can carry as ``(name, text)``; (message, variable) of the others go to ``problems``."""
    values: list[tuple[str, str]] = []
    for name, raw in items:
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            problems.append((f"{name!r} is not a valid variable name (letters, digits, '_'; no leading digit)",
                             str(name)))
            continue
        if _utf8_len(name) > NCCL_FIELD_BYTES:
            problems.append((f"name longer than {NCCL_FIELD_BYTES} bytes: NCCL truncates it", name))
            continue
        try:
            value = format_value(raw)  # type: ignore[arg-type]
        except TypeError as exc:
            problems.append((str(exc), name))
            continue
        bad = _UNSAFE.search(value)
        if bad:
            problems.append((f"{name} contains {bad.group()!r}: a line break or control character cannot be "
                             "written to nccl.conf (it would end the line and inject the rest)", name))
        elif value != value.strip():
            problems.append((f"{name}={value!r} has leading or trailing whitespace: NCCL keeps it, systemd strips "
                             "it unless escaped, and nobody sees it", name))
        elif _utf8_len(value) > NCCL_FIELD_BYTES:
            problems.append((f"{name} value is {_utf8_len(value)} bytes; NCCL truncates conf values at "
                             f"{NCCL_FIELD_BYTES}", name))
        elif _utf8_len(f"{name}={value}") > NCCL_CHUNK_BYTES:
            problems.append((f"{name} line longer than {NCCL_CHUNK_BYTES} bytes: NCCL splits it", name))
        else:
            values.append((name, value))
    return values


def _comment(line: str) -> str:
    """A header entry as a comment line; entries that already start with '#' stay as they are."""
    if line.startswith("#"):
        return line
    return f"# {line}" if line else "#"


def format_nccl_conf(env: Mapping[str, str], header: list[str], *, file: str = "nccl.conf") -> str:
    """``NAME=value`` lines exactly as NCCL's ``setEnvFile`` reads them, keys in the given order.

    No ``export``, no quotes, no spaces around ``=``, comments only as whole lines
    starting with ``#``, ``\\n`` endings. Raises FabgenError (naming ``file``) for any
    value NCCL would read differently than written.
    """
    first, rest = _check_env(env, header, file)
    return first + rest.conf


def systemd_escape(value: str) -> str:
    """Escape ``value`` for an unquoted systemd ``EnvironmentFile=`` assignment."""
    return _SYSTEMD_ESCAPE.sub(lambda m: "\\" + m.group(), value)


def format_systemd_env(env: Mapping[str, str], header: list[str], *, file: str = "nccl.env") -> str:
    """The same assignments for ``EnvironmentFile=``, escaped so systemd passes each value unchanged.

    ``NCCL_IB_HCA==mlx5_0:1`` needs no escaping (a leading ``=`` is ordinary text for
    systemd); ``#x`` becomes ``\\#x``, ``a b`` becomes ``a\\ b``, ``$HOME`` stays
    literal as ``\\$HOME``. Refuses what :func:`format_nccl_conf` refuses, so the two
    files always agree.
    """
    first, rest = _check_env(env, header, file)
    return first + rest.env


# --------------------------------------------------------------------------- reading NCCL


def iter_nccl_conf(text: str) -> list[EnvEntry]:
    """Every assignment NCCL 2.30.7 would make from ``text``, in file order, duplicates kept.

    Mirrors ``setEnvFile``: 4095-byte ``fgets`` chunks, one ``\\n`` then one ``\\r``
    stripped, ``#`` only in column 0, split at the first ``=``, name and value cut at
    1023 bytes, a NUL ends the C string. Entries with an empty name are dropped
    (``setenv`` rejects them). NCCL before 2.30.7 used ``getline`` (no chunking) and
    kept a trailing ``\\r`` in the value.
    """
    data = text.encode("utf-8", "surrogateescape")
    entries: list[EnvEntry] = []
    line_no, pos = 1, 0
    while pos < len(data):
        newline = data.find(b"\n", pos, pos + NCCL_CHUNK_BYTES)
        end = newline + 1 if newline != -1 else min(pos + NCCL_CHUNK_BYTES, len(data))
        chunk, this_line, pos = data[pos:end], line_no, end
        if newline != -1:
            line_no += 1
        chunk = chunk.split(b"\0", 1)[0]
        if chunk.endswith(b"\n"):
            chunk = chunk[:-1]
        if chunk.endswith(b"\r"):
            chunk = chunk[:-1]
        if chunk.startswith(b"#") or b"=" not in chunk:
            continue
        name, _, value = chunk.partition(b"=")
        name, value = name[:NCCL_FIELD_BYTES], value[:NCCL_FIELD_BYTES]
        if name:
            entries.append(EnvEntry(_decode(name), _decode(value), this_line))
    return entries


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def parse_nccl_conf_located(text: str, file: str = "nccl.conf", *, strict: bool = False) -> dict[str, tuple[str, int]]:
    """``{name: (value, line)}`` as NCCL applies the file: the first assignment of a name wins.

    With ``strict``, raise FabgenError (``file:line: ...``) if any line is read
    differently from how a human would read it (see :func:`nccl_conf_problems`).
    """
    if strict:
        problems = nccl_conf_problems(text, file)
        if problems:
            raise FabgenError(problems)
    result: dict[str, tuple[str, int]] = {}
    for entry in iter_nccl_conf(text):
        result.setdefault(entry.name, (entry.value, entry.line))
    return result


def parse_nccl_conf(text: str, file: str = "nccl.conf", *, strict: bool = False) -> dict[str, str]:
    """``{name: value}`` exactly as NCCL reads ``text`` (see :func:`parse_nccl_conf_located`)."""
    return {name: value for name, (value, _) in parse_nccl_conf_located(text, file, strict=strict).items()}


def nccl_conf_problems(text: str, file: str = "nccl.conf") -> list[Problem]:
    """Lines of an nccl.conf that NCCL reads differently from what they seem to say.

    Every rule but the repeated name is about one line alone, so each distinct
    line is judged once per process (:func:`_conf_line`) and only the names are
    followed from line to line: 3,000 hosts share all lines but one.
    """
    head, newline, rest = text.partition("\n")
    if newline and _conf_line(head) == (None, ()) and _clean_conf(rest):
        return []  # a first line that sets nothing and is fine changes no verdict on the rest
    return _conf_problems(text, file)


@lru_cache(maxsize=256)
def _clean_conf(text: str) -> bool:
    """``text`` reads as it says: kept per distinct text, which is what all hosts share after their first line."""
    return not _conf_problems(text, "")


def _conf_problems(text: str, file: str) -> list[Problem]:
    judged = list(map(_conf_line, text.split("\n")))
    names = [name for name, _ in judged if name is not None]
    if len(set(names)) == len(names) and not any(messages for _, messages in judged):
        return []
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for number, (name, messages) in enumerate(judged, start=1):
        if messages:
            problems += [Problem(message, file, number) for message in messages]
        if name is None:
            continue
        if name in first:
            problems.append(Problem(f"{name} already set on line {first[name]}: NCCL keeps the first value",
                                    file, number))
        else:
            first[name] = number
    return problems


@lru_cache(maxsize=4096)
def _conf_line(line: str) -> tuple[str | None, tuple[str, ...]]:
    """(the name NCCL sets, or None if it sets none; what is wrong with the line on its own)."""
    messages: list[str] = []
    if len(line.encode("utf-8", "surrogateescape")) > NCCL_CHUNK_BYTES:
        messages.append(f"line longer than {NCCL_CHUNK_BYTES} bytes: NCCL reads the rest as another line")
    if line.endswith("\r"):
        messages.append("CRLF line ending: NCCL before 2.30.7 keeps the '\\r' in the value")
        line = line[:-1]
    if "\0" in line:
        messages.append("NUL byte: NCCL ignores the rest of the line")
    if line.startswith("#") or not line.strip():
        return None, tuple(messages)
    indented_comment = line.lstrip().startswith("#")
    if "=" not in line:
        if not indented_comment:  # ignored either way; only flag lines that look like settings
            messages.append("no '=': NCCL ignores this line")
        return None, tuple(messages)
    if indented_comment:
        messages.append("indented '#' is not a comment for NCCL: this line sets a variable")
    name, _, value = line.partition("=")
    if name.startswith("export "):
        messages.append(f"NCCL has no 'export': this defines a variable named {name!r}")
    elif not NAME_RE.fullmatch(name):
        messages.append(f"NCCL defines a variable named {name!r} (spaces and other characters are kept)")
    if value != value.strip():
        messages.append(f"value {value!r} has leading/trailing whitespace that NCCL keeps")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        messages.append("NCCL keeps the quotes as part of the value")
    return name, tuple(messages)


# --------------------------------------------------------------------------- reading systemd

_WHITESPACE = " \t\n\r"
_NEWLINE = "\n\r"
_COMMENTS = "#;"
_SHELL_NEED_ESCAPE = '"\\`$'
_KEY_BREAKS = frozenset(_WHITESPACE)
_VALUE_BREAKS = frozenset(_WHITESPACE + "'\"\\")
"""Characters after which the state machine reads a line other than as ``NAME=value`` taken literally."""


def iter_systemd_env(text: str) -> list[EnvEntry]:
    """Every assignment systemd's env-file parser (v254+) produces from ``text``, in order.

    A transcription of ``parse_env_file_internal``'s state machine, except that
    ``line`` is where the key starts (systemd's own counter drifts on blank lines).
    Invalid names or values are kept here; :func:`parse_systemd_env_located` drops
    them as ``EnvironmentFile=`` does.
    """
    return _run_systemd(text.split("\0", 1)[0], finish=True)[0]


def _run_systemd(text: str, *, finish: bool) -> tuple[list[EnvEntry], bool]:
    """The state machine over ``text``; ``finish`` ends it as end of file does. Also: does it end between lines?"""
    entries: list[EnvEntry] = []
    state = "PRE_KEY"
    key: list[str] = []
    value: list[str] = []
    key_ws = value_ws = -1  # index where trailing whitespace starts, -1 = none
    line, key_line = 1, 1

    def push() -> None:
        name = "".join(key[:key_ws] if key_ws >= 0 else key)
        val = value[:value_ws] if state == "VALUE" and value_ws >= 0 else value
        entries.append(EnvEntry(name, "".join(val), key_line))

    for c in text:
        if state == "PRE_KEY":
            if c in _COMMENTS:
                state = "COMMENT"
            elif c not in _WHITESPACE:
                state, key, key_ws, key_line = "KEY", [c], -1, line
        elif state == "KEY":
            if c in _NEWLINE:
                state, key = "PRE_KEY", []
            elif c == "=":
                state, value, value_ws = "PRE_VALUE", [], -1
            else:
                if c not in _WHITESPACE:
                    key_ws = -1
                elif key_ws < 0:
                    key_ws = len(key)
                key.append(c)
        elif state == "PRE_VALUE":
            if c in _NEWLINE:
                push()
                state = "PRE_KEY"
            elif c == "'":
                state = "SINGLE_QUOTE_VALUE"
            elif c == '"':
                state = "DOUBLE_QUOTE_VALUE"
            elif c == "\\":
                state = "VALUE_ESCAPE"
            elif c not in _WHITESPACE:
                state = "VALUE"
                value.append(c)
        elif state == "VALUE":
            if c in _NEWLINE:
                push()
                state = "PRE_KEY"
            elif c == "\\":
                state, value_ws = "VALUE_ESCAPE", -1
            else:
                if c not in _WHITESPACE:
                    value_ws = -1
                elif value_ws < 0:
                    value_ws = len(value)
                value.append(c)
        elif state == "VALUE_ESCAPE":
            state = "VALUE"
            if c not in _NEWLINE:
                value.append(c)
        elif state == "SINGLE_QUOTE_VALUE":
            if c == "'":
                state = "PRE_VALUE"
            else:
                value.append(c)
        elif state == "DOUBLE_QUOTE_VALUE":
            if c == '"':
                state = "PRE_VALUE"
            elif c == "\\":
                state = "DOUBLE_QUOTE_VALUE_ESCAPE"
            else:
                value.append(c)
        elif state == "DOUBLE_QUOTE_VALUE_ESCAPE":
            state = "DOUBLE_QUOTE_VALUE"
            if c in _SHELL_NEED_ESCAPE:
                value.append(c)
            elif c != "\n":
                value.extend(("\\", c))
        elif state == "COMMENT":
            if c == "\\":
                state = "COMMENT_ESCAPE"
            elif c in _NEWLINE:
                state = "PRE_KEY"
        elif state == "COMMENT_ESCAPE":
            state = "PRE_KEY" if c in _NEWLINE else "COMMENT"
        if c == "\n":
            line += 1
    if finish and state not in ("PRE_KEY", "KEY", "COMMENT", "COMMENT_ESCAPE"):
        push()
    return entries, state == "PRE_KEY"


_SYSTEMD_CONTROLS = frozenset(map(chr, (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F)))
"""The control characters ``env_value_is_valid`` refuses: C0 but tab and newline, and DEL."""


def _systemd_value_ok(value: str) -> bool:
    """``env_value_is_valid``: valid UTF-8, no control characters except tab and newline.

    A set and the codec rather than a character class: compiling ``[\\x00-\\x08\\x0b-\\x1f\\x7f\\ud800-\\udfff]``
    cost about 0.7 ms of CPU at its first use, more than the nccl-env-profile target's whole floor. A printable
    string has no control character; only a lone surrogate fails to encode as UTF-8.
    """
    if not value.isprintable() and not _SYSTEMD_CONTROLS.isdisjoint(value):
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_systemd_env_located(text: str, file: str = "nccl.env", *,
                              strict: bool = False) -> dict[str, tuple[str, int]]:
    """``{name: (value, line)}`` as ``EnvironmentFile=`` passes them: invalid ones dropped, last wins.

    With ``strict``, raise FabgenError for assignments systemd drops or overrides.
    """
    result: dict[str, tuple[str, int]] = {}
    problems: list[Problem] = []
    for name, value, line, refusal in _systemd_entries(text):
        if refusal is not None:
            problems.append(Problem(refusal, file, line))
            continue
        if name in result:
            problems.append(Problem(f"{name} overrides line {result[name][1]} (systemd keeps the last value)",
                                    file, line))
            del result[name]
        result[name] = (value, line)
    if strict and problems:
        raise FabgenError(problems)
    return result


def systemd_env_problems(text: str, file: str = "nccl.env") -> list[Problem]:
    """What ``parse_systemd_env_located(strict=True)`` refuses, without building its result: the output check.

    A file of distinct names that systemd takes entirely (every file fabgen
    writes) is told from the per-line verdicts alone.
    """
    head, newline, rest = text.partition("\n")
    if newline and "\0" not in head and _systemd_line(head) == () and _clean_systemd(rest):
        return []  # a first line with no assignment and no NUL (which would end the file) changes nothing after it
    return _systemd_problems(text, file)


@lru_cache(maxsize=256)
def _clean_systemd(text: str) -> bool:
    """systemd takes every assignment of ``text``: kept per distinct text, as :func:`_clean_conf`."""
    return not _systemd_problems(text, "")


def _systemd_problems(text: str, file: str) -> list[Problem]:
    if text.endswith("\n") and "\0" not in text:
        judged = list(map(_systemd_line, text[:-1].split("\n")))
        if None not in judged:
            names = [entry[0] for entries in judged if entries is not None for entry in entries]
            refused = any(entry[2] is not None for entries in judged if entries is not None for entry in entries)
            if not refused and len(set(names)) == len(names):
                return []
    try:
        parse_systemd_env_located(text, file, strict=True)
    except FabgenError as exc:
        return list(exc.problems)
    return []


_Located = tuple[str, str, int, str | None]
"""(name, value, line, why systemd drops the assignment or None)."""


def _systemd_entries(text: str) -> list[_Located]:
    """:func:`iter_systemd_env` with each entry judged on its own, one distinct line at a time where that is exact.

    A line that the state machine enters and leaves between assignments
    (no open quote, no trailing backslash) parses the same wherever it stands,
    so its entries are worked out once per process (:func:`_systemd_line`); a
    file with a line that runs on, a NUL or no final newline is parsed whole.
    """
    if text.endswith("\n") and "\0" not in text:
        located: list[_Located] = []
        for number, line in enumerate(text[:-1].split("\n"), start=1):
            entries = _systemd_line(line)
            if entries is None:
                break
            located += [(name, value, number, refusal) for name, value, refusal in entries]
        else:
            return located
    return [(e.name, e.value, e.line, _systemd_refusal(e.name, e.value)) for e in iter_systemd_env(text)]


@lru_cache(maxsize=4096)
def _systemd_line(line: str) -> tuple[tuple[str, str, str | None], ...] | None:
    """The (name, value, refusal) entries of one whole line, or None if the machine does not end it between entries."""
    if line.lstrip(" \t")[:1] in ("#", ";") and "\r" not in line:
        return ()  # a comment to its end: what the machine would find, without walking it character by character
    name, equals, value = line.partition("=")
    if equals and name and name[0] not in _COMMENTS and _KEY_BREAKS.isdisjoint(name) \
            and _VALUE_BREAKS.isdisjoint(value):
        # NAME=value with nothing the machine trims, quotes, escapes or breaks at (every line fabgen writes): the
        # machine would read the key to the first '=' and the value to the end, as they are
        return ((name, value, _systemd_refusal(name, value)),)
    entries, between = _run_systemd(line + "\n", finish=False)
    if not between:
        return None
    return tuple((e.name, e.value, _systemd_refusal(e.name, e.value)) for e in entries)


def _systemd_refusal(name: str, value: str) -> str | None:
    """Why ``EnvironmentFile=`` drops an assignment (``env_assignment_is_valid``), or None."""
    if not NAME_RE.fullmatch(name):
        return f"systemd ignores the invalid variable name {name!r}"
    if not _systemd_value_ok(value):
        return f"systemd ignores {name}: its value has a control character"
    return None


def parse_systemd_env(text: str, file: str = "nccl.env", *, strict: bool = False) -> dict[str, str]:
    """``{name: value}`` exactly as systemd hands ``text`` to a service."""
    return {name: value for name, (value, _) in parse_systemd_env_located(text, file, strict=strict).items()}


__all__ = [
    "EnvEntry",
    "format_nccl_conf",
    "format_systemd_env",
    "iter_nccl_conf",
    "iter_systemd_env",
    "nccl_conf_problems",
    "parse_nccl_conf",
    "parse_nccl_conf_located",
    "parse_systemd_env",
    "parse_systemd_env_located",
    "systemd_env_problems",
    "systemd_escape",
]
