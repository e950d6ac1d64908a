"""Rule cases as data: load a case file, patch a base spec, build evidence, run one rule.

A case file (``tests/data/lint/cases/FG101.yaml``)::

    rule: FG101
    base: lab                       # examples/lab/spec.yaml, or tests/data/lint/bases/NAME.yaml
    cases:
      - name: clean
        expect: []
      - name: roce-not-lossless
        set: {qos.classes.roce.lossless: false}
        expect: [[FG101, 58, 14]]   # (code, line, col) in the patched spec

Patches, applied in this order to the base spec's YAML (round trip, so lines
that are not touched keep their numbers):

* ``set``: ``{dotted.path[0].key: value}``, creating missing mappings;
* ``delete``: list of dotted paths;
* ``replace``: list of ``[old, new]`` text replacements on the result (for
  comments, e.g. inline suppressions).

Evidence:

* ``wiring``: a directory under ``tests/data/lint/wiring/``, or ``plan-csv`` (the
  plan's own ``cabling.csv``), optionally edited with ``wiring_replace``;
* ``deployed: plan``: a tree with every host's ``nccl.conf`` and host network
  files (netplan or keyfiles), its ``roce-nic.conf``, and the switch configurations fabgen renders, then ``deployed_replace: {relpath: [[old, new]]}``
  and ``deployed_delete: [relpath]``.

An expectation is ``[code, line, col]`` in the spec, or ``[code, "where:relpath",
line, col]`` with ``where`` ``wiring`` or ``deployed``.
"""

from __future__ import annotations

import io
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "lint"
CASES = DATA / "cases"
BASES = DATA / "bases"
WIRING = DATA / "wiring"
EXAMPLES = ROOT / "examples"

_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def base_path(name: str) -> Path:
    local = BASES / f"{name}.yaml"
    return local if local.exists() else EXAMPLES / name / "spec.yaml"


def parse_path(text: str) -> list[str | int]:
    return [int(index) if index else key for key, index in _PART.findall(text)]


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.preserve_quotes = True
    return yaml


def _step(node: Any, part: str | int, create: bool) -> Any:
    if isinstance(part, int):
        return node[part]
    if part not in node:
        if not create:
            raise KeyError(part)
        node[part] = CommentedMap()
    return node[part]


def patch_text(text: str, case: dict[str, Any]) -> str:
    """Apply a case's ``set``/``delete``/``replace`` to a spec text."""
    if case.get("set") or case.get("delete"):
        yaml = _yaml()
        data = yaml.load(text)
        for dotted, value in (case.get("set") or {}).items():
            parts = parse_path(dotted)
            node = data
            for part in parts[:-1]:
                node = _step(node, part, create=True)
            node[parts[-1]] = _plain_to_rt(value)
        for dotted in case.get("delete") or []:
            parts = parse_path(dotted)
            node = data
            for part in parts[:-1]:
                node = _step(node, part, create=False)
            del node[parts[-1]]
        out = io.StringIO()
        yaml.dump(data, out)
        text = out.getvalue()
    for old, new in case.get("replace") or []:
        assert old in text, f"replace: {old!r} not in the spec"
        text = text.replace(old, new, 1)
    return text


def _nested(value: Any) -> bool:
    children = value.values() if isinstance(value, dict) else value
    return any(isinstance(c, dict) or (isinstance(c, list) and _nested(c)) for c in children)


def _plain_to_rt(value: Any) -> Any:
    """Case-file values as ruamel nodes: innermost mappings and lists in flow style, as the examples write them."""
    if isinstance(value, dict):
        node = CommentedMap((k, _plain_to_rt(v)) for k, v in value.items())
        if not _nested(value):
            node.fa.set_flow_style()
        return node
    if isinstance(value, list):
        seq = CommentedSeq(_plain_to_rt(v) for v in value)
        if not _nested(value):
            seq.fa.set_flow_style()
        return seq
    return value


@dataclass
class Prepared:
    spec_file: Path
    text: str
    wiring: list[Path] = field(default_factory=list)
    deployed: Path | None = None
    roots: dict[str, Path] = field(default_factory=dict)


def prepare(case: dict[str, Any], base: str, tmp: Path) -> Prepared:
    """Write the patched spec (and evidence) under ``tmp``."""
    from fabgen.pipeline import load_spec, plan_fabric

    text = patch_text(base_path(case.get("base", base)).read_text(), case)
    spec_file = tmp / "spec.yaml"
    spec_file.write_text(text)
    prepared = Prepared(spec_file, text)
    wiring = case.get("wiring")
    deployed = case.get("deployed")
    fabric = plan_fabric(load_spec(spec_file)) if wiring == "plan-csv" or deployed else None
    if wiring:
        root = tmp / "wiring"
        if wiring == "plan-csv":
            from fabgen.targets.cabling import cabling_csv

            root.mkdir()
            (root / "cabling.csv").write_text(cabling_csv(fabric))
        else:
            shutil.copytree(WIRING / wiring, root)
        for rel, edits in (case.get("wiring_replace") or {}).items():
            _edit(root / rel, edits)
        prepared.wiring = [root]
        prepared.roots["wiring"] = root
    if deployed:
        root = tmp / "deployed"
        write_deployed(fabric, root)
        for rel, edits in (case.get("deployed_replace") or {}).items():
            _edit(root / rel, edits)
        for rel in case.get("deployed_delete") or []:
            target = root / rel
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        for rel, content in (case.get("deployed_add") or {}).items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content)
        prepared.deployed = root
        prepared.roots["deployed"] = root
    return prepared


