"""Hostile inputs other than specs: every file fabgen reads, every option, every output of a failed lint.

``tests/bad_specs/`` holds the hostile *specs*; this corpus holds what a site,
a CI job or an attacker hands fabgen beside one (issue 18): device files and
FIFOs where a file is expected, links out of a directory, sparse files of
gigabytes, deeply nested or duplicate-keyed JSON, XML with a DOCTYPE, a
deployed tree that links to someone's secrets, a forged ``manifest.json``, a
runaway user template, a bad ``-j``, and lint's machine outputs when the spec
itself is bad. Each case states its exit code, a message and, where the input
has one, the position; none may hang (a FIFO would block a naive ``open``),
print a traceback, take more than a few seconds, or echo a secret.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from fabgen import bounded
from fabgen.bounded import (
    MAX_DEPLOYED_BYTES,
    MAX_TEMPLATE_BYTES,
    MAX_WIRING_BYTES,
    MAX_XML_BYTES,
)
from tests.helpers import ROOT, example, run_cli

LAB = str(example("lab"))
SONIC = str(example("sonic-pod"))
LLDP = ROOT / "tests" / "data" / "lint" / "wiring" / "miswired-lab" / "lab01.json"
TOPO = ROOT / "tests" / "data" / "nccl_topo" / "good_full.xml"
CONFIG_DB = ROOT / "tests" / "data" / "sonic" / "config_db_roce_leaf.json"
YANG = ROOT.parent / "shared" / "reference" / "sonic-yang"
SECRET = "hunter2-TOPSECRET"
TIME_LIMIT = 60.0  # a hang guard, far above any machine's time (speed is bench/'s job)


@dataclass(frozen=True)
class Case:
    """One hostile input: ``setup`` builds it under a temporary directory and returns the command line."""

    name: str
    setup: Callable[[Path], list[str]]
    code: int
    needle: str
    """A substring of the output line that reports the problem."""
    where: str = ""
    """A substring that line must also carry: its ``:LINE:COL:`` or the offending file's name."""
    forbid: str = SECRET
    """Must appear nowhere in the output (a secret the input leads to)."""


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _sparse(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        handle.truncate(size)
    return path


def _secret_file(tmp: Path) -> Path:
    path = tmp / "outside" / "secret.conf"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"NCCL_IB_HCA={SECRET}\nroot:x:0:0:{SECRET}\n")
    return path


def _nested(depth: int) -> str:
    return '{"lldp": ' + "[" * depth + "]" * depth + "}"


# --------------------------------------------------------------------------- spec files

def spec_dev_zero(tmp: Path) -> list[str]:
    return ["validate", "/dev/zero"]


def spec_fifo(tmp: Path) -> list[str]:
    return ["validate", str(_fifo(tmp / "spec.yaml"))]


def spec_link_to_device(tmp: Path) -> list[str]:
    (tmp / "spec.yaml").symlink_to("/dev/zero")
    return ["generate", str(tmp / "spec.yaml"), "-o", str(tmp / "out")]


def spec_sparse_2g(tmp: Path) -> list[str]:
    return ["validate", str(_sparse(tmp / "spec.yaml", 2 * 1024**3))]


# --------------------------------------------------------------------------- wiring

def wiring_dev_zero(tmp: Path) -> list[str]:
    return ["lint", LAB, "--wiring", "/dev/zero"]


def wiring_fifo(tmp: Path) -> list[str]:
    return ["lint", LAB, "--wiring", str(_fifo(tmp / "lab01.json"))]


def wiring_dir_link_to_urandom(tmp: Path) -> list[str]:
    (tmp / "wiring").mkdir()
    (tmp / "wiring" / "lab01.json").symlink_to("/dev/urandom")
    return ["lint", LAB, "--wiring", str(tmp / "wiring")]


def wiring_dir_link_out(tmp: Path) -> list[str]:
    (tmp / "wiring").mkdir()
    (tmp / "wiring" / "lab01.json").symlink_to(_secret_file(tmp))
    return ["lint", LAB, "--wiring", str(tmp / "wiring")]


