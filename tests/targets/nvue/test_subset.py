"""The line reader of the nvue YAML subset against ruamel, on the files fabgen writes and edits of them.

The reader is a fast path in front of the YAML loader: it must read every
file the emitter writes, give the tree ruamel gives for every text it
accepts, and say "not sure" (None) for anything else. The checks built on it
(:func:`check_nvue_startup`, :func:`check_patch`) must then report exactly
what the ruamel path alone reports: never clean where ruamel finds a problem,
and a problem with the same message and position.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from fabgen.errors import Problem
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.nvue.parse import _plain
from fabgen.targets.nvue.patch import check_nvue_files
from fabgen.targets.nvue.subset import read_subset
from tests.helpers import example


@cache
def _files() -> dict[str, str]:
    rendered = render_fabric(plan_fabric(load_spec(example("cumulus-pod"))), targets=["nvue"])
    return {path: text for path, text in rendered.items() if path.endswith(".yaml")}


def _leaf_files() -> tuple[tuple[str, str], ...]:
    """A leaf's startup.yaml and patch.yaml (the hypothesis edits: each ruamel read costs about 0.3 s)."""
    name = sorted({p.split("/")[1] for p in _files()})[0]
    return tuple((path, text) for path, text in sorted(_files().items()) if path.split("/")[1] == name)


_NOT_READ = object()


def _ruamel(text: str, typ: str) -> Any:
    yaml = YAML(typ=typ, pure=True)
    yaml.allow_duplicate_keys = False
    try:
        return _plain(yaml.load(text))
    except YAMLError:
        return _NOT_READ


@contextmanager
def _ruamel_only() -> Iterator[None]:
    """The checks as they were before the reader: every text goes to ruamel, no tree is known clean."""
    with mock.patch("fabgen.targets.nvue.parse.read_subset", return_value=None), \
            mock.patch("fabgen.targets.nvue.patch.read_subset", return_value=None), \
            mock.patch("fabgen.targets.nvue.parse._last_clean", [None]):
        yield


def _full(path: str, text: str) -> list[Problem]:
    with _ruamel_only():
        return check_nvue_files(path, text)


def _same_as_ruamel(text: str) -> None:
    """When the reader accepts ``text``: the tree both ruamel loaders the checks use build."""
    fast = read_subset(text)
    if fast is not None:
        assert fast == _ruamel(text, "rt")
        assert fast == _ruamel(text, "safe")


def test_every_written_yaml_file_is_read_and_equals_ruamels_tree() -> None:
    for path, text in _files().items():
        fast = read_subset(text)
        assert fast is not None, path
        assert fast == _ruamel(text, "rt") == _ruamel(text, "safe"), path


OUTSIDE = [
    ('"0": {switch-priority: 0}', '"0": {switch-priority: yes}'),
    ('"0": {switch-priority: 0}', '"0": {switch-priority: no}'),
    ("mtu: 9216", "mtu: on"),
    ("mtu: 9216", "mtu: off"),
    ("mtu: 9216", "mtu: ~"),
    ("mtu: 9216", "mtu: 0x1F"),
    ("mtu: 9216", "mtu: 1e3"),
    ("mtu: 9216", "mtu: 01"),
    ("mtu: 9216", "mtu: .inf"),
    ("mtu: 9216", "mtu: -0"),
    ("mtu: 9216", "mtu: +9216"),
    ("mtu: 9216", "mtu: 9_216"),
    ("mtu: 9216", "mtu: 9216 # a comment"),
    ("mtu: 9216", "mtu: 9216 "),
    ("mtu: 9216", "mtu: [9216]"),
    ("mtu: 9216", "mtu: &a 9216"),
    ("mtu: 9216", "mtu: !!int 9216"),
    ("mtu: 9216", "mtu: *a"),
    ("mtu: 9216", "mtu: '9216'"),
    ("mtu: 9216", "mtu: >-\n            9216"),
    ("mtu: 9216", "mtu:\t9216"),
    ("mtu: 9216", "mtu: 9216\n          mtu: 9216"),
    ("mtu: 9216", "mtu:  9216"),
    ("mtu: 9216", "mtu : 9216"),
    ("mtu: 9216", "? mtu\n          : 9216"),
    ('type: "swp"', "type: swp"),
    ('type: "swp"', 'type: "sw\\u0070"'),
    ('type: "swp"', 'type: "sw\\np"'),
    ('type: "swp"', 'type: "swp\u00e9"'),
    ('type: "swp"', 'type: "swp'),
    ('trust: "l3"', 'trust: "l3"\n\n'),
    ('trust: "l3"', 'trust: "l3"\r'),
    ("    qos:\n", "    qos: \n"),
    ("    qos:\n", "    qos:  # section\n"),
    ("    qos:\n", "    qos:\n  # odd place\n"),
    ("    qos:\n", "---\n    qos:\n"),
    ("    qos:\n", "     qos:\n"),
    ("    qos:\n", "  qos:\n"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog: {polling-interval: 100, polling-interval: 3}"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog: {polling-interval: 100,robustness: 3}"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog: {polling-interval: 100, robustness: 3, }"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog: {polling-interval: 100, robustness: {a: 3}}"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog: {polling-interval: 100, robustness: 3}}"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog: {polling-interval: 100, on: 3}"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog: {polling-interval: 100, robustness: 3"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog:\n      robustness: 3"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}", "      pfc-watchdog:"),
    ("      pfc-watchdog: {polling-interval: 100, robustness: 3}",
     "      pfc-watchdog:\n          robustness: 3"),
    ("- set:\n", "- set: {}\n"),
    ("- set:\n", "-  set:\n"),
    ("- set:\n", '- "set":\n'),
    ("- set:\n", "- Null:\n"),
    ("- set:\n", "- set:\n- set:\n"),
    ("- set:\n", "%YAML 1.1\n---\n- set:\n"),
    ("    system:\n", "    system:\n    system:\n"),
    ("    system:\n", '    system:\n    "system":\n'),
    ("    system:\n", f"    {'s' * 2000}:\n      a: 1\n    system:\n"),
]


