"""``lint --deployed`` on collected trees mangled at random: never a traceback, never a planted value echoed.

A deployed tree is whatever came back from the devices: a config half-edited by
hand, a truncated copy, a file of the wrong kind. Each run copies a tree that
runs the plan, applies a few random line edits (deleted, repeated, reindented,
shuffled lines; a character or a number changed) to its switch configs, host
network files, NIC plans, sysctl, NCCL topology and boot files, some of them planting a marker value, and lints it. The only
outcomes allowed are findings and FabgenError; no finding may carry a marker,
since lint output goes to CI logs and a deployed file may hold secrets. Seeded,
so a failure replays.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest
from lint_support import base_path, write_deployed

from fabgen.errors import FabgenError
from fabgen.lint import lint
from fabgen.pipeline import load_spec, plan_fabric

MARKERS = ("SECRETXYZ", "10.66.66.66", "10.66.66.66/31", "4266666666")
"""Values no example plans: a finding that shows one echoed the deployed file."""
PIECES = ("{", "[", ":", " ", "-", "0", "x", "'", '"', "|", "\t", "999999999999", "10.0.0.1/33", "null", "true",
          "NaN", "Infinity", *MARKERS)
RUNS = 20
"""Per example: about 12 s each on this machine (every run lints the whole tree, rules included)."""


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True) or ["x\n"]
    i = rng.randrange(len(lines))
    op = rng.randrange(8)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif op == 2:
        j = rng.randrange(len(lines[i]) or 1)
        lines[i] = lines[i][:j] + rng.choice(PIECES) + lines[i][j + 1:]
    elif op == 3:
        lines[i] = lines[i].replace(":", ": [", 1)
    elif op == 4:
        lines[i] = "   " + lines[i]
    elif op == 5:
        lines[i] = lines[i].lstrip()
    elif op == 6:
        lines[i] = re.sub(r"\d+", lambda m: rng.choice(["0", "-1", "4294967296", "abc", "1.5", *MARKERS, m.group()]),
                          lines[i])
    else:
        rng.shuffle(lines)
    return "".join(lines)


@pytest.mark.parametrize("base", ["lab", "sonic-pod", "cumulus-pod"])
def test_mangled_deployed_trees_give_findings_without_their_values(base: str, tmp_path: Path) -> None:
    spec = load_spec(base_path(base))
    fabric = plan_fabric(spec)
    clean = tmp_path / "clean"
    write_deployed(fabric, clean)
    files = sorted(p.relative_to(clean) for p in clean.rglob("*")
                   if p.is_file() and (p.suffix in (".cfg", ".json", ".yaml", ".nmconnection")
                                       or p.name in ("roce-nic.conf", "sysctl.conf", "nccl-topo.xml", "fabgen-roce-nic.service",
                                                     "99-fabgen-roce-nic.rules", "lldpd.conf")))
    rng = random.Random(f"deployed-fuzz-{base}")
    for run in range(RUNS):
        root = tmp_path / f"run{run}"
        shutil.copytree(clean, root)
        for _ in range(rng.randrange(1, 4)):
            path = root / rng.choice(files)
            text = path.read_text()
            for _ in range(rng.randrange(1, 3)):
                text = _mutate(text, rng)
            path.write_text(text)
        try:
            findings = lint(spec, fabric, deployed=root)
        except FabgenError:
            findings = []
        for finding in findings:
            said = finding.message + (finding.hint or "")
            assert not any(marker in said for marker in MARKERS), (run, finding.code, said)
        shutil.rmtree(root)
