"""The shipped templates' bundle (fabgen.targets.template_cache): one authenticated file, never stale, never trusted blindly.

Each run is its own process, as in tests/targets/test_template_cache.py, whose
helpers count the templates a run compiles.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import shutil
from pathlib import Path

import pytest

from fabgen.targets import template_cache
from fabgen.targets.environment import environment
from tests.helpers import example
from tests.targets.test_template_cache import ROOT, SYSCTL_ONLY, _bundles, _entries, _generate, _tree

BOOT_ONLY = ("--only", "host-boot")


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def _warm(tmp_path: Path, cache: Path, *only: str) -> tuple[Path, dict[str, bytes]]:
    """A cache warmed by one run (entries and the bundle); the bundle and that run's output."""
    _generate(cache, tmp_path / "ref", *only)
    (bundle,) = _bundles(cache)
    return bundle, _tree(tmp_path / "ref")


def test_the_bundle_alone_serves_a_warm_process(tmp_path: Path, cache: Path) -> None:
    _, reference = _warm(tmp_path, cache)
    for entry in _entries(cache):
        entry.unlink()
    warm = _generate(cache, tmp_path / "warm")
    assert warm.compiled == 0 and warm.stderr == "" and _tree(tmp_path / "warm") == reference


def _refused(tmp_path: Path, cache: Path, reference: dict[str, bytes], why: str, *only: str) -> None:
    """The bad bundle is said once and ignored (entries serve, nothing compiles), then replaced by a good one."""
    run = _generate(cache, tmp_path / "t", *only)
    assert run.compiled == 0 and run.stderr.count("\n") == 1, run.stderr
    assert "ignoring template bundle" in run.stderr and why in run.stderr, run.stderr
    assert _tree(tmp_path / "t") == reference
    for entry in _entries(cache):
        entry.unlink()
    healed = _generate(cache, tmp_path / "t2", *only)
    assert healed.compiled == 0 and healed.stderr == "" and _tree(tmp_path / "t2") == reference


@pytest.mark.parametrize("where", [-40, -1, 5, 30])  # in the code, the MAC, the magic, the bundle's key
def test_a_flipped_byte_in_the_bundle_is_refused(tmp_path: Path, cache: Path, where: int) -> None:
    bundle, reference = _warm(tmp_path, cache, *BOOT_ONLY)
    data = bytearray(bundle.read_bytes())
    data[where] ^= 0x01
    bundle.write_bytes(bytes(data))
    why = "truncated or not a fabgen" if where == 5 else "authentication failed"
    _refused(tmp_path, cache, reference, why, *BOOT_ONLY)


def test_a_truncated_bundle_is_refused(tmp_path: Path, cache: Path) -> None:
    bundle, reference = _warm(tmp_path, cache, *BOOT_ONLY)
    bundle.write_bytes(bundle.read_bytes()[:-100])
    _refused(tmp_path, cache, reference, "authentication failed", *BOOT_ONLY)


def test_a_bundle_forged_without_the_secret_is_refused(tmp_path: Path, cache: Path) -> None:
    bundle, reference = _warm(tmp_path, cache, *SYSCTL_ONLY)
    data = bundle.read_bytes()
    rows = marshal.loads(data[template_cache.BUNDLE_HEADER_BYTES:-32])
    evil = marshal.dumps(environment().compile("FORGED {{ cluster }}\n", "host-net/sysctl.conf.j2", "forged"))
    body = data[:template_cache.BUNDLE_HEADER_BYTES] + marshal.dumps(tuple((*row[:3], evil) for row in rows))
    bundle.write_bytes(body + hmac.new(b"\0" * 32, body, hashlib.sha256).digest())
    _refused(tmp_path, cache, reference, "authentication failed", *SYSCTL_ONLY)
    assert b"FORGED" not in b"".join(_tree(tmp_path / "t").values())


def test_another_environments_bundle_is_refused(tmp_path: Path, cache: Path) -> None:
    """Two genuine bundles (shipped templates alone, and beside an overlay: another environment) swapped."""
    overlay = tmp_path / "overlay" / "host-net"
    overlay.mkdir(parents=True)
    shutil.copy(ROOT / "templates" / "host-net" / "udev.rules.j2", overlay / "udev.rules.j2")
    _generate(cache, tmp_path / "ref", *BOOT_ONLY)
    _generate(cache, tmp_path / "ov", *BOOT_ONLY, "--templates", str(tmp_path / "overlay"))
    first, second = _bundles(cache)
    a, b = first.read_bytes(), second.read_bytes()
    first.write_bytes(b)
    second.write_bytes(a)
    _refused(tmp_path, cache, _tree(tmp_path / "ref"), "another environment's bundle", *BOOT_ONLY)


