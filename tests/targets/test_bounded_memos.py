"""The bounded memos: full ones start again empty, and emptying them never changes an output or a verdict."""

from __future__ import annotations

from typing import Any

import pytest

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from fabgen.targets import proved_clean
from fabgen.targets.eos import shape, slots, syntax, text
from fabgen.targets.hostnet import config as hostnet_config
from fabgen.targets.hostnet import slots as hostnet_slots
from fabgen.targets.memo import remember, remember_all
from fabgen.targets.nccl import topo_check
from fabgen.targets.nvue import parse as nvue_parse
from fabgen.targets.nvue import subset as nvue_subset
from tests.helpers import example


def test_remember_keeps_at_most_the_bound() -> None:
    memo: dict[str, int] = {}
    assert [remember(memo, str(i), i, 3) for i in range(3)] == [0, 1, 2]
    assert memo == {"0": 0, "1": 1, "2": 2}
    assert remember(memo, "3", 3, 3) == 3
    assert memo == {"3": 3}, "a full memo is emptied before the next entry"


def test_remember_all_empties_a_full_set_before_the_batch() -> None:
    memo: set[str] = set()
    remember_all(memo, ["a", "b"], 3)
    remember_all(memo, ["c", "d"], 3)
    assert memo == {"a", "b", "c", "d"}, "below the bound a batch is added whole"
    remember_all(memo, ["e"], 3)
    assert memo == {"e"}


TINY = 2
BOUNDS: list[tuple[Any, str]] = [
    (shape.ShapeVerdicts, "LIMIT"), (slots.Vouchers, "LIMIT"), (syntax, "_ACCEPTED_MAX"),
    (text, "_TOKENS_MOST"), (text, "_PROVED_MOST"), (nvue_subset, "_SHAPES_MAX"), (nvue_parse, "_PLACEMENTS_MAX"),
    (hostnet_slots.Verdicts, "LIMIT"), (hostnet_config, "_PROFILES_MOST"), (proved_clean.ProvedClean, "LIMIT"),
    (topo_check, "_MAX_LINES"),
]
"""Every bounded memo's bound (a memo added without a line here is still bounded, but not proved harmless)."""


@pytest.mark.parametrize("name", ["lab", "cumulus-pod", "sonic-pod"])
def test_memos_emptied_at_every_second_entry_render_the_same_files(name: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_fabric(load_spec(example(name)))
    expected = render_fabric(plan)
    kept = (nvue_subset._SHAPES, nvue_parse._PLACEMENTS, topo_check._LINES, *syntax._ACCEPTED.values())
    for memo in (*kept, text.TEXT_TOKENS, text._QUADS, text._PREFIXES):
        memo.clear()
    for owner, bound in BOUNDS:
        monkeypatch.setattr(owner, bound, TINY)
    assert render_fabric(plan) == expected
    batch = max(len(values) for values in (text.TEXT_TOKENS, text._QUADS, text._PREFIXES))
    assert batch <= TINY + 256, "a proved set holds one switch's batch past its bound, not a fabric's"
    for memo in kept:
        assert len(memo) <= TINY
