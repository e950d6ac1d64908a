"""YAML loading: positions, duplicate keys, alias bombs, encodings, size limits."""

from __future__ import annotations

from pathlib import Path

import pytest

import fabgen.bounded as bounded
import fabgen.source as source
from fabgen.errors import SpecError
from fabgen.source import MAX_BYTES, format_path, load_source
from tests.helpers import never_called


def _error(text: str) -> str:
    with pytest.raises(SpecError) as info:
        load_source("s.yaml", text=text)
    assert len(info.value.problems) == 1
    return str(info.value.problems[0])


def test_positions_of_keys_values_and_items() -> None:
    doc = load_source("s.yaml", text="a: 1\nb:\n  c: [10, 20]\n  d:\n    - {e: 400G}\n")
    assert doc.data == {"a": 1, "b": {"c": [10, 20], "d": [{"e": "400G"}]}}
    assert doc.locate(("a",)) == (1, 4)
    assert doc.locate(("b", "c", 1)) == (3, 11)
    assert doc.locate(("b", "d", 0, "e"), key=True) == (5, 8)
    assert doc.locate(("b", "d", 0, "e")) == (5, 11)
    # A path that was never written falls back to its nearest written ancestor.
    assert doc.locate(("b", "d", 0, "missing")) == (5, 7)


def test_format_path() -> None:
    assert format_path(("fabric", "tiers", "leaf", "ports")) == "fabric.tiers.leaf.ports"
    assert format_path(("hosts", 3, "profile")) == "hosts[3].profile"


def test_duplicate_key_is_located() -> None:
    assert _error("a: 1\nb: 2\na: 3\n").startswith("s.yaml:3:1: duplicate key")


def test_malformed_yaml_at_depth() -> None:
    message = _error("a:\n  b:\n    c: [1, 2\n")
    assert message.startswith("s.yaml:4:1: invalid YAML") or message.startswith("s.yaml:3:")


def test_tabs_explained() -> None:
    assert "tabs" in _error("a:\n\tb: 1\n")


@pytest.mark.parametrize(("text", "kind"), [("- 1\n- 2\n", "a list"), ("42\n", "a single value")])
def test_top_level_must_be_mapping(text: str, kind: str) -> None:
    assert f"got {kind}" in _error(text)


def test_empty_spec() -> None:
    assert "spec is empty" in _error("   \n# only a comment\n".replace("# only a comment", ""))


def test_bom_refused() -> None:
    assert "byte-order mark" in _error("\ufeffa: 1\n")


def test_billion_laughs_refused_before_expanding(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=False):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    monkeypatch.setattr(source, "_to_plain", never_called("alias expansion"))
    message = _error("\n".join(lines) + "\n")
    assert "through aliases" in message and "refusing" in message


def test_small_aliases_are_fine() -> None:
    doc = load_source("s.yaml", text="base: &b {x: 1}\nuse: *b\n")
    assert doc.data["use"] == {"x": 1}


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"a: 1\nb: caf\xe9\n")
    with pytest.raises(SpecError) as info:
        load_source(path)
    assert str(info.value) == f"{path}:2:7: not valid UTF-8 (byte 0xe9)"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such file"):
        load_source(tmp_path / "nope.yaml")


def test_oversized_file_refused_without_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as handle:
        handle.truncate(MAX_BYTES + 1)
    with monkeypatch.context() as patch:
        patch.setattr(bounded.os, "read", never_called("os.read"))
        with pytest.raises(SpecError, match="larger than"):
            load_source(path)
