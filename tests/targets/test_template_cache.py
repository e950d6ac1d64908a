"""The compiled-template cache (fabgen.targets.template_cache): warm runs compile nothing, never stale, never trusted blindly.

Every run that matters is its own process (the environment and Jinja's in-memory
template cache live for a process), counting the templates it compiles by
wrapping ``jinja2.Environment.compile``, which every cache miss goes through.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jinja2 import ChoiceLoader, DictLoader, StrictUndefined

from fabgen.targets import template_cache
from fabgen.targets.environment import GuardedEnvironment, environment
from fabgen.template_limits import LimitedSandbox
from tests.helpers import example

ROOT = Path(__file__).resolve().parents[2]
PROBE = """\
import sys
import jinja2.environment as je
compiled = []
real = je.Environment.compile
def counting(self, source, name=None, filename=None, *args, **kwargs):
    compiled.append(name)
    return real(self, source, name, filename, *args, **kwargs)
je.Environment.compile = counting
from fabgen.cli import main
code = main(sys.argv[1:])
import fabgen
print(code, len(compiled), fabgen.__file__)
"""
SYSCTL_ONLY = ("--only", "host-sysctl")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "manifest.json"}


class Run:
    def __init__(self, proc: subprocess.CompletedProcess[str]) -> None:
        *_, last = proc.stdout.strip().splitlines() or [""]
        code, compiled, self.module = last.split(" ", 2)
        self.code, self.compiled, self.stderr = int(code), int(compiled), proc.stderr


def _generate(cache: Path | str, out: Path, *extra: str, spec: Path | None = None, pythonpath: Path | None = None,
              cwd: Path = ROOT) -> Run:
    env = {**os.environ, "FABGEN_CACHE_DIR": str(cache)}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    proc = subprocess.run([sys.executable, "-c", PROBE, "generate", str(spec or example("lab")), "-o", str(out), "-q",
                           *extra], capture_output=True, text=True, check=False, env=env, cwd=cwd)
    assert proc.returncode == 0 and proc.stdout, proc.stderr
    return Run(proc)


def _entries(cache: Path) -> list[Path]:
    """The per-template entries (not the shipped templates' bundle, see :func:`_bundles`)."""
    return sorted(p for p in (cache / f"templates-v{template_cache.SCHEMA}").iterdir()
                  if not p.name.startswith((".", "bundle-")))


def _bundles(cache: Path) -> list[Path]:
    return sorted((cache / f"templates-v{template_cache.SCHEMA}").glob("bundle-*"))


def _drop_bundles(cache: Path) -> None:
    """The tests of one entry set the bundle aside: with it, a shipped template never reads its entry."""
    for bundle in _bundles(cache):
        bundle.unlink()


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def test_a_warm_process_compiles_no_template_and_writes_the_same_bytes(tmp_path: Path, cache: Path) -> None:
    plain = _generate(cache, tmp_path / "plain", "--no-cache")
    cold = _generate(cache, tmp_path / "cold")
    warm = _generate(cache, tmp_path / "warm")
    assert plain.compiled == cold.compiled == len(_entries(cache)) >= 10
    assert warm.compiled == 0 and warm.stderr == "" and cold.stderr == ""
    assert len(_tree(tmp_path / "plain")) > 10
    assert _tree(tmp_path / "plain") == _tree(tmp_path / "cold") == _tree(tmp_path / "warm")


def test_no_cache_and_off_write_nothing(tmp_path: Path, cache: Path) -> None:
    first = _generate(cache, tmp_path / "a", "--no-cache")
    off = _generate("off", tmp_path / "b")
    assert not cache.exists() and first.compiled == off.compiled > 0
    # and neither reads an entry that exists: both still compile every template
    _generate(cache, tmp_path / "c")
    assert _generate(cache, tmp_path / "d", "--no-cache").compiled == first.compiled


def test_an_edited_overlay_template_is_compiled_again(tmp_path: Path, cache: Path) -> None:
    overlay = tmp_path / "overlay" / "host-net"
    overlay.mkdir(parents=True)
    source = (ROOT / "templates" / "host-net" / "sysctl.conf.j2").read_text()
    (overlay / "sysctl.conf.j2").write_text(source.replace("arp_ignore = 1: answer", "arp_ignore = 1: Answer"))
    args = (*SYSCTL_ONLY, "--templates", str(tmp_path / "overlay"))
    first = _generate(cache, tmp_path / "o1", *args)
    again = _generate(cache, tmp_path / "o2", *args)
    assert first.compiled == 1 and again.compiled == 0
    stat = (overlay / "sysctl.conf.j2").stat()  # same size, same mtime: only the content says it changed
    (overlay / "sysctl.conf.j2").write_text(source.replace("arp_ignore = 1: answer", "arp_ignore = 1: ANSWER"))
    os.utime(overlay / "sysctl.conf.j2", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    edited = _generate(cache, tmp_path / "o3", *args)
    assert edited.compiled == 1 and edited.stderr == ""
    texts = [b"".join(_tree(tmp_path / o).values()) for o in ("o1", "o2", "o3")]
    assert b"1: Answer" in texts[0] and texts[0] == texts[1]
    assert b"1: ANSWER" in texts[2] and b"1: Answer" not in texts[2]


def test_an_edited_shipped_template_is_compiled_again(tmp_path: Path, cache: Path) -> None:
    """In a copy of the checkout: a shipped template edited in place, size and mtime kept."""
    copy = tmp_path / "checkout"
    for name in ("fabgen", "templates", "schemas"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    spec = shutil.copy(example("lab"), tmp_path / "spec.yaml")
    first = _generate(cache, tmp_path / "s1", *SYSCTL_ONLY, spec=Path(spec), pythonpath=copy, cwd=tmp_path)
    assert first.module.startswith(str(copy)) and first.compiled == 1
    assert _generate(cache, tmp_path / "s2", *SYSCTL_ONLY, spec=Path(spec), pythonpath=copy, cwd=tmp_path).compiled == 0
    template = copy / "templates" / "host-net" / "sysctl.conf.j2"
    stat = template.stat()
    template.write_text(template.read_text().replace("arp_ignore = 1: answer", "arp_ignore = 1: ANSWER"))
    os.utime(template, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    edited = _generate(cache, tmp_path / "s3", *SYSCTL_ONLY, spec=Path(spec), pythonpath=copy, cwd=tmp_path)
    assert edited.compiled == 1
    assert b"1: ANSWER" in b"".join(_tree(tmp_path / "s3").values())
    assert b"1: ANSWER" not in b"".join(_tree(tmp_path / "s1").values())


def _sysctl_entry(tmp_path: Path, cache: Path) -> tuple[Path, dict[str, bytes]]:
    """Fill the cache with only the sysctl template; its entry and the right output."""
    _generate(cache, tmp_path / "ref", *SYSCTL_ONLY)
    (entry,) = _entries(cache)
    _drop_bundles(cache)
    return entry, _tree(tmp_path / "ref")


def _refused(tmp_path: Path, cache: Path, reference: dict[str, bytes], why: str, out: str = "t") -> None:
    _drop_bundles(cache)
    run = _generate(cache, tmp_path / out, *SYSCTL_ONLY)
    assert run.compiled == 1, "the entry was used"
    assert why in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert _tree(tmp_path / out) == reference
    _drop_bundles(cache)
    healed = _generate(cache, tmp_path / f"{out}-after", *SYSCTL_ONLY)  # the fresh code replaced the bad entry
    assert healed.compiled == 0 and healed.stderr == ""


@pytest.mark.parametrize("where", [-40, -1, 30])  # in the code, in the MAC, in the header
def test_a_flipped_byte_is_refused(tmp_path: Path, cache: Path, where: int) -> None:
    entry, reference = _sysctl_entry(tmp_path, cache)
    data = bytearray(entry.read_bytes())
    data[where] ^= 0x01
    entry.write_bytes(bytes(data))
    _refused(tmp_path, cache, reference, "authentication failed")


def test_a_truncated_entry_is_refused(tmp_path: Path, cache: Path) -> None:
    entry, reference = _sysctl_entry(tmp_path, cache)
    entry.write_bytes(entry.read_bytes()[:-100])
    _refused(tmp_path, cache, reference, "authentication failed")
    entry.write_bytes(entry.read_bytes()[:10])
    _refused(tmp_path, cache, reference, "truncated", out="t2")


def test_an_entry_forged_without_the_secret_is_refused(tmp_path: Path, cache: Path) -> None:
    """Well-formed, right name and source digest, code that prints something else, MAC under a guessed key."""
    entry, reference = _sysctl_entry(tmp_path, cache)
    data = entry.read_bytes()
    env = environment()
    evil = env.compile("FORGED {{ cluster }}\n", "host-net/sysctl.conf.j2", "forged")
    body = data[:template_cache.HEADER_BYTES] + marshal.dumps(evil)
    entry.write_bytes(body + hmac.new(b"\0" * 32, body, hashlib.sha256).digest())
    _refused(tmp_path, cache, reference, "authentication failed")
    assert b"FORGED" not in b"".join(_tree(tmp_path / "t").values())


def test_swapped_entries_are_refused(tmp_path: Path, cache: Path) -> None:
    """Each file is genuine (its MAC checks) but names another template: both are refused."""
    _generate(cache, tmp_path / "ref", "--only", "host-boot")
    reference = _tree(tmp_path / "ref")
    _drop_bundles(cache)
    first, second = _entries(cache)[:2]
    a, b = first.read_bytes(), second.read_bytes()
    first.write_bytes(b)
    second.write_bytes(a)
    run = _generate(cache, tmp_path / "t", "--only", "host-boot")
    assert run.compiled == 2 and run.stderr.count("holds another template's code") == 2, run.stderr
    assert _tree(tmp_path / "t") == reference


@pytest.mark.parametrize("change", ["group-writable dir", "world-readable secret", "foreign owner",
                                    "open entries dir"])
def test_an_untrusted_directory_is_not_used(tmp_path: Path, cache: Path, change: str) -> None:
    _, reference = _sysctl_entry(tmp_path, cache)
    if change == "group-writable dir":
        cache.chmod(0o770)
    elif change == "world-readable secret":
        (cache / "secret").chmod(0o644)
    elif change == "open entries dir":
        (cache / f"templates-v{template_cache.SCHEMA}").chmod(0o777)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give the directory away")
        os.chown(cache, 65534, 65534)
    run = _generate(cache, tmp_path / "t", *SYSCTL_ONLY)
    assert run.compiled == 1 and run.stderr.startswith("fabgen: cache: not used: "), run.stderr
    assert run.stderr.count("\n") == 1 and _tree(tmp_path / "t") == reference


def test_concurrent_writers_leave_whole_entries(tmp_path: Path, cache: Path) -> None:
    env = {**os.environ, "FABGEN_CACHE_DIR": str(cache)}
    procs = [subprocess.Popen([sys.executable, "-m", "fabgen.cli", "generate", str(example("lab")), "-o",
                               str(tmp_path / f"o{i}"), "-q"], env=env, cwd=ROOT, stderr=subprocess.PIPE)
             for i in range(4)]
    ends = [(p.communicate(timeout=300)[1], p.returncode) for p in procs]
    assert all(code == 0 and err == b"" for err, code in ends), ends
    entries = cache / f"templates-v{template_cache.SCHEMA}"
    assert not [p for p in entries.iterdir() if p.name.startswith(".tmp-")]
    warm = _generate(cache, tmp_path / "warm")
    assert warm.compiled == 0 and warm.stderr == ""
    assert all(_tree(tmp_path / f"o{i}") == _tree(tmp_path / "warm") for i in range(4))


def test_a_runaway_overlay_is_still_stopped_from_a_warm_cache(tmp_path: Path, cache: Path) -> None:
    """The sandbox's loop budget is compiled into the code: the cached code must carry it too."""
    overlay = tmp_path / "overlay" / "host-net"
    overlay.mkdir(parents=True)
    (overlay / "sysctl.conf.j2").write_text("{% for i in range(2000) %}{% for j in range(1000) %}{% endfor %}{% endfor %}\n")
    env = {**os.environ, "FABGEN_CACHE_DIR": str(cache)}
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-m", "fabgen.cli", "generate", str(example("lab")), "-o",
                               str(tmp_path / "o"), "-q", *SYSCTL_ONLY, "--templates", str(tmp_path / "overlay")],
                              capture_output=True, text=True, check=False, env=env, cwd=ROOT)
        assert proc.returncode == 2 and "loops ran more than" in proc.stderr, proc.stderr
    assert len(_entries(cache)) == 1


def _env(kind: type[GuardedEnvironment] | type[LimitedSandbox], **options: object) -> GuardedEnvironment:
    settings: dict[str, object] = {"undefined": StrictUndefined, "keep_trailing_newline": True, "trim_blocks": True,
                                   "lstrip_blocks": True, **options}
    return kind(loader=ChoiceLoader([DictLoader({"t.j2": "{% for x in y %}{{ x }}{% endfor %}"})]),
                **settings)  # type: ignore[arg-type]


def test_the_key_names_the_environment_and_its_code_options() -> None:
    base = template_cache.environment_fingerprint(_env(GuardedEnvironment))
    assert base == template_cache.environment_fingerprint(_env(GuardedEnvironment))
    others = {template_cache.environment_fingerprint(_env(LimitedSandbox)),
              template_cache.environment_fingerprint(_env(GuardedEnvironment, trim_blocks=False)),
              template_cache.environment_fingerprint(_env(GuardedEnvironment, keep_trailing_newline=False)),
              template_cache.environment_fingerprint(_env(GuardedEnvironment, block_start_string="<%"))}
    assert len(others) == 4 and base not in others
    with_filter = _env(GuardedEnvironment)
    with_filter.filters["extra"] = str
    assert template_cache.environment_fingerprint(with_filter) != base


def test_entries_stay_within_the_bounds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Least recently used out, beyond the count; in-process, with a cache instance of the test's own."""
    monkeypatch.setenv("FABGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(template_cache, "MAX_ENTRIES", 3)
    notes: list[str] = []
    names = {f"t{i}.j2": f"{{{{ x }}}} {i}" for i in range(6)}
    env = GuardedEnvironment(loader=DictLoader(names), bytecode_cache=template_cache.TemplateCache(notes.append))
    assert [env.get_template(name).render(x="v") for name in names] == [f"v {i}" for i in range(6)]
    assert len(_entries(tmp_path / "cache")) == 3 and notes == []
