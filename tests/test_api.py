"""The public API: its verbs, callable whatever fabgen's subpackages were imported since."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import fabgen
from tests.helpers import ROOT, example


def test_verbs_survive_subpackage_imports(tmp_path: Path) -> None:
    code = (
        "import fabgen\n"
        f"s = fabgen.load_spec({str(example('lab'))!r})\n"
        "p = fabgen.plan_fabric(s)\n"
        "import fabgen.targets.registry, fabgen.lint.engine, fabgen.plan.build, fabgen.writer\n"
        "files = fabgen.render_fabric(p, targets=['eos'], devices=['leaf-*'])\n"
        "assert files and all(k.startswith('switches/leaf-') for k in files), sorted(files)\n"
        "findings = fabgen.lint_fabric(s, p)\n"
        "assert isinstance(findings, list)\n"
        f"r = fabgen.write_files(files, {str(tmp_path / 'out')!r})\n"
        "assert sorted(r.written) == sorted(files)\n"
        "assert callable(fabgen.plan_fabric) and callable(fabgen.render_fabric) and callable(fabgen.lint_fabric)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr


def test_text_or_path_and_all() -> None:
    verbs = {"load_spec", "plan_fabric", "render_fabric", "lint_fabric", "write_files", "generate"}
    assert set(fabgen.__all__) >= verbs
    subpackages = {p.name for p in Path(fabgen.__file__).parent.iterdir() if (p / "__init__.py").is_file()}
    assert not verbs & subpackages, "a verb named like a subpackage is shadowed once that package is imported"
    text = example("lab").read_text()
    assert fabgen.load_spec(text).cluster.name == fabgen.load_spec(example("lab")).cluster.name


def test_thread_safe_rendering() -> None:
    spec = fabgen.load_spec(example("lab"))
    expected = fabgen.render_fabric(fabgen.plan_fabric(spec))
    results: list[dict[str, str]] = []

    def work() -> None:
        results.append(fabgen.render_fabric(fabgen.plan_fabric(spec)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 4
