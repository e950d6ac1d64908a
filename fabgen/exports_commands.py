"""CLI commands for exports that are not targets: ``draw`` (a picture of the plan).

Registered by :mod:`fabgen.cli` like :mod:`fabgen.commands`; heavy imports stay in the handler.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from fabgen.spec_arg import spec_path

CommandFactory = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def _cmd_draw(args: argparse.Namespace) -> int:
    from fabgen.draw import draw_svg
    from fabgen.pipeline import load_spec, plan_fabric

    svg = draw_svg(plan_fabric(load_spec(Path(args.spec))))
    if args.output == "-":
        sys.stdout.write(svg)
    else:
        Path(args.output).write_text(svg, encoding="utf-8")
    return 0


def register(command: CommandFactory) -> None:
    p = command("draw", _cmd_draw, "draw the planned fabric as SVG: tiers, one pod with its rails, counts for the rest")
    p.add_argument("spec", type=spec_path)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the SVG file to write ('-' for stdout)")
