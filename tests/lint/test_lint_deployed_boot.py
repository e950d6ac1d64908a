"""``lint --deployed`` FG510: a host's NIC unit, udev rule and lldpd configuration against the plan, read as
systemd, udevd and lldpd read them (list settings add up, rule parts in any order, lldpd's ``pattern_match``)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from lint_support import deployed_findings, deployed_site, planted_finding

from fabgen.targets.hostnet.parse_boot import pattern_match, read_lldpd_conf, read_udev_rules, read_unit
from tests.helpers import require_tool

UNIT = "fabgen-roce-nic.service"
RULES = "99-fabgen-roce-nic.rules"
DEVICE3 = "sys-subsystem-net-devices-ens3np0.device"
SCRIPT = "/usr/local/sbin/roce-nic.sh --plan /etc/fabgen/roce-nic.conf"


def _replace(old: str, new: str) -> Any:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)
    return edit


@pytest.mark.parametrize(("file", "edit", "says", "line"), [
    (UNIT, _replace(f"Wants={DEVICE3}\n", ""), f"{UNIT} differs from the plan: Wants= lacks {DEVICE3}",
     "Wants=sys-subsystem-net-devices-ens4np0.device"),
    (UNIT, _replace(f"After={DEVICE3}\n", f"After={DEVICE3.replace('ens3', 'ens9')}\n"), f"After= lacks {DEVICE3}",
     "After=sys-subsystem-net-devices-ens4np0.device"),
    (UNIT, _replace("Wants=sys-subsystem-net-devices-ens4np0.device\n",
                    "Wants=sys-subsystem-net-devices-ens4np0.device\nWants=\n"),  # an empty assignment clears it
     "Wants= lacks sys-subsystem-net-devices-ens1np0.device, sys-subsystem-net-devices-ens2np0.device, "
     f"{DEVICE3}, sys-subsystem-net-devices-ens4np0.device", "Wants="),  # at the clearing line
    (UNIT, _replace("Type=oneshot", "Type=simple"), "Type= simple (plan oneshot)", "Type=simple"),
    (UNIT, _replace("RemainAfterExit=yes", "RemainAfterExit=no"), "RemainAfterExit= no (plan yes)", "RemainAfterExit"),
    (UNIT, _replace(f"ExecStart={SCRIPT}", "ExecStart=/opt/s3cr3t.sh"),
     f"ExecStart= runs another command (plan {SCRIPT})", "ExecStart="),
    (UNIT, _replace("WantedBy=multi-user.target", "WantedBy=s3cr3t.target"), "WantedBy= lacks multi-user.target",
     "WantedBy="),
    (RULES, _replace('ACTION=="add"', 'ACTION=="change"'), f"{RULES} differs from the plan: the rule that restarts "
     "fabgen-roce-nic.service when the mlx5 driver adds a netdev is missing or changed", 'ACTION=="change"'),
    (RULES, lambda t: "\n".join(line for line in t.splitlines() if not line.startswith("ACTION")) + "\n",
     "adds a netdev is missing or changed", "\x00"),
    ("lldpd.conf", _replace("pattern ens1np0,", "pattern !ens2*,ens*,"),
     "lldpd.conf differs from the plan: the interface pattern leaves out ens2np0", "pattern !ens2*"),
    ("lldpd.conf", _replace("portidsubtype ifname", "portidsubtype local s3cr3t"), "portidsubtype local (plan ifname)",
     "portidsubtype local"),
], ids=["wants", "after", "wants-cleared", "type", "remain", "exec-start", "wanted-by", "udev-changed", "udev-gone",
        "lldpd-pattern", "lldpd-port-id"])
def test_a_planted_boot_edit_is_found_at_its_line(file: str, edit: Any, says: str, line: str,
                                                  tmp_path: Path) -> None:
    finding = planted_finding(file, "FG510", edit, says, line, tmp_path)
    assert "s3cr3t" not in finding.message and "ens9" not in finding.message


def test_what_the_consumers_read_alike_is_no_drift(tmp_path: Path) -> None:
    """Comments, continuations, several devices on one line, spaces around '=', another spelling of yes, settings
    the plan does not need, rule parts in another order, and an lldpd pattern that admits every NIC by glob."""
    spec, fabric, root = deployed_site("lab", tmp_path)
    host = root / "hosts" / "lab01"
    unit = (host / UNIT).read_text()
    devices = " ".join(f"sys-subsystem-net-devices-ens{n}np0.device" for n in range(1, 5))
    unit = "\n".join(line for line in unit.splitlines() if not line.startswith(("Wants=", "After=")))
    unit = unit.replace("[Unit]\n", f"[Unit]\n; by hand\nWants = {devices}\nAfter=network-online.target \\\n"
                                     f"  {devices}\n").replace("RemainAfterExit=yes", "RemainAfterExit=true")
    (host / UNIT).write_text(unit + "\n")
    rules = (host / RULES).read_text()
    (host / RULES).write_text(rules.replace('ACTION=="add", SUBSYSTEM=="net"', 'SUBSYSTEM == "net",ACTION=="add"')
                              + 'ACTION=="remove", RUN+="/bin/true"\n')
    lldpd = (host / "lldpd.conf").read_text()
    (host / "lldpd.conf").write_text(lldpd.replace("pattern ens1np0,ens2np0,ens3np0,ens4np0", "pattern eth0")
                                     + "# later\nconfigure system interface pattern ens*,!docker*\n")
    assert deployed_findings(spec, fabric, root, "FG510") == []


def test_the_readers_follow_their_consumers() -> None:
    unit = read_unit("[Unit]\nWants=a b\nWants=c\n# Wants=x\nAfter=a\nAfter=\nAfter=b \\\n c\n[Service]\n"
                     "Type=simple\nType = oneshot\nExecStart=/bin/x  -y\nbroken line\n")
    assert unit.settings["Unit.Wants"] == ("a", "b", "c") and unit.settings["Unit.After"] == ("b", "c")
    assert unit.settings["Service.Type"] == ("oneshot",) and unit.lines["Service.Type"] == 11
    assert unit.settings["Service.ExecStart"] == ("/bin/x -y",) and unit.lines["Unit.After"] == 7
    rules = read_udev_rules('# c\nA=="1", B+="2"\nbroken "rule\nC=="3",\\\n D=="4"\n')
    assert [sorted(parts) for parts, _ in rules.rules] == [[("A", "==", "1"), ("B", "+=", "2")],
                                                            [("C", "==", "3"), ("D", "==", "4")]]
    assert [line for _, line in rules.rules] == [2, 4]
    conf = read_lldpd_conf("configure system interface pattern a\nconfigure lldp portidsubtype ifname\n"
                           "unconfigure system interface pattern\n")
    assert conf.pattern is None and conf.admits("anything") and conf.port_id == "ifname"
    # lldpd's pattern_match: '!' denies and a later plain match does not admit back; '!!' admits at once
    assert pattern_match("ens1", "ens*") and not pattern_match("ens1", "eth*")
    assert not pattern_match("ens1", "!ens1,ens*") and not pattern_match("ens1", "ens*,!ens1")
    assert pattern_match("ens1", "!ens*,!!ens1") and pattern_match("ens1", ",,ens1,")


def test_hostile_boot_files_are_bounded_not_echoed(tmp_path: Path) -> None:
    """An lldpd pattern of thousands of globs is refused at its line (each would cost a compiled fnmatch per NIC),
    a unit line over systemd's 1 MiB limit is not read (systemd would not load the unit), and a unit listing
    40,000 devices on as many continued lines is read in linear time: findings, never a hang or an echo."""
    spec, fabric, root = deployed_site("lab", tmp_path)
    host = root / "hosts" / "lab01"
    (host / "lldpd.conf").write_text("configure system interface pattern " + ",".join(
        f"s3cr3t{n}*a*b" for n in range(5000)) + "\n")
    (host / UNIT).write_text("[Unit]\nWants=" + " ".join(f"s3cr3t{n}.device" for n in range(200_000)) + "\n")
    (host / RULES).write_text('ACTION=="add", RUN+="' + "s3cr3t" * 3000 + '"\n')
    findings = deployed_findings(spec, fabric, root, "FG510")
    said = {f.file.rsplit("/", 1)[1]: f.message for f in findings}
    assert said["lldpd.conf"] == "lab01: lldpd.conf not read: line 1: an interface pattern of more than 1000 entries"
    assert said[UNIT] == f"lab01: {UNIT} not read: line 2 is longer than systemd's 1 MiB line limit"
    assert said[RULES] == (f"lab01: {RULES} not read: line 1 is longer than udev's 16 KiB line limit (udevd reads "
                           "no rule of the file)")
    (host / UNIT).write_text("[Unit]\nWants=\\\n" + "".join(f" s3cr3t{n}.device \\\n" for n in range(40_000)) + "\n")
    said = {f.file.rsplit("/", 1)[1]: f.message for f in deployed_findings(spec, fabric, root, "FG510")}
    assert "lacks sys-subsystem-net-devices-ens1np0.device" in said[UNIT]
    assert not any("s3cr3t" in message for message in said.values())


UNIT_LAYOUTS = {
    "a comment inside a continuation is skipped, the line goes on": "Description=a \\\n# note\n; note\nBogusA=1\n",
    "a comment ending in a backslash continues nothing": "# note \\\nBogusB=1\n",
    "an escaped backslash at the end continues nothing": "Description=a\\\\\nBogusC=1\n",
    "a blank after the backslash continues nothing": "Description=a \\ \nBogusD=1\n",
    "a blank line ends a continuation": "Description=a \\\n\nBogusE=1\n",
    "a carriage return ends a line": "Description=a\rBogusF=1\n",
    "a NUL ends a line": "Description=a\0BogusG=1\n",
    "a NUL after a newline is the same line end": "Description=a \\\n\0BogusJ=1\n",
    "a NUL then CR LF then CR: three ends": "Description=a\0\r\n\rBogusK=1\n",
    "a form feed does not": "Description=a\x0cBogusH=1\n",
    "a continuation open at the end is still read": "Description=a\nBogusI=1 \\",
}


@pytest.mark.parametrize("body", UNIT_LAYOUTS.values(), ids=UNIT_LAYOUTS.keys())
def test_the_unit_reader_takes_the_lines_systemd_takes(body: str, tmp_path: Path) -> None:
    """Which lines systemd reads as assignments, shown by systemd itself: it warns of each unknown key it parses
    (``Unknown key 'BogusX'``), and read_unit must hold exactly those keys."""
    analyze = require_tool("systemd-analyze")
    unit = tmp_path / "probe.service"
    unit.write_bytes(f"[Unit]\n{body}\n[Service]\nType=oneshot\nExecStart=/bin/true\n".encode())
    proc = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, check=False)
    systemd = set(re.findall(r"Unknown key '(Bogus[A-Z])'", proc.stderr))
    ours = {key.split(".", 1)[1] for key in read_unit(unit.read_text()).settings if ".Bogus" in key}
    assert ours == systemd


def test_the_udev_reader_takes_the_lines_udevd_takes() -> None:
    """udev_rules_parse_file: '#' lines skipped inside a continuation, the backslash dropped with no space in its
    place, ';' no comment, a continuation open at the end of the file ignored."""
    rules = read_udev_rules('A=="1", \\\n  # note\n  B=="2"\n;C=="3"\nD=="x\\\ny"\nE=="5", \\')
    assert [(sorted(parts), line) for parts, line in rules.rules] == [
        ([("A", "==", "1"), ("B", "==", "2")], 1), ([("D", "==", "xy")], 5)]


def test_the_lldpd_reader_runs_the_commands_lldpcli_runs() -> None:
    """lldpcli -c: '#' starts a comment anywhere outside quotes, quotes group and are dropped, a backslash escapes
    one character; a line with a trailing backslash or an open quote is not run, nor a last line without its
    newline."""
    conf = read_lldpd_conf('configure system interface pattern "ens1np0,ens2np0" # both rails\n'
                           'configure lldp portidsubtype ifname \\\n'
                           'configure system interface pattern "ens9\n'
                           'configure system interface pattern ens7')
    assert (conf.pattern, conf.pattern_line, conf.port_id) == ("ens1np0,ens2np0", 1, None)
    assert read_lldpd_conf("configure system interface pattern e\\#1\n").pattern == "e#1"
    assert read_lldpd_conf("configure system interface pattern ''\n").pattern == ""
