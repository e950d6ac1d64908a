"""NCCL policy: target version, where files are installed, hand-set variables."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from fabgen.spec.common import SpecModel

NcclName = Annotated[str, StringConstraints(pattern=r"^NCCL_[A-Z0-9_]{1,60}$")]
NcclValue = bool | int | Annotated[str, StringConstraints(pattern=r"^[^\x00-\x1f\x7f\u2028\u2029]{0,1023}$")]
NcclEnv = dict[NcclName, NcclValue]

AbsolutePath = Annotated[str, StringConstraints(pattern=r"^(/[A-Za-z0-9_][A-Za-z0-9._-]{0,62})+$")]
"""An absolute POSIX path without ``..``, spaces or shell metacharacters."""


class NcclPolicy(SpecModel):
    version: Annotated[str, StringConstraints(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")] = "2.23.4"
    """NCCL version the hosts run; some variables and defaults depend on it."""
    env: NcclEnv = {}
    """Variables set by hand; they override the derived ones."""
    install_prefix: AbsolutePath = "/etc/fabgen"
    """Where hosts install fabgen's files (NCCL_TOPO_FILE points below it)."""
    topology: Literal["pci", "full"] = "pci"
    """``pci``: CPU/PCI tree only (NCCL adds GPUs and NICs); ``full``: also ``<gpu>`` and ``<nic><net>``."""
    cross_nic: Annotated[int, Field(ge=0, le=2)] | None = None
    """NCCL_CROSS_NIC; derived from the fabric when omitted."""
