"""The one-device cache (fabgen.plan_cache): same bytes as without it, never stale, never trusts a bad entry."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fabgen import plan_cache, user_cache
from fabgen.errors import OutputError
from tests.helpers import edited, example, run_cli

SMALL = ("lab", "cumulus-pod", "sonic-pod")
BIG = ("llama3-24k", "meta-24k")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


class Spy:
    """Counts fills (misses that plan) and collects the cache's notes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fills = 0
        self.notes: list[str] = []
        real = plan_cache._fill_and_serve

        def fill(*args: Any, **kwargs: Any) -> Any:
            self.fills += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(plan_cache, "_fill_and_serve", fill)
        real_generate = plan_cache.generate_device
        monkeypatch.setattr(plan_cache, "generate_device",
                            lambda request, note=self.notes.append: real_generate(request, note=note))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(user_cache.ENV_DIR, str(root))
    return root


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch, cache: Path) -> Spy:
    return Spy(monkeypatch)


def _generate(spec: Path, out: Path, device: str, *extra: str) -> dict[str, bytes]:
    code, _, stderr = run_cli("generate", str(spec), "-o", str(out), "--device", device, "-q", *extra)
    assert code == 0, stderr
    return _tree(out)


def _devices(name: str) -> list[str]:
    from fabgen.pipeline import load_spec, plan_fabric

    fabric = plan_fabric(load_spec(example(name)))
    return [fabric.switches[0].name, fabric.hosts[0].name]


@pytest.mark.parametrize("name", [*SMALL, *(pytest.param(n, marks=pytest.mark.slow) for n in BIG)])
def test_same_bytes_with_and_without_the_cache(name: str, tmp_path: Path, spy: Spy) -> None:
    for device in _devices(name):
        plain = _generate(example(name), tmp_path / f"plain-{device}", device, "--no-cache")
        filled = _generate(example(name), tmp_path / f"fill-{device}", device)
        served = _generate(example(name), tmp_path / f"hit-{device}", device)
        assert len(plain) > 1 and plain == filled == served, device
    assert spy.fills == 1 and spy.notes == []  # the switch's miss filled the entry the host then hit


@pytest.mark.parametrize("name", SMALL)
def test_a_host_and_its_profile_give_every_file_its_install_list_names(name: str, tmp_path: Path, spy: Spy) -> None:
    """The README's ``--device HOST --device PROFILE``, on every path (no cache, fill, hit)."""
    import json

    from fabgen.pipeline import load_spec, plan_fabric

    host = plan_fabric(load_spec(example(name))).hosts[0]
    trees = []
    for label, extra in (("plain", ("--no-cache",)), ("fill", ()), ("hit", ())):
        code, _, stderr = run_cli("generate", str(example(name)), "-o", str(tmp_path / label), "-q", "--device",
                                  host.name, "--device", host.profile, *extra)
        assert code == 0, stderr
        trees.append(_tree(tmp_path / label))
    assert trees[0] == trees[1] == trees[2]
    listed = {f["source"] for f in json.loads(trees[0][f"hosts/{host.name}/install.json"])["files"]}
    assert any("/_profiles/" in s for s in listed) and listed <= set(trees[0]), listed - set(trees[0])
    assert {p.split("/")[1] for p in trees[0] if p.startswith("hosts/")} <= {host.name, "_profiles"}


