"""NCCL policy: target version, where files are installed, hand-set variables."""

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, WithJsonSchema
from pydantic_core import PydanticCustomError

from fabgen.spec.common import SpecModel

NcclName = Annotated[str, StringConstraints(pattern=r"^NCCL_[A-Z0-9_]{1,60}$")]

VALUE_PATTERN = r"^[^\x00-\x1f\x7f\u2028\u2029]{0,1023}$"
"""A variable's value as text: one line NCCL reads whole (its getenv buffer: 1023 characters and the NUL)."""
_BREAKS_THE_LINE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")


def _one_line(value: str) -> str:
    """:data:`VALUE_PATTERN`, checked in Python, with the errors pydantic's own pattern check gives.

    Why not ``StringConstraints(pattern=...)``: pydantic-core's regex engine
    unrolls ``{0,1023}`` into 1023 copies of a Unicode class, 9 to 14 ms to
    compile at every ``fabgen`` start for the few values a spec sets. Same
    answers (tests/spec/test_nccl_value.py plants every kind of bad value in
    both): a lone surrogate is not a string to pydantic-core (checked first, as
    it converts before matching); ``{0,1023}`` counts code points, as ``len`` does.
    """
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise PydanticCustomError(
                "string_unicode", "Input should be a valid string, unable to parse raw data as a unicode string") from None
    if len(value) > 1023 or _BREAKS_THE_LINE.search(value):
        raise PydanticCustomError("string_pattern_mismatch", "String should match pattern '{pattern}'",
                                  {"pattern": VALUE_PATTERN})
    return value


NcclValue = bool | int | Annotated[str, AfterValidator(_one_line), WithJsonSchema({"pattern": VALUE_PATTERN,
                                                                                    "type": "string"})]
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
