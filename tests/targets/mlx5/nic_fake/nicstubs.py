"""Stub mlnx_qos, ethtool, dcb and mlxconfig for the fake mlx5 host (see nicfake.py).

Kept to json/os/sys so a call costs little more than the interpreter's start:
the scripts under test make hundreds of calls. State lives in JSON files in the
directory named by ``$NICFAKE_STATE``; every call is appended to
``calls.jsonl`` there with ``writes`` (the call asked for a change) and its
exit status. Output formats follow the real tools (mlnx-tools
``python/mlnx_qos`` ``pretty_print``, iproute2 ``dcb/``, MFT ``mlxconfig -e q``);
the mlx5 kernel rules that matter are applied (PFC delay is the cable length,
honoured below 1000 m; a PFC mask change flaps the link; ETS shares sum to 100;
DCBX needs the host bit and refuses lld-managed).
"""

from __future__ import annotations

import json
import os
import sys
from typing import ClassVar

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs an import at every stub call
    from typing import Any

STATE_ENV = "NICFAKE_STATE"


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)

# DCBX capability bits (include/uapi/linux/dcbnl.h).
DCBX_HOST, DCBX_LLD_MANAGED, DCBX_CEE, DCBX_IEEE, DCBX_STATIC = 0x1, 0x2, 0x4, 0x8, 0x10
DCBX_NAMES = ((DCBX_HOST, "host"), (DCBX_LLD_MANAGED, "lld-managed"), (DCBX_CEE, "cee"),
              (DCBX_IEEE, "ieee"), (DCBX_STATIC, "static"))

# mlxconfig: enum display (NAME(n)) per parameter without the port suffix, and defaults.
NV_ENUMS: dict[str, dict[str, int]] = {
    "ROCE_CC_ALGORITHM": {"ECN": 0, "QCN": 1},
    "LLDP_NB_RX_MODE": {"OFF": 0, "MANDATORY": 1, "ALL": 2},
    "LLDP_NB_TX_MODE": {"OFF": 0, "MANDATORY": 1, "ALL": 2},
    "CNP_DSCP_MODE": {"DEVICE_DEFAULT": 0, "FIXED_VALUE": 1, "RX_PACKET": 2},
    "QOS_TRUST_STATE": {"TRUST_PORT": 0, "TRUST_PCP": 1, "TRUST_DSCP": 2, "TRUST_DSCP_PCP": 3},
    "LINK_TYPE": {"IB": 1, "ETH": 2, "VPI": 3},
}
NV_BOOLS = {"LLDP_NB_DCBX", "DCBX_WILLING", "DCBX_IEEE", "DCBX_CEE", "CLAMP_TGT_RATE",
            "CLAMP_TGT_RATE_AFTER_TIME_INC", "CNP_RES_PRIO_MODE"}
NV_DEFAULTS = {
    "ROCE_CC_PRIO_MASK": 255, "ROCE_CC_ALGORITHM": 0, "CNP_DSCP": 48, "CNP_802P_PRIO": 6,
    "LLDP_NB_RX_MODE": 0, "LLDP_NB_TX_MODE": 0, "LLDP_NB_DCBX": 0, "DCBX_WILLING": 1, "DCBX_IEEE": 1,
    "DCBX_CEE": 1, "RPG_TIME_RESET": 300, "RPG_AI_RATE": 5, "RPG_HAI_RATE": 50, "MIN_TIME_BETWEEN_CNPS": 4,
    "DCE_TCP_G": 1019, "RPG_GD": 11, "RPG_MIN_DEC_FAC": 50, "RPG_BYTE_RESET": 32767,
}




