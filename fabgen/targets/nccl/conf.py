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


def _check_env(env: Mapping[str, object], header: list[str], file: str) -> dict[str, str]:
    """Values as text, or FabgenError listing everything neither file format can carry."""
    problems: list[Problem] = []
    out: dict[str, str] = {}

    def refuse(message: str, path: str) -> None:
        problems.append(Problem(message, file=file, path=path))

    for index, line in enumerate(header):
        where = f"header[{index}]"
        if _UNSAFE.search(line):
            refuse("header line contains a line break or control character", where)
        elif line.endswith("\\"):
            refuse("header line ends with '\\': systemd before v254 continues the comment onto the next line", where)
        elif _utf8_len(_comment(line)) > NCCL_CHUNK_BYTES:
            refuse(f"header line longer than {NCCL_CHUNK_BYTES} bytes: NCCL would read its tail as a new line", where)
    for name, raw in env.items():
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            refuse(f"{name!r} is not a valid variable name (letters, digits, '_'; no leading digit)", str(name))
            continue
        if _utf8_len(name) > NCCL_FIELD_BYTES:
            refuse(f"name longer than {NCCL_FIELD_BYTES} bytes: NCCL truncates it", name)
            continue
        try:
            value = format_value(raw)  # type: ignore[arg-type]
        except TypeError as exc:
            refuse(str(exc), name)
            continue
        bad = _UNSAFE.search(value)
        if bad:
            refuse(f"{name} contains {bad.group()!r}: a line break or control character cannot be written "
                   "to nccl.conf (it would end the line and inject the rest)", name)
        elif value != value.strip():
            refuse(f"{name}={value!r} has leading or trailing whitespace: NCCL keeps it, systemd strips it "
                   "unless escaped, and nobody sees it", name)
        elif _utf8_len(value) > NCCL_FIELD_BYTES:
            refuse(f"{name} value is {_utf8_len(value)} bytes; NCCL truncates conf values at {NCCL_FIELD_BYTES}",
                   name)
        elif _utf8_len(f"{name}={value}") > NCCL_CHUNK_BYTES:
            refuse(f"{name} line longer than {NCCL_CHUNK_BYTES} bytes: NCCL splits it", name)
        else:
            out[name] = value
    if problems:
        raise FabgenError(problems)
    return out


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
    values = _check_env(env, header, file)
    lines = [_comment(line) for line in header]
    lines += [f"{name}={value}" for name, value in values.items()]
    return "".join(line + "\n" for line in lines)


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
    values = _check_env(env, header, file)
    lines = [_comment(line) for line in header]
    lines += [f"{name}={systemd_escape(value)}" for name, value in values.items()]
    return "".join(line + "\n" for line in lines)


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
    """Lines of an nccl.conf that NCCL reads differently from what they seem to say."""
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line.encode("utf-8", "surrogateescape")) > NCCL_CHUNK_BYTES:
            problems.append(Problem(f"line longer than {NCCL_CHUNK_BYTES} bytes: NCCL reads the rest as another line",
                                    file, number))
        if line.endswith("\r"):
            problems.append(Problem("CRLF line ending: NCCL before 2.30.7 keeps the '\\r' in the value", file, number))
            line = line[:-1]
        if "\0" in line:
            problems.append(Problem("NUL byte: NCCL ignores the rest of the line", file, number))
        if line.startswith("#") or not line.strip():
            continue
        indented_comment = line.lstrip().startswith("#")
        if "=" not in line:
            if not indented_comment:  # ignored either way; only flag lines that look like settings
                problems.append(Problem("no '=': NCCL ignores this line", file, number))
            continue
        if indented_comment:
            problems.append(Problem("indented '#' is not a comment for NCCL: this line sets a variable",
                                    file, number))
        name, _, value = line.partition("=")
        if name.startswith("export "):
            problems.append(Problem(f"NCCL has no 'export': this defines a variable named {name!r}", file, number))
        elif not NAME_RE.fullmatch(name):
            problems.append(Problem(f"NCCL defines a variable named {name!r} (spaces and other characters are "
                                    "kept)", file, number))
        if value != value.strip():
            problems.append(Problem(f"value {value!r} has leading/trailing whitespace that NCCL keeps", file, number))
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            problems.append(Problem("NCCL keeps the quotes as part of the value", file, number))
        if name in first:
            problems.append(Problem(f"{name} already set on line {first[name]}: NCCL keeps the first value",
                                    file, number))
        else:
            first[name] = number
    return problems


# --------------------------------------------------------------------------- reading systemd

_WHITESPACE = " \t\n\r"
_NEWLINE = "\n\r"
_COMMENTS = "#;"
_SHELL_NEED_ESCAPE = '"\\`$'


def iter_systemd_env(text: str) -> list[EnvEntry]:
    """Every assignment systemd's env-file parser (v254+) produces from ``text``, in order.

    A transcription of ``parse_env_file_internal``'s state machine, except that
    ``line`` is where the key starts (systemd's own counter drifts on blank lines).
    Invalid names or values are kept here; :func:`parse_systemd_env_located` drops
    them as ``EnvironmentFile=`` does.
    """
    text = text.split("\0", 1)[0]
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
    if state not in ("PRE_KEY", "KEY", "COMMENT", "COMMENT_ESCAPE"):
        push()
    return entries


def _systemd_value_ok(value: str) -> bool:
    """``env_value_is_valid``: valid UTF-8, no control characters except tab and newline."""
    return not re.search(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]", value)


def parse_systemd_env_located(text: str, file: str = "nccl.env", *,
                              strict: bool = False) -> dict[str, tuple[str, int]]:
    """``{name: (value, line)}`` as ``EnvironmentFile=`` passes them: invalid ones dropped, last wins.

    With ``strict``, raise FabgenError for assignments systemd drops or overrides.
    """
    result: dict[str, tuple[str, int]] = {}
    problems: list[Problem] = []
    for entry in iter_systemd_env(text):
        if not NAME_RE.fullmatch(entry.name):
            problems.append(Problem(f"systemd ignores the invalid variable name {entry.name!r}", file, entry.line))
            continue
        if not _systemd_value_ok(entry.value):
            problems.append(Problem(f"systemd ignores {entry.name}: its value has a control character",
                                    file, entry.line))
            continue
        if entry.name in result:
            problems.append(Problem(f"{entry.name} overrides line {result[entry.name][1]} (systemd keeps the "
                                    "last value)", file, entry.line))
            del result[entry.name]
        result[entry.name] = (entry.value, entry.line)
    if strict and problems:
        raise FabgenError(problems)
    return result


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
    "systemd_escape",
]
