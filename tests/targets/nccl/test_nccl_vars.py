"""The NCCL variable catalog and its value checks (fabgen.targets.nccl.variables)."""

from __future__ import annotations

import ctypes
import ctypes.util

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabgen.targets.nccl.variables import (
    KNOWN_VARS,
    OTHER_DOCUMENTED_VARS,
    IfEntry,
    VarIssue,
    check_nccl_var,
    did_you_mean,
    format_value,
    nccl_strtoll,
    parse_if_list,
    parse_version,
)


def errors(issues: list[VarIssue]) -> list[str]:
    return [i.message for i in issues if i.severity == "error"]


def warnings(issues: list[VarIssue]) -> list[str]:
    return [i.message for i in issues if i.severity == "warning"]


def clean(name: str, value: str | int | bool, version: str | None = None) -> bool:
    return check_nccl_var(name, value, version) == []


# ---------------------------------------------------------------- catalog

SECTION_3_VARS = """
NCCL_CONF_FILE NCCL_ENV_PLUGIN NCCL_NO_CACHE NCCL_IB_HCA NCCL_SOCKET_IFNAME NCCL_OOB_NET_IFNAME
NCCL_IB_DEVICE_PCI_ORDER NCCL_COMM_ID NCCL_IB_DISABLE NCCL_IB_GID_INDEX NCCL_IB_ROUTABLE_FLID_GID_INDEX
NCCL_IB_ROCE_VERSION_NUM NCCL_IB_ADDR_FAMILY NCCL_IB_ADDR_RANGE NCCL_IB_TC NCCL_IB_FIFO_TC NCCL_GIN_IB_TC
NCCL_IB_SL NCCL_IB_TIMEOUT NCCL_IB_RETRY_CNT NCCL_IB_QPS_PER_CONNECTION NCCL_IB_SPLIT_DATA_ON_QPS
NCCL_IB_ADAPTIVE_ROUTING NCCL_IB_AR_THRESHOLD NCCL_IB_PCI_RELAXED_ORDERING NCCL_IB_ECE_ENABLE
NCCL_IB_MERGE_NICS NCCL_IB_MERGE_VFS NCCL_IB_PKEY NCCL_IB_RETURN_ASYNC_EVENTS NCCL_IB_DATA_DIRECT
NCCL_IB_OOO_RQ NCCL_IB_SUBNET_AWARE_ROUTING NCCL_IB_SUBNET_PREFIX_LEN NCCL_IB_CUDA_SUPPORT NCCL_IB_GDR_LEVEL
NCCL_TOPO_FILE NCCL_TOPO_DUMP_FILE NCCL_TOPO_DUMP_FILE_RANK NCCL_GRAPH_FILE NCCL_GRAPH_DUMP_FILE
NCCL_GRAPH_DUMP_FILE_RANK NCCL_NET_GDR_LEVEL NCCL_NET_GDR_READ NCCL_NET_GDR_C2C NCCL_P2P_LEVEL
NCCL_P2P_DISABLE NCCL_CROSS_NIC NCCL_NETDEVS_POLICY NCCL_NET_MERGE_LEVEL NCCL_NET_FORCE_MERGE
NCCL_NET_MERGE_POLICY NCCL_IGNORE_CPU_AFFINITY NCCL_SOCKET_FAMILY NCCL_PXN_DISABLE NCCL_P2P_PXN_LEVEL
NCCL_ALGO NCCL_PROTO NCCL_NVLS_ENABLE NCCL_MIN_NCHANNELS NCCL_MAX_NCHANNELS NCCL_MIN_CTAS NCCL_MAX_CTAS
NCCL_MIN_NRINGS NCCL_MAX_NRINGS NCCL_NET NCCL_NET_PLUGIN NCCL_DEBUG NCCL_DEBUG_SUBSYS NCCL_DEBUG_FILE
NCCL_BUFFSIZE
""".split()


@pytest.mark.parametrize("name", SECTION_3_VARS)
def test_every_section_3_variable_is_catalogued(name: str) -> None:
    spec = KNOWN_VARS[name]
    assert spec.name == name
    assert spec.kind in ("int", "bool01", "enum", "list", "path", "string", "cidr")
    assert spec.doc and "\n" not in spec.doc


