"""Property: any mutation of a valid spec is generated, or refused with located problems. Never a crash.

Hypothesis mutates the examples' data (drop a key or an item, duplicate one,
swap a value for one of another type, random unicode in strings, random and
boundary numbers, rename keys) and then, sometimes, the YAML text itself
(duplicate, drop or truncate a line, insert a tab or a stray character). The
result goes through ``fabgen generate --check`` in-process: exit 0 or 1
(rendered), or exit 2 with every stderr line a located problem
(``file:line:col: message``); ``fabgen validate`` must agree (exit 0 exactly
when generate renders, the same problems when it refuses). Any other exception fails the test with the
spec that caused it.

The CI run is bounded and deterministic (``derandomize=True``); the
``nightly`` marker runs many more examples (``pytest -m nightly``).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, reject, settings
from hypothesis import strategies as st

from tests.helpers import dump, run_cli, spec_data

EXAMPLES = {"lab": 90, "sonic-pod": 60, "cumulus-pod": 50}
"""Examples mutated in CI, with their share of the ~200 examples."""
NIGHTLY_FACTOR = 25
LOCATED = re.compile(r"^\S.*?:\d+:\d+: \S")
"""``file:line:col: message``: the spec's position (or, for an output check, the output's)."""
AT_PATH = re.compile(r" \(at [^()]+\)$")
"""``file: message (at data.path)``: an output check that names the value in its own tree."""

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([-1, 0, 1, 2, 3, 4, 7, 8, 31, 32, 63, 64, 255, 256, 1500, 9216, 9217, 2**31, 2**32, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
)
UNITS = st.from_regex(r"\A-?[0-9]{1,25}(\.[0-9]{1,4})? ?(G|T|Gbps|B|KB|KiB|MB|ms|s|us|m|km|x)?\Z")
NAMES = st.from_regex(r"\A[A-Za-z0-9._{}:/ -]{0,70}\Z")
ANY_VALUE = st.one_of(
    st.none(), st.booleans(), NUMBERS, TEXT, UNITS, NAMES,
    st.lists(st.one_of(st.integers(-5, 70), NAMES), max_size=4),
    st.dictionaries(NAMES, st.one_of(st.integers(), NAMES), max_size=3),
)


def _places(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path in the data, containers and leaves."""
    found = [path]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _places(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _places(value, (*path, index))
    return found


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


def _mutate(spec: dict[str, Any], draw: Any) -> None:
    """One mutation. Most keep the spec close to valid (nudged numbers, plausible strings), so that the
    planner and the renderers see odd values too, not only the validator."""
    rnd = draw(st.randoms(use_true_random=False))  # uniform choices (Hypothesis's own lean to the first items)
    places = [p for p in _places(spec)[1:] if p != ("version",)]
    leaves = [p for p in places if not isinstance(_get(spec, p), (dict, list))]
    path = rnd.choice(leaves if leaves and rnd.random() < 0.75 else places)
    target = _get(spec, path)
    parent = _get(spec, path[:-1])
    key = path[-1]
    ops = ["nudge", "nudge", "nudge", "plausible", "plausible", "replace", "string", "number", "drop", "duplicate"]
    if isinstance(parent, dict):
        ops.append("rename")
    if isinstance(target, (dict, list)):
        ops += ["add", "add"]
    op = rnd.choice(ops)
    if op == "nudge" and isinstance(target, int) and not isinstance(target, bool):
        parent[key] = target + draw(st.integers(-3, 3)) if draw(st.booleans()) else draw(st.integers(0, 2 * target + 2))
    elif op == "nudge" and isinstance(target, str):
        parent[key] = target + draw(st.sampled_from(["", "0", "1", "-x", ".x", "_x", "x", "00", "K", "B", "G"]))
    elif op == "plausible" or op == "nudge":
        parent[key] = draw(st.one_of(UNITS, NAMES, st.integers(-2, 600), st.booleans()))
    elif op == "replace":
        parent[key] = draw(ANY_VALUE)
    elif op == "string":
        if isinstance(target, str) and target and draw(st.booleans()):
            at = draw(st.integers(0, len(target)))
            parent[key] = target[:at] + draw(TEXT) + target[at:]
        else:
            parent[key] = draw(st.one_of(TEXT, UNITS, NAMES))
    elif op == "number":
        parent[key] = draw(NUMBERS)
    elif op == "drop":
        del parent[key]
    elif op == "duplicate":
        if isinstance(parent, list):
            parent.insert(key, copy.deepcopy(target))
        else:
            parent[f"{key}"[:60] + draw(st.sampled_from(["", "2", "_copy"]))] = copy.deepcopy(target)
    elif op == "rename":
        value = parent.pop(key)
        parent[draw(st.one_of(NAMES, TEXT, st.integers(-3, 3)))] = value
    elif op == "add":
        if isinstance(target, list):
            target.append(copy.deepcopy(target[0]) if target and draw(st.booleans()) else draw(ANY_VALUE))
        else:
            target[draw(st.one_of(NAMES, TEXT))] = draw(ANY_VALUE)


def _mutate_text(text: str, draw: Any) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    rnd = draw(st.randoms(use_true_random=False))
    op = rnd.choice(["none"] * 8 + ["duplicate-line", "drop-line", "truncate", "insert", "tab"])
    at = rnd.randrange(len(lines))
    if op == "duplicate-line":
        lines.insert(at, lines[at])
    elif op == "drop-line":
        del lines[at]
    elif op == "truncate":
        return "".join(lines)[: rnd.randrange(len(text) + 1)]
    elif op == "insert":
        column = rnd.randrange(len(lines[at]) + 1)
        lines[at] = lines[at][:column] + draw(st.sampled_from(list("{}[]:&*!|>'\"%@`,#-?\t\\"))) + lines[at][column:]
    elif op == "tab":
        lines[at] = "\t" + lines[at]
    return "".join(lines)


def check_mutant(name: str, draw: Any, tmp_path: Path) -> None:
    spec = spec_data(name)
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        _mutate(spec, draw)
    try:
        text = dump(spec)
    except Exception:
        reject()
    text = _mutate_text(text, draw)
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "never-written"
    code, _, stderr = run_cli("generate", str(path), "-o", str(out), "--check")
    assert code in (0, 1, 2), (code, stderr)
    vcode, _, vstderr = run_cli("validate", str(path))
    assert (vcode == 0) == (code in (0, 1)), f"validate exit {vcode}, generate exit {code}:\n{vstderr}{stderr}\n---\n{text}"
    if code == 2:
        assert vstderr == stderr, "validate and generate refuse a spec with different problems"
    event("rendered" if code in (0, 1) else "refused")
    assert not out.exists()
    if code == 2:
        lines = stderr.splitlines()
        assert lines, "exit 2 without a message"
        unlocated = [line for line in lines if not LOCATED.match(line) and not AT_PATH.search(line)]
        # whole-file problems (size, encoding) may lack a position; nothing else may
        assert all(line.startswith(f"{path}: ") for line in unlocated), f"unlocated problem:\n{stderr}\n---\n{text}"
        assert "Traceback" not in stderr


def _fuzz(name: str, examples: int):  # type: ignore[no-untyped-def]
    @settings(max_examples=examples, derandomize=True, deadline=None, database=None, print_blob=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])
    @given(data=st.data())
    def run(tmp_path: Path, data: st.DataObject) -> None:
        check_mutant(name, data.draw, tmp_path)
    return run


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_mutated_specs_never_crash(name: str, tmp_path: Path) -> None:
    _fuzz(name, EXAMPLES[name])(tmp_path)


@pytest.mark.nightly
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_mutated_specs_never_crash_nightly(name: str, tmp_path: Path) -> None:
    _fuzz(name, EXAMPLES[name] * NIGHTLY_FACTOR)(tmp_path)
