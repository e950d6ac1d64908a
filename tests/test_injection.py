"""Hostile strings never smuggle anything into an output.

Every string of a spec that can reach an output (names, descriptions, interface
names, paths, NCCL variable values; also the keys that name things) gets each
hostile payload in turn: line breaks of every kind, NUL and other control
characters, comment and command characters of every output language (``!``,
``#``, ``;``, ``$( )``, backticks, quotes), template syntax (``{{ }}``), markup
(``</``, ``]]>``), a leading ``-``, a 10 kB string, ``..`` and absolute paths.

Each (field, payload) pair must end one of two ways:

* refused by validation: a :class:`SpecError` whose problem names that field's
  data path and position, one printable line per problem (no raw control
  character reaches the operator's terminal); or
* accepted, and then every registered render target (parametrized over
  :func:`fabgen.targets.registry.targets`, so new targets are covered as they
  land) renders files that still mean what they meant: every file parses in
  its own language (EOS grammar, JSON, YAML, XML plus NCCL's parser rules,
  nccl.conf and systemd EnvironmentFile readers, ``bash -n`` and shellcheck,
  CSV), keeps the shape of the file rendered from the untouched spec (same
  number of lines; same JSON/YAML keys; same XML elements and attributes), and
  an NCCL value reads back byte for byte, also when a real bash sources
  ``nccl.env`` (and runs nothing).

The sweep injects into the validated data directly (no YAML round trip, so the
exact characters reach validation); :func:`test_hostile_values_through_the_cli`
does the same through YAML text and the real CLI.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
import json
import os
import re
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from ruamel.yaml import YAML

from fabgen.errors import FabgenError, SpecError
from fabgen.plan import build_plan
from fabgen.source import DataPath, SourceDoc, format_path, load_source
from fabgen.spec import validate_spec
from fabgen.targets.base import RenderContext, Target
from fabgen.targets.environment import environment
from fabgen.targets.nccl import env as nccl_env
from fabgen.targets.nccl.conf import parse_nccl_conf, parse_systemd_env
from fabgen.targets.registry import devices_of, limit_problems, targets
from fabgen.targets.render import render_files
from tests.helpers import EXAMPLE_NAMES, LARGE_EXAMPLES, dump, example, require_tool, run_cli, spec_data

try:
    import fabgen.targets.eos.syntax as eos_syntax
except ImportError:  # pragma: no cover - the EOS target is not there yet
    eos_syntax = None  # type: ignore[assignment]
from fabgen.targets.nccl.topo_check import check_topology_xml

PAYLOADS: dict[str, str] = {
    "newline": "a\nb",
    "cr": "a\rb",
    "crlf": "a\r\nb",
    "line-separator": "a\u2028b",
    "paragraph-separator": "a\u2029b",
    "nel": "a\x85b",
    "nul": "a\x00b",
    "escape": "a\x1b[2Jb",
    "tab": "a\tb",
    "vertical-tab": "a\x0bb",
    "bang": "a!b",
    "bang-leading": "!a",
    "hash": "a#b",
    "hash-leading": "#a",
    "semicolon": "a;b",
    "command-substitution": "a$(touch CANARY)b",
    "backticks": "a`touch CANARY`b",
    "variable": "a${HOME}b",
    "single-quote": "a'b",
    "double-quote": 'a"b',
    "jinja-expression": "a{{ 7*7 }}b",
    "jinja-statement": "a{% if true %}b{% endif %}",
    "xml-close": "a</nic><x>b",
    "cdata-end": "a]]>b",
    "xml-entity": "a&amp;b<",
    "leading-dash": "-a",
    "double-dash": "--help",
    "long": "x" * 10240,
    "dotdot": "..",
    "traversal": "../../etc/passwd",
    "absolute": "/etc/passwd",
    "space": "a b",
    "leading-space": " a",
    "backslash": "a\\b",
    "equals": "a=b",
    "comma": "a,b",
    "percent": "a%n%s",
    "bidi-override": "a\u202eb",
    "zero-width": "a\u200bb",
    "non-ascii": "caf\u00e9",
    # edgy but legitimate: accepted where names allow them, and must still render safely
    "dots": "x..y",
    "max-name": "n" * 63,
    "digits": "0",
}

EDGY = {"dots", "max-name", "digits"}
"""Payloads that are well-formed names: refused only where they name something that does not exist."""
BREAKERS = re.compile(r"[\x00\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
"""Characters that no output may carry raw: each ends a line for some reader."""
TERMINAL_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""What an error line must not carry to the operator's terminal or CI log."""
EXTRA_HOST = "extra01"
"""A host added to every example, with an override (description, NCCL variable) to attack."""
INJECTION_EXAMPLES = [n for n in EXAMPLE_NAMES if n not in LARGE_EXAMPLES]


