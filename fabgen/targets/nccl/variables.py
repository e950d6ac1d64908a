"""Catalog of the NCCL environment variables fabgen knows, and checks of their values.

Why this exists: NCCL reads almost every variable leniently. Integers go through
``strtoll(s, NULL, 0)`` (so ``0106`` is octal 70 and ``22s`` is 22), unknown level
names are silently ignored, a misspelt variable name is never reported, and a
``NCCL_IB_HCA`` entry with an empty port can match no device at all. A cluster then
runs slowly or hangs instead of failing. :func:`check_nccl_var` turns each of those
silent outcomes into a message before a file reaches a host.

Sources: NCCL 2.30.7 (``NVIDIA/nccl`` ``5067397c``), its ``docs/userguide/source/env.rst``
and the research notes ``shared/reference/nccl.md`` §3. ``since`` is the first NCCL
version that reads a variable (the docs' "since" note where it has one, else the first
release tag whose source names it); ``None`` means "every NCCL 2.x fabgen targets".
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

Kind = Literal["int", "bool01", "enum", "list", "path", "string", "cidr"]
Severity = Literal["error", "warning"]
Version = tuple[int, ...]

MAX_VALUE_BYTES = 1023
"""NCCL copies a conf-file value into ``char envValue[1024]`` (misc/param.cc)."""


@dataclass(frozen=True, slots=True)
class VarIssue:
    """One finding about a variable's name or value; ``hint`` says how to fix it."""

    severity: Severity
    message: str
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class VarSpec:
    """What NCCL accepts for one variable.

    ``values`` lists the enum names or list tokens; ``case_sensitive`` says how NCCL
    compares them. ``min``/``max`` bound integers (after NCCL's own parsing);
    ``recommended`` is a narrower band outside which fabgen warns.
    """

    name: str
    kind: Kind
    doc: str
    default: str | None = None
    min: int | None = None
    max: int | None = None
    values: tuple[str, ...] = ()
    case_sensitive: bool = True
    since: Version | None = None
    removed_in: Version | None = None
    deprecated_in: Version | None = None
    replaced_by: str | None = None
    recommended: tuple[int, int] | None = None
    value_since: Mapping[str, Version] = field(default_factory=dict)


def parse_version(text: str) -> Version:
    """``"2.21.5"`` -> ``(2, 21, 5)``; also takes ``v2.21.5-1`` and ``2.21``.

    Raises ValueError for anything else: a version string is spec data that the
    spec models have already validated, so a bad one here is a caller's bug.
    """
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+][0-9A-Za-z.+-]*)?", text.strip())
    if not match:
        raise ValueError(f"not an NCCL version: {text!r} (expected e.g. 2.21.5)")
    return tuple(int(part) for part in match.groups() if part is not None)


def _v(text: str) -> Version:
    return parse_version(text)


def _cmp_key(version: Version) -> Version:
    """Pad to three parts so ``(2, 21)`` compares equal to ``(2, 21, 0)``."""
    return tuple(version) + (0,) * (3 - len(version))


def _older(version: Version, than: Version) -> bool:
    return _cmp_key(version) < _cmp_key(than)


def _show(version: Version) -> str:
    return ".".join(str(part) for part in version)


# --------------------------------------------------------------------------- catalog

GDR_LEVELS = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")
"""``topoPathTypeStr`` up to PATH_SYS (graph/topo.cc); compared with ``strcmp``."""
_GDR_LEVEL_SINCE = {"NVB": _v("2.8.3"), "PXN": _v("2.12.7"), "C2C": _v("2.26.2"), "P2C": _v("2.27.3")}
_LEGACY_LEVELS = ("LOC", "PIX", "PXB", "PHB", "SYS", "SYS")
"""``levelsOldToNew``: a value starting with a digit is an old numeric level (paths.cc)."""

ALGOS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
PROTOS = ("LL", "LL128", "Simple")
COLL_FUNCS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")
DEBUG_SUBSYS = (
    "INIT", "COLL", "P2P", "SHM", "NET", "GRAPH", "TUNING", "ENV", "ALLOC", "ALLOC_HOST",
    "CALL", "PROXY", "NVLS", "BOOTSTRAP", "REG", "PROFILE", "RAS", "DESTROY", "ALL",
)  # fmt: skip
_ALGO_SINCE = {"CollNetDirect": _v("2.14"), "CollNetChain": _v("2.14"), "NVLS": _v("2.17"),
               "NVLSTree": _v("2.18"), "PAT": _v("2.23")}

MAX_IB_DEVS = 32
"""``MAX_IB_DEVS`` (net_ib/common.h): NCCL_IB_HCA entries beyond this are dropped."""
MAX_IFS = 16
"""``MAX_IFS`` (include/socket.h): NCCL_SOCKET_IFNAME entries beyond this are dropped."""
IF_PREFIX_MAX = 63
"""``struct netIf.prefix[64]``: longer entry names are cut by ``snprintf``."""
RAIL_FIELDS_SINCE = _v("2.30.7")
"""``name:port:rail:plane`` parsing (misc/utils.cc ``parseStringList``) arrived in 2.30.7."""
GID_AUTO_SINCE = _v("2.21")
FIFO_TC_SENTINEL_SINCE = _v("2.24")
"""NCCL_IB_FIFO_TC's "unset" is -1 from 2.24 (``fifoTc && ncclParamIbFifoTc() != -1``); in 2.22.3 and 2.23 it is
0 and any non-zero value, -1 included, is written as the FIFO QP's traffic class (net_ib.cc at v2.23.4-1)."""


def _spec(name: str, kind: Kind, doc: str, **kw: object) -> VarSpec:
    for key in ("since", "removed_in", "deprecated_in"):
        if isinstance(kw.get(key), str):
            kw[key] = _v(kw[key])  # type: ignore[arg-type]
    return VarSpec(name, kind, doc, **kw)  # type: ignore[arg-type]


def _bool(name: str, doc: str, default: str, **kw: object) -> VarSpec:
    return _spec(name, "bool01", doc, default=default, min=0, max=1, **kw)