class StubError(Exception):
    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def stub_main(tool: str, argv: list[str]) -> int:
    state_dir = os.environ[STATE_ENV]
    writes = False
    try:
        handler = {"mlnx_qos": _mlnx_qos, "ethtool": _ethtool, "dcb": _dcb, "mlxconfig": _mlxconfig}[tool]
        writes, text = handler(state_dir, argv)
        sys.stdout.write(text)
        code = 0
    except StubError as e:
        print(e, file=sys.stderr if tool != "mlnx_qos" else sys.stdout)
        code = e.code
    with open(os.path.join(state_dir, "calls.jsonl"), "a") as log:
        log.write(json.dumps({"tool": tool, "argv": argv, "writes": writes, "rc": code}) + "\n")
    return code


def _load_nic(state_dir: str, netdev: str) -> tuple[str, dict[str, Any]]:
    path = os.path.join(state_dir, f"nic-{netdev}.json")
    if not os.path.exists(path):
        raise StubError(f"Cannot find device \"{netdev}\"")
    return path, json.loads(_read(path))


def _store(path: str, data: dict[str, Any]) -> None:
    _write(path, json.dumps(data, indent=1, sort_keys=True))


def _set_pfc(nic: dict[str, Any], pfc_en: int | None = None, delay: int | None = None) -> None:
    """mlx5e_dcbnl_ieee_setpfc: delay is the cable length, honoured only for 0 < delay < 1000;
    a change of the enable mask toggles the link."""
    if delay is not None and 0 < delay < 1000:
        nic["delay"] = delay
    if pfc_en is not None and pfc_en != nic["pfc_en"]:
        nic["pfc_en"] = pfc_en
        nic["link_flaps"] += 1


def _set_ets(nic: dict[str, Any], prio_tc: list[int], tsa: list[str], bw: list[int]) -> None:
    """mlx5e_dbcnl_validate_ets: the ETS classes' shares sum to 100."""
    ets = [b for t, b in zip(tsa, bw, strict=True) if t == "ets"]
    if ets and sum(ets) != 100:
        raise StubError("Failed to validate ETS: BW sum is illegal (Invalid argument)")
    nic["prio_tc"], nic["tsa"], nic["bw"] = prio_tc, tsa, bw


# ---- mlnx_qos ----------------------------------------------------------------------

class _MlnxQosOptions:
    """The mlnx_qos options fabgen's script uses (optparse semantics: last one wins,
    --dscp2prio repeatable); anything else is rejected like optparse does."""

    FLAGS: ClassVar[dict[str, str]] = {"-i": "intf", "--interface": "intf", "-f": "pfc", "--pfc": "pfc", "-p": "prio_tc",
             "--prio_tc": "prio_tc", "-s": "tsa", "--tsa": "tsa", "-t": "tcbw", "--tcbw": "tcbw",
             "-d": "dcbx", "--dcbx": "dcbx", "--trust": "trust", "--dscp2prio": "dscp2prio",
             "--cable_len": "cable_len"}

    def __init__(self, argv: list[str]) -> None:
        self.intf = self.pfc = self.prio_tc = self.tsa = self.tcbw = None
        self.dcbx = self.trust = self.cable_len = None
        self.dscp2prio: list[str] | None = None
        self.printall = False
        i = 0
        while i < len(argv):
            arg = argv[i]
            if arg == "-a":
                self.printall = True
                i += 1
                continue
            name, eq, value = arg.partition("=")
            dest = self.FLAGS.get(name if name.startswith("--") else arg)
            if dest is None:
                raise StubError(f"Usage: mlnx_qos -i <interface> [options]\n\nmlnx_qos: error: no such option: {arg}", 2)
            if not eq or not name.startswith("--"):
                if i + 1 >= len(argv):
                    raise StubError(f"mlnx_qos: error: {arg} option requires an argument", 2)
                value = argv[i + 1]
                i += 1
            i += 1
            if dest == "dscp2prio":
                self.dscp2prio = [*(self.dscp2prio or []), value]
            else:
                setattr(self, dest, value)

    @property
    def writes(self) -> bool:
        return any(v is not None for v in (self.pfc, self.prio_tc, self.tsa, self.tcbw, self.dcbx, self.trust,
                                            self.dscp2prio, self.cable_len))

