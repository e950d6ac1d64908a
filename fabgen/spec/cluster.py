"""The whole spec: one document, one cluster."""

from typing import Annotated, Literal

from pydantic import Field, PrivateAttr

from fabgen.spec.common import Description, Name, SpecModel
from fabgen.spec.fabric import Fabric
from fabgen.spec.hosts import HostGroup, HostProfile
from fabgen.spec.nccl import NcclPolicy
from fabgen.spec.nic import NicPolicy
from fabgen.spec.qos import QosPolicy


class Cluster(SpecModel):
    name: Name
    transport: Literal["rocev2"] = "rocev2"
    description: Description = ""


class ClusterSpec(SpecModel):
    """A fabgen spec, validated. Immutable: every later stage reads it, none changes it."""

    version: Literal[1]
    cluster: Cluster
    host_profiles: Annotated[dict[Name, HostProfile], Field(min_length=1)]
    hosts: Annotated[list[HostGroup], Field(min_length=1, max_length=10_000)]
    fabric: Fabric
    qos: QosPolicy
    nic: NicPolicy = NicPolicy()
    nccl: NcclPolicy = NcclPolicy()

    _source: object = PrivateAttr(default=None)
    _ipam: tuple[object, ...] = PrivateAttr(default=())
    """Rows of ``fabric.ipam`` (:class:`fabgen.spec.ipam.IpamRow`), read at validation so planning stays pure."""

    @property
    def ipam_rows(self):  # type: ignore[no-untyped-def]
        """The pinned addresses read from ``fabric.ipam``, each with its file and line."""
        return self._ipam

    @property
    def source(self):  # type: ignore[no-untyped-def]
        """The :class:`~fabgen.source.SourceDoc` this spec was read from (positions for errors), if any."""
        return self._source