# --------------------------------------------------------------------------- the spec under attack

@cache
def enriched(name: str) -> dict[str, Any]:
    """An example plus every optional string that reaches an output, so each gets attacked."""
    data = spec_data(name)
    plan = build_plan(validate_spec(load_source(example(name))), None)
    profile = data["hosts"][0]["profile"]
    data["cluster"].setdefault("description", "a cluster")
    data["host_profiles"][profile].setdefault("description", "a server")
    data["hosts"].append({"profile": profile, "names": [EXTRA_HOST], "overrides": {
        EXTRA_HOST: {"description": "spare", "nccl_env": {"NCCL_DEBUG_FILE": "/var/log/nccl.%h.%p"}}}})
    nccl = data.setdefault("nccl", {})
    nccl["install_prefix"] = "/etc/fabgen"
    nccl.setdefault("env", {})["NCCL_DEBUG_FILE"] = "/tmp/nccl.log"
    nccl["env"]["NCCL_SOCKET_IFNAME"] = "=eno1"
    link = next(csv.DictReader(io.StringIO(_cabling_csv(plan))))
    data["fabric"]["cabling"] = [{"a": f"{link['a_device']}:{link['a_port']}",
                                  "b": f"{link['b_device']}:{link['b_port']}", "description": "patch panel 3"}]
    return data


def _cabling_csv(plan: Any) -> str:
    from fabgen.targets.cabling import cabling_csv

    return cabling_csv(plan)


@cache
def source_doc(name: str) -> SourceDoc:
    return load_source(example(name))


def validated(name: str, data: dict[str, Any]) -> Any:
    """Validate and plan ``data`` as if it came from the example's file (positions of the original)."""
    doc = dataclasses.replace(source_doc(name), data=data)
    spec = validate_spec(doc)
    fabric = build_plan(spec, doc)
    problems = limit_problems(fabric)  # what `fabgen validate` refuses too (the targets' limits)
    if problems:
        raise SpecError(problems)
    return fabric


@dataclasses.dataclass(frozen=True)
class Slot:
    """A place a string can be written: a value at ``path``, or the key at ``path`` (renamed)."""

    path: DataPath
    key: bool = False

    @property
    def label(self) -> str:
        return ("key " if self.key else "") + format_path(self.path)

    def inject(self, data: dict[str, Any], payload: str) -> dict[str, Any]:
        data = copy.deepcopy(data)
        parent = data
        for part in self.path[:-1]:
            parent = parent[part]
        last = self.path[-1]
        if not self.key:
            parent[last] = payload
            return data
        renamed = {(payload if k == last else k): v for k, v in parent.items()}
        parent.clear()
        parent.update(renamed)
        if self.path[:1] == ("host_profiles",):
            for group in data["hosts"]:
                if group["profile"] == last:
                    group["profile"] = payload
        return data


