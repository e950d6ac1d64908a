"""host-boot's lldpd.conf, run by lldpd itself, and FG510's reader of it checked against lldpd.

``lldpcli -c`` applies the file to a private lldpd (its own control socket, in
a network namespace of its own that holds only a loopback, so it speaks to no
one), and ``lldpcli show configuration`` says what lldpd then holds: the
interface pattern and the port-id subtype the plan asks for, and exactly what
:func:`~fabgen.targets.hostnet.parse_boot.read_lldpd_conf` reads from the same
file, the layouts an operator's edit can take included.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from contextlib import suppress
from pathlib import Path

import pytest

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.targets.hostnet.parse_boot import read_lldpd_conf
from fabgen.targets.render import render_files
from tests.helpers import EXAMPLE_NAMES, LARGE_EXAMPLES, example, require_tool

START_SECONDS = 10.0


def _require_root() -> None:
    if os.geteuid() == 0:
        return
    reason = "lldpd needs root (it chroots to /run/lldpd and drops its privileges)"
    if os.environ.get("FABGEN_REQUIRE_TWIN") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def lldpd_holds(text: str) -> tuple[str | None, str | None]:
    """(interface pattern, port-id subtype) a fresh lldpd holds once ``lldpcli -c`` has run ``text``; None for
    a setting lldpd shows as unset."""
    lldpd, lldpcli, unshare = require_tool("lldpd"), require_tool("lldpcli"), require_tool("unshare")
    _require_root()
    # lldpcli run as root drops to lldpd's own user: the socket and the file sit where that user can reach them
    # (pytest's directories are the owner's alone), in a directory of this test's, removed after.
    with tempfile.TemporaryDirectory(prefix="fabgen-lldpd-") as where:
        os.chmod(where, 0o755)
        return _run_lldpd(Path(where), text, lldpd, lldpcli, unshare)


def _run_lldpd(where: Path, text: str, lldpd: str, lldpcli: str, unshare: str) -> tuple[str | None, str | None]:
    sock, empty, conf = where / "lldpd.sock", where / "empty.conf", where / "lldpd.conf"
    empty.write_text("")  # -O: the start-up configuration, in place of the machine's /etc/lldpd.d
    conf.write_bytes(text.encode())
    log_path = where / "lldpd.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([unshare, "--net", "--", lldpd, "-d", "-u", str(sock), "-O", str(empty)],
                                stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + START_SECONDS
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"lldpd did not start:\n{log_path.read_text()}")
            time.sleep(0.02)
        subprocess.run([lldpcli, "-u", str(sock), "-c", str(conf)], capture_output=True, check=True, timeout=30)
        shown = subprocess.run([lldpcli, "-u", str(sock), "-f", "json", "show", "configuration"],
                               capture_output=True, text=True, check=True, timeout=30)
    finally:
        with suppress(ProcessLookupError):  # the monitor and its privilege-separated child, by their group
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    config = json.loads(shown.stdout)["configuration"]["config"]
    pattern, port_id = config["iface-pattern"], config["lldp-portid-type"]
    return (None if pattern == "(none)" else pattern), (None if port_id == "unknown" else port_id)


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n not in LARGE_EXAMPLES])
def test_lldpd_holds_what_the_plan_asks_for(name: str) -> None:
    plan = plan_fabric(load_spec(example(name)))
    files = render_files(plan, ["host-boot"])[0]
    for profile, spec_profile in plan.spec.host_profiles.items():
        text = files.get(f"hosts/_profiles/{profile}/lldpd.conf")
        netdevs = [nic.netdev for nic in spec_profile.backend_nics()]
        if text is None:
            assert not netdevs
            continue
        assert lldpd_holds(text) == (",".join(netdevs), "ifname")


EDITED = {
    "comments, quotes and blank lines": '# fabgen\n\nconfigure system interface pattern "ens1np0,ens2np0" # both\n'
                                        "configure lldp portidsubtype ifname\n",
    "an escaped '#' and a quoted space": "configure system interface pattern ens\\#1,'a b'\n",
    "a trailing backslash: the line is not run": "configure system interface pattern ens1np0 \\\n"
                                                "configure lldp portidsubtype ifname\n",
    "an open quote: the line is not run": 'configure system interface pattern "ens1np0\n',
    "a last line without its newline is not run": "configure lldp portidsubtype ifname\n"
                                                  "configure system interface pattern ens1np0",
    "a later command wins, unconfigure clears": "configure system interface pattern ens1np0\n"
                                                "configure system interface pattern ens2np0\n"
                                                "configure lldp portidsubtype macaddress\n"
                                                "unconfigure system interface pattern\n",
    "extra words: the command is refused": "configure system interface pattern ens1np0 ens2np0\n",
}


@pytest.mark.parametrize("text", EDITED.values(), ids=EDITED.keys())
def test_the_reader_holds_what_lldpd_holds(text: str) -> None:
    conf = read_lldpd_conf(text)
    assert (conf.pattern, conf.port_id) == lldpd_holds(text)