@pytest.mark.parametrize(("old", "new"), OUTSIDE)
def test_a_text_outside_the_subset_is_left_to_ruamel(old: str, new: str) -> None:
    path, text = next(item for item in _leaf_files() if item[0].endswith("startup.yaml"))
    assert old in text
    edited = text.replace(old, new, 1)
    assert read_subset(edited) is None, new
    assert check_nvue_files(path, edited) == _full(path, edited)


INSIDE = [
    ("    qos:\n", '    "qos":\n      # a comment at the indentation of the next line\n'),
    ('type: "swp"', 'type: "s\\"w\\\\p # not a comment"'),
    ("mtu: 9216", "mtu: -9216"),
    ("mtu: 9216", "mtu: 0"),
    ("mtu: 9216", "mtu: null"),
    ("mtu: 9216", "mtu: {}"),
    ("mtu: 9216", 'mtu: {"a, b": "c}, d", e: {}}'),
    ('"0": {switch-priority: 0}', '"0": {"switch-priority": 0}'),
    ("    qos:\n", "    Yes-no:\n      a: 1\n    qos:\n"),
]


@pytest.mark.parametrize(("old", "new"), INSIDE)
def test_a_text_inside_the_subset_is_read_as_ruamel_reads_it(old: str, new: str) -> None:
    path, text = next(item for item in _leaf_files() if item[0].endswith("startup.yaml"))
    assert old in text
    edited = text.replace(old, new, 1)
    assert read_subset(edited) is not None, new
    _same_as_ruamel(edited)
    assert check_nvue_files(path, edited) == _full(path, edited)


def test_other_outsides() -> None:
    _, text = _leaf_files()[0]
    for edited in (text[:-1], text + "# trailing comment\n", "", "\n", "- set:\n", "a: 1\n", "    a: 1\n",
                   text.replace("\n", "\r\n"), "\ufeff" + text, text.replace("- set:\n", "- set:\n  \n", 1)):
        assert read_subset(edited) is None, edited[:40]


PLANTED = [
    ("startup.yaml", "mtu: 9216", "mtu: 9300"),
    ("startup.yaml", "robustness: 3", "robustness: 0"),
    ("startup.yaml", "bw-percent: 50", "bw-percent: 70"),
    ("startup.yaml", "memory-percent: 50", "memory-percent: 60"),
    ("startup.yaml", 'type: "swp"', 'type: "bond"'),
    ("startup.yaml", "egress-scheduler:", "egress-schedular:"),
    ("startup.yaml", '"26": {switch-priority: 3}', '"64": {switch-priority: 3}'),
    ("startup.yaml", 'address: {"10.', 'address: {"300.'),
    ("startup.yaml", 'speed: "400G"', 'speed: 400'),
    ("startup.yaml", "state: {up: {}}", "state: {up: {}, down: {}}"),
    ("startup.yaml", "- set:\n", "- header:\n"),
    ("startup.yaml", "- set:\n", "- get:\n"),
    ("patch.yaml", "mtu: 9216", "mtu: 9300"),
    ("patch.yaml", "      lo: null\n", "      lo: 1\n"),
    ("patch.yaml", "      lo: null\n", "      eth0: null\n      lo: null\n"),
    ("patch.yaml", "- unset:\n", "- delete:\n"),
    ("patch.yaml", "- unset:\n", "- set:\n    system:\n      hostname: null\n- unset:\n"),
    ("patch.yaml", "      hostname: null\n", '      hostname: "x"\n'),
]