def _strings(data: Any, path: DataPath = ()) -> Iterator[DataPath]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _strings(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _strings(value, (*path, index))
    elif isinstance(data, str):
        yield path


KEY_MAPS = (("host_profiles",), ("qos", "classes"), ("nccl", "env"), ("nic", "dcqcn", "rp"), ("nic", "dcqcn", "np"))
"""Mappings whose keys are names the user chooses (and that reach outputs)."""


@cache
def slots(name: str) -> tuple[Slot, ...]:
    """Every string value (one per field: list items and map entries of one kind count once) and chosen key."""
    data = enriched(name)
    found: dict[tuple[Any, ...], Slot] = {}
    for path in _strings(data):
        shape = tuple("#" if isinstance(p, int) else p for p in path)
        found.setdefault(shape, Slot(path))
    for map_path in KEY_MAPS:
        node: Any = data
        for part in map_path:
            node = node.get(part, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict) and node:
            found.setdefault(("key", *map_path), Slot((*map_path, next(iter(node))), key=True))
    return tuple(found.values())


@dataclasses.dataclass(frozen=True)
class Accepted:
    slot: Slot
    payload_name: str
    payload: str


def _assert_clear_refusal(slot: Slot, payload_name: str, exc: SpecError) -> None:
    assert exc.problems, f"{slot.label} <- {payload_name}: empty SpecError"
    where = format_path(slot.path[:-1] if slot.key else slot.path)
    for problem in exc.problems:
        line = str(problem)
        assert not TERMINAL_UNSAFE.search(line), f"{slot.label} <- {payload_name}: raw control character in {line!r}"
        assert len(line) < 1500, f"{slot.label} <- {payload_name}: {len(line)}-character message"
    named = [p for p in exc.problems if p.path == where or p.path.startswith((where + ".", where + "["))
             or (slot.key and p.path.startswith(where))]
    if slot.key and slot.path[:1] == ("host_profiles",) and not named:
        named = [p for p in exc.problems if p.path.startswith("hosts")]
    if payload_name in EDGY and not named:  # a well-formed name that no longer matches what refers to it
        named = list(exc.problems)
    assert named, f"{slot.label} <- {payload_name}: refused, but no problem names the field: {exc.lines()}"
    assert all(p.line > 0 for p in named), f"{slot.label} <- {payload_name}: problem without a position"


@cache
def sweep(name: str) -> tuple[Accepted, ...]:
    """Inject every payload into every slot of an example; check refusals; return what was accepted."""
    data = enriched(name)
    validated(name, data)  # the enriched spec itself is valid
    accepted: list[Accepted] = []
    for slot in slots(name):
        for payload_name, payload in PAYLOADS.items():
            try:
                validated(name, slot.inject(data, payload))
            except SpecError as exc:
                _assert_clear_refusal(slot, payload_name, exc)
            else:
                accepted.append(Accepted(slot, payload_name, payload))
    return tuple(accepted)


# --------------------------------------------------------------------------- reading outputs back

def _bash_syntax(path: str, text: str) -> list[str]:
    run = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
    return [f"bash -n: {run.stderr.strip()}"] if run.returncode else []


@cache
def _shellcheck_codes(text: str) -> frozenset[str]:
    run = subprocess.run([require_tool("shellcheck"), "-s", "bash", "-f", "json", "-"], input=text, capture_output=True, text=True)
    return frozenset(f"SC{c['code']}:{c['level']}" for c in json.loads(run.stdout or "[]"))


def _shape(value: Any, path: str = "") -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}/{key}"
            yield from _shape(item, f"{path}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _shape(item, f"{path}[{index}]")


def _xml_shape(text: str) -> list[tuple[str, tuple[str, ...]]]:
    root = etree.fromstring(text.encode("utf-8"))
    return [(str(e.tag), tuple(sorted(e.attrib))) for e in root.iter() if isinstance(e.tag, str)]


def format_problems(path: str, text: str) -> list[str]:
    """Read a file back in its own language; what a reader would choke on or misread."""
    problems: list[str] = []
    if BREAKERS.search(text):
        problems.append(f"raw line-breaking character {BREAKERS.search(text).group()!r}")  # type: ignore[union-attr]
    name = path.rsplit("/", 1)[-1]
    try:
        if name.endswith(".cfg") and eos_syntax is not None:
            problems += [f"EOS {i.line}:{i.col}: {i.message}" for i in eos_syntax.check_text(text)]
        elif name.endswith(".json"):
            json.loads(text)
        elif name.endswith((".yaml", ".yml")):
            YAML(typ="safe", pure=True).load(text)
        elif name.endswith(".xml"):
            etree.fromstring(text.encode("utf-8"))
            problems += [str(p) for p in check_topology_xml(text, path)]
        elif name == "nccl.conf":
            parse_nccl_conf(text, path, strict=True)
        elif name == "nccl.env":
            parse_systemd_env(text, path, strict=True)
        elif name.endswith(".sh"):
            problems += _bash_syntax(path, text)
        elif name.endswith(".csv"):
            rows = list(csv.reader(io.StringIO(text)))
            if any(len(row) != len(rows[0]) for row in rows):
                problems.append("CSV rows of different widths")
    except (ValueError, etree.XMLSyntaxError, FabgenError) as exc:
        problems.append(f"does not parse: {exc}")
    return problems


def shape_changes(path: str, text: str, before: str) -> list[str]:
    """How ``text`` differs in structure from ``before`` (the same file from the untouched spec)."""
    changes: list[str] = []
    if text.count("\n") != before.count("\n"):
        changes.append(f"{before.count(chr(10))} lines became {text.count(chr(10))}")
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".json"):
        if list(_shape(json.loads(text))) != list(_shape(json.loads(before))):
            changes.append("JSON keys changed")
    elif name.endswith((".yaml", ".yml")):
        yaml = YAML(typ="safe", pure=True)
        if list(_shape(yaml.load(text))) != list(_shape(yaml.load(before))):
            changes.append("YAML keys changed")
    elif name.endswith(".xml") and _xml_shape(text) != _xml_shape(before):
        changes.append("XML elements or attributes changed")
    return changes