def _mlnx_qos(state_dir: str, argv: list[str]) -> tuple[bool, str]:
    opts = _MlnxQosOptions(argv)
    if opts.intf is None:
        raise StubError("Interface name is required")
    path, nic = _load_nic(state_dir, opts.intf)
    writes = opts.writes

    def csv(text: str, lo: int, hi: int, what: str) -> list[int]:
        items = [int(x) for x in text.split(",")]
        if len(items) != 8 or any(not lo <= x <= hi for x in items):
            raise StubError(f"Bad value for {what}")
        return items

    if opts.dcbx is not None:
        if opts.dcbx == "os":
            nic["dcbx"] |= DCBX_HOST
        elif opts.dcbx == "fw":
            nic["dcbx"] = DCBX_CEE | DCBX_IEEE
        elif opts.dcbx != "get":
            raise StubError("Invalid dcbx mode command. Refer to the help.")
    if opts.cable_len is not None:
        _set_pfc(nic, delay=int(opts.cable_len))
    if opts.pfc is not None:
        bits = csv(opts.pfc, 0, 1, "PFC")
        _set_pfc(nic, pfc_en=sum(b << i for i, b in enumerate(bits)))
    if opts.dscp2prio and opts.trust:
        raise StubError("trust and dscp2prio commands cannot be used at the same time.")
    for item in opts.dscp2prio or ():
        action, dscp, prio = item.split(",")
        if action != "set" or not 0 <= int(dscp) <= 63 or not 0 <= int(prio) <= 7:
            raise StubError("Invalid dscp2prio command. Refer to the help.")
        nic["apps"][str(int(dscp))] = int(prio)  # mlx5 setapp replaces the DSCP's old entry
    if opts.trust is not None:
        if opts.trust == "dscp" and not nic["apps"]:
            nic["apps"] = {str(d): d >> 3 for d in range(64)}  # setDefaultAppEntry
        elif opts.trust == "pcp":
            nic["apps"] = {}
        elif opts.trust not in ("dscp", "pcp"):
            raise StubError("Invalid trust state command. Refer to the help.")
    if opts.tsa or opts.tcbw or opts.prio_tc:
        tsa = list(nic["tsa"])
        if opts.tsa:
            tsa = opts.tsa.split(",")
            if len(tsa) != 8 or any(t not in ("strict", "ets", "vendor") for t in tsa):
                raise StubError("Bad TSA value")
        bw = csv(opts.tcbw, 0, 100, "ETS BW") if opts.tcbw is not None else list(nic["bw"])
        for t, b in zip(tsa, bw, strict=True):
            if t != "ets" and b != 0 and opts.tcbw is not None:
                raise StubError("ETS BW for a strict/vendor TC must be 0")
        prio_tc = csv(opts.prio_tc, 0, 7, "UP => TC mapping") if opts.prio_tc else list(nic["prio_tc"])
        _set_ets(nic, prio_tc, tsa, bw)
    _store(path, nic)
    return writes, _mlnx_qos_print(nic, opts.printall)