def test_catalog_entries_are_consistent() -> None:
    for spec in KNOWN_VARS.values():
        if spec.kind in ("enum",) or spec.name in ("NCCL_ALGO", "NCCL_PROTO", "NCCL_DEBUG_SUBSYS"):
            assert spec.values, spec.name
        if spec.kind == "bool01":
            assert (spec.min, spec.max) == (0, 1), spec.name
        if spec.min is not None and spec.max is not None:
            assert spec.min <= spec.max
        if spec.since and spec.removed_in:
            assert spec.since < spec.removed_in
    assert not set(KNOWN_VARS) & OTHER_DOCUMENTED_VARS
    with pytest.raises(TypeError):
        KNOWN_VARS["NCCL_NEW"] = KNOWN_VARS["NCCL_IB_TC"]  # type: ignore[index]


def test_versions_and_ranges_from_the_reference() -> None:
    assert KNOWN_VARS["NCCL_IB_FIFO_TC"].since == (2, 22, 3)
    assert KNOWN_VARS["NCCL_GIN_IB_TC"].since == (2, 30, 7)
    assert KNOWN_VARS["NCCL_IB_ADDR_RANGE"].since == (2, 21)
    assert KNOWN_VARS["NCCL_CONF_FILE"].since == (2, 23)
    assert KNOWN_VARS["NCCL_IB_CUDA_SUPPORT"].removed_in == (2, 4, 0)
    assert (KNOWN_VARS["NCCL_IB_RETRY_CNT"].min, KNOWN_VARS["NCCL_IB_RETRY_CNT"].max) == (0, 7)
    assert (KNOWN_VARS["NCCL_IB_TIMEOUT"].min, KNOWN_VARS["NCCL_IB_TIMEOUT"].max) == (0, 31)
    assert KNOWN_VARS["NCCL_NET_GDR_LEVEL"].case_sensitive
    assert not KNOWN_VARS["NCCL_DEBUG"].case_sensitive


# ---------------------------------------------------------------- helpers


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2.21.5", (2, 21, 5)), ("2.21", (2, 21)), ("v2.30.7-1", (2, 30, 7)), ("2.18.3+cuda12.2", (2, 18, 3))],
)
def test_parse_version(text: str, expected: tuple[int, ...]) -> None:
    assert parse_version(text) == expected


@pytest.mark.parametrize("text", ["", "2", "two.one", "2.x.1", "2.21.5.1"])
def test_parse_version_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_version(text)


def test_format_value() -> None:
    assert format_value(True) == "1"
    assert format_value(False) == "0"
    assert format_value(106) == "106"
    assert format_value(-1) == "-1"
    assert format_value("=mlx5_0:1") == "=mlx5_0:1"
    with pytest.raises(TypeError):
        format_value(1.5)  # type: ignore[arg-type]


def test_did_you_mean() -> None:
    assert did_you_mean("NCCL_IB_TIMOUT") == "NCCL_IB_TIMEOUT"
    assert did_you_mean("NCCL_IB_RETRY_COUNT") == "NCCL_IB_RETRY_CNT"
    assert did_you_mean("nccl_ib_tc") == "NCCL_IB_TC"
    assert did_you_mean("NCCL_SOCKET_IFACE") == "NCCL_SOCKET_IFNAME"
    assert did_you_mean("NCCL_NSOCK_PERTHREAD") == "NCCL_NSOCKS_PERTHREAD"
    assert did_you_mean("TOTALLY_DIFFERENT") is None


def _libc_strtoll() -> ctypes._CFuncPtr | None:
    path = ctypes.util.find_library("c")
    if not path:
        return None
    func = ctypes.CDLL(path).strtoll
    func.restype = ctypes.c_longlong
    func.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
    return func


STRTOLL = _libc_strtoll()


def _c_strtoll(text: str) -> tuple[int, int]:
    assert STRTOLL is not None
    raw = text.encode()
    buf = ctypes.create_string_buffer(raw)
    end = ctypes.c_char_p()
    value = STRTOLL(buf, ctypes.byref(end), 0)
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buf)  # type: ignore[operator]
    return value, consumed


