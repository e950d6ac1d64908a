"""The nvue check's fast paths against the slow ones they stand beside, on planted faults and random edits.

* :func:`_fits` (the schema verdict on a plain set tree) must say what
  :meth:`_Checker.walk` says: clean exactly when the walk finds no problem.
* :data:`_IPV4_PREFIX` must only match what ``Key.problem`` accepts as an address with a prefix.
* :func:`_command_line` (one match for a line of bare words) must quote as ``shell_quote`` word by word
  and refuse exactly the words :func:`_check_each_word` refuses.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabgen.errors import OutputError
from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.environment import shell_quote
from fabgen.targets.nvue.config import _check_each_word, _command_line
from fabgen.targets.nvue.parse import (
    _IPV4_PREFIX,
    SET_SCHEMA,
    Key,
    _Checker,
    _clean,
    _fits,
    _semantics,
    parse_nv_set,
)
from fabgen.targets.nvue.subset import read_subset
from tests.helpers import example


@cache
def _trees() -> tuple[dict[str, Any], ...]:
    """The set trees of cumulus-pod's files as the checks read them: each startup.yaml's and nvue.sh's."""
    rendered = render_fabric(plan_fabric(load_spec(example("cumulus-pod"))), targets=["nvue"])
    trees = []
    for path, text in sorted(rendered.items()):
        if path.endswith("/startup.yaml"):
            doc = read_subset(text)
            assert doc is not None
            trees.append(doc[0]["set"])
        elif path.endswith("/nvue.sh"):
            trees.append(parse_nv_set(text))
    return tuple(trees)


def _walk_clean(value: Any) -> bool:
    checker = _Checker("")
    checker.walk(SET_SCHEMA, value, ("set",), (0, 0))
    return not checker.problems


def _agree(tree: Any) -> bool:
    """Asserts the fast verdicts are the walk's (and, for a mapping, ``_clean``'s is the walk's and the rules');
    returns the verdict."""
    verdict = _walk_clean(tree)
    assert _fits(SET_SCHEMA, tree) is verdict
    if isinstance(tree, dict):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("fabgen.targets.nvue.parse._last_clean", [None])
            assert _clean(tree) is (verdict and not _semantics(tree))
    return verdict


def test_every_written_tree_fits() -> None:
    for tree in _trees():
        assert _agree(tree)


def _leaf() -> dict[str, Any]:
    return copy.deepcopy(_trees()[0])


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(tree: dict[str, Any]) -> None:
        node = tree
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def _rename(path: tuple[str, ...], new: Any) -> Callable[[dict[str, Any]], None]:
    def edit(tree: dict[str, Any]) -> None:
        node = tree
        for key in path[:-1]:
            node = node[key]
        node[new] = node.pop(path[-1])
    return edit


def _wrap(path: tuple[str, ...]) -> Callable[[dict[str, Any]], None]:
    """The subtree at ``path`` as a read-only mapping that is no dict (the walk's own case)."""
    def edit(tree: dict[str, Any]) -> None:
        node = tree
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = types.MappingProxyType(node[path[-1]])
    return edit


WATCHDOG = ("qos", "pfc-watchdog", "robustness")
SWP1 = ("interface", "swp1")
DSCP = ("qos", "mapping", "default-global", "dscp")
PLANTED: dict[str, tuple[Callable[[dict[str, Any]], None], bool]] = {
    "robustness 0": (_set(WATCHDOG, 0), False),
    "robustness 1001": (_set(WATCHDOG, 1001), False),
    "robustness 1000": (_set(WATCHDOG, 1000), True),
    "robustness True": (_set(WATCHDOG, True), False),
    "robustness as text": (_set(WATCHDOG, "3"), False),
    "robustness None": (_set(WATCHDOG, None), False),
    "robustness a mapping": (_set(WATCHDOG, {}), False),
    "robustness a list": (_set(WATCHDOG, [3]), False),
    "hostname starts with a dash": (_set(("system", "hostname"), "-leaf"), False),
    "hostname empty": (_set(("system", "hostname"), ""), False),
    "hostname a number": (_set(("system", "hostname"), 3), False),
    "mtu 551": (_set((*SWP1, "link", "mtu"), 551), False),
    "mtu 9216": (_set((*SWP1, "link", "mtu"), 9216), True),
    "mtu as text": (_set((*SWP1, "link", "mtu"), "9214"), False),
    "state up and down": (_set((*SWP1, "link", "state"), {"up": {}, "down": {}}), False),
    "state empty": (_set((*SWP1, "link", "state"), {}), False),
    "state None": (_set((*SWP1, "link", "state"), None), False),
    "state sideways": (_set((*SWP1, "link", "state"), {"sideways": {}}), False),
    "state down": (_set((*SWP1, "link", "state"), {"down": None}), True),
    "type ether": (_set((*SWP1, "type"), "ether"), False),
    "description with a newline": (_set((*SWP1, "description"), "a\nb"), False),
    "unknown key": (_set((*SWP1, "colour"), "red"), False),
    "speed a word it lacks": (_set((*SWP1, "link", "speed"), "300G"), False),
    "interface swpX": (_rename(SWP1, "swpX"), False),
    "interface swp1s2": (_rename(SWP1, "swp1s2"), True),
    "interface an int": (_rename(SWP1, 1), False),
    "dscp 64": (_rename((*DSCP, "0"), "64"), False),
    "dscp 063": (_rename((*DSCP, "63"), "063"), True),
    "dscp arabic digit": (_rename((*DSCP, "1"), "\u0661"), True),
    "dscp an int key": (_rename((*DSCP, "1"), 1), True),
    "dscp empty": (_rename((*DSCP, "1"), ""), False),
    "switch priority 8": (_set((*DSCP, "5", "switch-priority"), 8), False),
    "dscp table a mapping proxy": (_wrap(DSCP), True),
    "watchdog a mapping proxy": (_wrap(("qos", "pfc-watchdog")), True),
    "bw-percent over 100 in sum": (_set(("qos", "egress-scheduler", "default-global", "traffic-class", "0",
                                         "bw-percent"), 99), True),
}


