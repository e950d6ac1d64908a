"""The writer's manifest stays the sha256 of every file it wrote when a renderer hands over a digest
(:mod:`fabgen.encoded`): the EOS session's name hashes its ``.cfg``, and the writer reuses that digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import fabgen.pipeline
import fabgen.targets.eos.session
from fabgen.encoded import remember_encoded, take_encoded
from fabgen.pipeline import generate, load_spec
from tests.helpers import example


def test_only_the_same_object_is_taken_once() -> None:
    text = "".join(["hostname ", "leaf\n"])  # built at run time: not an interned constant
    data = text.encode()
    remember_encoded(text, data, hashlib.sha256(data).hexdigest())
    assert take_encoded("".join(["hostname ", "leaf\n"])) is None  # equal, another object
    assert take_encoded(text) == (data, hashlib.sha256(data).hexdigest())
    assert take_encoded(text) is None  # good for one take


def _wrong_manifest_entries(out: Path) -> list[str]:
    manifest = json.loads((out / "manifest.json").read_text())
    wrong = []
    for path, entry in manifest["files"].items():
        data = (out / path).read_bytes()
        if entry["sha256"] != hashlib.sha256(data).hexdigest() or entry["bytes"] != len(data):
            wrong.append(path)
    return wrong


def _generate_counting_takes(out: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    taken = []

    def counting(text: str) -> Any:
        found = take_encoded(text)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(fabgen.pipeline, "take_encoded", counting)
    generate(load_spec(example("lab")), out)
    return sum(taken)


def test_manifest_digests_are_the_written_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    taken = _generate_counting_takes(out, monkeypatch)
    assert taken == len(list(out.glob("switches/*.cfg"))) > 0  # every .cfg's digest came from its session name
    assert _wrong_manifest_entries(out) == []


def test_a_wrong_handed_over_digest_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The planted fault: a renderer handing over a digest of other bytes; the manifest check above sees it."""
    def wrong(text: str, data: bytes, digest: str) -> None:
        remember_encoded(text, data, hashlib.sha256(data + b"!").hexdigest())

    monkeypatch.setattr(fabgen.targets.eos.session, "remember_encoded", wrong)
    out = tmp_path / "out"
    _generate_counting_takes(out, monkeypatch)
    assert sorted(_wrong_manifest_entries(out)) == sorted(str(p.relative_to(out)) for p in out.glob("switches/*.cfg"))