def test_no_cache_and_off_touch_nothing(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _generate(example("lab"), tmp_path / "a", "lab01", "--no-cache")
    monkeypatch.setenv(user_cache.ENV_DIR, "off")
    _generate(example("lab"), tmp_path / "b", "lab01")
    assert not cache.exists()


def test_default_location_is_xdg_cache_home(tmp_path: Path) -> None:
    assert user_cache.cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "fabgen"
    assert user_cache.cache_dir({"XDG_CACHE_HOME": "relative"}) == Path.home() / ".cache" / "fabgen"
    assert user_cache.cache_dir({user_cache.ENV_DIR: str(tmp_path / "x"), "XDG_CACHE_HOME": "/y"}) == tmp_path / "x"
    assert user_cache.cache_dir({user_cache.ENV_DIR: "off"}) is None


def _spec_copy(tmp_path: Path, edit: Callable[[dict[str, Any]], None] = lambda d: None) -> Path:
    spec = tmp_path / "site" / "spec.yaml"
    spec.parent.mkdir(exist_ok=True)
    spec.write_text(edited(edit))
    return spec


IPAM = "device,loopback,mgmt\nspine-01,10.255.0.150,192.0.2.150\n"


def test_a_changed_spec_or_included_file_is_a_miss(tmp_path: Path, spy: Spy) -> None:
    spec = _spec_copy(tmp_path, lambda d: d["fabric"].update(ipam="ipam.csv"))
    (spec.parent / "ipam.csv").write_text(IPAM)
    first = _generate(spec, tmp_path / "o1", "spine-01")
    assert _generate(spec, tmp_path / "o2", "spine-01") == first and spy.fills == 1

    (spec.parent / "ipam.csv").write_text(IPAM.replace("10.255.0.150", "10.255.0.151"))
    changed = _generate(spec, tmp_path / "o3", "spine-01")
    assert spy.fills == 2 and changed != first
    assert changed == _generate(spec, tmp_path / "o4", "spine-01", "--no-cache")

    spec.write_text(spec.read_text().replace("lab", "lab2", 1))
    _generate(spec, tmp_path / "o5", "spine-01")
    assert spy.fills == 3


def test_a_changed_template_overlay_is_a_miss(tmp_path: Path, spy: Spy) -> None:
    from fabgen.targets.environment import environment

    overlay = tmp_path / "templates" / "host-net"
    overlay.mkdir(parents=True)
    shipped = Path(plan_cache.__file__).resolve().parents[1] / "templates" / "host-net" / "sysctl.conf.j2"
    (overlay / "sysctl.conf.j2").write_text(shipped.read_text())
    args = ("--templates", str(tmp_path / "templates"))  # lab04's NICs differ from its profile's: its own sysctl
    first = _generate(example("lab"), tmp_path / "o1", "lab04", *args)
    _generate(example("lab"), tmp_path / "o2", "lab04", *args)
    assert spy.fills == 1
    (overlay / "sysctl.conf.j2").write_text("# overlay\n" + shipped.read_text())
    environment.cache_clear()  # as a new process would start (the in-process environment never reloads)
    second = _generate(example("lab"), tmp_path / "o3", "lab04", *args)
    assert spy.fills == 2 and second["hosts/lab04/sysctl.conf"].startswith(b"# overlay\n")
    assert first["hosts/lab04/sysctl.conf"] == second["hosts/lab04/sysctl.conf"][len(b"# overlay\n"):]


def test_another_fabgen_version_is_a_miss(tmp_path: Path, spy: Spy, monkeypatch: pytest.MonkeyPatch) -> None:
    _generate(example("lab"), tmp_path / "o1", "lab01")
    monkeypatch.setattr(plan_cache, "__version__", "9.9.9")
    _generate(example("lab"), tmp_path / "o2", "lab01")
    assert spy.fills == 2


def test_an_edited_fabgen_source_file_is_a_miss(tmp_path: Path, spy: Spy, monkeypatch: pytest.MonkeyPatch) -> None:
    _generate(example("lab"), tmp_path / "o1", "lab01")
    monkeypatch.setattr(plan_cache, "code_fingerprint", lambda: "another checkout")
    _generate(example("lab"), tmp_path / "o2", "lab01")
    assert spy.fills == 2


def _entry(cache: Path) -> Path:
    (entry,) = [p for p in (cache / f"entries-v{plan_cache.SCHEMA}").iterdir()
                if not p.name.endswith(".lock") and not p.name.startswith(".tmp-")]
    return entry


def _damage_header(data: bytearray) -> None:
    data[len(plan_cache.MAGIC) + 8 + 10] ^= 0x01


def _damage_mac(data: bytearray) -> None:
    size = int.from_bytes(data[len(plan_cache.MAGIC):len(plan_cache.MAGIC) + 8], "big")
    data[len(plan_cache.MAGIC) + 8 + size] ^= 0x80


def _damage_record(data: bytearray) -> None:
    data[-5] ^= 0x01  # the last device's compressed record: the header's digest of it no longer matches


def _truncate(data: bytearray) -> None:
    del data[len(data) // 2:]


def _truncate_header(data: bytearray) -> None:
    del data[len(plan_cache.MAGIC) + 20:]


@pytest.mark.parametrize("damage", [_damage_header, _damage_mac, _damage_record, _truncate, _truncate_header])
def test_a_damaged_entry_is_ignored_with_one_note(tmp_path: Path, cache: Path, spy: Spy,
                                                  damage: Callable[[bytearray], None]) -> None:
    device = "spine-02"  # sorted last among the lab's devices, so its record is at the end
    good = _generate(example("lab"), tmp_path / "o1", device)
    entry = _entry(cache)
    data = bytearray(entry.read_bytes())
    damage(data)
    entry.write_bytes(bytes(data))
    code, _, stderr = run_cli("generate", str(example("lab")), "-o", str(tmp_path / "o2"), "--device", device, "-q")
    assert code == 0 and stderr == "" and _tree(tmp_path / "o2") == good
    assert len(spy.notes) == 1 and "ignoring" in spy.notes[0] and "\n" not in spy.notes[0]
    assert spy.fills == 2


def test_another_specs_entry_under_this_name_is_not_served(tmp_path: Path, cache: Path, spy: Spy) -> None:
    other = _spec_copy(tmp_path, lambda d: d["cluster"].update(name="other"))
    _generate(other, tmp_path / "o1", "lab01")
    foreign = _entry(cache).read_bytes()
    shutil.rmtree(cache / f"entries-v{plan_cache.SCHEMA}")
    good = _generate(example("lab"), tmp_path / "o2", "lab01")
    _entry(cache).write_bytes(foreign)  # authentic (same secret) but for another key
    assert _generate(example("lab"), tmp_path / "o3", "lab01") == good
    assert spy.fills == 3


def test_an_entry_under_another_secret_is_not_served(tmp_path: Path, cache: Path, spy: Spy) -> None:
    good = _generate(example("lab"), tmp_path / "o1", "lab01")
    (cache / "secret").write_bytes(os.urandom(32))
    assert _generate(example("lab"), tmp_path / "o2", "lab01") == good
    assert spy.fills == 2 and "authentication failed" in spy.notes[0]


@pytest.mark.parametrize(("where", "mode"), [("dir", 0o755), ("secret", 0o644)])
def test_a_cache_others_can_use_is_refused(tmp_path: Path, cache: Path, spy: Spy, where: str, mode: int) -> None:
    good = _generate(example("lab"), tmp_path / "o1", "lab01")
    (cache if where == "dir" else cache / "secret").chmod(mode)
    assert _generate(example("lab"), tmp_path / "o2", "lab01") == good
    assert spy.fills == 1 and len(spy.notes) == 1 and "not used" in spy.notes[0]


def test_a_cache_owned_by_another_user_is_refused(tmp_path: Path, cache: Path, spy: Spy) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give the directory away")
    good = _generate(example("lab"), tmp_path / "o1", "lab01")
    os.chown(cache, 65534, 65534)
    assert _generate(example("lab"), tmp_path / "o2", "lab01") == good
    assert "not owned by this user" in spy.notes[0]


def test_a_symlinked_secret_is_refused(tmp_path: Path, cache: Path) -> None:
    cache.mkdir(mode=0o700)
    (tmp_path / "elsewhere").write_bytes(os.urandom(32))
    (cache / "secret").symlink_to(tmp_path / "elsewhere")
    problem = plan_cache._secret(cache)
    assert isinstance(problem, str) and "secret" in problem


def test_the_checks_run_again_on_a_hit(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fabgen.errors import Problem
    from fabgen.targets.eos import check

    _generate(example("lab"), tmp_path / "o1", "leaf-r0-p00-01")
    monkeypatch.setattr(check, "check_eos_config", lambda path, text: [Problem("refused", file=path)])
    request = plan_cache.Request(example("lab"), tmp_path / "o2", ("leaf-r0-p00-01",))
    with pytest.raises(OutputError, match="refused"):
        plan_cache.generate_device(request)
    assert not (tmp_path / "o2").exists()


def test_an_unknown_device_is_refused_on_a_hit_too(tmp_path: Path, cache: Path) -> None:
    _generate(example("lab"), tmp_path / "o1", "lab01")
    code, _, stderr = run_cli("generate", str(example("lab")), "-o", str(tmp_path / "o2"), "--device", "nope", "-q")
    assert code == 2 and "--device 'nope' matches no device" in stderr


def _run(args: tuple[str, str, str]) -> int:
    from fabgen.cli import main

    os.environ[user_cache.ENV_DIR] = args[0]
    return main(["generate", args[1], "-o", args[2], "--device", "lab0*", "-q"])


def test_concurrent_writers_leave_one_good_entry(tmp_path: Path, cache: Path) -> None:
    spec = str(example("lab"))
    jobs = [(str(cache), spec, str(tmp_path / f"o{i}")) for i in range(4)]
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        assert pool.map(_run, jobs) == [0, 0, 0, 0]
    trees = [_tree(tmp_path / f"o{i}") for i in range(4)]
    assert all(t == trees[0] for t in trees)
    entries = [p.name for p in (cache / f"entries-v{plan_cache.SCHEMA}").iterdir()]
    assert not any(n.startswith(".tmp-") for n in entries) and len([n for n in entries if "." not in n]) == 1
    notes: list[str] = []
    plan_cache.generate_device(plan_cache.Request(example("lab"), tmp_path / "o9", ("lab0*",)), note=notes.append)
    assert notes == [] and _tree(tmp_path / "o9") == trees[0]


def test_pruning_keeps_the_newest_within_bounds(tmp_path: Path) -> None:
    entries = tmp_path / "entries"
    entries.mkdir()
    for i in range(6):
        (entries / f"e{i}").write_bytes(b"x" * 100)
        (entries / f"e{i}.lock").touch()
        os.utime(entries / f"e{i}", (1000 + i, 1000 + i))
    plan_cache.prune(entries, keep="e0", max_entries=3, max_bytes=10_000)
    assert sorted(p.name for p in entries.iterdir() if "." not in p.name) == ["e0", "e4", "e5"]
    assert not (entries / "e1.lock").exists()
    plan_cache.prune(entries, keep="e5", max_entries=8, max_bytes=150)
    assert sorted(p.name for p in entries.iterdir() if "." not in p.name) == ["e5"]
    (entries / ".tmp-dead").touch()
    os.utime(entries / ".tmp-dead", (1000, 1000))
    (entries / ".tmp-live").touch()
    plan_cache.prune(entries, keep="e5")
    assert not (entries / ".tmp-dead").exists() and (entries / ".tmp-live").exists()


def test_new_cache_files_are_private(tmp_path: Path, cache: Path) -> None:
    _generate(example("lab"), tmp_path / "o1", "lab01")
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE((cache / "secret").stat().st_mode) == 0o600
    assert stat.S_IMODE(_entry(cache).stat().st_mode) == 0o600


def test_bench_device_rows_run_on_the_lab() -> None:
    from bench import device

    table = device.rows(1, example("lab"), (("switch", "leaf-r0-p00-01"), ("host", "lab01")))
    assert [row.name.split(" (")[0] for row in table] == [
        "device switch cold", "device host cold", "device fill", "device switch warm", "device host warm"]
    assert all(row.value is not None and row.value > 0 for row in table)
    assert [row.target for row in table][3:] == [f"< {device.TARGET_WARM:g} s"] * 2
    assert [row.ok is None for row in table] == [True, True, True, False, False]  # only warm runs have a target


def test_bad_input_reads_as_without_the_cache(tmp_path: Path, cache: Path) -> None:
    spec = _spec_copy(tmp_path, lambda d: d["fabric"]["tiers"]["leaf"].update(ports=-1))
    for extra in ((), ("--no-cache",)):
        code, _, stderr = run_cli("generate", str(spec), "-o", str(tmp_path / "o"), "--device", "lab01", *extra)
        assert code == 2 and stderr.startswith(f"{spec}:") and "Traceback" not in stderr
    code, _, stderr = run_cli("generate", str(tmp_path / "absent.yaml"), "-o", str(tmp_path / "o"), "--device", "x")
    assert code == 2 and "no such file" in stderr
    assert not (cache / f"entries-v{plan_cache.SCHEMA}").exists() or not any(
        "." not in p.name for p in (cache / f"entries-v{plan_cache.SCHEMA}").iterdir())


@pytest.mark.parametrize("device", ["leaf-r0-p00-01", "lab01"])
def test_a_hit_imports_neither_pydantic_nor_the_planner(tmp_path: Path, cache: Path, device: str) -> None:
    """What keeps a hit under 0.3 s: no spec validation, no planning, no template rendering in the process."""
    import subprocess
    import sys

    _generate(example("lab"), tmp_path / "o1", device)
    probe = ("import sys; from fabgen.cli import main; code = main(sys.argv[1:]); "
             "print(code, sorted(m for m in ('pydantic', 'jinja2', 'fabgen.spec', 'fabgen.plan.build', "
             "'fabgen.pipeline', 'fabgen.targets.registry') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe, "generate", str(example("lab")), "-o", str(tmp_path / "o2"),
                           "--device", device, "-q"], capture_output=True, text=True, check=False,
                          env={**os.environ, user_cache.ENV_DIR: str(cache)})
    assert proc.stdout.strip() == "0 []", proc.stderr
    assert _tree(tmp_path / "o2") == _tree(tmp_path / "o1")