def _address_key(tree: dict[str, Any]) -> str:
    key: str = next(iter(tree["interface"]["swp1"]["ip"]["address"]))
    return key


ADDRESSES = {"10.0.0.1": False, "10.0.0.1/33": False, "010.0.0.1/31": False, "10.0.0.256/31": False,
             "::1/128": True, "10.0.0.1/0": True, "10.0.0.1/255.255.255.0": True, "10.0.0.1/ 31": False}


@pytest.mark.parametrize("name", PLANTED)
def test_planted_fault_gives_the_walks_verdict(name: str) -> None:
    tree = _leaf()
    edit, clean = PLANTED[name]
    edit(tree)
    assert _agree(tree) is clean


@pytest.mark.parametrize("address", ADDRESSES)
def test_address_key_gives_the_walks_verdict(address: str) -> None:
    tree = _leaf()
    _rename(("interface", "swp1", "ip", "address", _address_key(tree)), address)(tree)
    assert _agree(tree) is ADDRESSES[address]


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*path, key))
    return found


SCALARS = (st.none() | st.booleans() | st.integers(-5, 5) | st.integers(0, 2**33)
           | st.sampled_from(["enable", "disable", "on", "off", "swp", "l3", "dwrr", "strict", "400G", "up", "lo",
                              "swp7", "default-global", "10.1.2.3", "10.1.2.3/31", "63", "64", "7", "leaf-1"])
           | st.text(alphabet="ab1-./: \n\u0661", max_size=6))
KEYS = st.sampled_from(["type", "link", "mtu", "state", "up", "ip", "address", "0", "8", "swp2", "qos",
                        "switch-priority", "default-global", "enable", "neighbor"]) | st.text(max_size=4)
VALUES = st.recursive(SCALARS, lambda inner: st.dictionaries(KEYS, inner, max_size=3) | st.lists(inner, max_size=2),
                      max_leaves=6)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_edits_give_the_walks_verdict(data: st.DataObject) -> None:
    tree = copy.deepcopy(data.draw(st.sampled_from(_trees())))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(tree)))
        parent = tree
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()):
            parent[path[-1]] = data.draw(VALUES)
        else:
            parent[data.draw(KEYS)] = parent.pop(path[-1])
        if not isinstance(tree, dict) or not _paths(tree):
            break
    _agree(tree)


@given(st.from_regex(_IPV4_PREFIX, fullmatch=True))
def test_every_plain_prefix_is_one_key_problem_accepts(address: str) -> None:
    assert Key("address", prefix=True).problem(address) is None


WORDS = st.lists(st.text(alphabet="aZ09_@%+=:,./- '\"$`\\\t\n\x00\u00e9#", max_size=5), min_size=1, max_size=5)


@settings(max_examples=500)
@given(st.one_of(WORDS, st.lists(st.sampled_from(["interface", "swp1", "link", "mtu", "9214", "-x", "", "a b"]),
                                 min_size=1, max_size=6)))
def test_command_line_is_each_word_checked_and_quoted(words: list[str]) -> None:
    try:
        _check_each_word(tuple(words), "x")
    except OutputError as error:
        with pytest.raises(OutputError) as raised:
            _command_line(tuple(words), "x")
        assert raised.value.problems == error.problems
    else:
        assert _command_line(tuple(words), "x") == " ".join(map(shell_quote, words))
