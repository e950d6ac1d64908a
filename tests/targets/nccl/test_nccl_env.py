"""The ``nccl-env`` target and the NCCL environment it prints.

Both files are read back the way their consumers read them (NCCL's conf reader,
systemd's EnvironmentFile parser, from fabgen.targets.nccl.conf) and must give exactly
``host.nccl_env``. The derived values are pinned against the rules in
shared/reference/nccl.md §0 and §4: exact HCA names with ports in rail order,
out-of-service NICs dropped, TC = DSCP << 2 | ECN, GID index only before 2.21.
Hand-set variables that NCCL would ignore or misread are refused at validation
with the file:line:col of their key.
"""

from __future__ import annotations

import re

import pytest
from conftest import EXAMPLES, ROOT

import fabgen.pipeline as pipeline
from fabgen.errors import SpecError
from fabgen.plan.model import Host
from fabgen.targets.nccl.conf import parse_nccl_conf, parse_nccl_conf_located, parse_systemd_env
from fabgen.targets.nccl.env import validate_env_file
from fabgen.targets.nccl.variables import check_nccl_var
from fabgen.targets.registry import target_names

LAB = EXAMPLES / "lab" / "spec.yaml"
NDV5 = ROOT / "tests" / "data" / "ndv5" / "spec.yaml"


def edit(text: str, **replace: str) -> str:
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def lab(**replace: str) -> str:
    return edit(LAB.read_text(), **replace)


def with_version(version: str, text: str | None = None) -> str:
    return edit(text or LAB.read_text(), **{"version: 2.23.4": f"version: {version}"})


def hosts(text: str) -> dict[str, Host]:
    plan = pipeline.plan_fabric(pipeline.load_spec(text))
    return {h.name: h for h in plan.hosts}


def env_of(text: str, host: str = "lab01") -> dict[str, str]:
    return dict(hosts(text)[host].nccl_env)


def render(text: str) -> dict[str, str]:
    return pipeline.render_fabric(pipeline.plan_fabric(pipeline.load_spec(text)), targets=["nccl-env"])


def position(text: str, needle: str) -> tuple[int, int]:
    """1-based line:col of the only occurrence of ``needle``."""
    assert text.count(needle) == 1, needle
    index = text.index(needle)
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def refused(text: str) -> list:
    with pytest.raises(SpecError) as caught:
        pipeline.load_spec(text)
    return caught.value.problems


# -- the files ------------------------------------------------------------------------


@pytest.mark.parametrize("spec", [LAB, NDV5])
def test_both_files_read_back_as_the_plan(spec) -> None:
    text = spec.read_text()
    files = render(text)
    planned = hosts(text)
    assert set(files) == {f"hosts/{h}/nccl.{ext}" for h in planned for ext in ("conf", "env")}
    for name, host in planned.items():
        expected = dict(host.nccl_env)
        conf = files[f"hosts/{name}/nccl.conf"]
        unit = files[f"hosts/{name}/nccl.env"]
        assert parse_nccl_conf(conf, strict=True) == expected
        assert parse_systemd_env(unit, strict=True) == expected
        assert list(parse_nccl_conf_located(conf)) == [k for k, _ in host.nccl_env]  # file order = plan order
        assert validate_env_file(f"hosts/{name}/nccl.conf", conf) == []
        assert validate_env_file(f"hosts/{name}/nccl.env", unit) == []


def test_conf_is_exactly_nccl_syntax() -> None:
    conf = render(LAB.read_text())["hosts/lab01/nccl.conf"]
    assert conf.endswith("\n") and "\r" not in conf
    for line in conf.splitlines():
        if line.startswith("#"):
            continue
        # NAME=value, no export, no quotes, no spaces around '=' (NCCL keeps them all).
        assert re.fullmatch(r"NCCL_[A-Z0-9_]+=[^\s'\"]+", line), line


