"""``fabgen init``: a commented starter spec that validates, generates and lints clean as is."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabgen.init_spec import starter_spec
from fabgen.pipeline import load_spec, plan_fabric
from tests.helpers import run_cli


def test_default_starter_validates_and_generates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = run_cli("init")
    assert code == 0, stderr
    assert stdout == "spec.yaml: starter spec for 4 host(s) x 4 rail(s) on eos; next: fabgen generate spec.yaml -o out\n"
    text = (tmp_path / "spec.yaml").read_text()
    assert text.startswith("# yaml-language-server: $schema=") and text.count("\n#") + text.count("  #") > 20
    assert run_cli("validate", "spec.yaml") == (0, "spec.yaml: ok\n", "")
    code, stdout, stderr = run_cli("generate", "spec.yaml", "-o", "out")
    assert code == 0, stderr
    generated = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*") if p.is_file()}
    assert any(p.startswith("switches/") for p in generated) and "hosts/gpu01/install.json" in generated
    assert any(p.startswith("hosts/_profiles/") and p.endswith("/nccl.conf") for p in generated)
    assert run_cli("generate", "spec.yaml", "-o", "out", "--check")[0] == 0


def test_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    spec = tmp_path / "mine.yaml"
    spec.write_text("my own spec\n")
    code, stdout, stderr = run_cli("init", "-o", str(spec))
    assert code == 2 and stdout == ""
    assert stderr == f"{spec}: already exists; not overwriting it (use --force)\n"
    assert spec.read_text() == "my own spec\n"
    code, _, _ = run_cli("init", "-o", str(spec), "--force", "-q", "--os", "sonic")
    assert code == 0 and "os: sonic" in spec.read_text()


def test_stdout_writes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = run_cli("init", "-o", "-", "--hosts", "2", "--rails", "2")
    assert code == 0 and stdout == starter_spec("eos", 2, 2, command_args=" -o - --os eos --hosts 2 --rails 2")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("os_name", ["eos", "sonic", "cumulus"])
@pytest.mark.parametrize(("hosts", "rails"), [(1, 1), (4, 4), (6, 8)])
def test_every_os_and_size_generates_and_lints_clean(tmp_path: Path, os_name: str, hosts: int, rails: int) -> None:
    spec = tmp_path / "spec.yaml"
    code, _, stderr = run_cli("init", "-q", "-o", str(spec), "--os", os_name, "--hosts", str(hosts),
                              "--rails", str(rails))
    assert code == 0, stderr
    fabric = plan_fabric(load_spec(spec))
    assert len(fabric.hosts) == hosts and fabric.spec.fabric.rails == rails
    assert {s.os for s in fabric.switches} == {os_name}
    assert sum(s.tier == "spine" for s in fabric.switches) == 2  # a small starter survives a spine failure
    code, _, stderr = run_cli("generate", str(spec), "-o", str(tmp_path / "out"), "-q")
    assert code == 0, stderr
    code, stdout, stderr = run_cli("lint", str(spec), "--strict")  # a warning (FG118 once) fails it too
    assert code == 0 and "No problems found" in stdout, stdout + stderr


def test_large_starter_grows_a_super_spine_tier() -> None:
    fabric = plan_fabric(load_spec(starter_spec("eos", 300, 8)))
    assert fabric.layout.tiers == 3 and any(s.tier == "super_spine" for s in fabric.switches)
    assert all(h.mgmt for h in fabric.hosts)  # the management pool grew with the cluster


def test_deterministic() -> None:
    assert starter_spec("cumulus", 5, 3) == starter_spec("cumulus", 5, 3)


@pytest.mark.parametrize(("args", "message"), [
    (["--rails", "9"], "--rails must be 1..8"),
    (["--hosts", "0"], "argument --hosts: must be at least 1"),
    (["--hosts", "many"], "argument --hosts: not a whole number"),
    (["--os", "junos"], "argument --os: invalid choice"),
])
def test_bad_options_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    code, _, stderr = run_cli("init", "-o", str(tmp_path / "spec.yaml"), *args)
    assert code == 2 and message in stderr
    assert not (tmp_path / "spec.yaml").exists()


def test_template_ships_inside_the_package() -> None:
    import fabgen

    template = Path(fabgen.__file__).parent / "starter" / "spec.yaml.j2"
    assert template.is_file()