def shellcheck_changes(text: str, before: str) -> list[str]:
    new = _shellcheck_codes(text) - _shellcheck_codes(before)
    return [f"new shellcheck findings {sorted(new)}"] if new else []


def _source_in_bash(text: str, names: list[str], tmp: Path) -> dict[str, str]:
    """What a POSIX shell reads from ``nccl.env`` (``set -a; . nccl.env``), run in an empty directory."""
    env_file = tmp / "nccl.env"
    env_file.write_text(text, encoding="utf-8")
    script = "set -a; . ./nccl.env; " + "; ".join(f'printf "%s\\0" "${{{n}-<unset>}}"' for n in names)
    run = subprocess.run(["bash", "--noprofile", "--norc", "-c", script], cwd=tmp, capture_output=True,
                         env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp)})
    assert run.returncode == 0, run.stderr
    values = run.stdout.decode("utf-8", "surrogateescape").split("\0")[: len(names)]
    return dict(zip(names, values, strict=True))


# --------------------------------------------------------------------------- tests

@pytest.mark.parametrize("name", INJECTION_EXAMPLES)
def test_every_hostile_string_is_refused_clearly_or_accepted(name: str) -> None:
    """The sweep itself: refusals are located and printable (asserted inside), acceptances are few and known."""
    accepted = sweep(name)
    hostile = {"newline", "cr", "crlf", "line-separator", "paragraph-separator", "nel", "nul", "escape",
               "vertical-tab", "tab", "long"}
    for case in accepted:
        assert case.payload_name not in hostile, f"{case.slot.label} accepted {case.payload_name!r}"
    # names, interface names, PCI ids, units, enums: nothing but edgy-legitimate names gets through
    free_text = {("cluster", "description"), ("description",), ("nccl", "env"), ("nccl_env",), ("nccl", "install_prefix")}
    for case in accepted:
        path = tuple(p for p in case.slot.path if isinstance(p, str))
        if case.slot.key or not any(path[-len(f):] == f or path[: len(f)] == f or f[0] in path for f in free_text):
            assert case.payload_name in EDGY, f"{case.slot.label} accepted {case.payload_name!r}"


@pytest.mark.parametrize("name", INJECTION_EXAMPLES)
def test_untouched_outputs_read_back(name: str) -> None:
    """The baseline every comparison starts from: each file of the enriched example reads back cleanly."""
    files, _ = render_files(validated(name, enriched(name)))
    problems = {path: p for path, text in files.items() if (p := format_problems(path, text))}
    assert not problems
    checked: set[str] = set()
    for path, text in files.items():
        kind = path.rsplit("/", 1)[-1]
        if kind.endswith(".sh") and kind not in checked:  # one of each script: the others differ only in values
            checked.add(kind)
            errors = [c for c in _shellcheck_codes(text) if c.endswith(":error")]
            assert not errors, (path, errors)


def _example_for(target: Target) -> str | None:
    for name in INJECTION_EXAMPLES:
        if devices_of(validated(name, enriched(name)), target):
            return name
    return None