def _edit(path: Path, edits: list[list[str]]) -> None:
    text = path.read_text()
    for old, new in edits:
        assert old in text, f"{path.name}: {old!r} not found"
        text = text.replace(old, new, 1)
    path.write_text(text)


def deployed_site(base: str, tmp_path: Path) -> tuple[Any, Any, Path]:
    """(spec, plan, collected tree) of a site that runs the plan of ``base`` exactly (:func:`write_deployed`)."""
    from fabgen.pipeline import load_spec, plan_fabric

    spec = load_spec(base_path(base))
    fabric = plan_fabric(spec)
    root = tmp_path / "collected"
    write_deployed(fabric, root)
    return spec, fabric, root


def deployed_findings(spec: Any, fabric: Any, root: Path, code: str) -> list[Any]:
    """``lint --deployed root`` with the rule ``code`` and the tree's own (FG503 incomplete, FG504 unreadable)."""
    from fabgen.lint import lint
    from fabgen.lint.config import LintConfig

    return lint(spec, fabric, deployed=root, config=LintConfig(select=(code, "FG503", "FG504")))


def planted_finding(file: str, code: str, edit: Any, says: str, line: str, tmp_path: Path) -> Any:
    """The one finding ``code`` gives for ``edit`` planted in lab01's collected ``file`` on a site running the lab's
    plan: it says ``says`` on one line, at that file, at the line holding ``line`` ("\\x00": line 1, nothing to
    point at), with a hint; asserted here, and returned for the caller's own checks."""
    spec, fabric, root = deployed_site("lab", tmp_path)
    path = root / "hosts" / "lab01" / file
    text = edit(path.read_text())
    path.write_text(text)
    findings = deployed_findings(spec, fabric, root, code)
    assert [f.code for f in findings] == [code], findings
    (finding,) = findings
    assert says in finding.message and finding.file == str(path) and "\n" not in finding.message and finding.hint
    assert (line in text.splitlines()[finding.line - 1]) if line != "\x00" else finding.line == 1
    return finding


def write_deployed(fabric: Any, root: Path) -> None:
    """What a site runs when it runs exactly the plan: nccl.conf, host network files, the NIC plan, the sysctl file,
    the NCCL topology file and the boot files per host, and switch configs fabgen renders."""
    from fabgen.targets.nccl.conf import format_nccl_conf
    from fabgen.targets.registry import target_names
    from fabgen.targets.render import render_files

    for host in fabric.hosts:
        path = root / "hosts" / host.name / "nccl.conf"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(format_nccl_conf(dict(host.nccl_env), [f"host {host.name}"]))
    switch_targets = [t for t in ("eos", "sonic", "nvue") if t in target_names()]
    files, _ = render_files(fabric, switch_targets) if switch_targets else ({}, {})
    for rel, text in files.items():
        if rel.startswith("switches/"):
            out = root / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text)
    (root / "switches").mkdir(exist_ok=True)
    # each host's netplan.yaml or NetworkManager keyfiles, its NIC plan (roce-nic.conf), the sysctl file it
    # installs (its own or its profile's) as collected from /etc/sysctl.d, and its profile's NCCL topology file
    from fabgen.lint.deployed_profile import host_copy_path
    from fabgen.targets.hostnet.boot import lldpd_path, udev_path, unit_path
    from fabgen.targets.hostnet.config import sysctl_path, sysctl_source
    from fabgen.targets.nccl.topo import topology_path

    hostnet, _ = render_files(fabric, ["host-net", "nic-qos", "host-sysctl", "nccl-topo", "host-boot"])
    for rel, text in hostnet.items():
        if rel.endswith(("/netplan.yaml", ".nmconnection", "/roce-nic.conf")):
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    for host in fabric.hosts:
        source = sysctl_source(fabric.spec, host)
        if source is not None:
            (root / sysctl_path(host.name)).write_text(hostnet[source])
        topology = hostnet.get(topology_path(host.profile))
        if topology is not None:
            (root / host_copy_path(host.name, "nccl-topo.xml")).write_text(topology)
        for boot in (unit_path(host.profile), udev_path(host.profile), lldpd_path(host.profile)):
            if boot in hostnet:
                (root / "hosts" / host.name / boot.rsplit("/", 1)[1]).write_text(hostnet[boot])


def run_case(case: dict[str, Any], base: str, code: str, tmp: Path) -> tuple[list[tuple[Any, ...]], Prepared, list[Any]]:
    """Run ``code`` alone on the prepared case; (code, [where,] line, col) tuples, sorted."""
    from fabgen.lint import lint
    from fabgen.lint.config import LintConfig
    from fabgen.pipeline import load_spec, plan_fabric

    prepared = prepare(case, base, tmp)
    spec = load_spec(prepared.spec_file)
    findings = lint(spec, plan_fabric(spec), wiring=prepared.wiring or None, deployed=prepared.deployed,
                    config=LintConfig(select=(code,)))
    got = []
    for f in findings:
        if f.file == str(prepared.spec_file):
            got.append((f.code, f.line, f.col))
        else:
            where = next((f"{name}:{Path(f.file).relative_to(root)}" for name, root in prepared.roots.items()
                          if Path(f.file).is_relative_to(root)), f.file)
            got.append((f.code, where, f.line, f.col))
    return sorted(got, key=repr), prepared, findings


def expected(case: dict[str, Any]) -> list[tuple[Any, ...]]:
    return sorted((tuple(item) for item in case.get("expect") or []), key=repr)


def load_cases(path: Path) -> dict[str, Any]:
    return YAML(typ="safe").load(path.read_text())


def numbered(text: str) -> str:
    return "".join(f"{n:4d}  {line}\n" for n, line in enumerate(text.splitlines(), start=1))
