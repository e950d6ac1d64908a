"""What the NIC scripts of one host (and of one host profile) must establish.

The planner fills these frozen dataclasses from the spec; the mlx5 templates
(``templates/mlx5/roce-nic.conf.j2``, the plan the shared ``roce-nic.sh`` reads,
and ``nic-firmware.sh.j2``) only print them.
Every number a script writes is decided here or in the planner, never in a
template, so the linter can compare the NIC side with the switch side by
reading the same objects the scripts are made from.

The DCQCN parameter names follow the mlx5 driver. A single table,
:data:`CC_PARAMS`, ties together the three names one parameter has:

* the upstream debugfs file ``/sys/kernel/debug/mlx5/<pci>/cc_params/<name>``
  (``drivers/infiniband/hw/mlx5/cong.c``), used as the canonical key;
* the MLNX_OFED / DOCA-host sysfs file ``/sys/class/net/<if>/ecn/roce_rp|roce_np/<name>``
  (``en_sysfs.c``; absent from upstream kernels);
* the persistent firmware (NV) name for ``mlxconfig``, which takes a ``_P1``/``_P2``
  port suffix.

Facts and limits come from ``shared/reference/nic.md`` section 1b (mstflint's
``mlxconfig_host.db`` widths, the kernel's PRM layout and observed defaults).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter
from types import MappingProxyType
from typing import Literal

from fabgen.plan._fast import maker

NUM_PRIORITIES = 8
"""IEEE 802.1p priorities (and mlx5 traffic classes)."""
NUM_DSCP = 64

MLX5_AUTO_BUFFER_CABLE_M = 7
"""``MLX5E_DEFAULT_CABLE_LEN``: the cable length mlx5 holds after load. A cable length set with
``mlnx_qos --cable_len`` / ``dcb pfc delay`` becomes headroom only in the manual (software-owned)
port-buffer mode (``mlx5e_dcbnl_ieee_setpfc`` calls ``mlx5e_port_manual_buffer_config`` only
then), which fabgen does not enter, so the NIC intent carries no cable length; lint FG118 warns
when a host cable is longer than this."""

Side = Literal["rp", "np", "general"]
"""Reaction point (the sender that slows down), notification point (the receiver
that sends CNPs), or general (RTT-probe settings)."""


@dataclass(frozen=True, slots=True)
class CcParamName:
    """One DCQCN parameter under each of its names, with the range the firmware accepts.

    ``minimum``/``maximum`` are the NV (firmware TLV) limits without optional
    capabilities: values beyond them make the firmware command fail, so the
    planner should never produce them. Four rate parameters accept 32-bit
    values on devices with the ``roce_cc_ecn_32b_rate`` capability; we keep the
    portable limit.
    """

    debugfs: str
    """Upstream debugfs file name in ``cc_params/`` (``rp_time_reset``); the canonical key."""
    ofed: str | None
    """MLNX_OFED sysfs path below ``/sys/class/net/<if>/ecn/`` (``roce_rp/rpg_time_reset``);
    ``None`` when OFED has no such file."""
    mlxconfig: str | None
    """Firmware NV name without the port suffix (``RPG_TIME_RESET``); ``None`` when there is none."""
    side: Side
    unit: str
    """What the integer means (microseconds, Mb/s, bytes, ...)."""
    minimum: int
    maximum: int
    default: int | None
    """Value observed on ConnectX-5/6/7 firmware (nic.md, Q-obs); not a guarantee."""

    @property
    def ofed_side(self) -> str | None:
        """The OFED directory (``roce_rp`` / ``roce_np``) holding the file."""
        return self.ofed.split("/", 1)[0] if self.ofed else None

    @property
    def ofed_file(self) -> str | None:
        """The OFED file name inside :attr:`ofed_side` (``rpg_time_reset``)."""
        return self.ofed.split("/", 1)[1] if self.ofed else None


_U17 = 2**17 - 1
_U32 = 2**32 - 1


def _p(
    debugfs: str,
    ofed: str | None,
    nv: str | None,
    unit: str,
    lo: int,
    hi: int,
    default: int | None,
) -> CcParamName:
    side: Side = "rp" if debugfs.startswith("rp_") else "np" if debugfs.startswith("np_") else "general"
    return CcParamName(debugfs, ofed, nv, side, unit, lo, hi, default)


CC_PARAMS: Mapping[str, CcParamName] = MappingProxyType(
    {
        p.debugfs: p
        for p in (
            _p("rp_clamp_tgt_rate", "roce_rp/clamp_tgt_rate", "CLAMP_TGT_RATE",
               "bool: on a CNP the target rate becomes the current rate", 0, 1, 0),
            _p("rp_clamp_tgt_rate_ati", "roce_rp/clamp_tgt_rate_after_time_inc", "CLAMP_TGT_RATE_AFTER_TIME_INC",
               "bool: also update the target rate after a timer increase", 0, 1, 1),
            _p("rp_time_reset", "roce_rp/rpg_time_reset", "RPG_TIME_RESET",
               "microseconds between rate increases without CNPs", 0, _U17, 300),
            _p("rp_byte_reset", "roce_rp/rpg_byte_reset", "RPG_BYTE_RESET",
               "bytes sent between rate increases; 0 disables", 0, 32767, 32767),
            _p("rp_threshold", "roce_rp/rpg_threshold", "RPG_THRESHOLD",
               "byte/time stages before the reaction point advances (fast recovery)", 0, 31, 1),
            _p("rp_max_rate", "roce_rp/rpg_max_rate", "RPG_MAX_RATE",
               "Mb/s cap; 0 = port speed", 0, _U32, 0),
            _p("rp_ai_rate", "roce_rp/rpg_ai_rate", "RPG_AI_RATE",
               "Mb/s added per active increase", 0, _U17, 5),
            _p("rp_hai_rate", "roce_rp/rpg_hai_rate", "RPG_HAI_RATE",
               "Mb/s added per hyper increase", 0, _U17, 50),
            _p("rp_min_dec_fac", "roce_rp/rpg_min_dec_fac", "RPG_MIN_DEC_FAC",
               "percent: a single cut keeps at least this share of the rate (100 = never cut)", 1, 100, 50),
            _p("rp_min_rate", "roce_rp/rpg_min_rate", "RPG_MIN_RATE",
               "Mb/s floor", 0, _U17, 1),
            _p("rp_rate_to_set_on_first_cnp", "roce_rp/rate_to_set_on_first_cnp", "RATE_TO_SET_ON_FIRST_CNP",
               "Mb/s after the first CNP; 0 = line rate", 0, _U17, 0),
            _p("rp_dce_tcp_g", "roce_rp/dce_tcp_g", "DCE_TCP_G",
               "alpha EWMA gain g, fixed point /1024", 1, 1023, 1019),
            _p("rp_dce_tcp_rtt", "roce_rp/dce_tcp_rtt", "DCE_TCP_RTT",
               "microseconds between alpha updates", 1, _U17, 1),
            _p("rp_rate_reduce_monitor_period", "roce_rp/rate_reduce_monitor_period", "RATE_REDUCE_MONITOR_PERIOD",
               "microseconds, minimum time between two cuts of one flow", 1, _U17, 4),
            _p("rp_initial_alpha_value", "roce_rp/initial_alpha_value", "INITIAL_ALPHA_VALUE",
               "alpha at the first CNP, fixed point /1024", 0, 1023, 1023),
            _p("rp_gd", "roce_rp/rpg_gd", "RPG_GD",
               "log2 of Gd: a cut is rate * (1 - alpha/Gd)", 0, 15, 11),
            _p("np_min_time_between_cnps", "roce_np/min_time_between_cnps", "MIN_TIME_BETWEEN_CNPS",
               "microseconds between CNPs sent by the port", 0, _U17, 4),
            _p("np_cnp_dscp", "roce_np/cnp_dscp", "CNP_DSCP",
               "DSCP of generated CNPs", 0, 63, 48),
            _p("np_cnp_prio_mode", None, "CNP_RES_PRIO_MODE",
               "bool: 1 = CNP copies the 802.1p priority of the marked packet", 0, 1, None),
            _p("np_cnp_prio", "roce_np/cnp_802p_prio", "CNP_802P_PRIO",
               "802.1p priority of generated CNPs", 0, 7, 6),
            _p("rtt_resp_dscp_valid", None, None,
               "bool: use rtt_resp_dscp for RTT-probe responses", 0, 1, None),
            _p("rtt_resp_dscp", None, "ROCE_RTT_RESP_DSCP",
               "DSCP of RTT-probe responses", 0, 63, 0),
        )
    }
)
"""Every mlx5 congestion-control parameter, keyed by its upstream debugfs name."""

CNP_PARAMS = frozenset({"np_cnp_dscp", "np_cnp_prio"})
"""Set from :attr:`HostNicIntent.cnp_dscp` / ``cnp_priority``, never through ``DcqcnIntent.np``:
the CNP class must agree with the switches, and the linter reads it from one place."""

_ALIASES: dict[str, str] = {}
for _name, _param in CC_PARAMS.items():
    _ALIASES[_name] = _name
    if _param.ofed:
        _ALIASES.setdefault(_param.ofed, _name)
        _ALIASES.setdefault(_param.ofed_file or "", _name)
    if _param.mlxconfig:
        _ALIASES.setdefault(_param.mlxconfig.lower(), _name)


def cc_param(name: str) -> CcParamName:
    """Look a parameter up by any of its names.

    The spec lets users write the name they know (``rpg_time_reset`` from the
    OFED sysfs, ``rp_time_reset`` from debugfs, ``RPG_TIME_RESET`` from
    mlxconfig, ``roce_rp/rpg_time_reset``); the intent stores the debugfs name.
    """
    key = _ALIASES.get(name) or _ALIASES.get(name.lower())
    if key is None:
        raise KeyError(f"unknown mlx5 DCQCN parameter {name!r}; known: {', '.join(sorted(CC_PARAMS))}")
    return CC_PARAMS[key]


def driver_default_dscp_to_priority() -> tuple[int, ...]:
    """The map mlx5 uses once trust is ``dscp``: priority = DSCP >> 3 (26 -> 3, 48 -> 6).

    Both ``mlnx_qos --trust dscp`` (it installs these 64 APP entries) and the
    firmware start from it; the planner overlays the classes' DSCPs on it.
    """
    return tuple(d >> 3 for d in range(NUM_DSCP))


# ---------------------------------------------------------------------------
# validation helpers: the planner is trusted, but these values end up in a
# root shell script, so the intent refuses anything a script cannot carry.

_NETDEV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$")
_RDMA = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_]{0,62}$")
_PCI = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_HOST = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_NV_VALUE = re.compile(r"^[A-Za-z0-9_]{1,32}$")


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _check_range(name: str, value: int, lo: int, hi: int) -> None:
    _check(
        isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi,
        f"{name} must be an integer in {lo}..{hi}, got {value!r}",
    )


def _check_priorities(name: str, values: Iterable[int]) -> None:
    seen: set[int] = set()
    for v in values:
        _check_range(name, v, 0, NUM_PRIORITIES - 1)
        _check(v not in seen, f"{name} lists priority {v} twice")
        seen.add(v)


# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NicPort:
    """One in-service backend NIC port of a host: the unit every per-NIC setting applies to."""

    name: str
    """RDMA device (``mlx5_0``): configfs ``rdma_cm/<name>`` and ``/sys/class/infiniband/<name>``."""
    netdev: str
    """Kernel interface (``ens1np0``): ethtool, mlnx_qos/dcb and the OFED ``ecn/`` sysfs."""
    pci: str
    """PCI function (``0000:17:00.0``, lower case): the upstream debugfs directory ``mlx5/<pci>``."""
    rail: int
    """Backend rail the port is cabled to; scripts print it so an operator can match the switch."""
    port: int = 1
    """RDMA port number (``mlx5_0:1``): configfs ``ports/<port>`` and ``tc/<port>``."""

    def __post_init__(self) -> None:
        _check(bool(_RDMA.match(self.name)), f"RDMA device name {self.name!r} is not safe in a script")
        _check(bool(_NETDEV.match(self.netdev)), f"interface name {self.netdev!r} is not a Linux netdev name")
        _check(bool(_PCI.match(self.pci)), f"PCI address {self.pci!r} is not like 0000:17:00.0")
        _check_range("rail", self.rail, 0, 63)
        _check_range("port", self.port, 1, 8)


@dataclass(frozen=True, slots=True)
class DcqcnIntent:
    """DCQCN (ECN-based RoCE congestion control) on the NIC.

    With ``enabled`` false the fabric is PFC-only, as Meta runs its 400G
    clusters: the script turns the reaction and notification points off on
    every priority and leaves the parameters alone.
    """

    enabled: bool
    priorities: tuple[int, ...]
    """Priorities on which both the reaction point (rate limiting on CNPs) and the
    notification point (sending CNPs for CE-marked packets) are on; they are off on
    every other priority. Ignored (all off) when ``enabled`` is false. Runtime
    per-priority control exists only in the OFED sysfs; elsewhere the firmware mask
    ``ROCE_CC_PRIO_MASK`` (see :class:`FirmwareIntent`) decides."""
    rp: tuple[tuple[str, int], ...] = ()
    """Reaction-point parameters to enforce, as (debugfs name, value) in write order,
    e.g. ``("rp_time_reset", 300)``; units per :data:`CC_PARAMS`. Parameters not
    listed keep whatever the firmware booted with."""
    np: tuple[tuple[str, int], ...] = ()
    """Notification-point parameters, e.g. ``("np_min_time_between_cnps", 4)``. The CNP
    DSCP and priority are not here: see :attr:`HostNicIntent.cnp_dscp`."""

    def __post_init__(self) -> None:
        _check(isinstance(self.enabled, bool), "enabled must be a bool")
        _check_priorities("dcqcn.priorities", self.priorities)
        if self.enabled:
            _check(bool(self.priorities), "DCQCN enabled on no priority: list the RoCE priorities or disable it")
        for side, params in (("rp", self.rp), ("np", self.np)):
            seen: set[str] = set()
            for name, value in params:
                param = CC_PARAMS.get(name)
                _check(param is not None, f"dcqcn.{side}: {name!r} is not an mlx5 cc_params name")
                assert param is not None
                _check(param.side == side, f"dcqcn.{side}: {name!r} is a {param.side} parameter")
                _check(name not in CNP_PARAMS, f"dcqcn.{side}: {name!r} comes from the CNP class (cnp_dscp/cnp_priority)")
                _check(
                    param.ofed is not None,
                    f"dcqcn.{side}: {name!r} has no MLNX_OFED sysfs file; it cannot be set at runtime on every driver",
                )
                _check(name not in seen, f"dcqcn.{side}: {name!r} given twice")
                seen.add(name)
                _check_range(f"dcqcn.{side}.{name}", value, param.minimum, param.maximum)

    @classmethod
    def from_names(
        cls,
        enabled: bool,
        priorities: Iterable[int],
        rp: Mapping[str, int] | None = None,
        np: Mapping[str, int] | None = None,
    ) -> DcqcnIntent:
        """Build from parameters named any way :func:`cc_param` understands (the spec's names)."""

        def canon(params: Mapping[str, int] | None) -> tuple[tuple[str, int], ...]:
            return tuple(sorted((cc_param(k).debugfs, v) for k, v in (params or {}).items()))  # spec order means nothing

        return cls(enabled, tuple(priorities), canon(rp), canon(np))


@dataclass(frozen=True, slots=True)
class CcSetting:
    """One congestion-control value as the script writes it, under both runtime interfaces."""

    debugfs: str
    """File in ``/sys/kernel/debug/mlx5/<pci>/cc_params/``."""
    ofed_side: str
    """``roce_rp`` or ``roce_np`` below ``/sys/class/net/<if>/ecn/``."""
    ofed_file: str
    """File in that directory (or in its ``params/`` subdirectory, which NVIDIA's docs show)."""
    value: int


TSA = Literal["ets", "strict", "vendor"]
CMA_ROCE_MODE_NAMES: Mapping[int, str] = MappingProxyType({1: "IB/RoCE v1", 2: "RoCE v2"})
"""What ``rdma_cm`` configfs ``default_roce_mode`` reads and accepts (``cma_configfs.c``)."""


@dataclass(frozen=True, slots=True)
class HostNicIntent:
    """Every runtime NIC setting of one host: ``hosts/NAME/roce-nic.conf``, which ``roce-nic.sh`` applies.

    All of it is runtime state (lost at reboot, driver reload or firmware
    reset): the script is meant to run at every boot. Per-host values are the
    same for every NIC of the host; per-NIC identities are in :attr:`nics`.
    """

    host: str
    """Host name, printed in the script's header and messages."""
    nics: tuple[NicPort, ...]
    """In-service backend NICs, in rail order."""
    trust: Literal["dscp", "pcp"]
    """What the NIC classifies received packets by. ``dscp`` for routed RoCE fabrics
    (untagged frames carry no PCP, so ``pcp`` would put all RoCE on priority 0)."""
    dscp_to_priority: tuple[int, ...]
    """64 entries, index = DSCP: the priority the NIC gives each DSCP when trust is
    ``dscp``. The script writes only entries that differ from what the driver has
    (after ``trust dscp`` the driver holds :func:`driver_default_dscp_to_priority`)."""
    pfc_priorities: tuple[int, ...]
    """Priorities with PFC on (the lossless classes); PFC is off on the others."""
    prio_tc: tuple[int, ...]
    """8 entries, index = priority: the traffic class (egress queue) of each priority."""
    tc_tsa: tuple[TSA, ...]
    """8 entries, index = TC: transmission selection, ``ets`` (weighted), ``strict``
    (strict priority, higher TC first) or ``vendor`` (driver default)."""
    tc_bandwidth: tuple[int, ...]
    """8 entries, index = TC: ETS share in percent; 0 for non-ETS TCs; the ETS TCs sum
    to 100 (the kernel rejects anything else)."""
    dcqcn: DcqcnIntent
    cnp_dscp: int
    """DSCP of the CNPs the NIC sends (driver ``np_cnp_dscp`` / OFED ``cnp_dscp``); must
    match the switches' CNP class. Applied only with DCQCN on (no CNPs otherwise)."""
    cnp_priority: int
    """802.1p priority of the CNPs (``np_cnp_prio`` / OFED ``cnp_802p_prio``); applied only
    with DCQCN on."""
    cma_roce_mode: int | None
    """RDMA-CM default RoCE version for new connections: 2 = RoCE v2 (``cma_roce_mode -m 2``,
    configfs ``default_roce_mode``). ``None`` leaves it."""
    cma_roce_tos: int | None
    """RDMA-CM default ToS byte (DSCP << 2 | ECN bits, e.g. 106 for DSCP 26 + ECT(0)) for
    connections that set none (``cma_roce_tos -t``, configfs ``default_roce_tos``). ``None``
    leaves it."""
    traffic_class: int | None
    """MLNX_OFED global traffic class (full ToS byte) forced on every kernel-path RoCE QP
    of the port (``/sys/class/infiniband/<dev>/tc/<port>/traffic_class``); absent on
    upstream drivers, where ``NCCL_IB_TC`` does the job. ``None`` leaves it."""
    dcbx_os_controlled: bool = True
    """Put DCBX under host (OS) control so firmware DCBX negotiation cannot override the
    PFC/ETS set here (``mlnx_qos -d os`` / ``dcb dcbx set ... host``)."""
    disable_global_pause: bool = True
    """Turn 802.3x global pause off (``ethtool -A IF autoneg off rx off tx off``); it
    must be off for PFC to be the only flow control."""

    def __post_init__(self) -> None:
        _check(bool(_HOST.match(self.host)), f"host name {self.host!r} is not safe in a script")
        _check(bool(self.nics), f"{self.host}: no in-service backend NIC")
        for attr in ("name", "netdev", "pci"):
            values = [getattr(n, attr) for n in self.nics]
            _check(len(set(values)) == len(values), f"{self.host}: two NICs share a {attr}")
        _check(self.trust in ("dscp", "pcp"), f"trust must be dscp or pcp, got {self.trust!r}")
        _check(len(self.dscp_to_priority) == NUM_DSCP, "dscp_to_priority needs 64 entries")
        for p in self.dscp_to_priority:
            _check_range("dscp_to_priority entry", p, 0, NUM_PRIORITIES - 1)
        _check_priorities("pfc_priorities", self.pfc_priorities)
        _check(len(self.prio_tc) == NUM_PRIORITIES, "prio_tc needs 8 entries")
        for tc in self.prio_tc:
            _check_range("prio_tc entry", tc, 0, NUM_PRIORITIES - 1)
        _check(len(self.tc_tsa) == NUM_PRIORITIES, "tc_tsa needs 8 entries")
        _check(len(self.tc_bandwidth) == NUM_PRIORITIES, "tc_bandwidth needs 8 entries")
        for tsa, bw in zip(self.tc_tsa, self.tc_bandwidth, strict=True):
            _check(tsa in ("ets", "strict", "vendor"), f"unknown TSA {tsa!r}")
            _check_range("tc_bandwidth entry", bw, 0, 100)
            _check(tsa == "ets" or bw == 0, "a non-ETS traffic class must have 0 % bandwidth")
        ets = [bw for tsa, bw in zip(self.tc_tsa, self.tc_bandwidth, strict=True) if tsa == "ets"]
        _check(not ets or sum(ets) == 100, f"ETS bandwidths must sum to 100, got {sum(ets)}")
        _check_range("cnp_dscp", self.cnp_dscp, 0, NUM_DSCP - 1)
        _check_range("cnp_priority", self.cnp_priority, 0, NUM_PRIORITIES - 1)
        if self.cma_roce_mode is not None:
            _check(self.cma_roce_mode in CMA_ROCE_MODE_NAMES, "cma_roce_mode must be 1 or 2")
        if self.cma_roce_tos is not None:
            _check_range("cma_roce_tos", self.cma_roce_tos, 0, 255)
        if self.traffic_class is not None:
            _check_range("traffic_class", self.traffic_class, 0, 255)

    # Derived views: representation changes only, so templates never compute.

    def for_host(self, host: str) -> HostNicIntent:
        """The same intent for another host of the same profile and NICs.

        Only the name is new, so only the name is checked: re-validating 64-entry
        tables for each of 3,000 identical hosts was a third of planning time.
        """
        _check(bool(_HOST.match(host)), f"host name {host!r} is not safe in a script")
        # Built in place (fabgen.plan._fast): a quarter of the time of setting 16 slots one by one.
        fields = _INTENT_FIELDS(self)
        twin = _INTENT_TWIN(host, *fields[1:])  # host is the first field (tests/plan/test_fast.py)
        twin.__class__ = HostNicIntent
        return twin  # type: ignore[no-any-return]

    @property
    def pfc_enabled(self) -> tuple[int, ...]:
        """8 entries of 0/1, index = priority (``mlnx_qos --pfc`` order)."""
        return tuple(int(p in self.pfc_priorities) for p in range(NUM_PRIORITIES))

    @property
    def ecn_enabled(self) -> tuple[int, ...]:
        """8 entries of 0/1: the OFED ``ecn/roce_rp|roce_np/enable/<p>`` values."""
        on = self.dcqcn.priorities if self.dcqcn.enabled else ()
        return tuple(int(p in on) for p in range(NUM_PRIORITIES))

    @property
    def cc_settings(self) -> tuple[CcSetting, ...]:
        """Parameters to write with DCQCN on, CNP DSCP and priority last; empty when off."""
        if not self.dcqcn.enabled:
            return ()
        pairs = (*self.dcqcn.rp, *self.dcqcn.np, ("np_cnp_dscp", self.cnp_dscp), ("np_cnp_prio", self.cnp_priority))
        out = []
        for name, value in pairs:
            param = CC_PARAMS[name]
            assert param.ofed_side is not None and param.ofed_file is not None
            out.append(CcSetting(name, param.ofed_side, param.ofed_file, value))
        return tuple(out)

    @property
    def cma_roce_mode_name(self) -> str | None:
        """``default_roce_mode`` text for :attr:`cma_roce_mode` (``RoCE v2``)."""
        return None if self.cma_roce_mode is None else CMA_ROCE_MODE_NAMES[self.cma_roce_mode]


_INTENT_TWIN = maker(HostNicIntent, copies_checked=True)
_INTENT_FIELDS = attrgetter(*HostNicIntent.__slots__)


@dataclass(frozen=True, slots=True)
class FirmwareDevice:
    """One adapter as ``mlxconfig -d`` addresses it."""

    pci: str
    """PCI address of the adapter's first physical function (``0000:17:00.0``)."""
    ports: tuple[int, ...] = (1,)
    """Physical ports to configure (1-based): the ``_P1``/``_P2`` suffixes."""
    nics: tuple[str, ...] = ()
    """RDMA devices on the adapter (``mlx5_0``), for messages only."""

    def __post_init__(self) -> None:
        _check(bool(_PCI.match(self.pci)), f"PCI address {self.pci!r} is not like 0000:17:00.0")
        _check(bool(self.ports), f"{self.pci}: no port to configure")
        for p in self.ports:
            _check_range("firmware port", p, 1, 2)
        _check(len(set(self.ports)) == len(self.ports), f"{self.pci}: port listed twice")
        for n in self.nics:
            _check(bool(_RDMA.match(n)), f"RDMA device name {n!r} is not safe in a script")


@dataclass(frozen=True, slots=True)
class FirmwareIntent:
    """Persistent (NV) firmware settings of one host profile: ``nic-firmware.sh``.

    They become the boot defaults the runtime script then overrides; they take
    effect only after a firmware reset (``mstfwreset``) or a reboot. Values are
    mlxconfig's spellings (enum names such as ``ECN``/``OFF``, booleans
    ``True``/``False``, integers in decimal); ``None`` leaves a setting alone.
    """

    profile: str
    """Host profile name, printed in the header."""
    devices: tuple[FirmwareDevice, ...]
    """Adapters of the profile's backend NICs, in rail order."""
    roce_cc_prio_mask: int
    """``ROCE_CC_PRIO_MASK``: bit p enables DCQCN on priority p (255 = all, firmware
    default; 0 = PFC-only). The only per-priority control on upstream kernels."""
    cnp_dscp: int
    """``CNP_DSCP``: DSCP of generated CNPs, as the switches' CNP class."""
    cnp_802p_prio: int
    """``CNP_802P_PRIO``: 802.1p priority of generated CNPs."""
    roce_cc_algorithm: Literal["ECN", "QCN"] = "ECN"
    """``ROCE_CC_ALGORITHM``: ``ECN`` is DCQCN (the numeric 2 some blogs use is invalid)."""
    cnp_dscp_mode: Literal["DEVICE_DEFAULT", "FIXED_VALUE", "RX_PACKET"] | None = None
    """``CNP_DSCP_MODE`` (newer firmware only; setting it on older firmware fails)."""
    lldp_nb_rx_mode: Literal["OFF", "MANDATORY", "ALL"] | None = "OFF"
    """``LLDP_NB_RX_MODE``: firmware LLDP agent receive; OFF passes LLDP to the host."""
    lldp_nb_tx_mode: Literal["OFF", "MANDATORY", "ALL"] | None = "OFF"
    """``LLDP_NB_TX_MODE``: firmware LLDP agent transmit."""
    lldp_nb_dcbx: bool | None = False
    """``LLDP_NB_DCBX``: firmware DCBX negotiation (would let the switch rewrite PFC/ETS)."""
    dcbx_willing: bool | None = False
    """``DCBX_WILLING``: accept the peer's DCBX configuration."""
    qos_trust_state: Literal["TRUST_PORT", "TRUST_PCP", "TRUST_DSCP", "TRUST_DSCP_PCP"] | None = None
    """``QOS_TRUST_STATE``: persistent trust; only on firmware with ``qos_trust_state_supported``."""
    cc_params: tuple[tuple[str, int], ...] = ()
    """DCQCN parameters (debugfs names, as in :class:`DcqcnIntent`) to store as boot
    defaults, so a host that boots without the runtime script still runs the plan."""
    link_type: Literal["ETH"] | None = "ETH"
    """``LINK_TYPE_Pn`` on adapters that have it (VPI cards, whose ports can come up as
    InfiniBand; Ethernet-only cards lack the parameter, so it is set only where the
    query lists it). ``None`` leaves it."""

    def __post_init__(self) -> None:
        _check(bool(_HOST.match(self.profile)), f"profile name {self.profile!r} is not safe in a script")
        _check(bool(self.devices), f"profile {self.profile}: no adapter")
        pcis = [d.pci for d in self.devices]
        _check(len(set(pcis)) == len(pcis), f"profile {self.profile}: adapter listed twice")
        _check_range("roce_cc_prio_mask", self.roce_cc_prio_mask, 0, 255)
        _check_range("cnp_dscp", self.cnp_dscp, 0, NUM_DSCP - 1)
        _check_range("cnp_802p_prio", self.cnp_802p_prio, 0, NUM_PRIORITIES - 1)
        seen: set[str] = set()
        for name, value in self.cc_params:
            param = CC_PARAMS.get(name)
            _check(param is not None and param.mlxconfig is not None, f"{name!r} has no mlxconfig name")
            assert param is not None
            _check(name not in CNP_PARAMS, f"{name!r} is set by cnp_dscp/cnp_802p_prio")
            _check(name not in seen, f"{name!r} given twice")
            seen.add(name)
            _check_range(name, value, param.minimum, param.maximum)
        for _, setting in self.port_settings():
            _check(bool(_NV_VALUE.match(setting)), f"mlxconfig value {setting!r} is not safe")

    def port_settings(self) -> tuple[tuple[str, str], ...]:
        """(NV name without ``_Pn``, value) for each port, in the order they are set."""
        out: list[tuple[str, str]] = [
            ("ROCE_CC_PRIO_MASK", str(self.roce_cc_prio_mask)),
            ("ROCE_CC_ALGORITHM", self.roce_cc_algorithm),
        ]
        if self.cnp_dscp_mode is not None:
            out.append(("CNP_DSCP_MODE", self.cnp_dscp_mode))
        out += [("CNP_DSCP", str(self.cnp_dscp)), ("CNP_802P_PRIO", str(self.cnp_802p_prio))]
        for name, value in self.cc_params:
            nv = CC_PARAMS[name].mlxconfig
            assert nv is not None
            out.append((nv, str(value)))
        for nv, setting in (
            ("LLDP_NB_RX_MODE", self.lldp_nb_rx_mode),
            ("LLDP_NB_TX_MODE", self.lldp_nb_tx_mode),
            ("LLDP_NB_DCBX", _nv_bool(self.lldp_nb_dcbx)),
            ("DCBX_WILLING", _nv_bool(self.dcbx_willing)),
            ("QOS_TRUST_STATE", self.qos_trust_state),
        ):
            if setting is not None:
                out.append((nv, setting))
        return tuple(out)

    def device_settings(self, device: FirmwareDevice) -> tuple[tuple[str, str], ...]:
        """(full NV name with port suffix, value) for one adapter: what ``mlxconfig set`` takes."""
        return tuple((f"{name}_P{port}", value) for port in device.ports for name, value in self.port_settings())

    def optional_device_settings(self, device: FirmwareDevice) -> tuple[tuple[str, str], ...]:
        """Like :meth:`device_settings`, for parameters only some adapters have (set where the query lists them)."""
        if self.link_type is None:
            return ()
        return tuple((f"LINK_TYPE_P{port}", self.link_type) for port in device.ports)


def _nv_bool(value: bool | None) -> str | None:
    return None if value is None else ("True" if value else "False")