STRTOLL_CASES = ["106", "0106", "0x6a", "0X6A", "-1", "+7", "22s", "", "abc", "0", "00", "08", "0x", "0xg",
                 " 12", "\t-0x10", "1.5", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
                 "0777", "-", "+0x1F", "１２"]


@pytest.mark.skipif(STRTOLL is None, reason="no libc")
@pytest.mark.parametrize("text", STRTOLL_CASES)
def test_strtoll_matches_libc(text: str) -> None:
    ours = nccl_strtoll(text)
    value, consumed = _c_strtoll(text)
    assert (ours.value, len(text[: ours.consumed].encode())) == (value, consumed)


@pytest.mark.skipif(STRTOLL is None, reason="no libc")
@given(st.text(alphabet="0123456789abcdefxX+- \t.g", max_size=24))
def test_strtoll_matches_libc_fuzzed(text: str) -> None:
    ours = nccl_strtoll(text)
    assert (ours.value, ours.consumed) == _c_strtoll(text)


# ---------------------------------------------------------------- names


def test_unknown_nccl_name_is_an_error_with_a_suggestion() -> None:
    [issue] = check_nccl_var("NCCL_IB_TIMOUT", 22)
    assert issue.severity == "error"
    assert "unknown" in issue.message
    assert issue.hint == "did you mean NCCL_IB_TIMEOUT?"


def test_unknown_name_without_any_close_match() -> None:
    [issue] = check_nccl_var("NCCL_ZZZZZZZZZ", 1)
    assert issue.severity == "error" and issue.hint is None


@pytest.mark.parametrize("name", ["HOME", "UCX_TLS", "CUDA_VISIBLE_DEVICES"])
def test_non_nccl_names_are_errors(name: str) -> None:
    [issue] = check_nccl_var(name, "x")
    assert issue.severity == "error" and "NCCL_" in issue.message


def test_lower_case_nccl_name_suggests_the_real_one() -> None:
    [issue] = check_nccl_var("nccl_ib_tc", 106)
    assert issue.severity == "error" and issue.hint == "did you mean NCCL_IB_TC?"


@pytest.mark.parametrize("name", ["", "NCCL IB TC", "NCCL_IB_TC=1", "1NCCL"])
def test_invalid_names(name: str) -> None:
    assert errors(check_nccl_var(name, 1))


def test_documented_but_uncatalogued_variable_is_a_warning() -> None:
    issues = check_nccl_var("NCCL_NSOCKS_PERTHREAD", 4)
    assert [i.severity for i in issues] == ["warning"]


def test_documented_but_uncatalogued_variable_still_gets_injection_check() -> None:
    assert errors(check_nccl_var("NCCL_NSOCKS_PERTHREAD", "4\nNCCL_IB_TC=0"))


# ---------------------------------------------------------------- integers


def test_octal_trap() -> None:
    [issue] = check_nccl_var("NCCL_IB_TC", "0106")
    assert issue.severity == "error"
    assert "octal" in issue.message and "70" in issue.message
    assert issue.hint and "106" in issue.hint


@pytest.mark.parametrize("value", ["106", 106, "0x6a", "+106", "0"])
def test_integer_forms_nccl_reads_correctly(value: str | int) -> None:
    assert clean("NCCL_IB_TC", value)


@pytest.mark.parametrize(("value", "fragment"), [("22s", "ignores 's'"), ("1.5", "ignores '.5'"),
                                                 ("abc", "reads it as 0"), ("99999999999999999999", "overflows")])
def test_integer_garbage(value: str, fragment: str) -> None:
    [message] = errors(check_nccl_var("NCCL_IB_TIMEOUT", value))
    assert fragment in message


def test_empty_integer_means_default() -> None:
    issues = check_nccl_var("NCCL_IB_TIMEOUT", "")
    assert [i.severity for i in issues] == ["warning"] and "default" in issues[0].message


@pytest.mark.parametrize(("value", "ok"), [(0, True), (7, True), (8, False), (-1, False), ("7", True)])
def test_retry_cnt_range(value: int | str, ok: bool) -> None:
    assert (errors(check_nccl_var("NCCL_IB_RETRY_CNT", value)) == []) is ok