def render_target(plan: Any, target: Target) -> dict[str, str]:
    """What ``target`` renders for every device it applies to, without running its validator."""
    context = RenderContext(plan=plan, env=environment(None))
    files: dict[str, str] = {}
    for _, device in devices_of(plan, target):
        files.update(target.render(context, device))
    return files


@pytest.mark.parametrize("target", targets(), ids=[t.name for t in targets()])
def test_accepted_values_render_as_exactly_one_value(target: Target, tmp_path: Path) -> None:
    name = _example_for(target)
    if name is None:
        pytest.skip(f"no example has a device for target {target.name}")
    data = enriched(name)
    baseline, _ = render_files(validated(name, data), [target.name])  # with the target's own validator
    assert baseline, f"{target.name} rendered nothing for {name}"
    accepted = sweep(name)
    assert accepted, "the sweep accepted nothing at all: the free-text fields are gone?"
    failures: list[str] = []
    for case in accepted:
        where = f"{case.slot.label} <- {case.payload_name}"
        try:
            plan = validated(name, case.slot.inject(data, case.payload))
            files = render_target(plan, target)
        except FabgenError as exc:
            failures.append(f"{where}: accepted by validation but refused at render: {exc.lines()[:3]}")
            continue
        checked: set[str] = set()
        for path, text in files.items():
            before = baseline.get(path)
            if text == before:
                continue
            kind = path.rsplit("/", 1)[-1]
            # a hostile value is checked in every file it changed; a legitimate name in one file of each kind
            if case.payload_name in EDGY and kind in checked:
                continue
            trouble = format_problems(path, text)
            if target.check is not None:
                trouble += [f"{target.name} validator: {p}" for p in target.check(path, text)]
            if before is not None and case.payload_name not in EDGY:  # a real name may change keys; text may not
                trouble += shape_changes(path, text, before)
                if kind.endswith(".sh") and kind not in checked:  # shellcheck one script of each kind per case
                    trouble += shellcheck_changes(text, before)
            checked.add(kind)
            failures += [f"{where}: {path}: {t}" for t in trouble]
        env_name = _nccl_variable(case.slot)
        if env_name is not None and target.name == nccl_env.TARGET.name:  # with the profiles' pairs, once
            failures += _env_round_trip({**files, **render_target(plan, nccl_env.PROFILE_TARGET)}, plan, env_name,
                                        case, tmp_path)
    assert not failures, "\n".join(failures[:40])


def _nccl_variable(slot: Slot) -> str | None:
    """The NCCL variable a value slot sets, if it is one."""
    if slot.key or len(slot.path) < 2 or not str(slot.path[-1]).startswith("NCCL_"):
        return None
    return str(slot.path[-1])


def _env_round_trip(files: dict[str, str], plan: Any, variable: str, case: Accepted, tmp: Path) -> list[str]:
    """The value reads back exactly from nccl.conf (NCCL's rules), nccl.env (systemd's, and a real bash's).

    Read from the pair the host installs (its profile's, or its own: :func:`nccl_env.nccl_sources`).
    """
    failures = []
    wanted = _host_of_override(case.slot) or plan.hosts[0].name  # the override's host reads it; others the cluster's
    conf_file, env_file = nccl_env.nccl_sources(plan, plan.host(wanted))
    if conf_file not in files or env_file not in files:
        return [f"{case.slot.label} <- {case.payload_name}: {wanted} installs {conf_file}, {env_file}: not rendered"]
    read = {conf_file: {"nccl.conf": parse_nccl_conf(files[conf_file], conf_file)},
            env_file: {"systemd": parse_systemd_env(files[env_file], env_file),
                       "bash": _source_in_bash(files[env_file], [variable], tmp)}}
    if (tmp / "CANARY").exists():
        failures.append(f"{case.slot.label} <- {case.payload_name}: {env_file}: sourcing nccl.env ran a command")
        (tmp / "CANARY").unlink()
    for path, readers in read.items():
        for reader, values in readers.items():
            if values.get(variable) != case.payload:
                failures.append(f"{case.slot.label} <- {case.payload_name}: {path} reads back as "
                                f"{values.get(variable)!r} ({reader})")
    return failures


def _host_of_override(slot: Slot) -> str | None:
    return str(slot.path[3]) if slot.path[:1] == ("hosts",) and "overrides" in slot.path else None