def wiring_dir_with_fifo(tmp: Path) -> list[str]:
    (tmp / "wiring").mkdir()
    _fifo(tmp / "wiring" / "lab01.json")
    return ["lint", LAB, "--wiring", str(tmp / "wiring")]


def wiring_dir_linked_subdir(tmp: Path) -> list[str]:
    (tmp / "wiring").mkdir()
    (tmp / "wiring" / "more").symlink_to(_secret_file(tmp).parent)
    return ["lint", LAB, "--wiring", str(tmp / "wiring")]


def wiring_sparse_1g(tmp: Path) -> list[str]:
    return ["lint", LAB, "--wiring", str(_sparse(tmp / "lab01.json", 1024**3))]


def lldp_duplicate_interface(tmp: Path) -> list[str]:
    """Two entries keyed ens1np0: JSON keeps the second, silently hiding a cable."""
    text = ('{"lldp": {"interface": {\n'
            '  "ens1np0": {"via": "LLDP", "chassis": {"leaf-r0-p00-01": {"id": {"type": "mac", "value": "x"}}},'
            ' "port": {"id": {"type": "ifname", "value": "Ethernet1/1"}}},\n'
            '  "ens1np0": {"via": "LLDP", "chassis": {"leaf-r1-p00-01": {"id": {"type": "mac", "value": "y"}}},'
            ' "port": {"id": {"type": "ifname", "value": "Ethernet1/1"}}}\n'
            "}}}\n")
    (tmp / "lab01.json").write_text(text)
    return ["lint", LAB, "--wiring", str(tmp / "lab01.json")]


def lldp_deep(tmp: Path) -> list[str]:
    (tmp / "lab01.json").write_text(_nested(100))
    return ["lint", LAB, "--wiring", str(tmp / "lab01.json")]


def lldp_very_deep(tmp: Path) -> list[str]:
    (tmp / "lab01.json").write_text(_nested(200_000))
    return ["lint", LAB, "--wiring", str(tmp / "lab01.json")]


def lldp_nan(tmp: Path) -> list[str]:
    (tmp / "lab01.json").write_text('{"lldp": {"interface": NaN}}')
    return ["lint", LAB, "--wiring", str(tmp / "lab01.json")]


def csv_sparse(tmp: Path) -> list[str]:
    return ["lint", LAB, "--wiring", str(_sparse(tmp / "cabling.csv", MAX_WIRING_BYTES + 1))]


# --------------------------------------------------------------------------- check-topo / check-sonic

def topo_external_entity(tmp: Path) -> list[str]:
    (tmp / "topo.xml").write_text('<?xml version="1.0"?>\n<!DOCTYPE system [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
                                  '<system version="1">&xxe;</system>\n')
    return ["check-topo", str(tmp / "topo.xml")]


def topo_entity_bomb(tmp: Path) -> list[str]:
    lol = "".join(f'<!ENTITY l{i} "{"&l" + str(i - 1) + ";" * 1 if i else "lol"}{("&l" + str(i - 1) + ";") * 9 if i else ""}">'
                  for i in range(10))
    (tmp / "topo.xml").write_text(f'<!DOCTYPE system [{lol}]>\n<system version="1">&l9;</system>\n')
    return ["check-topo", str(tmp / "topo.xml")]


def topo_doctype_late(tmp: Path) -> list[str]:
    (tmp / "topo.xml").write_text('<?xml version="1.0"?>\n\n\n   <!doctype system SYSTEM "http://example.com/x.dtd">\n'
                                  '<system version="1"/>\n')
    return ["check-topo", str(tmp / "topo.xml")]


def topo_dev_zero(tmp: Path) -> list[str]:
    return ["check-topo", "/dev/zero"]


def topo_fifo(tmp: Path) -> list[str]:
    return ["check-topo", str(_fifo(tmp / "topo.xml"))]


