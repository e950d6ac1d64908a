"""Golden outputs: every example renders byte for byte what was reviewed.

Small examples keep their whole tree under ``tests/golden/NAME/``. The 24k
example would be tens of megabytes, so it keeps the sha256 of every file plus a
few whole files (one device of each kind) to read in review.
Update with ``pytest tests/test_golden.py --update-goldens`` and read the diff.
"""

from __future__ import annotations

import hashlib
import shutil
from functools import cache

import pytest

from fabgen.pipeline import load_spec, plan_fabric, render_fabric
from tests.helpers import EXAMPLE_NAMES, LARGE_EXAMPLES, ROOT, example

GOLDEN = ROOT / "tests" / "golden"
DIGEST_ONLY = LARGE_EXAMPLES
_SAMPLES = ("switches/spine-p00-01", "switches/super-pl00-01", "hosts/gt00001/", "hosts/_profiles/")
SAMPLES = {"llama3-24k": ("switches/leaf-r0-p00-01", *_SAMPLES), "meta-24k": ("switches/leaf-p00-rack001", *_SAMPLES)}
"""One device of each kind, kept whole for review."""


@cache
def _render(name: str) -> dict[str, str]:
    return render_fabric(plan_fabric(load_spec(example(name))))


def _digests(files: dict[str, str]) -> str:
    return "".join(f"{hashlib.sha256(text.encode()).hexdigest()}  {path}\n" for path, text in sorted(files.items()))


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n not in DIGEST_ONLY])
def test_example_matches_golden_tree(name: str, update_goldens: bool) -> None:
    files = _render(name)
    root = GOLDEN / name
    if update_goldens:
        shutil.rmtree(root, ignore_errors=True)
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text, encoding="utf-8")
    on_disk = {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file()}
    assert sorted(on_disk) == sorted(files), "file list differs; run with --update-goldens and review"
    for path, text in files.items():
        assert text == on_disk[path], f"{name}/{path} differs from its golden; run with --update-goldens and review"


@pytest.mark.parametrize("name", sorted(DIGEST_ONLY & set(EXAMPLE_NAMES)))
def test_large_example_matches_golden_digests(name: str, update_goldens: bool) -> None:
    files = _render(name)
    digest_file = GOLDEN / f"{name}.sha256"
    samples = {p: t for p, t in files.items() if p.startswith(SAMPLES[name])}
    sample_root = GOLDEN / f"{name}-samples"
    if update_goldens:
        digest_file.parent.mkdir(parents=True, exist_ok=True)
        digest_file.write_text(_digests(files), encoding="utf-8")
        shutil.rmtree(sample_root, ignore_errors=True)
        for path, text in samples.items():
            (sample_root / path).parent.mkdir(parents=True, exist_ok=True)
            (sample_root / path).write_text(text, encoding="utf-8")
    assert _digests(files) == digest_file.read_text(encoding="utf-8")
    for path, text in samples.items():
        assert (sample_root / path).read_text(encoding="utf-8") == text, path