def test_every_free_text_field_sees_a_hostile_but_valid_value() -> None:
    """Guard: the render checks are not vacuous (NCCL values do take shell, XML and template characters)."""
    accepted = {(c.slot.label, c.payload_name) for c in sweep("lab")}
    for payload in ("command-substitution", "backticks", "jinja-expression", "xml-close", "cdata-end", "hash",
                    "semicolon", "double-quote", "single-quote", "bang", "leading-dash"):
        assert ("nccl.env.NCCL_DEBUG_FILE", payload) in accepted, payload


def _yaml_text_with(data: dict[str, Any], slot: Slot, payload: str) -> str:
    """YAML text with ``payload`` written as a double-quoted (JSON-escaped) scalar, so every character survives."""
    marker = "FABGEN-INJECTION-MARKER"
    text = dump(slot.inject(data, marker))
    assert text.count(marker) == 1
    return text.replace(marker, json.dumps(payload))


@pytest.mark.parametrize("payload_name", ["newline", "cr", "nul", "line-separator", "escape", "long",
                                          "command-substitution", "jinja-expression", "cdata-end"])
def test_hostile_values_through_the_cli(payload_name: str, tmp_path: Path) -> None:
    """End to end, through YAML text and the CLI: an NCCL value is refused, or read back exactly."""
    payload = PAYLOADS[payload_name]
    data = enriched("lab")
    spec = tmp_path / "spec.yaml"
    spec.write_text(_yaml_text_with(data, Slot(("nccl", "env", "NCCL_DEBUG_FILE")), payload), encoding="utf-8")
    out = tmp_path / "out"
    code, _stdout, stderr = run_cli("generate", str(spec), "-o", str(out), "-q")
    assert "Traceback" not in stderr
    if code == 2:
        assert not out.exists()
        assert all(not TERMINAL_UNSAFE.search(line) for line in stderr.splitlines())
        assert "(at nccl.env.NCCL_DEBUG_FILE)" in stderr, stderr
        return
    assert code == 0, stderr
    for host in ("lab01", "extra01"):  # what each installs: lab01 its profile's pair, extra01 (an override) its own
        entries = {e["dest"]: e["source"] for e in json.loads((out / "hosts" / host / "install.json").read_text())[
            "files"]}
        conf = (out / entries["/etc/nccl.conf"]).read_text(encoding="utf-8")
        env = (out / entries["/etc/fabgen/nccl.env"]).read_text(encoding="utf-8")
        assert parse_nccl_conf(conf)["NCCL_DEBUG_FILE"] == (payload if host == "lab01" else "/var/log/nccl.%h.%p")
        assert parse_systemd_env(env)["NCCL_DEBUG_FILE"] == parse_nccl_conf(conf)["NCCL_DEBUG_FILE"]
        work = tmp_path / f"bash-{host}"
        work.mkdir()
        assert _source_in_bash(env, ["NCCL_DEBUG_FILE"], work)["NCCL_DEBUG_FILE"] == parse_nccl_conf(conf)["NCCL_DEBUG_FILE"]
        assert not (work / "CANARY").exists()


@pytest.mark.parametrize(("label", "text", "needle"), [
    ("key-with-newline", 'version: 1\n"x\\nspec.yaml:1:1: all good": 1\n', "unknown key"),
    ("key-with-escape", 'version: 1\n"\\e[2J\\e[31mfake": 1\n', "unknown key"),
    ("duplicate-key-with-escape", '"\\e[2Ja": 1\n"\\e[2Ja": 2\n', "duplicate key"),
    ("long-value-echoed", "version: 1\nfabric: {addressing: {p2p: " + "x" * 20000 + "}}\n", "not an IPv4 network"),
])
def test_error_lines_are_printable(label: str, text: str, needle: str, tmp_path: Path) -> None:
    """An error message never carries a raw control character or an echoed 10 kB value to the terminal."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    code, stdout, stderr = run_cli("validate", str(spec))
    assert code == 2 and stdout == ""
    lines = stderr.splitlines()
    assert any(needle in line for line in lines), stderr[:2000]
    for line in lines:
        assert line.startswith(str(spec)), line[:200]
        assert not TERMINAL_UNSAFE.search(line), repr(line[:200])
        assert len(line) < 1500, len(line)
