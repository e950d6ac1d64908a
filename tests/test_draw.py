"""fabgen draw: a valid SVG with the plan's counts, one pod drawn, readable (bounded) at 24k, rendered by rsvg."""

from __future__ import annotations

import subprocess
from pathlib import Path
from xml.etree import ElementTree

from fabgen.draw import draw_svg
from fabgen.pipeline import load_spec, plan_fabric
from tests.helpers import example, require_tool, run_cli

SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[str]:
    return [t.text or "" for t in ElementTree.fromstring(svg).iter(f"{SVG}text")]


def test_24k_picture_counts_the_fabric_and_stays_small(tmp_path: Path) -> None:
    out = tmp_path / "fabric.svg"
    code, _, err = run_cli("draw", str(example("llama3-24k")), "-o", str(out))
    assert code == 0, err
    svg = out.read_text()
    texts = _texts(svg)
    assert texts[0] == "llama3-roce: 3,072 hosts, 24,576 GPUs, 8 rails, 3-tier, 2,048 switches, 73,728 cables"
    for expected in ("1,024 leaf-spine", "1,024 host-leaf", "1,024 spine-super", "+23 pods", "768", "512"):
        assert expected in texts, expected
    assert sum(t.startswith("rail ") for t in texts) == 8
    assert len(svg) < 100_000  # one pod drawn, not 2,048 switches: readable and light
    rects = list(ElementTree.fromstring(svg).iter(f"{SVG}rect"))
    assert len(rects) < 150


def test_lab_is_drawn_whole_and_deterministic() -> None:
    plan = plan_fabric(load_spec(example("lab")))
    svg = draw_svg(plan)
    assert svg == draw_svg(plan_fabric(load_spec(example("lab"))))
    texts = _texts(svg)
    assert "drawn: the whole fabric (one pod); the right column counts everything" in texts
    assert "16 leaf-spine" in texts and "4 hosts" in texts


def test_rsvg_renders_it(tmp_path: Path) -> None:
    rsvg = require_tool("rsvg-convert")  # Debian's librsvg2-bin
    svg = tmp_path / "f.svg"
    svg.write_text(draw_svg(plan_fabric(load_spec(example("llama3-24k")))))
    png = tmp_path / "f.png"
    subprocess.run([rsvg, str(svg), "-o", str(png)], check=True, capture_output=True)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
