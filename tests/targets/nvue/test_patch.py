"""``patch.yaml`` for ``nv config patch``: an unset of fabgen's subtrees, then the same set as startup.yaml.

Tested: the file is YAML of the shape NVUE takes (a list of ``- unset:`` and
``- set:`` operations), its set carries exactly the values of the ``nv set``
script and of startup.yaml (each parsed back), it unsets only what it sets
again (the checker refuses a planted unset of an operator's subtree), and,
played against an applied config holding an operator's own ports, NTP and
OSPF plus a stale fabgen value, it leaves the operator's parts as they were
and fabgen's exactly as the spec says.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from ruamel.yaml import YAML

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets.nvue.parse import load_set_tree, parse_nv_set
from fabgen.targets.nvue.patch import check_nvue_files, owned_paths
from tests.helpers import example


@cache
def _files() -> dict[str, str]:
    plan = plan_fabric(load_spec(example("cumulus-pod")))
    return render_fabric(plan, targets=["nvue"])


def _names() -> list[str]:
    return sorted({p.split("/")[1] for p in _files()})


def _load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


def _leaves(node: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(node, dict) and node:
        return [leaf for k, v in node.items() for leaf in _leaves(v, (*path, str(k)))]
    return [path]


def test_shape_and_values_match_the_script_and_startup_yaml() -> None:
    files = _files()
    for name in _names():
        patch = files[f"switches/{name}/patch.yaml"]
        doc = _load(patch)
        assert isinstance(doc, list) and [list(op) for op in doc] == [["unset"], ["set"]], name
        assert doc[1]["set"] == parse_nv_set(files[f"switches/{name}/nvue.sh"]), name
        assert doc[1]["set"] == load_set_tree(files[f"switches/{name}/startup.yaml"]), name
        assert check_nvue_files(f"switches/{name}/patch.yaml", patch) == [], name
        unset = _leaves(doc[0]["unset"])
        assert unset == owned_paths(doc[1]["set"])
        assert all(_get(doc[0]["unset"], path) is None for path in unset)
        interfaces = set(doc[1]["set"]["interface"])
        assert {p[1] for p in unset if p[0] == "interface"} == interfaces and "eth0" not in interfaces


def _get(tree: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def _apply(applied: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    """NVUE's patch, as far as this test needs it: unset removes a subtree, set merges into the tree."""
    result = copy.deepcopy(applied)

    def merge(into: dict[str, Any], other: dict[str, Any]) -> None:
        for key, value in other.items():
            if isinstance(value, dict) and isinstance(into.get(key), dict):
                merge(into[key], value)
            else:
                into[key] = copy.deepcopy(value)

    for op in patch:
        if "unset" in op:
            for path in _leaves(op["unset"]):
                parent = _get(result, path[:-1]) if _exists(result, path[:-1]) else {}
                parent.pop(path[-1], None)
        else:
            merge(result, op["set"])
    return result


def _exists(tree: Any, path: tuple[str, ...]) -> bool:
    for key in path:
        if not isinstance(tree, dict) or key not in tree:
            return False
        tree = tree[key]
    return True


def test_played_against_an_applied_config_only_fabgens_subtrees_change() -> None:
    name = _names()[0]
    patch = _load(_files()[f"switches/{name}/patch.yaml"])
    wanted = patch[1]["set"]
    applied = copy.deepcopy(wanted)
    applied["interface"]["eth0"] = {"ip": {"vrf": "mgmt", "address": {"192.0.2.10/24": {}}}}
    applied["interface"]["swp60"] = {"link": {"state": {"up": {}}}, "description": "operator's"}
    applied["system"]["ntp"] = {"server": {"192.0.2.1": {}}}
    applied["router"]["ospf"] = {"enable": "on"}
    first = next(iter(wanted["interface"]))
    applied["interface"][first]["link"] = {**applied["interface"][first].get("link", {}), "fec": "stale"}
    applied["qos"]["mapping"]["default-global"]["dscp"]["64-stale"] = {"switch-priority": 3}
    after = _apply(applied, patch)
    assert after["interface"]["eth0"] == applied["interface"]["eth0"]
    assert after["interface"]["swp60"] == applied["interface"]["swp60"]
    assert after["system"]["ntp"] == applied["system"]["ntp"] and after["router"]["ospf"] == {"enable": "on"}
    for path in owned_paths(wanted):
        assert _get(after, path) == _get(wanted, path), path  # the stale fec and DSCP are gone


def test_the_checker_refuses_an_unset_of_what_fabgen_does_not_set_again() -> None:
    name = _names()[0]
    text = _files()[f"switches/{name}/patch.yaml"]
    broken = text.replace("    interface:\n      lo: null\n", "    interface:\n      eth0: null\n      lo: null\n", 1)
    assert broken != text
    problems = check_nvue_files("switches/x/patch.yaml", broken)
    assert [p.message for p in problems] == ["unset interface.eth0: the patch does not set it again, so it would "
                                             "erase configuration fabgen does not write"]
    assert check_nvue_files("switches/x/patch.yaml", text.replace("      lo: null\n", "      lo: 1\n", 1))
    assert check_nvue_files("switches/x/patch.yaml", text.replace("- unset:\n", "- delete:\n", 1))


def test_a_set_item_spelled_otherwise_is_a_problem_not_a_crash() -> None:
    """``- "set":`` loads as the same item, but the set item's lines are found by their spelling."""
    text = _files()[f"switches/{_names()[0]}/patch.yaml"]
    quoted = text.replace("- set:\n", '- "set":\n', 1)
    assert quoted != text
    assert [p.message for p in check_nvue_files("switches/x/patch.yaml", quoted)] == [
        "the set item must be written '- set:' on a line of its own"]
