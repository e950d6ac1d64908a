"""Spec models: good values pass, bad values fail with the exact file:line:col."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabgen.errors import SpecError
from fabgen.pipeline import load_spec
from fabgen.spec.common import expand_pattern
from fabgen.units import parse_duration, parse_length, parse_size, parse_speed
from tests.helpers import EXAMPLE_NAMES, example


def _errors(text: str) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_spec(text)
    return info.value.lines()


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_example_validates(name: str) -> None:
    spec = load_spec(example(name))
    assert spec.version == 1 and spec.source is not None


def test_units() -> None:
    assert parse_speed("400G") == 400 and parse_speed("1.6T") == 1600 and parse_speed("100G") == 100
    assert parse_size("150KB") == 150 * 1024 and parse_size("1.5MB") == 1536 * 1024 and parse_size(4096) == 4096
    assert parse_duration("200ms") == 200 and parse_duration("1s") == 1000
    assert parse_length("5m") == 5
    for bad, parse in (("fast", parse_speed), (400, parse_speed), ("400", parse_speed), ("٤٠٠G", parse_speed), ("10 parsecs", parse_length), (200, parse_duration), (True, parse_size)):
        with pytest.raises(ValueError):
            parse(bad)


def test_pattern_expansion_never_uses_format() -> None:
    assert expand_pattern("gt{index:05d}", index=7) == "gt00007"
    assert expand_pattern("n{index}", index=12) == "n12"


LAB = example("lab").read_text()


def _replace(old: str, new: str) -> str:
    assert old in LAB, old
    return LAB.replace(old, new, 1)


def _line_col(text: str, needle: str) -> tuple[int, int]:
    index = text.index(needle)
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        ("dscp: [26]", "dscp: [64]", "64]", "less than or equal to 63"),
        ("priority: 6", "priority: 8", "8, strict", "less than or equal to 7"),
        ("ports: 32, speed: 400G}\n    spine", "portz: 32, speed: 400G}\n    spine", "portz", "unknown key 'portz'; did you mean 'ports'?"),
        ("count: 4\n", "count: many\n", "many", "valid integer"),
        ("name: lab\n", 'name: "lab\\nhostname evil"\n', '"lab', "expected a name of letters, digits"),
        ("name: lab\n", "name: ../etc\n", "../etc", "expected a name of letters, digits"),
        ("min: 150KB, max: 1500KB", "min: 1500KB, max: 150KB", "min: 1500KB", "must be below max"),
        ("detect: 200ms", "detect: 200", "200, restore", "duration needs a unit"),
    ],
)
def test_bad_values_are_located(old: str, new: str, needle: str, message: str) -> None:
    text = _replace(old, new)
    errors = _errors(text)
    line, col = _line_col(text, needle)
    located = [e for e in errors if e.startswith(f"<string>:{line}:")]
    assert located, errors
    assert any(message in e for e in located), errors
    if needle not in ("min: 1500KB",):  # a model-level rule points at the mapping that holds it
        assert any(e.startswith(f"<string>:{line}:{col}:") for e in located), (errors, line, col)


def test_all_errors_of_a_file_at_once() -> None:
    text = _replace("dscp: [26]", "dscp: [64]").replace("priority: 6", "priority: 9")
    errors = _errors(text)
    assert len(errors) == 2
    assert all(" (at qos.classes." in e for e in errors)


def test_missing_profile_reference() -> None:
    errors = _errors(_replace("profile: lab-node", "profile: lab-nod"))
    assert len(errors) == 1
    line, col = _line_col(LAB, "profile: lab-node")
    assert errors[0].startswith(f"<string>:{line}:{col + 9}:")
    assert "lab-nod" in errors[0] and "have: lab-node" in errors[0]


def test_rail_beyond_fabric() -> None:
    errors = _errors(_replace("rail: 3,", "rail: 7,"))
    assert any("rail 7, but the fabric has 4 rails" in e for e in errors)
    assert any("no backend NIC on rail(s) 3" in e for e in errors)


def test_out_of_service_nic_must_exist() -> None:
    errors = _errors(_replace("nics_out_of_service: [mlx5_3]", "nics_out_of_service: [mlx5_9]"))
    assert errors == [e for e in errors if "NIC mlx5_9 is not in profile lab-node" in e] and errors


def test_uppercase_bus_id_refused() -> None:
    errors = _errors(_replace('pci: "0000:19:00.0"', 'pci: "0000:1A:00.0"'))
    assert any("gpus[0].pci" in e for e in errors)


def test_duplicate_class_dscp_in_one_class() -> None:
    errors = _errors(_replace("dscp: [26]", "dscp: [26, 26]"))
    assert any("DSCP appears twice" in e for e in errors)


def test_exactly_one_roce_class() -> None:
    errors = _errors(_replace("{role: roce, ", "{"))
    assert any("exactly one traffic class needs role: roce" in e for e in errors)


@pytest.mark.parametrize(("template", "refused"), [("h{index:62d}", False), ("h{index:63d}", True),
                                                   ("rack-a-{index:50d}-gpu-node-x", True)])
def test_a_host_name_template_longer_than_a_hostname_is_refused_at_its_name(template: str, refused: bool,
                                                                           tmp_path: Path) -> None:
    """The template may ask for up to 40 + 99 + 20 characters; a hostname (and the NIC script's HOST) takes 63.
    It used to be refused late, by the NIC script's check, at the spec's ``nic`` section."""
    from tests.helpers import edited, run_cli

    def long_names(data: dict[str, Any]) -> None:
        data["hosts"][0]["name"] = template
        data["hosts"][0].pop("overrides", None)

    spec = tmp_path / "spec.yaml"
    spec.write_text(edited(long_names))
    code, _, err = run_cli("validate", str(spec))
    if not refused:
        assert code == 0, err
        return
    line = next(n for n, row in enumerate(spec.read_text().splitlines(), 1) if template in row)
    assert code == 2 and err.startswith(f"{spec}:{line}:") and "(at hosts[0].name)" in err, err
    assert "takes at most 63" in err and len(err.strip().splitlines()) == 1, err


def test_the_spec_and_the_nic_script_agree_on_a_host_names_length() -> None:
    """Two homes for one number (the plan's NIC intent cannot import the spec's, which imports it): the spec
    refuses exactly the names the NIC script's check would."""
    from fabgen.plan.nic_intent import _HOST
    from fabgen.spec.references import MAX_HOST_NAME

    assert _HOST.fullmatch("h" * MAX_HOST_NAME) and not _HOST.fullmatch("h" * (MAX_HOST_NAME + 1))