@pytest.mark.parametrize(("kind", "old", "new"), PLANTED)
def test_a_planted_fault_the_reader_accepts_is_reported_as_ruamel_reports_it(kind: str, old: str,
                                                                             new: str) -> None:
    path, text = next(item for item in _leaf_files() if item[0].endswith(kind))
    assert old in text
    edited = text.replace(old, new, 1)
    assert read_subset(edited) is not None, new
    _same_as_ruamel(edited)
    problems = check_nvue_files(path, edited)
    assert problems and problems == _full(path, edited)


TOKENS = ["yes", "no", "on", "off", "~", "0x1F", "1e3", "01", ".inf", "null", "-0", "+1", "'a'", "[]", "{}",
          "True", "1_000", "&a", "*a", "!!str", "#", " #", ": ", ", ", "{", "}", '"', "\\", "\\\"", "\t", "-", "- ",
          "  ", "0", "7", "99999", "a", "é", "\n", "\n  ", "\n#"]


@st.composite
def _edits(draw: st.DrawFn) -> tuple[str, str]:
    """A file fabgen wrote, after one to three edits: a token put in, a span cut, a line doubled or moved."""
    path, text = draw(st.sampled_from(_leaf_files()))
    for _ in range(draw(st.integers(1, 3))):
        lines = text.splitlines(keepends=True)
        kind = draw(st.sampled_from(["insert", "replace", "cut", "double", "move"]))
        at = draw(st.integers(0, len(text) - 1))
        if kind == "insert":
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at:]
        elif kind == "replace":
            text = text[:at] + draw(st.sampled_from(TOKENS)) + text[at + draw(st.integers(1, 6)):]
        elif kind == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        else:
            line = draw(st.integers(0, len(lines) - 1))
            moved = lines.pop(line) if kind == "move" else lines[line]
            lines.insert(draw(st.integers(0, len(lines))), moved)
            text = "".join(lines)
    return path, text


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_edits())
def test_random_edits_never_make_the_reader_disagree_with_ruamel(case: tuple[str, str]) -> None:
    path, text = case
    _same_as_ruamel(text)
    if read_subset(text) is not None:
        assert check_nvue_files(path, text) == _full(path, text)


def test_a_tree_found_clean_before_hides_no_fault_in_the_next_file() -> None:
    """The last clean set tree is remembered (a switch's three files carry one): a changed tree is checked again."""
    files = render_fabric(plan_fabric(load_spec(example("cumulus-pod"))), targets=["nvue"])
    name = sorted({p.split("/")[1] for p in files})[0]
    startup, script, patch = (files[f"switches/{name}/{f}"] for f in ("startup.yaml", "nvue.sh", "patch.yaml"))
    for path, text, old, new in (("nvue.sh", script, " mtu 9216", " mtu 9300"),
                                 ("patch.yaml", patch, "mtu: 9216", "mtu: 9300"),
                                 ("startup.yaml", startup, "mtu: 9216", "mtu: 9300")):
        assert check_nvue_files(f"switches/{name}/startup.yaml", startup) == []
        assert check_nvue_files(f"switches/{name}/{path}", text) == []
        edited = text.replace(old, new, 1)
        assert edited != text
        problems = check_nvue_files(f"switches/{name}/{path}", edited)
        assert [p.message for p in problems] == ["9300 is outside 552..9216"], path
        assert problems == _full(f"switches/{name}/{path}", edited)


def test_remembered_lines_share_no_mapping_between_reads() -> None:
    text = '- set:\n    a: {b: {}, c: 1}\n    d:\n      e: {}\n'
    first, second = read_subset(text), read_subset(text)
    assert first == second == [{"set": {"a": {"b": {}, "c": 1}, "d": {"e": {}}}}]
    assert first is not None and second is not None
    first[0]["set"]["a"]["b"]["x"] = 1
    first[0]["set"]["d"]["e"]["y"] = 2
    assert second == [{"set": {"a": {"b": {}, "c": 1}, "d": {"e": {}}}}]