def topo_sparse(tmp: Path) -> list[str]:
    return ["check-topo", str(_sparse(tmp / "topo.xml", MAX_XML_BYTES + 1))]


def sonic_deep(tmp: Path) -> list[str]:
    (tmp / "config_db.json").write_text("[" * 100_000 + "]" * 100_000)
    return ["check-sonic", str(tmp / "config_db.json"), "--yang-dir", str(YANG)]


def sonic_dev_zero(tmp: Path) -> list[str]:
    return ["check-sonic", "/dev/zero", "--yang-dir", str(YANG)]


def sonic_fifo(tmp: Path) -> list[str]:
    return ["check-sonic", str(_fifo(tmp / "config_db.json")), "--yang-dir", str(YANG)]


def sonic_sparse(tmp: Path) -> list[str]:
    return ["check-sonic", str(_sparse(tmp / "config_db.json", MAX_DEPLOYED_BYTES + 1)), "--yang-dir", str(YANG)]


# --------------------------------------------------------------------------- deployed trees

def _deployed(tmp: Path, spec: str = LAB) -> Path:
    out = tmp / "deployed"
    code, _, err = run_cli("generate", spec, "-o", str(out), "-q")
    assert code == 0, err
    return out


def deployed_conf_links_out(tmp: Path) -> list[str]:
    root = _deployed(tmp)
    conf = root / "hosts" / "lab04" / "nccl.conf"  # lab04's own (a NIC out of service)
    conf.unlink()
    conf.symlink_to(_secret_file(tmp))
    return ["lint", LAB, "--deployed", str(root)]


def deployed_profile_conf_links_out(tmp: Path) -> list[str]:
    root = _deployed(tmp)
    conf = root / "hosts" / "_profiles" / "lab-node" / "nccl.conf"  # what lab01..lab03 install
    conf.unlink()
    conf.symlink_to(_secret_file(tmp))
    return ["lint", LAB, "--deployed", str(root)]


def deployed_host_dir_links_out(tmp: Path) -> list[str]:
    root = _deployed(tmp)
    shutil.rmtree(root / "hosts" / "lab01")
    secret_dir = _secret_file(tmp).parent
    (secret_dir / "nccl.conf").write_text(f"NCCL_IB_HCA={SECRET}\n")
    (root / "hosts" / "lab01").symlink_to(secret_dir)
    return ["lint", LAB, "--deployed", str(root), "--strict"]


def deployed_switch_cfg_links_out(tmp: Path) -> list[str]:
    root = _deployed(tmp)
    cfg = next((root / "switches").glob("*.cfg"))
    cfg.unlink()
    cfg.symlink_to(_secret_file(tmp))
    return ["lint", LAB, "--deployed", str(root)]


def deployed_unplanned_secret(tmp: Path) -> list[str]:
    root = _deployed(tmp)
    with (root / "hosts" / "_profiles" / "lab-node" / "nccl.conf").open("a") as handle:
        handle.write(f"NCCL_NET_PLUGIN_TOKEN={SECRET}\n")
    return ["lint", LAB, "--deployed", str(root)]


def deployed_changed_value_secret(tmp: Path) -> list[str]:
    root = _deployed(tmp)
    conf = root / "hosts" / "lab04" / "nccl.conf"
    conf.write_text(conf.read_text().replace("NCCL_IB_TIMEOUT=20", f"NCCL_IB_TIMEOUT={SECRET}"))
    return ["lint", LAB, "--deployed", str(root)]


def deployed_env_secret_in_planned_name(tmp: Path) -> list[str]:
    root = _deployed(tmp)
    env = root / "hosts" / "_profiles" / "lab-node" / "nccl.env"
    env.write_text(env.read_text().replace("NCCL_SOCKET_IFNAME==eno1", f"NCCL_SOCKET_IFNAME={SECRET}"))
    return ["lint", LAB, "--deployed", str(root), "--format", "json"]


