"""The pre-commit hooks, run by the real ``pre-commit`` tool against a throwaway repository.

``pre-commit try-repo`` installs a clone of this repository's HEAD (the hooks
as committed; other people's work in progress in the shared tree does not leak
in) into a hook environment under ``PRE_COMMIT_HOME`` (a temporary directory;
the install needs PyPI), then runs the hooks on a throwaway repository that
holds a good spec, a spec with a lint error and one that does not validate.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "examples" / "lab" / "spec.yaml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"


def test_hook_definitions() -> None:
    hooks = {h["id"]: h for h in YAML(typ="safe").load(HOOKS.read_text())}
    assert set(hooks) == {"fabgen-validate", "fabgen-lint"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["entry"].split()[0] == "fabgen", "the console script, not python -m"
        assert hook["types"] == ["yaml"]
        assert "files" in hook
    assert "--format parsable" in hooks["fabgen-lint"]["entry"]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"})


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    clone = tmp_path_factory.mktemp("hook-repo") / "fabgen"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True,
                   capture_output=True)
    return clone


def _try_repo(repo: Path, hook: str, home: Path, source: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    assert exe, "pre-commit is a test dependency (pip install -e '.[test]')"
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("PRE_COMMIT", None)
    return subprocess.run([exe, "try-repo", str(source), hook, "--all-files", "--verbose"], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=1200)


@pytest.mark.slow
def test_hooks_block_bad_specs_with_file_and_line(tmp_path: Path, pre_commit_home: Path, hook_repo: Path) -> None:
    repo = tmp_path / "site"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "good").mkdir()
    shutil.copy(LAB, repo / "good" / "spec.yaml")
    (repo / "ci.yaml").write_text("not: [a, fabgen, spec\n")  # not a spec by name: the hooks leave it alone
    _git(repo, "add", "-A")

    for hook in ("fabgen-validate", "fabgen-lint"):
        run = _try_repo(repo, hook, pre_commit_home, hook_repo)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Passed" in run.stdout

    (repo / "bad").mkdir()
    text = LAB.read_text()
    assert "  mtu: 9214\n" in text
    (repo / "bad" / "lab-spec.yaml").write_text(text.replace("  mtu: 9214\n", "  mtu: 1500\n"))
    line = text.splitlines().index("  mtu: 9214") + 1
    _git(repo, "add", "-A")
    run = _try_repo(repo, "fabgen-lint", pre_commit_home, hook_repo)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"bad/lab-spec.yaml:{line}:8: [error] switch MTU 1500" in run.stdout
    assert "(FG116)" in run.stdout
    assert "good/spec.yaml" not in run.stdout, "only the bad spec is reported"

    (repo / "broken.spec.yaml").write_text(text.replace("  rails: 4\n", "  rails: 4\n  railz: 4\n"))
    broken_line = text.splitlines().index("  rails: 4") + 2
    _git(repo, "add", "-A")
    run = _try_repo(repo, "fabgen-validate", pre_commit_home, hook_repo)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"broken.spec.yaml:{broken_line}:3: unknown key 'railz'" in run.stdout
