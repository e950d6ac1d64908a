"""What a twin has created, on disk, so that ``down`` (or a failed ``up``) can undo exactly that.

The state file is written before each step creates anything (the namespaces
about to be added, the sysctl values about to be changed) and after each
process starts, so a crash at any point leaves a record that covers it.
``down`` deletes by those names and kills by those pids; it never scans for
"anything that looks like ours".
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fabgen.twin.system import Proc, TwinError

STATE_ROOT = Path(os.environ.get("FABGEN_TWIN_STATE", "/run/fabgen-twin"))
"""Under /run (tmpfs): a reboot, which also clears every namespace, clears the state with it."""
STATE_VERSION = 1


@dataclass(frozen=True, slots=True)
class SysctlChange:
    key: str
    old: str
    new: str


@dataclass
class TwinState:
    prefix: str
    spec: str
    spec_sha256: str
    status: str = "starting"
    netns: list[str] = field(default_factory=list)
    procs: list[Proc] = field(default_factory=list)
    sysctls: list[SysctlChange] = field(default_factory=list)
    timings_s: dict[str, float] = field(default_factory=dict)

    @property
    def directory(self) -> Path:
        return STATE_ROOT / self.prefix

    @property
    def path(self) -> Path:
        return self.directory / "state.json"

    def save(self) -> None:
        """Atomically replace the state file (a reader never sees half of it)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        os.chmod(STATE_ROOT, 0o755)
        os.chmod(self.directory, 0o755)  # FRR (user frr) must traverse it to reach its own directory
        data: dict[str, Any] = {"version": STATE_VERSION, **asdict(self)}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)


def load_state(prefix: str) -> TwinState | None:
    path = STATE_ROOT / prefix / "state.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise TwinError(f"{path}: unreadable twin state ({exc})") from None
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        raise TwinError(f"{path}: twin state of another fabgen version; remove the namespaces it lists by hand")
    try:
        return TwinState(
            prefix=str(data["prefix"]), spec=str(data["spec"]), spec_sha256=str(data["spec_sha256"]),
            status=str(data["status"]), netns=[str(n) for n in data["netns"]],
            procs=[Proc(int(p["pid"]), int(p["start"]), str(p["netns"]), str(p["name"])) for p in data["procs"]],
            sysctls=[SysctlChange(str(s["key"]), str(s["old"]), str(s["new"])) for s in data["sysctls"]],
            timings_s={str(k): float(v) for k, v in data.get("timings_s", {}).items()},
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise TwinError(f"{path}: malformed twin state ({exc})") from None
