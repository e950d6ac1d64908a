"""``LintContext.memo``: typed slots shared by the rules of one family, keyed by the key object, not its name."""

from __future__ import annotations

from fabgen.lint.context import LintMemo, MemoKey


def test_a_slot_is_empty_until_filled_and_keeps_the_object() -> None:
    memo = LintMemo()
    key: MemoKey[list[int]] = MemoKey("numbers")
    assert memo.get(key) is None
    value = [1, 2]
    assert memo.put(key, value) is value
    assert memo.get(key) is value


def test_keys_with_the_same_name_do_not_collide() -> None:
    memo = LintMemo()
    one: MemoKey[str] = MemoKey("same")
    other: MemoKey[str] = MemoKey("same")
    memo.put(one, "a")
    assert memo.get(other) is None
    assert memo.setdefault(other, "b") == "b" and memo.setdefault(other, "c") == "b"
    assert memo.get(one) == "a"