@pytest.mark.parametrize(("value", "severity"), [(14, None), (20, None), (22, None), (13, "warning"),
                                                 (23, "warning"), (31, "warning"), (0, "warning"),
                                                 (32, "error"), (-1, "error")])
def test_timeout_range_and_usual_band(value: int, severity: str | None) -> None:
    issues = check_nccl_var("NCCL_IB_TIMEOUT", value)
    assert [i.severity for i in issues] == ([severity] if severity else [])


def test_timeout_zero_says_infinite() -> None:
    [issue] = check_nccl_var("NCCL_IB_TIMEOUT", 0)
    assert "infinite" in issue.message


@pytest.mark.parametrize("name", ["NCCL_IB_TC", "NCCL_IB_FIFO_TC", "NCCL_GIN_IB_TC"])
@pytest.mark.parametrize(("value", "ok"), [(0, True), (106, True), (255, True), (256, False)])
def test_traffic_class_range(name: str, value: int, ok: bool) -> None:
    assert (errors(check_nccl_var(name, value)) == []) is ok


def test_ib_tc_minus_one_is_not_a_tos() -> None:
    assert errors(check_nccl_var("NCCL_IB_TC", -1))
    assert not errors(check_nccl_var("NCCL_IB_FIFO_TC", -1))


@pytest.mark.parametrize(("version", "refused"), [("2.22.3", True), ("2.23.4", True), ("2.24.3", False),
                                                  ("2.30.7", False)])
def test_fifo_tc_minus_one_is_a_tos_before_2_24(version: str, refused: bool) -> None:
    """2.22.3/2.23 have no -1 sentinel: ``if (ncclParamIbFifoTc() && ...)`` writes -1 as TOS 255."""
    found = errors(check_nccl_var("NCCL_IB_FIFO_TC", -1, version))
    assert bool(found) is refused
    if refused:
        assert "TOS 255" in found[0]
    assert not errors(check_nccl_var("NCCL_IB_FIFO_TC", 0, version))


def test_traffic_class_with_ce_bits_warns() -> None:
    [issue] = check_nccl_var("NCCL_IB_TC", 107)
    assert issue.severity == "warning" and "106" in (issue.hint or "")


@pytest.mark.parametrize(("value", "ok"), [(0, True), (3, True), (15, True), (16, False), (-1, False)])
def test_service_level_range(value: int, ok: bool) -> None:
    assert (errors(check_nccl_var("NCCL_IB_SL", value)) == []) is ok


@pytest.mark.parametrize(("value", "ok"), [(True, True), (False, True), (1, True), ("0", True),
                                           ("2", False), ("true", False), ("yes", False)])
def test_bool01(value: object, ok: bool) -> None:
    assert (errors(check_nccl_var("NCCL_IB_DISABLE", value)) == []) is ok  # type: ignore[arg-type]


def test_boolean_for_a_wide_integer_is_an_error() -> None:
    assert errors(check_nccl_var("NCCL_IB_TC", True))
    assert not errors(check_nccl_var("NCCL_CROSS_NIC", False))


def test_number_for_a_string_variable_is_an_error() -> None:
    assert errors(check_nccl_var("NCCL_IB_HCA", 1))
    assert errors(check_nccl_var("NCCL_TOPO_FILE", 0))


def test_unsupported_python_type() -> None:
    assert errors(check_nccl_var("NCCL_IB_TIMEOUT", 22.0))  # type: ignore[arg-type]
    assert errors(check_nccl_var("NCCL_IB_TIMEOUT", None))  # type: ignore[arg-type]


# ---------------------------------------------------------------- versions


def test_gid_index_on_new_nccl_warns() -> None:
    [issue] = check_nccl_var("NCCL_IB_GID_INDEX", 3, "2.21.5")
    assert issue.severity == "warning" and "2.21" in issue.message


def test_gid_index_on_old_nccl_is_fine() -> None:
    assert clean("NCCL_IB_GID_INDEX", 3, "2.18.3")
    assert clean("NCCL_IB_GID_INDEX", 3)