def _mlnx_qos_print(nic: dict[str, Any], printall: bool) -> str:
    """pretty_print() of mlnx-tools' mlnx_qos, for the dcbnl (no qos/ sysfs) case."""
    out = ["DCBX mode: OS controlled" if nic["dcbx"] & DCBX_HOST else "DCBX mode: Firmware controlled"]
    trust = "dscp" if nic["apps"] else "pcp"
    out.append(f"Priority trust state: {trust}")
    if trust == "dscp":
        out.append("dscp2prio mapping:")
        per_prio = ["" for _ in range(8)]
        for dscp, prio in sorted(nic["apps"].items(), key=lambda kv: int(kv[0])):
            per_prio[prio] += f"{int(dscp):02d},"
        for i, s in enumerate(per_prio):
            pad = f"\tprio:{i} dscp:"
            lines = []
            while len(s) > 24:
                lines.append(pad + s[:24])
                s = s[24:]
            if s:
                lines.append(pad + s)
            out.extend(lines)
    out.append("Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016")
    out.append(f"Cable len: {nic['delay']}")
    out.append("PFC configuration:")
    out.append("\tpriority    0   1   2   3   4   5   6   7")
    out.append("\tenabled     " + "".join(f"{(nic['pfc_en'] >> up) & 1}   " for up in range(8)))
    out.append("\tbuffer      " + "".join(f"{(nic['pfc_en'] >> up) & 1}   " for up in range(8)))
    tc2up: dict[int, list[int]] = {i: [] for i in range(8)} if printall else {}
    for up, tc in enumerate(nic["prio_tc"]):
        tc2up.setdefault(tc, []).append(up)
    for tc in sorted(tc2up):
        tsa = nic["tsa"][tc]
        desc = f"ets, bw: {nic['bw'][tc]}%" if tsa == "ets" else tsa
        out.append(f"tc: {tc} ratelimit: unlimited, tsa: {desc}")
        out.extend(f"\t priority:  {up}" for up in tc2up[tc])
    return "\n".join(out) + "\n"


# ---- ethtool ---------------------------------------------------------------------------
def _ethtool(state_dir: str, argv: list[str]) -> tuple[bool, str]:
    if len(argv) == 2 and argv[0] == "-a":
        _, nic = _load_nic(state_dir, argv[1])
        p = nic["pause"]
        return False, (f"Pause parameters for {argv[1]}:\nAutonegotiate:\t{p['autoneg']}\n"
                       f"RX:\t\t{p['rx']}\nTX:\t\t{p['tx']}\n\n")
    if len(argv) >= 2 and argv[0] == "-A":
        path, nic = _load_nic(state_dir, argv[1])
        words = argv[2:]
        if len(words) % 2 or not words:
            raise StubError("ethtool: bad command line argument(s)")
        for key, value in zip(words[::2], words[1::2], strict=True):
            if key not in ("autoneg", "rx", "tx") or value not in ("on", "off"):
                raise StubError("ethtool: bad command line argument(s)")
            if key == "autoneg" and value == "on":
                raise StubError("netlink error: Invalid argument")  # mlx5 has no pause autoneg
            nic["pause"][key] = value
        _store(path, nic)
        return True, ""
    raise StubError(f"ethtool stub: unsupported arguments {argv}")


# ---- iproute2 dcb --------------------------------------------------------------------
def _dcb(state_dir: str, argv: list[str]) -> tuple[bool, str]:
    numeric = False
    while argv and argv[0].startswith("-"):
        if argv[0] in ("-N", "--Numeric"):
            numeric = True
        else:
            raise StubError(f"dcb stub: unsupported option {argv[0]}")
        argv = argv[1:]
    if len(argv) < 4 or argv[2] != "dev":
        raise StubError(f"dcb stub: unsupported arguments {argv}")
    obj, cmd, netdev, rest = argv[0], argv[1], argv[3], argv[4:]
    path, nic = _load_nic(state_dir, netdev)
    writes = cmd in ("set", "add", "del", "replace", "flush")
    handler = {"dcbx": _dcb_dcbx, "app": _dcb_app, "pfc": _dcb_pfc, "ets": _dcb_ets}.get(obj)
    if handler is None:
        raise StubError(f"Object \"{obj}\" is unknown")
    text = handler(nic, cmd, rest, numeric)
    _store(path, nic)
    return writes, text


def _mappings(words: list[str], keys: set[str]) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    current = None
    for w in words:
        if w in keys:
            current = w
            out.setdefault(w, [])
        elif current is not None and ":" in w:
            k, v = w.split(":", 1)
            out[current].append((k, v))
        else:
            raise StubError(f"What is \"{w}\"?")
    return out