def _config_db(tmp: Path, text: str) -> list[str]:
    root = _deployed(tmp, SONIC)
    path = next((root / "switches").glob("*/config_db.json"))
    path.write_text(text)
    return ["lint", SONIC, "--deployed", str(root)]


def deployed_config_db_deep(tmp: Path) -> list[str]:
    return _config_db(tmp, "[" * 100_000 + "]" * 100_000)


def deployed_config_db_list(tmp: Path) -> list[str]:
    return _config_db(tmp, '["PORT", {"Ethernet0": {}}]')


def deployed_config_db_table_list(tmp: Path) -> list[str]:
    return _config_db(tmp, '{"PORT_QOS_MAP": [1, 2], "PORT": "x"}')


def deployed_config_db_duplicate(tmp: Path) -> list[str]:
    return _config_db(tmp, '{"PORT_QOS_MAP": {},\n "PORT_QOS_MAP": {}}')


def deployed_config_db_fifo(tmp: Path) -> list[str]:
    root = _deployed(tmp, SONIC)
    path = next((root / "switches").glob("*/config_db.json"))
    path.unlink()
    _fifo(path)
    return ["lint", SONIC, "--deployed", str(root)]


# --------------------------------------------------------------------------- an old tree's manifest.json

def _manifest(tmp: Path, text: str | None, link: str | None = None, fifo: bool = False) -> list[str]:
    out = _deployed(tmp)
    manifest = out / "manifest.json"
    manifest.unlink()
    if link:
        manifest.symlink_to(link)
    elif fifo:
        _fifo(manifest)
    else:
        manifest.write_text(text or "")
    return ["generate", LAB, "-o", str(out)]


def manifest_deep(tmp: Path) -> list[str]:
    return _manifest(tmp, '{"generator": "fabgen", "files": {"a": ' + "[" * 100 + "]" * 100 + "}}")


def manifest_very_deep(tmp: Path) -> list[str]:
    return _manifest(tmp, "[" * 200_000 + "]" * 200_000)


def manifest_files_list(tmp: Path) -> list[str]:
    return _manifest(tmp, '{"generator": "fabgen", "files": ["hosts/lab01/nccl.conf"]}')


def manifest_bytes_string(tmp: Path) -> list[str]:
    return _manifest(tmp, '{"generator": "fabgen", "files": {"cabling.csv": {"target": "cabling", "device": "", '
                          '"bytes": "many", "sha256": "0"}}}')


def manifest_link_to_device(tmp: Path) -> list[str]:
    return _manifest(tmp, None, link="/dev/zero")


def manifest_fifo(tmp: Path) -> list[str]:
    return _manifest(tmp, None, fifo=True)


# --------------------------------------------------------------------------- -j

