"""NIC policy: trust, PFC, CNP and DCQCN as the NIC driver names them."""

from typing import Annotated, Literal

from pydantic import Field, StringConstraints, field_validator

from fabgen.spec.common import SpecModel
from fabgen.spec.qos import Dscp, Priority

CcParam = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,62}$")]


class Cnp(SpecModel):
    dscp: Dscp
    priority: Priority


class Dcqcn(SpecModel):
    enabled: bool = True
    """Off = PFC-only (ECN reaction disabled on the NIC), as Meta runs its 400G fabric."""
    rp: dict[CcParam, Annotated[int, Field(ge=0, le=2**32 - 1)]] = {}
    """Reaction-point parameters by the mlx5 driver's names (``rpg_time_reset``, ...)."""
    np: dict[CcParam, Annotated[int, Field(ge=0, le=2**32 - 1)]] = {}
    """Notification-point parameters (``min_time_between_cnps``, ...)."""

    @field_validator("rp", "np")
    @classmethod
    def _driver_names(cls, params: dict[str, int]) -> dict[str, int]:
        """Names and ranges as the mlx5 driver knows them: a typo would be silently ignored by the NIC."""
        from fabgen.plan.nic_intent import CNP_PARAMS, cc_param

        for name, value in params.items():
            try:
                param = cc_param(name)
            except KeyError as exc:
                raise ValueError(str(exc.args[0])) from None
            if param.debugfs in CNP_PARAMS:
                raise ValueError(f"{name!r} comes from the CNP class; set nic.cnp or the qos class with role: cnp")
            if not param.minimum <= value <= param.maximum:
                raise ValueError(f"{name} must be in {param.minimum}..{param.maximum}, got {value}")
        return params


class NicPolicy(SpecModel):
    vendor: Literal["mlx5"] = "mlx5"
    trust: Literal["dscp", "pcp"] | None = None
    """NIC trust mode; follows ``qos.trust`` when omitted."""
    pfc_priorities: list[Priority] | None = None
    """Priorities with PFC on the NIC; the lossless classes' when omitted."""
    cnp: Cnp | None = None
    """CNP DSCP and priority; the CNP class's when omitted."""
    dcqcn: Dcqcn = Dcqcn()
    roce_mtu: Literal[256, 512, 1024, 2048, 4096] = 4096
    """RoCE path MTU (payload); switch MTU must fit it plus headers."""
