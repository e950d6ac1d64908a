"""The CLI: exit codes, one located line per problem, nothing written on bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, example, run_cli

LAB = example("lab").read_text()
LOCATED = re.compile(r"^\S+:\d+:\d+: ")


def _bad(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]\n" for p, n in zip("abcdefg", "bcdefgh", strict=False))


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("malformed", LAB.replace("rails: 4", "rails: [4"), "invalid YAML"),
        ("duplicate-key", LAB.replace("cluster:\n", "cluster:\n  name: twice\n", 1), "duplicate key"),
        ("unknown-key", LAB.replace("oversubscription:", "oversubscriptoin:"), "did you mean 'oversubscription'"),
        ("wrong-type", LAB.replace("rails: 4", "rails: four"), "valid integer"),
        ("dscp-64", LAB.replace("dscp: [26]", "dscp: [64]"), "less than or equal to 63"),
        ("priority-8", LAB.replace("priority: 6", "priority: 8"), "less than or equal to 7"),
        ("name-newline", LAB.replace("name: lab\n", 'name: "lab\\nevil"\n'), "expected a name of letters, digits"),
        ("name-dotdot", LAB.replace("name: lab\n", "name: ../../etc\n"), "expected a name of letters, digits"),
        ("alias-bomb", BOMB, "through aliases"),
        ("radix", LAB.replace("count: 2}", "count: 2}").replace("count: 4\n", "count: 60\n"), "spines"),
        ("empty", "", "spec is empty"),
        ("non-utf8", b"version: 1\ncluster: {name: caf\xe9}\n", "not valid UTF-8"),
    ],
)
def test_bad_input_exit_2_located_nothing_written(tmp_path: Path, name: str, text: str | bytes, message: str) -> None:
    spec = _bad(tmp_path, text)
    out = tmp_path / "out"
    code, stdout, stderr = run_cli("generate", str(spec), "-o", str(out))
    assert code == 2, (stdout, stderr)
    lines = stderr.strip().splitlines()
    assert lines and all(line.startswith(str(spec)) for line in lines), stderr
    assert any(message in line for line in lines), stderr
    assert "Traceback" not in stderr
    assert all(LOCATED.match(line) for line in lines), stderr
    assert not out.exists()
    code, _, stderr2 = run_cli("validate", str(spec))
    assert code == 2 and stderr2 == stderr


def test_missing_file() -> None:
    code, _, stderr = run_cli("validate", "/nonexistent/spec.yaml")
    assert code == 2 and stderr.strip() == "/nonexistent/spec.yaml: no such file"


def test_usage_error_is_exit_2() -> None:
    code, _, stderr = run_cli("generate")
    assert code == 2 and "required" in stderr


def test_validate_ok_and_plan_table() -> None:
    code, stdout, _ = run_cli("validate", str(example("lab")))
    assert code == 0 and stdout.endswith(": ok\n")
    code, stdout, _ = run_cli("plan", str(example("lab")))
    assert code == 0 and "4 hosts, 16 GPUs, 4 rails, 2-tier" in stdout
    code, stdout, _ = run_cli("plan", str(example("lab")), "--format", "json")
    assert json.loads(stdout)["links_total"] == 32


def test_generate_then_check(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_cli("generate", str(example("lab")), "-o", str(out))[0] == 0
    assert (out / "cabling.csv").is_file() and (out / "manifest.json").is_file()
    code, stdout, _ = run_cli("generate", str(example("lab")), "-o", str(out), "--check")
    assert code == 0 and "up to date" in stdout
    (out / "cabling.csv").write_text((out / "cabling.csv").read_text().replace("lab01", "lab99", 1))
    code, stdout, _ = run_cli("generate", str(example("lab")), "-o", str(out), "--check")
    assert code == 1 and "-lab99" in stdout and "+lab01" in stdout
    assert "lab99" in (out / "cabling.csv").read_text()  # --check writes nothing


def test_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    spec = _bad(tmp_path, LAB.replace("dscp: [26]", "dscp: [64]"))
    proc = subprocess.run([sys.executable, "-m", "fabgen.cli", "validate", str(spec)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert re.search(r"spec\.yaml:\d+:\d+: Input should be less than or equal to 63 \(at qos\.classes\.roce\.dscp\[0\]\)",
                     proc.stderr)


def test_a_directory_names_its_spec_yaml(tmp_path: Path) -> None:
    folder = example("lab").parent
    code, stdout, _ = run_cli("validate", str(folder))
    assert code == 0 and stdout == f"{folder / 'spec.yaml'}: ok\n"
    out = tmp_path / "out"
    assert run_cli("generate", str(folder), "-o", str(out))[0] == 0
    assert run_cli("generate", str(example("lab")), "-o", str(out), "--check")[0] == 0  # the same tree
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, stderr = run_cli("validate", str(empty))
    assert code == 2 and stderr.strip() == f"{empty}: is a directory, not a spec"
