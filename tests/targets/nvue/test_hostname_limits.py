"""A Cumulus switch's name NVUE's ``system hostname`` refuses is refused by ``validate``, at its pin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import edited, run_cli


def _pinned(name: str) -> Any:
    return lambda d: d["fabric"].update(devices={"spine-01": {"name": name}})


@pytest.mark.parametrize("name", ["spine.a", "spine_a", "spine-a.", "a-"])
def test_a_name_nvue_refuses_is_refused_at_its_pin(tmp_path: Path, name: str) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(edited(_pinned(name), "cumulus-pod"))
    line = next(n for n, row in enumerate(spec.read_text().splitlines(), 1) if f"name: {name}" in row)
    for argv in (["validate", str(spec)], ["generate", str(spec), "-o", str(tmp_path / "out")]):
        code, _, err = run_cli(*argv)
        assert code == 2, err
        assert err.startswith(f"{spec}:{line}:") and "is not a hostname NVUE takes" in err, err
        assert "(at fabric.devices.spine-01.name)" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_the_same_names_stay_valid_on_eos_and_a_good_one_on_cumulus(tmp_path: Path) -> None:
    for example, name in (("lab", "spine.a"), ("lab", "spine_a"), ("cumulus-pod", "spine-a1")):
        spec = tmp_path / f"{example}.yaml"
        spec.write_text(edited(_pinned(name), example))
        code, _, err = run_cli("validate", str(spec))
        assert code == 0, (example, name, err)