def test_header_names_generator_and_cluster_and_no_time() -> None:
    first = render(LAB.read_text())
    again = render(LAB.read_text())
    assert first == again
    for path, text in first.items():
        header = [line for line in text.splitlines() if line.startswith("#")]
        assert 1 <= len(header) <= 3 and text.startswith("# ")
        assert "fabgen" in header[0] and "cluster lab" in header[0]
        assert not re.search(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}", "\n".join(header)), path


def test_target_is_registered_per_host() -> None:
    assert "nccl-env" in target_names()


def test_values_needing_escapes_survive_both_files() -> None:
    text = lab(**{"    NCCL_IB_RETRY_CNT: 7\n": "    NCCL_IB_RETRY_CNT: 7\n    NCCL_DEBUG_FILE: /tmp/nccl.%h.%p#log\n"})
    files = render(text)
    assert parse_nccl_conf(files["hosts/lab01/nccl.conf"])["NCCL_DEBUG_FILE"] == "/tmp/nccl.%h.%p#log"
    assert parse_systemd_env(files["hosts/lab01/nccl.env"])["NCCL_DEBUG_FILE"] == "/tmp/nccl.%h.%p#log"


# -- derived values -------------------------------------------------------------------


def test_hca_exact_names_ports_rail_order_in_service_only() -> None:
    planned = hosts(LAB.read_text())
    assert dict(planned["lab01"].nccl_env)["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"
    assert dict(planned["lab04"].nccl_env)["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_2:1"  # mlx5_3 RMA


def test_hca_follows_rails_not_the_nic_list() -> None:
    text = lab(**{"numa: 0, rail: 0,": "numa: 0, rail: 3, port: 2,", "numa: 1, rail: 3,": "numa: 1, rail: 0,"})
    assert env_of(text)["NCCL_IB_HCA"] == "=mlx5_3:1,mlx5_1:1,mlx5_2:1,mlx5_0:2"


def test_hca_carries_rails_from_nccl_2_30_7() -> None:
    assert env_of(with_version("2.30.7"))["NCCL_IB_HCA"] == "=mlx5_0:1:0,mlx5_1:1:1,mlx5_2:1:2,mlx5_3:1:3"
    assert env_of(with_version("2.30.7"), "lab04")["NCCL_IB_HCA"] == "=mlx5_0:1:0,mlx5_1:1:1,mlx5_2:1:2"


def test_traffic_class_is_dscp_with_ect0() -> None:
    env = env_of(LAB.read_text())
    assert env["NCCL_IB_TC"] == "106"  # 26 << 2 | 0b10


def test_traffic_class_without_dcqcn_has_no_ecn_bits() -> None:
    env = env_of(lab(**{"  dcqcn:\n    enabled: true\n": "  dcqcn:\n    enabled: false\n"}))
    assert env["NCCL_IB_TC"] == "104"


def test_traffic_class_follows_the_roce_dscp() -> None:
    env = env_of(lab(**{"role: roce, dscp: [26]": "role: roce, dscp: [24]"}))
    assert env["NCCL_IB_TC"] == "98"


@pytest.mark.parametrize(("version", "gid"), [("2.18.5", True), ("2.20.5", True), ("2.21.5", False),
                                              ("2.23.4", False), ("2.30.7", False)])
def test_gid_index_only_before_2_21(version: str, gid: bool) -> None:
    env = env_of(with_version(version))
    assert ("NCCL_IB_GID_INDEX" in env) is gid
    if gid:
        assert env["NCCL_IB_GID_INDEX"] == "3"
        assert "NCCL_IB_ROCE_VERSION_NUM" not in env and "NCCL_IB_ADDR_RANGE" not in env
    else:
        assert env["NCCL_IB_ROCE_VERSION_NUM"] == "2" and env["NCCL_IB_ADDR_RANGE"] == "10.10.0.0/24"


def test_variables_only_for_versions_that_read_them() -> None:
    assert "NCCL_IB_FIFO_TC" not in env_of(with_version("2.21.5", with_cts()))
    assert "NCCL_GIN_IB_TC" not in env_of(with_version("2.30.5"))
    assert env_of(with_version("2.30.7"))["NCCL_GIN_IB_TC"] == "106"


@pytest.mark.parametrize("version", ["2.18.5", "2.21.5", "2.22.3", "2.23.4", "2.27.3", "2.30.7"])
def test_derived_values_pass_the_catalog_cleanly(version: str) -> None:
    for host in hosts(with_version(version)).values():
        for name, value in host.nccl_env:
            assert check_nccl_var(name, value, version, in_conf_file=True) == [], (name, value)


def test_rest_of_the_derived_environment() -> None:
    env = env_of(LAB.read_text())
    assert env["NCCL_SOCKET_IFNAME"] == "=eno1"
    assert env["NCCL_TOPO_FILE"] == "/etc/fabgen/nccl-topo.xml"
    assert env["NCCL_CROSS_NIC"] == "0"
    assert env_of(lab(**{"  env:\n": "  cross_nic: 1\n  env:\n"}))["NCCL_CROSS_NIC"] == "1"


def test_hand_set_values_override_in_place() -> None:
    text = lab(**{
        "    NCCL_IB_RETRY_CNT: 7\n": "    NCCL_IB_RETRY_CNT: 7\n    NCCL_IB_TC: 98\n    NCCL_IB_SPLIT_DATA_ON_QPS: true\n",
        "        nics_out_of_service: [mlx5_3]\n":
            "        nics_out_of_service: [mlx5_3]\n        nccl_env: {NCCL_IB_TIMEOUT: 22}\n",
    })
    lab01, lab04 = (hosts(text)[h].nccl_env for h in ("lab01", "lab04"))
    names = [k for k, _ in lab01]
    assert names.index("NCCL_IB_TC") == 1 and dict(lab01)["NCCL_IB_TC"] == "98"
    assert dict(lab01)["NCCL_IB_SPLIT_DATA_ON_QPS"] == "1"
    assert dict(lab01)["NCCL_IB_TIMEOUT"] == "20" and dict(lab04)["NCCL_IB_TIMEOUT"] == "22"


# -- refused at validation --------------------------------------------------------------


def test_unknown_variable_is_refused_at_its_key() -> None:
    text = lab(**{"    NCCL_IB_RETRY_CNT: 7\n": "    NCCL_IB_RETRY_CNT: 7\n    NCCL_IB_HCAS: =mlx5_0:1\n"})
    [problem] = refused(text)
    assert (problem.line, problem.col) == position(text, "NCCL_IB_HCAS")
    assert problem.message.startswith("unknown NCCL variable NCCL_IB_HCAS")
    assert problem.message.endswith("did you mean NCCL_IB_HCA?")
    assert problem.path == "nccl.env.NCCL_IB_HCAS"


def test_unknown_variable_location_in_a_file(tmp_path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(lab(**{"    NCCL_IB_RETRY_CNT: 7\n": "    NCCL_IB_RETRY_CNT: 7\n    NCCL_IB_HCAS: =mlx5_0:1\n"}))
    with pytest.raises(SpecError) as caught:
        pipeline.load_spec(spec)
    line, col = position(spec.read_text(), "NCCL_IB_HCAS")
    assert str(caught.value.problems[0]).startswith(
        f"{spec}:{line}:{col}: unknown NCCL variable NCCL_IB_HCAS; ")
    assert col == 5


@pytest.mark.parametrize("value", ['"0106"', "0106"])
def test_octal_looking_tc_is_refused(value: str) -> None:
    text = lab(**{"    NCCL_IB_RETRY_CNT: 7\n": f"    NCCL_IB_RETRY_CNT: 7\n    NCCL_IB_TC: {value}\n"})
    [problem] = refused(text)
    assert (problem.line, problem.col) == position(text, "NCCL_IB_TC")
    assert "octal" in problem.message and "70" in problem.message and "106" in problem.message


def test_retry_count_out_of_range_is_refused() -> None:
    text = lab(**{"NCCL_IB_RETRY_CNT: 7": "NCCL_IB_RETRY_CNT: 8"})
    [problem] = refused(text)
    assert (problem.line, problem.col) == position(text, "NCCL_IB_RETRY_CNT")
    assert "NCCL_IB_RETRY_CNT=8 is out of range (0..7)" in problem.message


def test_bad_host_override_is_refused_at_its_key() -> None:
    text = lab(**{"        nics_out_of_service: [mlx5_3]\n":
                  "        nics_out_of_service: [mlx5_3]\n        nccl_env:\n          NCCL_IB_TIMEOUT: 22\n"
                  "          NCCL_IB_RETRY_CNT: 9\n"})
    [problem] = refused(text)
    assert (problem.line, problem.col) == position(text, "NCCL_IB_RETRY_CNT: 9")
    assert problem.path == "hosts[0].overrides.lab04.nccl_env.NCCL_IB_RETRY_CNT"


def test_every_error_is_reported() -> None:
    text = lab(**{"NCCL_IB_TIMEOUT: 20": "NCCL_IB_TIMEOUT: 40", "NCCL_IB_RETRY_CNT: 7": "NCCL_IB_RETRY_CNT: 8"})
    assert len(refused(text)) == 2


def test_warnings_are_not_refused() -> None:
    # GID index on NCCL >= 2.21 and a timeout outside the usual band are warnings: the linter's job.
    text = lab(**{"NCCL_IB_TIMEOUT: 20": "NCCL_IB_TIMEOUT: 23\n    NCCL_IB_GID_INDEX: 3"})
    env = env_of(text)
    assert env["NCCL_IB_GID_INDEX"] == "3" and env["NCCL_IB_TIMEOUT"] == "23"


def test_version_dependent_errors_use_the_spec_version() -> None:
    # Empty port parses as port 0 (matches nothing) before 2.30.7; fine from 2.30.7 on.
    line = "    NCCL_IB_RETRY_CNT: 7\n"
    hca = line + '    NCCL_IB_HCA: "=mlx5_0::0"\n'
    assert refused(lab(**{line: hca}))
    assert env_of(with_version("2.30.7", lab(**{line: hca})))["NCCL_IB_HCA"] == "=mlx5_0::0"


def test_validator_reports_unreadable_files() -> None:
    assert validate_env_file("x/nccl.conf", "export NCCL_IB_TC=106\n")
    assert validate_env_file("x/nccl.env", "NCCL_IB_TC=1\nNCCL_IB_TC=2\n")


# -- where NCCL reads nccl.conf from, per version -------------------------------------


def conf_header(version: str) -> list[str]:
    files = render(with_version(version))
    return [line for line in files["hosts/lab01/nccl.conf"].splitlines() if line.startswith("#")]


@pytest.mark.parametrize("version", ["2.18.5", "2.21.5", "2.22.3"])
def test_conf_header_before_2_23_does_not_promise_nccl_conf_file(version: str) -> None:
    """NCCL 2.21.5 and 2.22.3 read ~/.nccl.conf and /etc/nccl.conf only (src/misc/param.cc at those tags)."""
    header = "\n".join(conf_header(version))
    assert f"NCCL {version} reads this file only as /etc/nccl.conf or ~/.nccl.conf" in header
    assert "ignores NCCL_CONF_FILE" in header
    assert "from the path in NCCL_CONF_FILE" not in header


@pytest.mark.parametrize("version", ["2.23.4", "2.27.3", "2.30.7"])
def test_conf_header_from_2_23_names_all_three_places(version: str) -> None:
    header = "\n".join(conf_header(version))
    assert f"NCCL {version} reads this file as /etc/nccl.conf, as ~/.nccl.conf, or from the path in NCCL_CONF_FILE" \
        in header
    assert "ignores NCCL_CONF_FILE" not in header


def test_env_file_header_does_not_depend_on_the_version() -> None:
    old, new = (render(with_version(v))["hosts/lab01/nccl.env"] for v in ("2.21.5", "2.23.4"))
    assert old == new


# -- NCCL_IB_FIFO_TC: only for a strict control (cts) class ---------------------------

CTS_CLASS = "    cts:     {role: cts, dscp: [40], priority: 5, strict: true}\n"


def with_cts(text: str | None = None, cls: str = CTS_CLASS) -> str:
    marker = "    cnp:     {role: cnp, dscp: [48], priority: 6, strict: true}\n"
    return edit(text or LAB.read_text(), **{marker: marker + cls})


def test_no_fifo_tc_without_a_control_class() -> None:
    """FIFO_TC equal to IB_TC is what NCCL does anyway: writing it changes nothing and suggests otherwise."""
    for version in ("2.22.3", "2.23.4", "2.30.7"):
        assert "NCCL_IB_FIFO_TC" not in env_of(with_version(version))


def test_fifo_tc_is_the_strict_control_class() -> None:
    env = env_of(with_cts())
    assert env["NCCL_IB_FIFO_TC"] == "160" and env["NCCL_IB_TC"] == "106"  # DSCP 40 << 2, no ECN on the class


def test_fifo_tc_carries_ect0_when_the_control_class_marks_ecn() -> None:
    cls = "    cts:     {role: cts, dscp: [40], priority: 5, strict: true, ecn: {min: 10KB, max: 100KB}}\n"
    assert env_of(with_cts(cls=cls))["NCCL_IB_FIFO_TC"] == "162"


def test_no_fifo_tc_for_a_weighted_control_class() -> None:
    cls = "    cts:     {role: cts, dscp: [40], priority: 5, weight: 10}\n"
    assert "NCCL_IB_FIFO_TC" not in env_of(with_cts(cls=cls))


def test_control_class_needs_its_own_dscps() -> None:
    text = with_cts(cls="    cts:     {role: cts, dscp: other, priority: 5, strict: true}\n")
    text = text.replace("default: {role: default, dscp: other", "default: {role: default, dscp: [0]")
    [problem] = refused(text)
    assert "cts class needs its own DSCP list" in problem.message
    assert (problem.line, problem.col) == position(text, "other, priority: 5")


def test_one_control_class_at_most() -> None:
    text = with_cts(cls=CTS_CLASS + "    cts2:    {role: cts, dscp: [41], priority: 4, strict: true}\n")
    [problem] = refused(text)
    assert "at most one traffic class can have role: cts" in problem.message


# -- QP scaling when switches hash on the QP ------------------------------------------

NO_QP_HASH = {"roce_qp_hash: true": "roce_qp_hash: false"}


def test_qp_hash_gives_several_qps_per_connection() -> None:
    assert env_of(LAB.read_text())["NCCL_IB_QPS_PER_CONNECTION"] == "4"
    assert "NCCL_IB_QPS_PER_CONNECTION" not in env_of(lab(**NO_QP_HASH))


@pytest.mark.parametrize(("version", "split"), [("2.18.5", "0"), ("2.19.4", "0"), ("2.20.5", None),
                                                ("2.23.4", None), ("2.30.7", None)])
def test_round_robin_written_only_where_nccl_splits_by_default(version: str, split: str | None) -> None:
    """NCCL_IB_SPLIT_DATA_ON_QPS defaults to 1 in 2.18-2.19 and 0 from 2.20 (net_ib.cc at v2.20.3-1)."""
    env = env_of(with_version(version))
    assert env.get("NCCL_IB_SPLIT_DATA_ON_QPS") == split
    assert "NCCL_IB_SPLIT_DATA_ON_QPS" not in env_of(with_version(version, lab(**NO_QP_HASH)))


def test_hand_set_qp_count_wins() -> None:
    text = lab(**{"    NCCL_IB_RETRY_CNT: 7\n": "    NCCL_IB_RETRY_CNT: 7\n    NCCL_IB_QPS_PER_CONNECTION: 8\n"})
    assert env_of(text)["NCCL_IB_QPS_PER_CONNECTION"] == "8"