def jobs(value: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        return ["generate", LAB, "-o", str(tmp / "out"), "-j", value]
    setup.__name__ = f"jobs_{value}"
    return setup


# --------------------------------------------------------------------------- user templates

def template(body: str, *, fifo: bool = False, size: int = 0) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        path = tmp / "overlay" / "eos" / "hostname.j2"
        path.parent.mkdir(parents=True)
        if fifo:
            _fifo(path)
        elif size:
            _sparse(path, size)
        else:
            path.write_text(body + "\n")
        return ["generate", LAB, "-o", str(tmp / "out"), "--only", "eos", "--templates", str(tmp / "overlay")]
    return setup


# --------------------------------------------------------------------------- lint on a bad spec

BAD_SPEC = "version: 1\ncluster: {name: x}\nnccl:\n  env: {NCCL_IB_TIMEOUTT: 3}\nfabric: {rails: 0}\n"


def lint_bad(fmt: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        (tmp / "bad.yaml").write_text(BAD_SPEC)
        return ["lint", str(tmp / "bad.yaml"), "--format", fmt]
    return setup


CASES = [
    Case("spec-dev-zero", spec_dev_zero, 2, "is a device, not a regular file", "/dev/zero"),
    Case("spec-fifo", spec_fifo, 2, "is a FIFO (named pipe), not a regular file", "spec.yaml"),
    Case("spec-link-to-device", spec_link_to_device, 2, "is a device", "spec.yaml"),
    Case("spec-sparse-2g", spec_sparse_2g, 2, f"larger than the {16 * 1024 * 1024}-byte limit", "spec.yaml"),
    Case("wiring-dev-zero", wiring_dev_zero, 2, "refusing to read it as a wiring file", "/dev/zero"),
    Case("wiring-fifo", wiring_fifo, 2, "is a FIFO", "lab01.json"),
    Case("wiring-dir-link-to-urandom", wiring_dir_link_to_urandom, 2, "symbolic link leading out of the directory",
         "lab01.json"),
    Case("wiring-dir-link-out", wiring_dir_link_out, 2, "symbolic link leading out of the directory", "lab01.json"),
    Case("wiring-dir-with-fifo", wiring_dir_with_fifo, 2, "is a FIFO (named pipe), not a regular file; skipped",
         "lab01.json"),
    Case("wiring-dir-linked-subdir", wiring_dir_linked_subdir, 2, "is a symbolic link to a directory; not followed",
         "wiring/more"),
    Case("wiring-sparse-1g", wiring_sparse_1g, 2, f"larger than the {MAX_WIRING_BYTES}-byte limit", "lab01.json"),
    Case("lldp-duplicate-interface", lldp_duplicate_interface, 2, 'duplicate key "ens1np0"', "lab01.json:3:3:"),
    Case("lldp-deep", lldp_deep, 2, "JSON nested deeper than 64 levels", "lab01.json:1:"),
    Case("lldp-very-deep", lldp_very_deep, 2, "nested", "lab01.json:1:"),
    Case("lldp-nan", lldp_nan, 2, "NaN is not JSON", "lab01.json"),
    Case("csv-sparse", csv_sparse, 2, "larger than the", "cabling.csv"),
    Case("topo-external-entity", topo_external_entity, 1, "markup declaration <!DOCTYPE is not allowed", "topo.xml:2:1:"),
    Case("topo-entity-bomb", topo_entity_bomb, 1, "markup declaration <!DOCTYPE is not allowed", "topo.xml:1:1:"),
    Case("topo-doctype-late", topo_doctype_late, 1, "markup declaration <!DOCTYPE is not allowed", "topo.xml:4:4:"),
    Case("topo-dev-zero", topo_dev_zero, 1, "is a device", "/dev/zero"),
    Case("topo-fifo", topo_fifo, 1, "is a FIFO", "topo.xml"),
    Case("topo-sparse", topo_sparse, 1, f"larger than the {MAX_XML_BYTES}-byte limit", "topo.xml"),
    Case("sonic-deep", sonic_deep, 1, "JSON nested deeper than 64 levels", "config_db.json"),
    Case("sonic-dev-zero", sonic_dev_zero, 1, "is a device", "/dev/zero"),
    Case("sonic-fifo", sonic_fifo, 1, "is a FIFO", "config_db.json"),
    Case("sonic-sparse", sonic_sparse, 1, f"larger than the {MAX_DEPLOYED_BYTES}-byte limit", "config_db.json"),
    Case("deployed-conf-links-out", deployed_conf_links_out, 2, "is a symbolic link", "lab04/nccl.conf"),
    Case("deployed-profile-conf-links-out", deployed_profile_conf_links_out, 2, "is a symbolic link",
         "_profiles/lab-node/nccl.conf"),
    Case("deployed-host-dir-links-out", deployed_host_dir_links_out, 1, "planned device lab01 has no files"),
    Case("deployed-switch-cfg-links-out", deployed_switch_cfg_links_out, 1, "is a symbolic link", ".cfg:1:1:"),
    Case("deployed-unplanned-secret", deployed_unplanned_secret, 1,
         "profile lab-node: nccl.conf sets NCCL_NET_PLUGIN_TOKEN, which the plan does not have",
         "_profiles/lab-node/nccl.conf:"),
    Case("deployed-changed-value-secret", deployed_changed_value_secret, 1,
         "lab04: nccl.conf has another NCCL_IB_TIMEOUT, the plan NCCL_IB_TIMEOUT=20", "lab04/nccl.conf:"),
    Case("deployed-env-secret-json", deployed_env_secret_in_planned_name, 1, "has another NCCL_SOCKET_IFNAME"),
    Case("deployed-config-db-deep", deployed_config_db_deep, 1, "JSON nested deeper than 64 levels", "config_db.json"),
    Case("deployed-config-db-list", deployed_config_db_list, 1, "cannot read this configuration back", "config_db.json"),
    Case("deployed-config-db-table-list", deployed_config_db_table_list, 1, "cannot read this configuration back",
         "config_db.json"),
    # the key is deployed text too: named only when the plan has it
    Case("deployed-config-db-duplicate", deployed_config_db_duplicate, 1, "duplicate key '...'; JSON keeps only the last",
         "config_db.json"),
    Case("deployed-config-db-fifo", deployed_config_db_fifo, 1, "is a FIFO", "config_db.json"),
    Case("manifest-deep", manifest_deep, 2, "has no fabgen manifest.json (or an invalid one)", "deployed"),
    Case("manifest-very-deep", manifest_very_deep, 2, "has no fabgen manifest.json (or an invalid one)"),
    Case("manifest-files-list", manifest_files_list, 2, "has no fabgen manifest.json (or an invalid one)"),
    Case("manifest-bytes-string", manifest_bytes_string, 2, "has no fabgen manifest.json (or an invalid one)"),
    Case("manifest-link-to-device", manifest_link_to_device, 2, "has no fabgen manifest.json (or an invalid one)"),
    Case("manifest-fifo", manifest_fifo, 2, "has no fabgen manifest.json (or an invalid one)"),
    Case("jobs-zero", jobs("0"), 2, "argument -j/--jobs: must be between 1 and"),
    Case("jobs-negative", jobs("-3"), 2, "argument -j/--jobs: must be between 1 and"),
    Case("jobs-300", jobs("300"), 2, "(twice the CPUs), got 300"),
    Case("jobs-word", jobs("many"), 2, "argument -j/--jobs: not a whole number: 'many'"),
    Case("jobs-float", jobs("1.5"), 2, "not a whole number"),
    Case("template-nested-loops", template("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}"
                                           "{% endfor %}"), 2, "loops ran more than 1000000 steps", "hostname.j2:1:"),
    Case("template-loop-over-variable", template("{% set r = range(99999) %}{% for i in r %}{% for j in r %}"
                                                 "{% endfor %}{% endfor %}"), 2, "loops ran more than", "hostname.j2:1:"),
    Case("template-rebinds-loop-helper", template("{% set fabgen_loop = range %}{% for i in range(99999) %}"
                                                  "{% for j in range(99999) %}{% endfor %}{% endfor %}"), 2,
         "loops ran more than", "hostname.j2:1:"),
    Case("template-string-multiply", template('{{ "x" * 100000000 }}'), 2, "*: the result would exceed",
         "hostname.j2:1:"),
    Case("template-list-multiply", template("{{ ([1] * 10000000) | length }}"), 2, "*: the result would exceed",
         "hostname.j2:1:"),
    Case("template-power", template("{{ 10 ** 100000000 }}"), 2, "**: the result would exceed", "hostname.j2:1:"),
    Case("template-macro-output", template('{% set s = "x" * 1000000 %}{% macro m() %}{% for i in range(20) %}'
                                           "{{ s }}{% endfor %}{% endmacro %}{{ m() }}"), 2,
         "output exceeds 16777216 characters"),
    Case("template-fifo", template("", fifo=True), 2, "is a FIFO (named pipe), not a regular file", "hostname.j2"),
    Case("template-huge", template("", size=MAX_TEMPLATE_BYTES + 1), 2, f"larger than the {MAX_TEMPLATE_BYTES}-byte",
         "hostname.j2"),
    Case("lint-text-on-bad-spec", lint_bad("text"), 2, "Lint did not run completely: 6 input errors"),
    Case("lint-parsable-on-bad-spec", lint_bad("parsable"), 2, "[error] unknown NCCL variable NCCL_IB_TIMEOUTT",
         "bad.yaml:4:9:"),
    Case("lint-github-on-bad-spec", lint_bad("github"), 2, "title=fabgen input error::unknown NCCL variable",
         "::error file="),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_input(case: Case, tmp_path: Path) -> None:
    if case.name.startswith(("sonic-",)) and not YANG.is_dir():
        pytest.skip("SONiC YANG models not available")
    argv = case.setup(tmp_path)
    started = time.perf_counter()
    code, stdout, stderr = run_cli(*argv)
    elapsed = time.perf_counter() - started
    output = stdout + stderr
    assert "Traceback" not in output
    assert code == case.code, (code, output[-3000:])
    lines = [line for line in output.splitlines() if case.needle in line]
    assert lines, f"{case.needle!r} not in:\n{output[-3000:]}"
    assert any(case.where in line for line in lines), f"{case.where!r} not in {lines}"
    assert case.forbid not in output, "a secret reached the output"
    assert "root:x:0:0" not in output
    assert elapsed < TIME_LIMIT, f"took {elapsed:.1f} s"


def test_corpus_size() -> None:
    assert len(CASES) >= 55


# --------------------------------------------------------------------------- limits at their boundary

def test_cabling_row_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Row MAX + 1 is refused at its line; MAX rows are read (a small limit for speed)."""
    import fabgen.wiring

    monkeypatch.setattr(fabgen.wiring, "MAX_CABLING_ROWS", 10)
    header = "a_device,a_port,b_device,b_port,role,rail,speed\n"
    row = "lab01,ens1np0,leaf-r0-p00-01,Ethernet1/1,host-leaf,0,400G\n"
    ok = tmp_path / "ok.csv"
    ok.write_text(header + row * 10)
    assert len(fabgen.wiring.read_cabling_csv(ok)) == 10
    over = tmp_path / "over.csv"
    over.write_text(header + row * 11)
    with pytest.raises(bounded.FabgenError) as caught:
        fabgen.wiring.read_cabling_csv(over)
    (problem,) = caught.value.problems
    assert "more than 10 cables" in problem.message and problem.line == 12


def test_walk_file_limit(tmp_path: Path) -> None:
    for index in range(5):
        (tmp_path / f"lab0{index}.json").write_text("{}")
    found, problems = bounded.walk_files(tmp_path, limit=5)
    assert len(found) == 5 and not problems
    (tmp_path / "lab09.json").write_text("{}")
    found, problems = bounded.walk_files(tmp_path, limit=5)
    assert len(found) == 5 and "more than 5 files" in problems[0].message


def test_read_limit_exact(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert bounded.read_bytes(path, 100) == b"x" * 100
    with pytest.raises(bounded.FabgenError, match="larger than the 99-byte limit"):
        bounded.read_bytes(path, 99)


def test_link_inside_a_wiring_directory_is_read(tmp_path: Path) -> None:
    """The walk refuses links out of the tree, not links within it."""
    (tmp_path / "wiring" / "real").mkdir(parents=True)
    shutil.copy(LLDP, tmp_path / "wiring" / "real" / "capture.json")
    (tmp_path / "wiring" / "lab01.json").symlink_to("real/capture.json")
    found, problems = bounded.walk_files(tmp_path / "wiring")
    assert not problems and [p.name for p in found] == ["lab01.json", "capture.json"]


def test_json_depth_boundary() -> None:
    assert bounded.load_json("[" * 64 + "]" * 64, "f") is not None
    with pytest.raises(bounded.FabgenError, match="deeper than 64"):
        bounded.load_json("[" * 65 + "]" * 65, "f")


def test_template_time_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wall-time budget stops a template that stays under the step limit but is slow (a small limit)."""
    import fabgen.template_limits as limits

    monkeypatch.setattr(limits, "MAX_SECONDS", 0.05)
    argv = template("{% for i in range(1000) %}{% for j in range(900) %}{{ j }}{% endfor %}{% endfor %}")(tmp_path)
    code, _, stderr = run_cli(*argv)
    assert code == 2 and "ran longer than 0.05 s" in stderr and "hostname.j2:1:" in stderr, stderr


def test_benign_overlay_still_renders(tmp_path: Path) -> None:
    """The budgets do not get in the way of an ordinary template with loops."""
    argv = template("hostname {{ eos.hostname }}\n{% for i in range(100) %}{% endfor %}")(tmp_path)
    code, _, stderr = run_cli(*argv)
    assert code == 0, stderr


def test_lint_json_carries_the_failure(tmp_path: Path) -> None:
    code, stdout, _ = run_cli(*lint_bad("json")(tmp_path))
    data = json.loads(stdout)
    assert code == 2 and isinstance(data, dict) and data["findings"] == []
    problems = data["error"]["problems"]
    assert any(p["message"].startswith("unknown NCCL variable NCCL_IB_TIMEOUTT") and (p["line"], p["col"]) == (4, 9)
               for p in problems)
    assert any("greater than or equal to 1" in p["message"] and p["path"] == "fabric.rails" for p in problems)


def test_lint_sarif_carries_the_failure(tmp_path: Path) -> None:
    code, stdout, _ = run_cli(*lint_bad("sarif")(tmp_path))
    (run,) = json.loads(stdout)["runs"]
    (invocation,) = run["invocations"]
    assert code == 2 and invocation["executionSuccessful"] is False and run["results"] == []
    notes = invocation["toolExecutionNotifications"]
    assert len(notes) == 6 and all(n["level"] == "error" for n in notes)
    regions = [n["locations"][0]["physicalLocation"]["region"] for n in notes]
    assert {"startLine": 4, "startColumn": 9} in regions


def test_lint_text_never_says_clean_on_failure(tmp_path: Path) -> None:
    code, stdout, _ = run_cli(*lint_bad("text")(tmp_path))
    assert code == 2 and "No problems found." not in stdout


def test_lint_with_one_good_and_one_bad_spec(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD_SPEC)
    code, stdout, _ = run_cli("lint", LAB, str(tmp_path / "bad.yaml"), "--format", "sarif")
    (run,) = json.loads(stdout)["runs"]
    assert code == 2 and run["invocations"][0]["executionSuccessful"] is False


def test_lint_clean_sarif_has_no_failed_invocation() -> None:
    code, stdout, _ = run_cli("lint", LAB, "--format", "sarif")
    (run,) = json.loads(stdout)["runs"]
    assert code == 0 and "invocations" not in run


def test_jobs_in_the_library(tmp_path: Path) -> None:
    from fabgen import FabgenError, generate, load_spec

    spec = load_spec(example("lab"))
    for bad in (0, -1, 10**6, True):
        with pytest.raises(FabgenError, match="jobs must be"):
            generate(spec, tmp_path / "out", jobs=bad)  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()


def test_message_patterns_are_in_words() -> None:
    """Every pattern a spec model uses has words, so no refusal reads as a regular expression."""
    from fabgen.schema import spec_schema_text
    from fabgen.spec.input_checks import PATTERN_WORDS

    schema = spec_schema_text()
    patterns = set(re.findall(r'"pattern": "((?:[^"\\]|\\.)*)"', schema))
    unit_patterns = {p for p in patterns if "\\\\s*" in p}
    missing = {json.loads(f'"{p}"') for p in patterns - unit_patterns} - set(PATTERN_WORDS)
    assert not missing, missing