def test_gid_auto_needs_2_21() -> None:
    assert clean("NCCL_IB_GID_INDEX", -1, "2.23.4")
    assert errors(check_nccl_var("NCCL_IB_GID_INDEX", -1, "2.20.5"))


def test_variable_newer_than_the_target_warns() -> None:
    [issue] = check_nccl_var("NCCL_IB_FIFO_TC", 106, "2.21.5")
    assert issue.severity == "warning" and "2.22.3" in issue.message
    assert clean("NCCL_IB_FIFO_TC", 106, "2.22.3")
    assert clean("NCCL_IB_FIFO_TC", 106)


@pytest.mark.parametrize(("name", "value"), [("NCCL_IB_CUDA_SUPPORT", 1), ("NCCL_IB_GDR_LEVEL", "PXB")])
def test_removed_variables_are_errors(name: str, value: str | int) -> None:
    [issue] = check_nccl_var(name, value)
    assert issue.severity == "error" and "removed" in issue.message
    assert issue.hint == "use NCCL_NET_GDR_LEVEL"
    assert errors(check_nccl_var(name, value, "2.23.4"))
    assert not errors(check_nccl_var(name, value, "2.3.7"))


def test_deprecated_channels_variable() -> None:
    [issue] = check_nccl_var("NCCL_MAX_NCHANNELS", 16, "2.21.5")
    assert issue.severity == "warning" and issue.hint == "use NCCL_MAX_CTAS"
    assert clean("NCCL_MAX_NCHANNELS", 16, "2.16.5")


def test_conf_file_inside_a_conf_file() -> None:
    assert clean("NCCL_CONF_FILE", "/etc/fabgen/nccl.conf", "2.23.4")
    issues = check_nccl_var("NCCL_CONF_FILE", "/etc/fabgen/nccl.conf", "2.23.4", in_conf_file=True)
    assert warnings(issues)


# ---------------------------------------------------------------- enums


@pytest.mark.parametrize("name", ["NCCL_NET_GDR_LEVEL", "NCCL_P2P_LEVEL"])
def test_level_names_are_case_sensitive(name: str) -> None:
    assert clean(name, "PXB")
    [issue] = check_nccl_var(name, "pxb")
    assert issue.severity == "error" and issue.hint == "PXB"


def test_unknown_level() -> None:
    [issue] = check_nccl_var("NCCL_NET_GDR_LEVEL", "NODE")
    assert issue.severity == "error" and "ignores" in issue.message


def test_legacy_numeric_level() -> None:
    [issue] = check_nccl_var("NCCL_NET_GDR_LEVEL", 2)
    assert issue.severity == "warning" and issue.hint == "write NCCL_NET_GDR_LEVEL=PXB"
    assert errors(check_nccl_var("NCCL_NET_GDR_LEVEL", "2x"))


def test_level_newer_than_target() -> None:
    assert warnings(check_nccl_var("NCCL_NET_GDR_LEVEL", "P2C", "2.26.2"))
    assert clean("NCCL_NET_GDR_LEVEL", "P2C", "2.27.3")


@pytest.mark.parametrize(("name", "good", "bad"), [
    ("NCCL_IB_ADDR_FAMILY", "AF_INET6", "af_inet6"),
    ("NCCL_SOCKET_FAMILY", "AF_INET", "inet"),
    ("NCCL_NET_MERGE_LEVEL", "PORT", "port"),
])
def test_case_sensitive_enums(name: str, good: str, bad: str) -> None:
    assert clean(name, good)
    assert errors(check_nccl_var(name, bad))


@pytest.mark.parametrize(("name", "value"), [("NCCL_DEBUG", "info"), ("NCCL_DEBUG", "WARN"),
                                             ("NCCL_NETDEVS_POLICY", "max:2"), ("NCCL_NETDEVS_POLICY", "all"),
                                             ("NCCL_NET_MERGE_POLICY", "rail")])
def test_case_insensitive_enums(name: str, value: str) -> None:
    assert clean(name, value)


@pytest.mark.parametrize("value", ["MAX:0", "MAX:", "MAX:x", "SOME"])
def test_netdevs_policy_rejects(value: str) -> None:
    assert errors(check_nccl_var("NCCL_NETDEVS_POLICY", value))