def _dcb_dcbx(nic: dict[str, Any], cmd: str, rest: list[str], numeric: bool) -> str:
    if cmd == "show":
        return " ".join(name for bit, name in DCBX_NAMES if nic["dcbx"] & bit) + " \n"
    if cmd == "set":
        mode = 0
        for w in rest:
            bit = dict((n, b) for b, n in DCBX_NAMES).get(w)
            if bit is None:
                raise StubError(f"What is \"{w}\"?")
            mode |= bit
        if mode & DCBX_LLD_MANAGED or not mode & DCBX_HOST:  # mlx5e_dcbnl_setdcbx
            raise StubError("Error when attempting to set DCBX: Invalid argument")
        nic["dcbx"] = mode
        return ""
    raise StubError(f"What is \"{cmd}\"?")


def _dcb_app(nic: dict[str, Any], cmd: str, rest: list[str], numeric: bool) -> str:
    if cmd == "show":
        if rest != ["dscp-prio"] or not numeric:
            raise StubError("dcb stub: use -N app show dev IF dscp-prio")
        apps = sorted(((int(d), p) for d, p in nic["apps"].items()))
        return ("dscp-prio " + " ".join(f"{d}:{p}" for d, p in apps) + " \n") if apps else ""
    if cmd == "flush":
        if rest != ["dscp-prio"]:
            raise StubError("dcb stub: flush only dscp-prio")
        nic["apps"] = {}
        return ""
    if cmd in ("add", "replace", "del"):
        for dscp, prio in _mappings(rest, {"dscp-prio"}).get("dscp-prio", []):
            if not 0 <= int(dscp) <= 63 or not 0 <= int(prio) <= 7:
                raise StubError("In DSCP:PRIO mapping, out of range")
            if cmd == "del":
                if nic["apps"].get(str(int(dscp))) == int(prio):
                    del nic["apps"][str(int(dscp))]
            else:
                nic["apps"][str(int(dscp))] = int(prio)
        return ""
    raise StubError(f"What is \"{cmd}\"?")


def _dcb_pfc(nic: dict[str, Any], cmd: str, rest: list[str], numeric: bool) -> str:
    if cmd == "show":
        lines = []
        for what in rest:
            if what == "prio-pfc":
                lines.append("prio-pfc " + " ".join(
                    f"{i}:{'on' if nic['pfc_en'] >> i & 1 else 'off'}" for i in range(8)) + " ")
            elif what == "delay":
                lines.append(f"delay {nic['delay']} ")
            else:
                raise StubError(f"What is \"{what}\"?")
        return "\n".join(lines) + "\n"
    if cmd == "set":
        pfc_en, delay, i = nic["pfc_en"], None, 0
        while i < len(rest):
            if rest[i] == "delay":
                delay = int(rest[i + 1])
                i += 2
            elif rest[i] == "prio-pfc":
                i += 1
                while i < len(rest) and ":" in rest[i]:
                    prio, onoff = rest[i].split(":")
                    pfc_en = pfc_en | (1 << int(prio)) if onoff == "on" else pfc_en & ~(1 << int(prio))
                    i += 1
            else:
                raise StubError(f"What is \"{rest[i]}\"?")
        _set_pfc(nic, pfc_en=pfc_en, delay=delay)
        return ""
    raise StubError(f"What is \"{cmd}\"?")


def _dcb_ets(nic: dict[str, Any], cmd: str, rest: list[str], numeric: bool) -> str:
    keys = {"prio-tc": "prio_tc", "tc-tsa": "tsa", "tc-bw": "bw"}
    if cmd == "show":
        lines = []
        for what in rest:
            if what not in keys:
                raise StubError(f"What is \"{what}\"?")
            lines.append(what + " " + " ".join(f"{i}:{v}" for i, v in enumerate(nic[keys[what]])) + " ")
        return "\n".join(lines) + "\n"
    if cmd == "set":
        new = {k: list(nic[v]) for k, v in keys.items()}
        for key, pairs in _mappings(rest, set(keys)).items():
            for k, v in pairs:
                new[key][int(k)] = v if key == "tc-tsa" else int(v)
        _set_ets(nic, new["prio-tc"], new["tc-tsa"], new["tc-bw"])
        return ""
    raise StubError(f"What is \"{cmd}\"?")