def test_a_member_under_another_name_is_not_used(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A genuine bundle (MAC under the real secret) whose member is filed under another template's name: its key
    names the template it was compiled from, so it is not admitted and that name compiles afresh."""
    _, reference = _warm(tmp_path, cache, *BOOT_ONLY)
    for entry in _entries(cache):
        entry.unlink()
    monkeypatch.setenv("FABGEN_CACHE_DIR", str(cache))
    environment.cache_clear()
    try:
        env = environment()
        state = template_cache.template_cache._bundle(env, env.loader.loaders[-1])  # type: ignore[attr-defined]
        assert sorted(state.members) == sorted(state.ready) and len(state.members) == 3
        unit, udev = "host-net/fabgen-roce-nic.service.j2", "host-net/udev.rules.j2"
        state.members[udev] = state.members[unit]
        state.members.pop("host-net/lldpd.conf.j2")
        bucket = env.bytecode_cache.get_bucket(  # type: ignore[union-attr]
            env, "host-net/lldpd.conf.j2", None, "x")
        bucket.code = compile("", "x", "exec")
        template_cache.template_cache.remember(env, env.loader.loaders[-1], "x", bucket)  # type: ignore[attr-defined]
        template_cache.template_cache.store_bundles()
    finally:
        environment.cache_clear()
    run = _generate(cache, tmp_path / "t", *BOOT_ONLY)
    assert run.compiled == 2 and run.stderr == "", run.stderr  # udev (its member was the unit's) and lldpd
    assert _tree(tmp_path / "t") == reference


def test_an_edited_template_is_compiled_again_with_only_the_bundle(tmp_path: Path, cache: Path) -> None:
    """In a copy of the checkout, no entries left: the bundle's member for the edited template is stale."""
    copy = tmp_path / "checkout"
    for name in ("fabgen", "templates", "schemas"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    spec = Path(shutil.copy(example("lab"), tmp_path / "spec.yaml"))
    first = _generate(cache, tmp_path / "s1", *BOOT_ONLY, spec=spec, pythonpath=copy, cwd=tmp_path)
    assert first.module.startswith(str(copy)) and first.compiled == 3 and len(_bundles(cache)) == 1
    for entry in _entries(cache):
        entry.unlink()
    template = copy / "templates" / "host-net" / "lldpd.conf.j2"
    stat = template.stat()
    template.write_text(template.read_text().replace("Port ids", "Port IDs"))
    os.utime(template, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    edited = _generate(cache, tmp_path / "s2", *BOOT_ONLY, spec=spec, pythonpath=copy, cwd=tmp_path)
    assert edited.compiled == 1 and edited.stderr == ""
    assert b"Port IDs" in b"".join(_tree(tmp_path / "s2").values())
    again = _generate(cache, tmp_path / "s3", *BOOT_ONLY, spec=spec, pythonpath=copy, cwd=tmp_path)
    assert again.compiled == 0 and _tree(tmp_path / "s3") == _tree(tmp_path / "s2")


def test_an_overlay_wins_over_the_bundle(tmp_path: Path, cache: Path) -> None:
    _warm(tmp_path, cache, *BOOT_ONLY)
    overlay = tmp_path / "overlay" / "host-net"
    overlay.mkdir(parents=True)
    source = (ROOT / "templates" / "host-net" / "lldpd.conf.j2").read_text()
    (overlay / "lldpd.conf.j2").write_text(source.replace("Port ids", "Port IDs"))
    run = _generate(cache, tmp_path / "o", *BOOT_ONLY, "--templates", str(tmp_path / "overlay"))
    assert run.compiled == 3 and run.stderr == ""  # the overlay, and the two shipped ones in the sandbox's environment
    assert b"Port IDs" in b"".join(_tree(tmp_path / "o").values())


def test_a_cold_render_stores_the_bundle_once_with_every_template_it_loaded(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold cache loads every template outside the bundle; the bundle is written once, when the render is done."""
    from fabgen import user_cache
    from fabgen.pipeline import load_spec, plan_fabric
    from fabgen.targets.render import render_files

    writes: list[str] = []
    real_write = user_cache.atomic_write

    def counting(path: Path, *parts: bytes) -> str | None:
        writes.append(path.name)
        return real_write(path, *parts)

    monkeypatch.setattr(user_cache, "atomic_write", counting)
    monkeypatch.setenv("FABGEN_CACHE_DIR", str(cache))
    environment.cache_clear()
    try:
        render_files(plan_fabric(load_spec(example("lab"))))
    finally:
        environment.cache_clear()
    bundle_writes = [name for name in writes if name.startswith("bundle-")]
    assert len(bundle_writes) == 1 and len(writes) - 1 == len(_entries(cache)) > 3, writes
    (bundle,) = _bundles(cache)
    members = {row[0] for row in marshal.loads(bundle.read_bytes()[template_cache.BUNDLE_HEADER_BYTES:-32])}
    assert len(members) == len(_entries(cache)), members  # every template compiled (each got its entry) is a member


def test_admitted_templates_are_jinja_cache_hits_and_never_shadow_an_overlay(
        tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the bundle is read, a shipped template's first ``get_template`` asks no loader; behind an overlay,
    nothing is put in Jinja's cache ahead of the overlay's loader."""
    _warm(tmp_path, cache, *BOOT_ONLY)
    monkeypatch.setenv("FABGEN_CACHE_DIR", str(cache))
    names = ("host-net/udev.rules.j2", "host-net/lldpd.conf.j2")
    environment.cache_clear()
    try:
        env = environment()
        env.get_template("host-net/fabgen-roce-nic.service.j2")  # reads the bundle
        asked: list[str] = []
        monkeypatch.setattr(type(env.loader), "load", lambda self, e, name, g=None: asked.append(name))
        served = [env.get_template(name) for name in names]
        assert asked == [] and [t.filename for t in served] == [str(ROOT / "templates" / n) for n in names]
        assert served[1].render(cluster="c", profile="p", dest="d", pattern="eth0").endswith("ifname\n")
        monkeypatch.undo()
        monkeypatch.setenv("FABGEN_CACHE_DIR", str(cache))
        overlay = tmp_path / "overlay" / "host-net"
        overlay.mkdir(parents=True)
        _generate(cache, tmp_path / "o", *BOOT_ONLY, "--templates", str(tmp_path / "overlay"))  # its own bundle
        (overlay / "lldpd.conf.j2").write_text("overlay\n")
        sandboxed = environment(tmp_path / "overlay")
        sandboxed.get_template("host-net/udev.rules.j2")  # reads that bundle, which holds the shipped lldpd.conf
        assert sandboxed.get_template("host-net/lldpd.conf.j2").render() == "overlay\n"
    finally:
        environment.cache_clear()