@pytest.mark.parametrize("value", ["Ring,Tree", "^NVLS", "ring", "allreduce:tree,ring;allgather:^pat",
                                   "^LL128;allreduce:LL128"])
def test_algo_and_proto_accept(value: str) -> None:
    name = "NCCL_PROTO" if "LL" in value else "NCCL_ALGO"
    assert clean(name, value)


@pytest.mark.parametrize(("name", "value"), [("NCCL_ALGO", "rnig"), ("NCCL_ALGO", "tree;ring"),
                                             ("NCCL_ALGO", "allredux:ring"), ("NCCL_PROTO", "LL256")])
def test_algo_and_proto_reject(name: str, value: str) -> None:
    assert errors(check_nccl_var(name, value))


def test_per_function_syntax_needs_2_24() -> None:
    assert errors(check_nccl_var("NCCL_ALGO", "allreduce:ring", "2.23.4"))
    assert clean("NCCL_ALGO", "allreduce:ring", "2.24.3")


def test_debug_subsys() -> None:
    assert clean("NCCL_DEBUG_SUBSYS", "GRAPH,ENV,NET")
    assert clean("NCCL_DEBUG_SUBSYS", "^call,proxy")
    assert errors(check_nccl_var("NCCL_DEBUG_SUBSYS", "GRAPH,TOPO"))


def test_no_cache_names() -> None:
    assert clean("NCCL_NO_CACHE", "NCCL_IB_TC,NCCL_IB_SL")
    assert clean("NCCL_NO_CACHE", "ALL")
    assert warnings(check_nccl_var("NCCL_NO_CACHE", "IB_TC"))


# ---------------------------------------------------------------- paths and ranges


def test_paths() -> None:
    assert clean("NCCL_TOPO_FILE", "/etc/fabgen/nccl-topo.xml")
    assert errors(check_nccl_var("NCCL_TOPO_FILE", "~/topo.xml"))
    assert warnings(check_nccl_var("NCCL_TOPO_FILE", "topo.xml"))
    assert warnings(check_nccl_var("NCCL_TOPO_FILE", ""))
    assert clean("NCCL_DEBUG_FILE", "/var/log/nccl.%h.%p")


@pytest.mark.parametrize(("value", "severity"), [("10.1.0.0/16", None), ("fd00::/64", None),
                                                 ("10.1.2.3/16", "warning"), ("10.1.0.0", "error"),
                                                 ("10.1.0.0/33", "error"), ("ten/8", "error")])
def test_addr_range(value: str, severity: str | None) -> None:
    issues = check_nccl_var("NCCL_IB_ADDR_RANGE", value)
    assert [i.severity for i in issues] == ([severity] if severity else [])


# ---------------------------------------------------------------- injection and whitespace


@pytest.mark.parametrize("bad", ["\n", "\r", "\x00", "\u2028", "\u2029", "\x85"])
def test_line_breaking_characters_are_errors(bad: str) -> None:
    [issue] = check_nccl_var("NCCL_IB_HCA", f"=mlx5_0:1{bad}NCCL_IB_TC=0")
    assert issue.severity == "error" and "line" in issue.message


@pytest.mark.parametrize("value", ["\t=mlx5_0", "=mlx5_0\x1b[0m", "=mlx5_0\x7f"])
def test_control_characters_are_errors(value: str) -> None:
    assert errors(check_nccl_var("NCCL_IB_HCA", value))


@pytest.mark.parametrize("value", [" 106", "106 ", "106\u00a0"])
def test_surrounding_whitespace_is_an_error(value: str) -> None:
    assert errors(check_nccl_var("NCCL_IB_TC", value))


def test_overlong_value() -> None:
    assert errors(check_nccl_var("NCCL_TOPO_FILE", "/" + "a" * 1023))
    assert clean("NCCL_TOPO_FILE", "/" + "a" * 1022)


# ---------------------------------------------------------------- interface lists


