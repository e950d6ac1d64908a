"""``fabgen sonic-patch``: the Generic Config Updater patch for one switch, against its running CONFIG_DB.

Registered by :func:`fabgen.cli.build_parser` like the other command groups.
The patch itself is :func:`fabgen.targets.sonic.patch.gcu_patch`; this module
only reads the two files and writes the result.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fabgen.errors import FabgenError, Problem

CommandFactory = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def _read_config(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FabgenError([Problem(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno, col=exc.colno)]) from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise FabgenError([Problem("not a CONFIG_DB dump: expected an object of tables", file=path)])
    return data


def _cmd_sonic_patch(args: argparse.Namespace) -> int:
    from fabgen.targets.sonic.patch import gcu_patch_text

    text = gcu_patch_text(_read_config(args.base), _read_config(args.config_db))
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
    return 0


def register(command: CommandFactory) -> None:
    """Add ``sonic-patch`` to the ``fabgen`` parser."""
    p = command("sonic-patch", _cmd_sonic_patch,
                "JSON Patch for `config apply-patch` taking a SONiC switch's running CONFIG_DB to fabgen's file")
    p.add_argument("config_db", metavar="CONFIG_DB", help="fabgen's switches/NAME/config_db.json")
    p.add_argument("--base", required=True, metavar="RUNNING",
                   help="the switch's CONFIG_DB now (`show runningconfiguration all > running.json`)")
    p.add_argument("-o", "--output", default="-", metavar="FILE", help="where to write the patch (default: stdout)")