_CATALOG: tuple[VarSpec, ...] = (
    # --- conf files, plugins, caching (nccl.md §3.1)
    _spec("NCCL_CONF_FILE", "path", "Conf file read instead of ~/.nccl.conf; must be a real env var, no ~ expansion.",
          since="2.23"),
    _spec("NCCL_ENV_PLUGIN", "string", "Environment plugin that answers NCCL's getenv calls.", since="2.28"),
    _spec("NCCL_NO_CACHE", "list", "Comma list of NCCL_* names (or ALL) re-read on every use instead of cached.",
          since="2.29.7"),
    # --- interface lists (§3.2)
    _spec("NCCL_IB_HCA", "list", "RDMA devices/ports to use: [^][=]name[:port[:rail[:plane]]],...",
          default="all active ports"),
    _spec("NCCL_SOCKET_IFNAME", "list", "IP interfaces for bootstrap, socket transport and the IB OOB socket.",
          default="auto (ib*, COMM_ID subnet, ^docker,lo,virbr, ...)"),
    _spec("NCCL_OOB_NET_IFNAME", "list", "Interfaces the out-of-band network may use.", since="2.23"),
    _bool("NCCL_OOB_NET_ENABLE", "Use the NCCL network for out-of-band bootstrap traffic.", "0", since="2.23"),
    _bool("NCCL_IB_DEVICE_PCI_ORDER", "Sort IB devices by PCI path instead of verbs order.", "1", since="2.29.7"),
    _spec("NCCL_COMM_ID", "string", "ip:port of the bootstrap root (also a hint for interface selection)."),
    # --- RoCE / IB transport (§3.3)
    _bool("NCCL_IB_DISABLE", "1 turns the IB/RoCE transport off (falls back to sockets).", "0"),
    _spec("NCCL_IB_GID_INDEX", "int", "RoCE GID index; -1 = auto-select (2.21+). Docs: do not set on >= 2.21.",
          default="-1 (0 before 2.21)", min=-1, max=255),
    _spec("NCCL_IB_ROUTABLE_FLID_GID_INDEX", "int", "GID index used on IB ports whose GID carries a FLID.",
          default="1", min=0, max=255, since="2.22.3"),
    _spec("NCCL_IB_ROCE_VERSION_NUM", "int", "RoCE version wanted by GID auto-selection.", default="2",
          min=1, max=2, since="2.21"),
    _spec("NCCL_IB_ADDR_FAMILY", "enum", "Address family wanted by GID auto-selection; anything else = AF_INET.",
          default="AF_INET", values=("AF_INET", "AF_INET6"), since="2.21"),
    _spec("NCCL_IB_ADDR_RANGE", "cidr", "Only GIDs inside this a.b.c.d/n (or IPv6 /n) range are auto-selected.",
          since="2.21"),
    _spec("NCCL_IB_TC", "int", "IP TOS / GRH traffic class of data QPs = DSCP<<2 | ECN.", default="0 (source: -1)",
          min=0, max=255),
    _spec("NCCL_IB_FIFO_TC", "int", "Traffic class of the receiver's CTS/FIFO QP; -1 = same as NCCL_IB_TC "
          "(from 2.24; 0 in 2.22.3-2.23).", default="-1 (0 before 2.24)", min=-1, max=255, since="2.22.3"),
    _spec("NCCL_GIN_IB_TC", "int", "Traffic class of GIN/GDAKI (GPU-initiated) QPs; -1 = NCCL_IB_TC.",
          default="-1", min=-1, max=255, since="2.30.7"),
    _spec("NCCL_IB_SL", "int", "IB service level; on RoCE its 3 low bits become the VLAN PCP.", default="0",
          min=0, max=15),
    _spec("NCCL_IB_TIMEOUT", "int", "Local ACK timeout 4.096us * 2^t; 0 or >= 32 means infinite.",
          default="20 (18 in 2.14-2.22, 14 before)", min=0, max=31, recommended=(14, 22)),
    _spec("NCCL_IB_RETRY_CNT", "int", "QP retry count.", default="7", min=0, max=7),
    _spec("NCCL_IB_QPS_PER_CONNECTION", "int", "QPs per connection (times merged devices).", default="1",
          min=1, max=128, since="2.10"),
    _bool("NCCL_IB_SPLIT_DATA_ON_QPS", "1 splits each message over all QPs; 0 round-robins.",
          "0 (1 in 2.18-2.19)", since="2.18"),
    _bool("NCCL_IB_ADAPTIVE_ROUTING", "Adaptive-routing-capable transfers.", "1 on IB, 0 on RoCE", since="2.16"),
    _spec("NCCL_IB_AR_THRESHOLD", "int", "Message size (bytes) from which AR is used.", default="8192", min=0,
          since="2.6"),
    _spec("NCCL_IB_PCI_RELAXED_ORDERING", "int", "PCIe relaxed ordering: 0 off, 1 force, 2 auto.", default="2",
          min=0, max=2, since="2.12"),
    _bool("NCCL_IB_ECE_ENABLE", "Pass enhanced connection establishment (CC/AR/SR) through.", "1", since="2.23"),
    _bool("NCCL_IB_MERGE_NICS", "Fuse the ports of dual-port NICs into one virtual NIC.", "1", since="2.20"),
    _bool("NCCL_IB_MERGE_VFS", "Treat VFs of one PF as one PCI device.", "1", since="2.18"),
    _spec("NCCL_IB_PKEY", "int", "Partition key *index* (not the P_Key itself).", default="0", min=0,
          max=65535, since="2.8.3"),
    _bool("NCCL_IB_RETURN_ASYNC_EVENTS", "Stop on fatal IB async events.", "1", since="2.23"),
    _spec("NCCL_IB_DATA_DIRECT", "int", "CX-8 data-direct devices: 0 off, 1 use mlx5_X_dma, 2 both.", default="1",
          min=0, max=2, since="2.27"),
    _bool("NCCL_IB_OOO_RQ", "Out-of-order receive queue (mlx5).", "0", since="2.30"),
    _bool("NCCL_IB_SUBNET_AWARE_ROUTING", "Pick the local NIC in the peer's IPv4 subnet (undocumented).", "0",
          since="2.30.7"),
    _spec("NCCL_IB_SUBNET_PREFIX_LEN", "int", "IPv4 prefix length used by subnet-aware routing.", default="24",
          min=1, max=32, since="2.30.7"),
    _spec("NCCL_IB_CUDA_SUPPORT", "bool01", "Forced/disabled GPU Direct RDMA; replaced by NCCL_NET_GDR_LEVEL.",
          min=0, max=1, removed_in="2.4.0", replaced_by="NCCL_NET_GDR_LEVEL"),
    _spec("NCCL_IB_GDR_LEVEL", "enum", "Old name of NCCL_NET_GDR_LEVEL.", values=GDR_LEVELS,
          removed_in="2.4.0", replaced_by="NCCL_NET_GDR_LEVEL"),
    # --- topology / paths / NIC selection (§3.4)
    _spec("NCCL_TOPO_FILE", "path", "Topology XML merged with auto-detection.", since="2.6"),
    _spec("NCCL_TOPO_DUMP_FILE", "path", "Where rank NCCL_TOPO_DUMP_FILE_RANK writes the detected topology.",
          since="2.6"),
    _spec("NCCL_TOPO_DUMP_FILE_RANK", "int", "Rank that writes NCCL_TOPO_DUMP_FILE.", default="0", min=0,
          since="2.6"),
    _spec("NCCL_GRAPH_FILE", "path", "Graph (rings/trees) XML to load instead of searching.", since="2.6"),
    _spec("NCCL_GRAPH_DUMP_FILE", "path", "Where the searched graphs are written.", since="2.6"),
    _spec("NCCL_GRAPH_DUMP_FILE_RANK", "int", "Rank that writes NCCL_GRAPH_DUMP_FILE.", default="0", min=0,
          since="2.6"),
    _spec("NCCL_NET_GDR_LEVEL", "enum", "Max GPU-NIC path for GPU Direct RDMA (case-sensitive name or legacy 0-4).",
          default="PXB (P2C with NCCL_NET_GDR_C2C=1)", values=GDR_LEVELS, since="2.4",
          value_since=_GDR_LEVEL_SINCE),
    _bool("NCCL_NET_GDR_READ", "GPU Direct RDMA for sends.", "on for sm >= 80"),
    _bool("NCCL_NET_GDR_C2C", "GPU Direct RDMA through a C2C-attached CPU NIC.", "1 (0 in 2.26)", since="2.26"),
    _spec("NCCL_P2P_LEVEL", "enum", "Max GPU-GPU path for P2P (case-sensitive name or legacy 0-4).",
          default="auto", values=GDR_LEVELS, since="2.3.4", value_since=_GDR_LEVEL_SINCE),
    _bool("NCCL_P2P_DISABLE", "1 disables P2P (same as NCCL_P2P_LEVEL=LOC).", "0"),
    _spec("NCCL_CROSS_NIC", "int", "0: same NIC/rail at both ends; 1: allow crossing; 2: prefer not to.",
          default="2", min=0, max=2, since="2.5"),
    _spec("NCCL_NETDEVS_POLICY", "enum", "NICs per GPU: AUTO, ALL or MAX:N (case-insensitive).", default="AUTO",
          values=("AUTO", "ALL", "MAX:N"), case_sensitive=False, since="2.28"),
    _spec("NCCL_NET_MERGE_LEVEL", "enum", "Max path between NICs fused into a virtual NIC.", default="PORT",
          values=("LOC", "PORT", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"), since="2.24"),
    _spec("NCCL_NET_FORCE_MERGE", "string", "NIC groups to fuse regardless of path (name,name;name,...).",
          since="2.24"),
    _spec("NCCL_NET_MERGE_POLICY", "enum", "Which NICs may be fused: ALL or RAIL (case-insensitive).",
          default="ALL", values=("ALL", "RAIL"), case_sensitive=False, since="2.30.5"),
    _bool("NCCL_IGNORE_CPU_AFFINITY", "1: use the topology's CPU affinity, not the job's mask.", "0",
          since="2.4.6"),
    _spec("NCCL_SOCKET_FAMILY", "enum", "Force IPv4 or IPv6 for sockets (exact, case-sensitive).", default="any",
          values=("AF_INET", "AF_INET6")),
    _bool("NCCL_PXN_DISABLE", "1 disables PXN (sending through a peer GPU's NIC over NVLink).", "0",
          since="2.12"),
    _spec("NCCL_P2P_PXN_LEVEL", "int", "PXN use: 0 never, 1 when needed, 2 always when possible.", default="2",
          min=0, max=2, since="2.12"),
    # --- algorithms, resources, plugins, debug (§3.5)
    _spec("NCCL_ALGO", "list", "Allowed algorithms; ^ inverts; func:list;func:list since 2.24.", default="auto",
          values=ALGOS, case_sensitive=False, since="2.5", value_since=_ALGO_SINCE),
    _spec("NCCL_PROTO", "list", "Allowed protocols LL, LL128, Simple; ^ inverts; per function since 2.24.",
          default="auto", values=PROTOS, case_sensitive=False, since="2.5"),
    _spec("NCCL_NVLS_ENABLE", "int", "NVLink SHARP: 0 off, 1 on, 2 auto.", default="2", min=0, max=2,
          since="2.17"),
    _spec("NCCL_MIN_NCHANNELS", "int", "Minimum channels.", default="auto", min=1, max=64, since="2.5",
          deprecated_in="2.17", replaced_by="NCCL_MIN_CTAS"),
    _spec("NCCL_MAX_NCHANNELS", "int", "Maximum channels.", default="auto", min=1, max=64, since="2.5",
          deprecated_in="2.17", replaced_by="NCCL_MAX_CTAS"),
    _spec("NCCL_MIN_NRINGS", "int", "Old name of NCCL_MIN_NCHANNELS.", min=1, max=64, deprecated_in="2.5",
          replaced_by="NCCL_MIN_CTAS"),
    _spec("NCCL_MAX_NRINGS", "int", "Old name of NCCL_MAX_NCHANNELS.", min=1, max=64, deprecated_in="2.5",
          replaced_by="NCCL_MAX_CTAS"),
    _spec("NCCL_MIN_CTAS", "int", "Minimum CTAs (channels) per collective.", default="auto", min=1,
          since="2.17"),
    _spec("NCCL_MAX_CTAS", "int", "Maximum CTAs (channels) per collective.", default="auto", min=1,
          since="2.17"),
    _spec("NCCL_NET", "string", "Network to use: IB, Socket or a plugin's name (case-insensitive).",
          default="auto", since="2.10"),
    _spec("NCCL_NET_PLUGIN", "string", "Net plugin: suffix, library name or none.", default="libnccl-net.so",
          since="2.11"),
    _spec("NCCL_DEBUG", "enum", "Log level (case-insensitive).", default="none",
          values=("VERSION", "WARN", "INFO", "ABORT", "TRACE"), case_sensitive=False),
    _spec("NCCL_DEBUG_SUBSYS", "list", "Subsystems to log; ^ negates.", default="INIT,BOOTSTRAP,ENV",
          values=DEBUG_SUBSYS, case_sensitive=False, since="2.3.4"),
    _spec("NCCL_DEBUG_FILE", "path", "Log file; %h = host, %p = pid.", default="stdout", since="2.2.12"),
    _spec("NCCL_BUFFSIZE", "int", "Buffer size per channel and peer, bytes.", default="4194304", min=1),
    # --- removed knobs still found in old launch scripts (env.rst)
    _spec("NCCL_SINGLE_RING_THRESHOLD", "int", "Removed tuning threshold.", min=0, since="2.1",
          removed_in="2.3", replaced_by="NCCL_ALGO"),
    _spec("NCCL_LL_THRESHOLD", "int", "Removed LL protocol threshold.", min=0, since="2.1", removed_in="2.5",
          replaced_by="NCCL_PROTO"),
    _spec("NCCL_TREE_THRESHOLD", "int", "Removed tree algorithm threshold.", min=0, since="2.4",
          removed_in="2.5", replaced_by="NCCL_ALGO"),
)

KNOWN_VARS: Mapping[str, VarSpec] = MappingProxyType({spec.name: spec for spec in _CATALOG})
"""Every variable fabgen checks, by name."""

OTHER_DOCUMENTED_VARS: frozenset[str] = frozenset(
    """NCCL_ALLOC_P2P_NET_LL_BUFFERS NCCL_CGA_CLUSTER_SIZE NCCL_CHECKS_DISABLE NCCL_CHECK_MODE
    NCCL_CHECK_POINTERS NCCL_COLLNET_ENABLE NCCL_COLLNET_NODE_THRESHOLD NCCL_COMM_BLOCKING NCCL_CTA_POLICY
    NCCL_CUMEM_ENABLE NCCL_CUMEM_HOST_ENABLE NCCL_DEBUG_TIMESTAMP_FORMAT NCCL_DEBUG_TIMESTAMP_LEVELS
    NCCL_DMABUF_ENABLE NCCL_GRAPH_MIXING_SUPPORT NCCL_GRAPH_REGISTER NCCL_GRAPH_STREAM_ORDERING
    NCCL_IGNORE_COLLNET_MISMATCH NCCL_IGNORE_NET_MISMATCH NCCL_IPC_USE_ABSTRACT_SOCKET NCCL_LAUNCH_MODE
    NCCL_LAUNCH_ORDER_IMPLICIT NCCL_LAUNCH_RACE_FATAL NCCL_LEGACY_CUDA_REGISTER NCCL_LOCAL_REGISTER
    NCCL_MEM_SYNC_DOMAIN NCCL_MNNVL_CLIQUE_ID NCCL_MNNVL_ENABLE NCCL_MNNVL_UUID NCCL_MULTI_RANK_GPU_ENABLE
    NCCL_NET_SHARED_BUFFERS NCCL_NET_SHARED_COMMS NCCL_NSOCKS_PERTHREAD NCCL_NTHREADS NCCL_NVB_DISABLE
    NCCL_P2P_DIRECT_DISABLE NCCL_P2P_LL_THRESHOLD NCCL_P2P_NET_CHUNKSIZE NCCL_PROFILER_PLUGIN NCCL_PXN_C2C
    NCCL_RAS_ADDR NCCL_RAS_ENABLE NCCL_RAS_TIMEOUT_FACTOR NCCL_RUNTIME_CONNECT NCCL_SET_STACK_SIZE
    NCCL_SET_THREAD_NAME NCCL_SHM_DISABLE NCCL_SOCKET_MAGIC NCCL_SOCKET_NTHREADS
    NCCL_SOCKET_POLL_TIMEOUT_MSEC NCCL_SOCKET_RETRY_CNT NCCL_SOCKET_RETRY_SLEEP_MSEC
    NCCL_SYM_GIN_KERNELS_ENABLE NCCL_TUNER_PLUGIN NCCL_UID_STAGGER_RATE NCCL_UID_STAGGER_THRESHOLD
    NCCL_WIN_ENABLE""".split()
)
"""Names in NCCL 2.30.7's env.rst that the catalog does not cover: real, but unchecked."""


def did_you_mean(name: str) -> str | None:
    """The closest known NCCL variable name to ``name``, or None if nothing is close."""
    candidates = [*KNOWN_VARS, *OTHER_DOCUMENTED_VARS]
    upper = name.strip().upper()
    if upper in candidates and upper != name:
        return upper
    matches = difflib.get_close_matches(upper, candidates, n=1, cutoff=0.8)
    return matches[0] if matches else None


def format_value(value: str | int | bool) -> str:
    """The text fabgen writes for a value: ``True`` -> ``1``, ints in decimal, strings as they are.

    Decimal because NCCL parses with ``strtoll(..., 0)``: any other rendering of an int
    (leading zero, ``0o``) could be read differently.
    """
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"NCCL values are str, int or bool, not {type(value).__name__}")


# --------------------------------------------------------------------------- integers

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class StrtollResult:
    """What ``strtoll(text, &end, 0)`` gives: the value, how much it consumed, overflow."""

    value: int
    consumed: int
    overflow: bool


def nccl_strtoll(text: str) -> StrtollResult:
    """Parse like C ``strtoll(text, &end, 0)``, which is how NCCL reads integer params.

    Leading whitespace and a sign are accepted, ``0x`` means hex, a leading ``0``
    means octal, parsing stops at the first character that does not fit, and nothing
    parsed gives 0 with ``consumed == 0``. Out-of-range values clamp and set overflow.
    """
    i, n = 0, len(text)
    while i < n and text[i] in " \t\n\v\f\r":
        i += 1
    sign = 1
    if i < n and text[i] in "+-":
        sign = -1 if text[i] == "-" else 1
        i += 1
    base, digits = 10, "0123456789"
    if text[i : i + 2].lower() == "0x" and i + 2 < n and text[i + 2].lower() in "0123456789abcdef":
        base, digits, i = 16, "0123456789abcdef", i + 2
    elif text[i : i + 1] == "0":
        base, digits = 8, "01234567"
    start = i
    while i < n and text[i].lower() in digits:
        i += 1
    if i == start:
        return StrtollResult(0, 0, False)
    value = sign * int(text[start:i], base)
    if value > _INT64_MAX or value < _INT64_MIN:
        return StrtollResult(_INT64_MAX if sign > 0 else _INT64_MIN, i, True)
    return StrtollResult(value, i, False)


def _parse_int(spec: VarSpec, text: str, issues: list[VarIssue]) -> int | None:
    """Read an integer value as NCCL would and report every way that differs from the text."""
    name = spec.name
    if text == "":
        issues.append(VarIssue("warning", f"{name} is empty: NCCL ignores it and uses the default "
                                          f"({spec.default or 'built-in'})", "remove the variable"))
        return None
    result = nccl_strtoll(text)
    body = text.lstrip("+-")
    if result.consumed == 0:
        issues.append(VarIssue("error", f"{name}={text!r} is not a number: NCCL reads it as 0",
                               "write a decimal integer" + (" (0 or 1)" if spec.kind == "bool01" else "")))
        return None
    if re.match(r"0[0-9]", body):
        issues.append(VarIssue(
            "error",
            f"{name}={text}: the leading 0 makes NCCL read it as octal, i.e. {result.value}",
            f"drop the leading zeros: write {int(text, 10) if body.isdigit() else result.value}"
            + (f" (or {result.value} if octal was meant)" if body.isdigit() else ""),
        ))
        return None
    if result.overflow:
        issues.append(VarIssue("error", f"{name}={text} overflows a 64-bit integer: NCCL falls back to the default",
                               None))
        return None
    if result.consumed != len(text):
        issues.append(VarIssue("error", f"{name}={text!r}: NCCL reads {result.value} and silently ignores "
                                        f"{text[result.consumed:]!r}", f"write {result.value}"))
        return None
    return result.value


def _check_range(spec: VarSpec, number: int, issues: list[VarIssue]) -> None:
    lo, hi = spec.min, spec.max
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        if spec.kind == "bool01":
            bounds = "0 or 1"
        elif lo is not None and hi is not None:
            bounds = f"{lo}..{hi}"
        else:
            bounds = f">= {lo}" if lo is not None else f"<= {hi}"
        issues.append(VarIssue("error", f"{spec.name}={number} is out of range ({bounds})"))


# --------------------------------------------------------------------------- interface lists


@dataclass(frozen=True, slots=True)
class IfEntry:
    """One entry of an NCCL interface list; -1 = field absent or empty (any)."""

    name: str
    port: int = -1
    rail: int = -1
    plane: int = -1


@dataclass(frozen=True, slots=True)
class IfList:
    """An ``NCCL_IB_HCA``/``NCCL_SOCKET_IFNAME`` value as NCCL 2.30.7 parses it."""

    exclude: bool
    exact: bool
    entries: tuple[IfEntry, ...]


def parse_if_list(text: str) -> IfList:
    """Split an interface list the way NCCL 2.30.7 does (``^`` then ``=`` prefix, ``,`` then ``:``).

    Lenient like NCCL: empty entries vanish and non-numeric fields read as ``atoi``
    would. :func:`check_nccl_var` reports what this hides.
    """
    exclude = text.startswith("^")
    rest = text[1:] if exclude else text
    exact = rest.startswith("=")
    rest = rest[1:] if exact else rest
    entries = []
    for raw in rest.split(","):
        fields = raw.split(":")
        if not fields[0]:
            continue
        nums = [_atoi(f) if f else -1 for f in fields[1:4]] + [-1] * (3 - len(fields[1:4]))
        entries.append(IfEntry(fields[0][:IF_PREFIX_MAX], *nums))
    return IfList(exclude, exact, tuple(entries))


def _atoi(text: str) -> int:
    match = re.match(r"\s*[+-]?\d+", text)
    return int(match.group()) if match else 0


def _check_if_list(spec: VarSpec, text: str, version: Version | None, issues: list[VarIssue]) -> None:
    name = spec.name
    is_ib = name == "NCCL_IB_HCA"
    if name == "NCCL_SOCKET_IFNAME" and len(text) <= 1:
        issues.append(VarIssue("warning", f"{name}={text!r} is ignored by NCCL (needs more than 1 character); "
                                          "interfaces are auto-selected",
                               "name the interface exactly, e.g. the value =eth0"))
        return
    if text.startswith("=^"):
        issues.append(VarIssue("error", f"{name}: '^' must come before '=' (NCCL reads '^...' as a device name)",
                               "write ^=name,..."))
    parsed = parse_if_list(text)
    body = text[int(parsed.exclude) + int(parsed.exact):]
    if not parsed.exact and not parsed.exclude:
        issues.append(VarIssue("warning", f"{name} uses prefix matching: 'mlx5_1' also matches mlx5_10..mlx5_19"
                               if is_ib else f"{name} uses prefix matching: 'eth1' also matches eth10, eth1.100...",
                               f"start the list with '=' for exact names ({name}=={body})"))
    limit = MAX_IB_DEVS if is_ib else MAX_IFS
    seen: set[tuple[str, str]] = set()
    count = 0
    for raw in body.split(","):
        if raw == "":
            issues.append(VarIssue("warning", f"{name} has an empty entry (stray ','); NCCL skips it"))
            continue
        fields = raw.split(":")
        dev = fields[0]
        if dev == "":
            issues.append(VarIssue("error", f"{name} entry {raw!r} has no device name; NCCL skips it"))
            continue
        count += 1
        key = (dev, ":".join(fields[1:2]))
        if key in seen:
            issues.append(VarIssue("warning", f"{name} lists {raw!r} twice"))
        seen.add(key)
        if re.search(r"[\s^=]", dev):
            issues.append(VarIssue("error", f"{name} entry {dev!r} contains whitespace, '^' or '='; "
                                            "it matches no device", "'^' and '=' only count at the start of the list; "
                                            "no spaces after commas"))
        if len(dev) > IF_PREFIX_MAX:
            issues.append(VarIssue("error", f"{name} entry {dev[:20]}... is longer than {IF_PREFIX_MAX} characters; "
                                            "NCCL truncates it"))
        if len(fields) > 1 and not is_ib:
            issues.append(VarIssue("warning", f"{name} entry {raw!r}: ports/rails mean nothing for IP interfaces; "
                                              f"NCCL only uses {dev!r}"))
            continue
        _check_if_fields(name, raw, fields[1:], version, issues)
    if count > limit:
        issues.append(VarIssue("warning", f"{name} has {count} entries; NCCL reads only the first {limit}"))


def _check_if_fields(name: str, raw: str, fields: list[str], version: Version | None,
                     issues: list[VarIssue]) -> None:
    if not fields:
        return
    new_parser = version is None or not _older(version, RAIL_FIELDS_SINCE)
    port = fields[0]
    if port == "":
        message = (f"{name} entry {raw!r} has an empty port: NCCL before {_show(RAIL_FIELDS_SINCE)} "
                   "reads it as port 0, which matches nothing")
        hint = "give the port (e.g. mlx5_0:1:0:0)"
        if version is None:
            issues.append(VarIssue("warning", message, hint))
        elif not new_parser:
            issues.append(VarIssue("error", message, hint))
    elif not port.isdigit():
        issues.append(VarIssue("error", f"{name} entry {raw!r}: port {port!r} is not a number; NCCL reads "
                                        f"{_atoi(port)} and matches no port", "ports are 1-based integers"))
    elif int(port) == 0:
        issues.append(VarIssue("error", f"{name} entry {raw!r}: port 0 matches nothing (ports start at 1)"))
    for label, text in zip(("rail", "plane"), fields[1:3], strict=False):  # either may be absent
        if text and not text.isdigit():
            issues.append(VarIssue("error", f"{name} entry {raw!r}: {label} {text!r} is not a non-negative integer"))
    if len(fields) > 1 and version is not None and _older(version, RAIL_FIELDS_SINCE):
        issues.append(VarIssue("warning", f"{name} entry {raw!r}: rail/plane fields need NCCL >= "
                                          f"{_show(RAIL_FIELDS_SINCE)}; NCCL {_show(version)} ignores them"))
    if len(fields) > 3:
        issues.append(VarIssue("warning", f"{name} entry {raw!r}: fields after name:port:rail:plane are ignored"))


# --------------------------------------------------------------------------- other kinds


def _check_enum(spec: VarSpec, text: str, version: Version | None, issues: list[VarIssue]) -> None:
    name = spec.name
    if spec.values is GDR_LEVELS:
        _check_level(spec, text, version, issues)
        return
    if name == "NCCL_NETDEVS_POLICY" and re.fullmatch(r"(?i)max:.*", text):
        if _atoi(text[4:]) <= 0 or not text[4:].isdigit():
            issues.append(VarIssue("error", f"{name}={text}: MAX:N needs a positive integer N"))
        return
    if spec.case_sensitive:
        if text in spec.values:
            return
        upper = [v for v in spec.values if v.upper() == text.upper()]
        hint = f"write {upper[0]} (NCCL compares case-sensitively)" if upper else None
    else:
        if text.upper() in (v.upper() for v in spec.values):
            return
        hint = None
    fallback = f"; NCCL falls back to {spec.default}" if spec.default else ""
    issues.append(VarIssue("error", f"{name}={text!r} is not one of {', '.join(spec.values)}{fallback}",
                           hint or f"use one of {', '.join(spec.values)}"))


def _check_level(spec: VarSpec, text: str, version: Version | None, issues: list[VarIssue]) -> None:
    name = spec.name
    if text[:1].isdigit():
        number = nccl_strtoll(text)
        level = _LEGACY_LEVELS[min(number.value, len(_LEGACY_LEVELS) - 1)]
        if re.match(r"0[0-9]", text) or number.consumed != len(text):
            issues.append(VarIssue("error", f"{name}={text!r}: NCCL reads it as legacy level {number.value} "
                                            f"= {level}", f"write the level name, e.g. {level}"))
        else:
            issues.append(VarIssue("warning", f"{name}={text} is a legacy numeric level meaning {level}",
                                   f"write {name}={level}"))
        return
    if text not in spec.values:
        upper = text.upper()
        if upper in spec.values:
            issues.append(VarIssue("error", f"{name}={text}: level names are case-sensitive; NCCL silently "
                                            "ignores this value", upper))
        else:
            issues.append(VarIssue("error", f"{name}={text!r} is not a path level; NCCL silently ignores it",
                                   f"use one of {', '.join(spec.values)}"))
        return
    since = spec.value_since.get(text)
    if since and version is not None and _older(version, since):
        issues.append(VarIssue("warning", f"{name}={text}: level {text} needs NCCL >= {_show(since)}; "
                                          f"NCCL {_show(version)} ignores it"))


def _check_token_list(spec: VarSpec, text: str, version: Version | None, issues: list[VarIssue]) -> None:
    """NCCL_ALGO / NCCL_PROTO (``[func:][^]a,b;func:...``) and NCCL_DEBUG_SUBSYS (``[^]a,b``)."""
    name = spec.name
    lowered = {v.lower(): v for v in spec.values}
    per_function = name in ("NCCL_ALGO", "NCCL_PROTO")
    parts = text.split(";") if per_function else [text]
    if per_function and (len(parts) > 1 or ":" in text) and version is not None and _older(version, _v("2.24")):
        issues.append(VarIssue("error", f"{name}: per-function 'func:list;...' syntax needs NCCL >= 2.24"))
    for index, part in enumerate(p for p in parts if p):
        elems = part
        if per_function and ":" in part:
            func, _, elems = part.partition(":")
            if func.lower() not in (f.lower() for f in COLL_FUNCS):
                issues.append(VarIssue("error", f"{name}: unknown function {func!r}; NCCL fails init",
                                       f"use one of {', '.join(COLL_FUNCS)}"))
        elif per_function and index > 0:
            issues.append(VarIssue("error", f"{name}: every ';' entry after the first needs a 'func:' prefix; "
                                            "NCCL fails init"))
        elems = elems[1:] if elems.startswith("^") else elems
        for token in (t for t in elems.split(",") if t):
            canonical = lowered.get(token.lower())
            if canonical is None:
                guess = difflib.get_close_matches(token.lower(), list(lowered), n=1)
                issues.append(VarIssue("error", f"{name}: unknown token {token!r}"
                                       + ("; NCCL >= 2.24 fails init" if per_function else "; NCCL ignores it"),
                                       f"did you mean {lowered[guess[0]]}?" if guess else
                                       f"use {', '.join(spec.values)}"))
                continue
            since = spec.value_since.get(canonical)
            if since and version is not None and _older(version, since):
                issues.append(VarIssue("warning", f"{name}: {canonical} needs NCCL >= {_show(since)}"))


def _check_no_cache(text: str, issues: list[VarIssue]) -> None:
    for token in (t for t in text.split(",") if t):
        if token != "ALL" and token not in KNOWN_VARS and token not in OTHER_DOCUMENTED_VARS:
            guess = did_you_mean(token) or did_you_mean("NCCL_" + token)
            issues.append(VarIssue("warning", f"NCCL_NO_CACHE: {token!r} is not a known NCCL variable name",
                                   f"did you mean {guess}?" if guess else "list full NCCL_* names or ALL"))


def _check_path(spec: VarSpec, text: str, issues: list[VarIssue]) -> None:
    if text.startswith("~"):
        issues.append(VarIssue("error", f"{spec.name}={text}: NCCL does not expand '~'", "write an absolute path"))
    elif not text.startswith("/"):
        issues.append(VarIssue("warning", f"{spec.name}={text} is relative to each rank's working directory",
                               "write an absolute path"))


def _check_cidr(spec: VarSpec, text: str, issues: list[VarIssue]) -> None:
    if "/" not in text:
        issues.append(VarIssue("error", f"{spec.name}={text}: no '/prefix'; NCCL ignores the range",
                               "write a.b.c.d/n"))
        return
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError as exc:
        issues.append(VarIssue("error", f"{spec.name}={text}: {exc}; NCCL ignores the range"))
        return
    if str(network) != text and network.with_prefixlen != text:
        issues.append(VarIssue("warning", f"{spec.name}={text} has host bits set; it means {network}",
                               f"write {network}"))


def _check_specific(spec: VarSpec, number: int, version: Version | None, issues: list[VarIssue]) -> None:
    """Rules beyond the range that belong to one variable."""
    name = spec.name
    if name == "NCCL_IB_TIMEOUT" and number == 0:
        issues.append(VarIssue("warning", "NCCL_IB_TIMEOUT=0 means an infinite timeout: a lost peer hangs the job",
                               "use the default 20"))
    elif spec.recommended and not spec.recommended[0] <= number <= spec.recommended[1]:
        lo_r, hi_r = spec.recommended
        issues.append(VarIssue("warning", f"{name}={number} is outside the usual {lo_r}..{hi_r}",
                               f"the default is {spec.default}"))
    elif name == "NCCL_IB_GID_INDEX":
        if version is not None and not _older(version, GID_AUTO_SINCE) and number != -1:
            issues.append(VarIssue("warning", f"NCCL_IB_GID_INDEX set on NCCL {_show(version)}: since 2.21 NCCL "
                                              "picks the RoCEv2 IPv4 GID itself and the docs say not to set it",
                                   "remove it; use NCCL_IB_ADDR_RANGE/NCCL_IB_ROCE_VERSION_NUM to steer the choice"))
        if number == -1 and version is not None and _older(version, GID_AUTO_SINCE):
            issues.append(VarIssue("error", f"NCCL_IB_GID_INDEX=-1 (auto) needs NCCL >= 2.21; "
                                            f"NCCL {_show(version)} has no GID auto-selection",
                                   "set the index of the RoCEv2 IPv4 GID (show_gids)"))
    elif name == "NCCL_IB_FIFO_TC" and number == -1 and version is not None and _older(version, FIFO_TC_SENTINEL_SINCE):
        # 2.22.3/2.23 test the value for non-zero and write it into a uint8_t: -1 becomes TOS 255.
        issues.append(VarIssue("error", f"NCCL_IB_FIFO_TC=-1 on NCCL {_show(version)}: -1 means 'same as "
                                        "NCCL_IB_TC' only from 2.24; this version sends its CTS messages with "
                                        "TOS 255 (DSCP 63, CE)", "use 0 (unset) or remove it"))
    elif name in ("NCCL_IB_TC", "NCCL_IB_FIFO_TC", "NCCL_GIN_IB_TC") and number >= 0 and number & 0b11 == 0b11:
        issues.append(VarIssue("warning", f"{name}={number}: ECN bits 11 (CE) mark every packet as congested",
                               f"use ECT(0): {number & ~0b11 | 0b10}"))


# --------------------------------------------------------------------------- entry point

_LINE_BREAKERS = {"\n": "newline", "\r": "carriage return", "\x00": "NUL", "\u2028": "U+2028 LINE SEPARATOR",
                  "\u2029": "U+2029 PARAGRAPH SEPARATOR", "\x85": "U+0085 NEXT LINE"}


def _check_text(name: str, text: str, issues: list[VarIssue]) -> bool:
    """Checks every value gets, whatever its kind; False when the value is unusable."""
    for char, label in _LINE_BREAKERS.items():
        if char in text:
            issues.append(VarIssue("error", f"{name} contains a {label}: it would break the value into a new line "
                                            "of nccl.conf / nccl.env (and inject whatever follows)"))
            return False
    control = [c for c in text if ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0]
    if control:
        issues.append(VarIssue("error", f"{name} contains control character {control[0]!r}; systemd drops such "
                                        "values and humans cannot see them"))
        return False
    if text != text.strip():
        issues.append(VarIssue("error", f"{name}={text!r} has leading or trailing whitespace; NCCL keeps it "
                                        "(so names and numbers stop matching) but nobody sees it", "strip it"))
        return False
    if len(text.encode("utf-8", "surrogatepass")) > MAX_VALUE_BYTES:
        issues.append(VarIssue("error", f"{name} is longer than {MAX_VALUE_BYTES} bytes; NCCL truncates "
                                        "conf-file values there"))
        return False
    return True


def _takes_bool(spec: VarSpec) -> bool:
    """True for 0/1 switches and small 0..2 modes, where YAML ``true``/``false`` clearly means 1/0."""
    if spec.kind == "bool01":
        return True
    return spec.kind == "int" and spec.min == 0 and spec.max is not None and spec.max <= 2


def _as_text(spec: VarSpec, value: object, issues: list[VarIssue]) -> str | None:
    """Turn a spec value into the text NCCL will see, rejecting types that do not fit the kind."""
    if isinstance(value, bool):
        if _takes_bool(spec):
            return format_value(value)
        issues.append(VarIssue("error", f"{spec.name} got a boolean ({value}); it takes {spec.kind} values",
                               "quote the value in the spec if YAML turned yes/no/on/off into a boolean"))
        return None
    if isinstance(value, int):
        if spec.kind in ("int", "bool01") or spec.values is GDR_LEVELS:
            return format_value(value)
        issues.append(VarIssue("error", f"{spec.name} got the number {value}; it takes a {spec.kind} value"))
        return None
    if isinstance(value, str):
        return value
    issues.append(VarIssue("error", f"{spec.name}: values are strings, integers or booleans, "
                                    f"not {type(value).__name__}"))
    return None


def _check_versions(spec: VarSpec, version: Version | None, issues: list[VarIssue]) -> bool:
    """Version rules; False when the variable has no effect at all (removed)."""
    name = spec.name
    if spec.removed_in and (version is None or not _older(version, spec.removed_in)):
        issues.append(VarIssue("error", f"{name} was removed in NCCL {_show(spec.removed_in)}; it has no effect",
                               f"use {spec.replaced_by}" if spec.replaced_by else "remove it"))
        return False
    if version is not None and spec.since and _older(version, spec.since):
        issues.append(VarIssue("warning", f"{name} needs NCCL >= {_show(spec.since)}; NCCL {_show(version)} "
                                          "ignores it"))
    if spec.deprecated_in and (version is None or not _older(version, spec.deprecated_in)):
        issues.append(VarIssue("warning", f"{name} is deprecated since NCCL {_show(spec.deprecated_in)}",
                               f"use {spec.replaced_by}" if spec.replaced_by else None))
    return True


def check_nccl_var(name: str, value: str | int | bool, nccl_version: str | None = None, *,
                   in_conf_file: bool = False) -> list[VarIssue]:
    """Every problem with setting ``name=value`` for NCCL ``nccl_version`` (None = unknown).

    Errors are settings NCCL would ignore, misread, or that would corrupt the files
    fabgen writes; warnings are settings that work but are probably not what was
    meant. ``in_conf_file`` adds the rules that only hold inside an nccl.conf (for
    example NCCL_CONF_FILE has no effect there).
    """
    version = parse_version(nccl_version) if nccl_version is not None else None
    issues: list[VarIssue] = []
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        issues.append(VarIssue("error", f"{name!r} is not a valid environment variable name"))
        return issues
    if not name.startswith("NCCL_"):
        guess = did_you_mean(name) if name.upper().startswith("NCCL_") else None
        issues.append(VarIssue("error", f"{name} is not an NCCL_* variable; fabgen only writes NCCL variables",
                               f"did you mean {guess}?" if guess else "set other variables outside fabgen"))
        return issues
    spec = KNOWN_VARS.get(name)
    if spec is None:
        if name in OTHER_DOCUMENTED_VARS:
            issues.append(VarIssue("warning", f"{name} is documented by NCCL but not in fabgen's catalog; "
                                              "its value is not checked"))
            if isinstance(value, (str, int)):
                _check_text(name, format_value(value), issues)
        else:
            guess = did_you_mean(name)
            issues.append(VarIssue("error", f"unknown NCCL variable {name}; NCCL ignores it silently",
                                   f"did you mean {guess}?" if guess else None))
        return issues
    text = _as_text(spec, value, issues)
    if text is None or not _check_text(name, text, issues):
        return issues
    if not _check_versions(spec, version, issues):
        return issues
    if in_conf_file and name == "NCCL_CONF_FILE":
        issues.append(VarIssue("warning", "NCCL_CONF_FILE inside a conf file has no effect: NCCL reads it from "
                                          "the process environment before any file", "set it in nccl.env instead"))
    if text == "" and spec.kind not in ("int", "bool01"):
        issues.append(VarIssue("warning", f"{name} is empty; NCCL treats that like unset or ignores it",
                               "remove the variable"))
        return issues
    _check_kind(spec, text, version, issues)
    return issues


def _check_kind(spec: VarSpec, text: str, version: Version | None, issues: list[VarIssue]) -> None:
    if spec.kind in ("int", "bool01"):
        number = _parse_int(spec, text, issues)
        if number is not None:
            _check_range(spec, number, issues)
            if not any(i.severity == "error" for i in issues):
                _check_specific(spec, number, version, issues)
    elif spec.kind == "enum":
        _check_enum(spec, text, version, issues)
    elif spec.kind == "list":
        if spec.name in ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_OOB_NET_IFNAME"):
            _check_if_list(spec, text, version, issues)
        elif spec.name == "NCCL_NO_CACHE":
            _check_no_cache(text, issues)
        else:
            _check_token_list(spec, text, version, issues)
    elif spec.kind == "path":
        _check_path(spec, text, issues)
    elif spec.kind == "cidr":
        _check_cidr(spec, text, issues)


__all__ = [
    "KNOWN_VARS",
    "OTHER_DOCUMENTED_VARS",
    "IfEntry",
    "IfList",
    "Kind",
    "StrtollResult",
    "VarIssue",
    "VarSpec",
    "check_nccl_var",
    "did_you_mean",
    "format_value",
    "nccl_strtoll",
    "parse_if_list",
    "parse_version",
]