def test_reference_examples_parse() -> None:
    assert parse_if_list("=mlx5_0:1,mlx5_1:1").entries == (IfEntry("mlx5_0", 1), IfEntry("mlx5_1", 1))
    parsed = parse_if_list("^=mlx5_1,mlx5_4")
    assert parsed.exclude and parsed.exact and [e.name for e in parsed.entries] == ["mlx5_1", "mlx5_4"]
    assert parse_if_list("=mlx5_0:1:0:0,mlx5_1:1:0:1").entries[1] == IfEntry("mlx5_1", 1, 0, 1)
    assert parse_if_list("=mlx5_0::0:0").entries == (IfEntry("mlx5_0", -1, 0, 0),)
    assert parse_if_list("=ens1f0").entries == (IfEntry("ens1f0"),)
    assert parse_if_list("a,,b").entries == (IfEntry("a"), IfEntry("b"))


@pytest.mark.parametrize(("value", "version"), [("=mlx5_0:1,mlx5_1:1", None), ("^=mlx5_1,mlx5_4", None),
                                                ("=mlx5_0:1:0:0,mlx5_1:1:0:1", "2.30.7"),
                                                ("=mlx5_0::0:0", "2.30.7"), ("=mlx5_0:1", "2.18.3")])
def test_reference_hca_examples_are_clean(value: str, version: str | None) -> None:
    assert clean("NCCL_IB_HCA", value, version)


def test_empty_port_before_2_30_7_matches_nothing() -> None:
    issues = check_nccl_var("NCCL_IB_HCA", "=mlx5_0::0:0", "2.28.9")
    assert any("empty port" in m for m in errors(issues))


def test_empty_port_with_unknown_version_warns() -> None:
    issues = check_nccl_var("NCCL_IB_HCA", "=mlx5_0::0:0")
    assert not errors(issues) and any("empty port" in m for m in warnings(issues))


def test_rail_fields_before_2_30_7_are_ignored() -> None:
    issues = check_nccl_var("NCCL_IB_HCA", "=mlx5_0:1:0:0", "2.28.9")
    assert not errors(issues) and any("2.30.7" in m for m in warnings(issues))


@pytest.mark.parametrize(("value", "fragment"), [
    ("=mlx5_0:1, mlx5_1:1", "whitespace"),
    ("=^mlx5_0", "'^' must come before '='"),
    ("=mlx5_0:0", "port 0"),
    ("=mlx5_0:x", "not a number"),
    ("=mlx5_0:1:r", "not a non-negative integer"),
    ("=:1", "no device name"),
    ("=" + "m" * 64, "longer than 63"),
])
def test_hca_errors(value: str, fragment: str) -> None:
    assert any(fragment in m for m in errors(check_nccl_var("NCCL_IB_HCA", value, "2.30.7")))


def test_hca_prefix_matching_warns() -> None:
    [issue] = check_nccl_var("NCCL_IB_HCA", "mlx5_0:1,mlx5_1:1")
    assert issue.severity == "warning" and "mlx5_10" in issue.message
    assert "==mlx5_0:1" in (issue.hint or "")


def test_hca_soft_problems() -> None:
    assert warnings(check_nccl_var("NCCL_IB_HCA", "=mlx5_0:1,,mlx5_1:1"))
    assert warnings(check_nccl_var("NCCL_IB_HCA", "=mlx5_0:1,mlx5_0:1"))
    many = "=" + ",".join(f"mlx5_{i}:1" for i in range(33))
    assert any("first 32" in m for m in warnings(check_nccl_var("NCCL_IB_HCA", many)))


def test_socket_ifname_reference_example() -> None:
    # env.rst: NCCL_SOCKET_IFNAME==ens1f0 -> the value is "=ens1f0", an exact match for ens1f0.
    assert clean("NCCL_SOCKET_IFNAME", "=ens1f0")
    assert clean("NCCL_SOCKET_IFNAME", "^docker,lo")


def test_socket_ifname_too_short_is_ignored() -> None:
    [issue] = check_nccl_var("NCCL_SOCKET_IFNAME", "e")
    assert issue.severity == "warning" and "ignored" in issue.message


def test_socket_ifname_ports_mean_nothing() -> None:
    assert warnings(check_nccl_var("NCCL_SOCKET_IFNAME", "=eth0:1"))