# ---- mlxconfig -------------------------------------------------------------------------
def _nv_show(name: str, value: int) -> str:
    base = name.rsplit("_P", 1)[0]
    if base in NV_ENUMS:
        label = {v: k for k, v in NV_ENUMS[base].items()}.get(value, "?")
        return f"{label}({value})"
    if base in NV_BOOLS:
        return f"{'True' if value else 'False'}({value})"
    return str(value)


def _nv_parse(name: str, text: str) -> int:
    base = name.rsplit("_P", 1)[0]
    if base in NV_ENUMS and text in NV_ENUMS[base]:
        return NV_ENUMS[base][text]
    if base in NV_BOOLS and text in ("True", "False"):
        return int(text == "True")
    try:
        return int(text, 0)
    except ValueError:
        raise StubError(f"-E- Bad value {text!r} for {name}") from None


def _mlxconfig(state_dir: str, argv: list[str]) -> tuple[bool, str]:
    device, yes, verbose, i = None, False, False, 0
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i] == "-d":
            device = argv[i + 1]
            i += 2
            continue
        if argv[i] == "-y":
            yes = True
        elif argv[i] == "-e":
            verbose = True
        else:
            raise StubError(f"-E- Unknown flag {argv[i]}")
        i += 1
    if device is None or i >= len(argv):
        raise StubError("-E- missing device or command")
    path = os.path.join(state_dir, f"nv-{device}.json")
    if not os.path.exists(path):
        raise StubError(f"-E- Failed to open device: {device}")
    nv = json.loads(_read(path))
    command, params = argv[i], argv[i + 1:]
    for p in params:
        name = p.split("=", 1)[0]
        if name not in nv:
            raise StubError(f"-E- The Device doesn't support {name} parameter")
    if command in ("q", "query"):
        # mlxcfg_ui.cpp: Default/Current columns only with -e and only where the firmware
        # reports them (nvcaps-PCI.json may say it does not); "*", then "RO" or two spaces.
        caps_path = os.path.join(state_dir, f"nvcaps-{device}.json")
        caps = json.loads(_read(caps_path)) if os.path.exists(caps_path) else {"default": True, "current": True}
        show = [c for c in ("default", "current") if verbose and caps[c]] + ["next"]
        names = params or sorted(nv)
        header = "".join(f"{c.capitalize():<20} " for c in show[:-1]) + "Next Boot"
        lines = ["", "Device #1:", "----------", "", "Device type:        ConnectX7",
                 "Name:               MCX75310AAS-NEAT_Ax",
                 "Description:        NVIDIA ConnectX-7 HHHL adapter card; 400GbE / NDR IB; Single-port OSFP",
                 f"Device:             {device}", "", f"Configurations:{'':<41}{header}"]
        for name in names:
            e = nv[name]
            star = "*" if any(e[c] != e["next"] for c in show) else " "
            ro = "RO" if e.get("ro") else "  "
            lines.append(f"{star}{ro}     {name:<48}" + " ".join(f"{_nv_show(name, e[c]):<20}" for c in show))
        lines.append("The '*' shows parameters with next value different from default/current value.")
        return False, "\n".join(lines) + "\n"
    if command == "set":
        if not yes:
            raise StubError("Apply new Configuration? (y/n) [n] : N\nAborted!")
        for p in params:
            name, _, value = p.partition("=")
            if nv[name].get("ro"):
                raise StubError(f"-E- {name} is read only")
            nv[name]["next"] = _nv_parse(name, value)
        _write(path, json.dumps(nv, indent=1, sort_keys=True))
        return True, "Applying... Done!\n-I- Please reboot machine to load new configurations.\n"
    raise StubError(f"-E- Unknown command {command}")
