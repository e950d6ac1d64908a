"""A ``roce-nic.conf`` filled from a clean shape with a name of value characters is vouched clean; the full check
(:func:`plan_problems` on the text, no vouch) agrees with that on every name, planted faults included."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.mlx5.plan_check import PROVED_CLEAN, plan_problems, shape_clean, vouch_named
from fabgen.targets.mlx5.scripts import _SENTINEL, plan_path, render_nic_plan
from tests.helpers import example

PATH = plan_path("h")


@cache
def _parts() -> list[str]:
    """lab's first host's plan file, cut where its name stands (as the renderer cuts it)."""
    host = next(h for h in plan_fabric(load_spec(example("lab"))).hosts if h.nic_intent)
    assert host.nic_intent is not None and host.network is not None
    mtus = {i.netdev: i.mtu for i in host.network.interfaces}
    parts = render_nic_plan(host.nic_intent.for_host(_SENTINEL), mtus).split(_SENTINEL)
    assert len(parts) > 2  # the name stands in a comment and in a value
    return parts


def _vouched(text: str, name: str, clean: bool) -> bool:
    vouch_named(PATH, text, name, clean)
    return PROVED_CLEAN.holds(PATH, text)


def _agree(name: str, parts: list[str]) -> None:
    text = name.join(parts)
    clean = shape_clean(PATH, parts, _SENTINEL)
    full = plan_problems(PATH, text)  # no vouch yet: the full line check
    if _vouched(text, name, clean):
        assert full == [], (name, full)
        assert plan_problems(PATH, text) == []  # the vouch is taken once
    assert not PROVED_CLEAN.holds(PATH, text)


def test_the_shipped_shape_is_clean() -> None:
    assert shape_clean(PATH, _parts(), _SENTINEL)


@pytest.mark.parametrize("name", ["gt00001", "a b", "x\nEVIL=1", "x\n$(reboot)", "x\x01", "x\x7f", "x=y", "x#y",
                                  "é", "x\ty", "", "X" * 300, "--", "x\r"])
def test_planted_names(name: str) -> None:
    _agree(name, _parts())


def test_a_bad_shape_is_never_vouched() -> None:
    bad = [*_parts()[:-1], _parts()[-1] + "not a plan line\n"]
    assert not shape_clean(PATH, bad, _SENTINEL)
    assert not _vouched("gt00001".join(bad), "gt00001", False)
    assert plan_problems(PATH, "gt00001".join(bad))


@pytest.mark.parametrize("sentinel", ["Fabgen-host", "HOST", "a=b", "a#b", "a\nb", ""])
def test_a_sentinel_that_could_stand_in_a_key_proves_nothing(sentinel: str) -> None:
    assert not shape_clean(PATH, ["A=1\n# ", "\n"], sentinel)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from([*"aZ09 ._:/-=#\n\r\t\x00\x1f\x7f$\"'é"]), max_size=12))
def test_random_names_the_vouch_and_the_full_check_agree(name: str) -> None:
    _agree(name, _parts())


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.text(alphabet=st.sampled_from([*"aZ09 =#\n\x01"]), max_size=6))
def test_random_edits_of_the_shape_the_vouch_and_the_full_check_agree(at: int, insert: str) -> None:
    """An edited shape (a template overlay's, say): vouched only when the shape itself passes, and then right."""
    joined = _SENTINEL.join(_parts())
    at %= len(joined) + 1
    parts = (joined[:at] + insert + joined[at:]).split(_SENTINEL)
    _agree("gt00001", parts)
