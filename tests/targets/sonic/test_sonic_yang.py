"""SONiC CONFIG_DB validation against the YANG models (fabgen.targets.sonic.yang).

The fixtures under tests/data/sonic/ are hand-written: a RoCE leaf (8 x 400G ports,
DSCP 26 -> TC/queue 3 lossless with PFC and ECN, DSCP 48 -> TC 6 strict for CNP)
and the same file with six planted errors. The models are read from
../shared/reference/sonic-yang; libyang is an optional extra, so these tests skip
without it unless FABGEN_REQUIRE_REFERENCE=1.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, require_reference

import fabgen.targets.sonic.yang as sonic_yang
from fabgen.errors import FabgenError, Problem
from fabgen.targets.sonic.yang import check_sonic_files, validate_config_db

DATA = ROOT / "tests" / "data" / "sonic"
GOOD = DATA / "config_db_roce_leaf.json"
BAD = DATA / "config_db_roce_leaf_bad.json"


def _require_libyang() -> None:
    try:
        import libyang  # noqa: F401
    except ImportError:
        message = (
            "libyang not importable: apt-get install libyang2-dev && pip install 'fabgen[yang]'"
        )
        if os.environ.get("FABGEN_REQUIRE_REFERENCE") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def yang_dir() -> Path:
    _require_libyang()
    return require_reference("sonic-yang")


@pytest.fixture
def good() -> dict[str, Any]:
    return json.loads(GOOD.read_text())


def _ports(config: dict[str, Any]) -> list[str]:
    return list(config["PORT"])


def _leaf_with_ports(good: dict[str, Any], count: int) -> dict[str, Any]:
    """The good leaf grown to ``count`` ports, every per-port table filled in."""
    config = copy.deepcopy(good)
    template = "Ethernet0"
    per_port = {
        "QUEUE": ("0", "3", "6"),
        "BUFFER_PG": ("0", "3"),
        "BUFFER_QUEUE": ("0-2", "3", "4-7"),
    }
    for n in range(len(config["PORT"]), count):
        port = f"Ethernet{8 * n}"
        config["PORT"][port] = dict(
            good["PORT"][template],
            lanes=",".join(str(8 * n + lane + 1) for lane in range(8)),
            alias=f"etp{n + 1}",
            index=str(n + 1),
        )
        config["PORT_QOS_MAP"][port] = dict(good["PORT_QOS_MAP"][template])
        config["PFC_WD"][port] = dict(good["PFC_WD"][template])
        config["CABLE_LENGTH"]["AZURE"][port] = "40m"
        for table, indexes in per_port.items():
            for index in indexes:
                config[table][f"{port}|{index}"] = dict(good[table][f"{template}|{index}"])
    return config


def _paths(problems: list[Problem]) -> list[str]:
    return [p.path for p in problems]


# ------------------------------------------------------------------ valid input


def test_good_leaf_validates(yang_dir: Path, good: dict[str, Any]) -> None:
    assert validate_config_db(good, yang_dir) == []


def test_good_leaf_file_validates(yang_dir: Path) -> None:
    assert check_sonic_files([GOOD], yang_dir) == []


def test_good_fixture_covers_the_roce_tables(good: dict[str, Any]) -> None:
    expected = {
        "DEVICE_METADATA", "PORT", "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP",
        "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PORT_QOS_MAP", "WRED_PROFILE",
        "SCHEDULER", "QUEUE", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG",
        "BUFFER_QUEUE", "CABLE_LENGTH", "PFC_WD",
    }  # fmt: skip
    assert expected <= set(good)
    assert sorted(good["DSCP_TO_TC_MAP"]["ROCE"], key=int) == [str(d) for d in range(64)]
    assert "global" in good["PORT_QOS_MAP"]
    assert set(_ports(good)) < set(good["PORT_QOS_MAP"])


def test_64_port_leaf_reuses_the_schema(yang_dir: Path, good: dict[str, Any],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Hundreds of switches share one parsed model set: building it is most of a file's cost."""
    config = _leaf_with_ports(good, 64)
    validate_config_db(config, yang_dir)  # warm the per-directory schema cache
    built: list[Path] = []
    original = sonic_yang._Schema

    def building(ly: Any, root: Path) -> Any:
        built.append(root)
        return original(ly, root)

    monkeypatch.setattr(sonic_yang, "_Schema", building)
    for _ in range(3):
        assert validate_config_db(config, yang_dir) == []
    assert built == []


def test_input_is_not_modified(yang_dir: Path, good: dict[str, Any]) -> None:
    bad = copy.deepcopy(good)
    bad["PORT"]["Ethernet0"]["mtu"] = 9100
    bad["QUEUE"]["Ethernet0|3"]["scheduler"] = "missing"
    before = copy.deepcopy(bad)
    assert validate_config_db(bad, yang_dir)
    assert bad == before


def test_schema_is_cached_per_directory(yang_dir: Path) -> None:
    assert sonic_yang._schema(yang_dir) is sonic_yang._schema(yang_dir)


def test_type1_maps_are_found_from_the_models(yang_dir: Path) -> None:
    """The structural rule matches the list SONiC's sonic_yang_ext.py hard-codes."""
    schema = sonic_yang._schema(yang_dir)
    type1 = {t.name for t in schema.tables.values() for x in t.lists if x.inner}
    assert type1 == {
        "DSCP_TO_TC_MAP", "DOT1P_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP",
        "TC_TO_QUEUE_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "TC_TO_DSCP_MAP", "CABLE_LENGTH",
    }  # fmt: skip
    assert schema.tables["QUEUE"].module == "sonic-queue"
    assert [x.key_names for x in schema.tables["BUFFER_PG"].lists] == [("port", "pg_num")]
    assert set(schema.tables["DEVICE_METADATA"].containers) == {"localhost", "bmc"}


# ------------------------------------------------------------- planted errors

Mutation = Callable[[dict[str, Any]], None]


def _set(table: str, key: str, field: str, value: Any) -> Mutation:
    def mutate(config: dict[str, Any]) -> None:
        config[table][key][field] = value

    return mutate


PLANTED: dict[str, tuple[Mutation, str, str]] = {
    # name: (mutation, expected message fragment, expected jq path)
    "dscp-64": (
        _set("DSCP_TO_TC_MAP", "ROCE", "64", "3"),
        'DSCP_TO_TC_MAP|ROCE: DSCP "64" is not an integer 0..63',
        '.DSCP_TO_TC_MAP["ROCE"]["64"]',
    ),
    "dangling-map": (
        _set("PORT_QOS_MAP", "Ethernet8", "dscp_to_tc_map", "ROCE_V2"),
        'PORT_QOS_MAP|Ethernet8: dscp_to_tc_map "ROCE_V2" names no DSCP_TO_TC_MAP entry (it has: ROCE)',
        '.PORT_QOS_MAP["Ethernet8"]["dscp_to_tc_map"]',
    ),
    "wred-max-below-min": (
        _set("WRED_PROFILE", "ROCE_LOSSLESS", "green_max_threshold", "1000"),
        "WRED_PROFILE|ROCE_LOSSLESS: green_max_threshold 1000 is below green_min_threshold 153600",
        '.WRED_PROFILE["ROCE_LOSSLESS"]["green_max_threshold"]',
    ),
    "pfcwd-detection-out-of-range": (
        _set("PFC_WD", "Ethernet16", "detection_time", "50"),
        "PFC_WD|Ethernet16: detection_time 50 is outside the allowed range 100..5000",
        '.PFC_WD["Ethernet16"]["detection_time"]',
    ),
}


@pytest.mark.parametrize("name", PLANTED)
def test_planted_error_is_reported(yang_dir: Path, good: dict[str, Any], name: str) -> None:
    mutate, fragment, path = PLANTED[name]
    mutate(good)
    problems = validate_config_db(good, yang_dir, file="leaf.json")
    assert len(problems) == 1, problems
    assert fragment in problems[0].message
    assert problems[0].path == path
    assert problems[0].file == "leaf.json"


@pytest.mark.parametrize("name", PLANTED)
def test_models_alone_reject_each_planted_error(
    yang_dir: Path, good: dict[str, Any], name: str
) -> None:
    """The fabgen-side checks only repeat what the models already forbid."""
    mutate, _, path = PLANTED[name]
    mutate(good)
    run = sonic_yang._Run(sonic_yang._schema(yang_dir), good, "x", {}, frozenset())
    run.translate()
    run.validate(max_new=5)  # no run.check(): libyang on its own
    assert [p.path for p in run.problems] == [path]
    assert run.problems[0].message.endswith("[YANG]")


def test_unknown_table(yang_dir: Path, good: dict[str, Any]) -> None:
    good["PORT_QOS_MAPS"] = {"Ethernet0": {"pfc_enable": "3"}}
    (problem,) = validate_config_db(good, yang_dir)
    assert 'unknown table "PORT_QOS_MAPS"' in problem.message
    assert "did you mean 'PORT_QOS_MAP'" in problem.message
    assert problem.path == ".PORT_QOS_MAPS"


def test_unknown_table_allowed_explicitly(yang_dir: Path, good: dict[str, Any]) -> None:
    good["SNMP_COMMUNITY"] = {"public": {"TYPE": "RO"}}  # no sonic-snmp model in the reference set
    assert validate_config_db(good, yang_dir, allow_tables={"SNMP_COMMUNITY"}) == []
    assert len(validate_config_db(good, yang_dir)) == 1


MORE: dict[str, tuple[Mutation, str]] = {
    "unknown-field": (
        _set("SCHEDULER", "scheduler.0", "wieght", "5"),
        'SCHEDULER|scheduler.0: unknown field "wieght" (not in the SCHEDULER model); '
        "did you mean 'weight'?",
    ),
    "big-red-switch": (
        _set("PFC_WD", "GLOBAL", "BIG_RED_SWITCH", "enable"),
        'PFC_WD|GLOBAL: unknown field "BIG_RED_SWITCH"',
    ),
    "legacy-reference": (
        _set(
            "BUFFER_PG", "Ethernet0|3", "profile", "[BUFFER_PROFILE|pg_lossless_400000_40m_profile]"
        ),
        'the YANG leafref needs the plain name "pg_lossless_400000_40m_profile"',
    ),
    "number-not-string": (
        _set("PORT", "Ethernet0", "mtu", 9100),
        'PORT|Ethernet0: mtu: CONFIG_DB values are strings; write "9100", not 9100',
    ),
    "mtu-too-big": (
        _set("PORT", "Ethernet0", "mtu", "9300"),
        "PORT|Ethernet0: mtu 9300 is outside the allowed range 68..9216",
    ),
    "detection-below-poll": (
        _set("PFC_WD", "Ethernet0", "detection_time", "150"),
        "PFC_WD|Ethernet0: detection_time 150 ms is below PFC_WD|GLOBAL POLL_INTERVAL 200 ms",
    ),
    "wred-max-without-min": (
        lambda c: c["WRED_PROFILE"]["ROCE_LOSSLESS"].pop("red_min_threshold"),
        "red_max_threshold is set without red_min_threshold",
    ),
    "misspelt-pool": (
        _set("BUFFER_PROFILE", "egress_lossy_profile", "pool", "egress_lossles_pool"),
        'BUFFER_PROFILE|egress_lossy_profile: pool "egress_lossles_pool" names no BUFFER_POOL '
        "entry; did you mean 'egress_lossless_pool'?",
    ),
    "queue-on-absent-port": (
        lambda c: c["QUEUE"].__setitem__("Ethernet4|3", {"scheduler": "scheduler.1"}),
        'QUEUE|Ethernet4|3: ifname "Ethernet4" names no PORT entry',
    ),
    "queue-index-not-a-number": (
        lambda c: c["QUEUE"].__setitem__("Ethernet0|q3", {"scheduler": "scheduler.1"}),
        'QUEUE|Ethernet0|q3: queue index "q3" must be a number or a range "N-M"',
    ),
    "key-shape": (
        lambda c: c["BUFFER_PG"].__setitem__("Ethernet0", {"profile": "ingress_lossy_profile"}),
        'BUFFER_PG|Ethernet0: key does not match the BUFFER_PG model, which expects "port|pg_num"',
    ),
    "missing-mandatory": (
        lambda c: c["BUFFER_POOL"]["egress_lossless_pool"].pop("mode"),
        'BUFFER_POOL|egress_lossless_pool: mandatory field "mode" is missing',
    ),
    # Found by libyang only (no fabgen-side check), located through the retry loop.
    "pfc-enable-pattern": (
        _set("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "3,8"),
        'PORT_QOS_MAP|Ethernet0: pfc_enable "3,8": Unsatisfied pattern',
    ),
    "traffic-class-16": (
        _set("DSCP_TO_TC_MAP", "ROCE", "5", "16"),
        'DSCP_TO_TC_MAP|ROCE: dscp "5" -> tc "16": Invalid Traffic Class [YANG]',
    ),
    "boolean-capitalised": (
        _set("WRED_PROFILE", "ROCE_LOSSLESS", "wred_green_enable", "True"),
        'WRED_PROFILE|ROCE_LOSSLESS: wred_green_enable "True": Invalid non-boolean-encoded boolean',
    ),
    "bad-pg-number": (
        lambda c: c["BUFFER_PG"].__setitem__("Ethernet0|9", {"profile": "ingress_lossy_profile"}),
        "BUFFER_PG|Ethernet0|9: Invalid Buffer PG number [YANG]",
    ),
    "cable-length-unit": (
        _set("CABLE_LENGTH", "AZURE", "Ethernet0", "40"),
        'CABLE_LENGTH|AZURE: port "Ethernet0" -> length "40": Invalid cable length. [YANG]',
    ),
    "lanes-missing": (
        lambda c: c["PORT"]["Ethernet0"].pop("lanes"),
        'PORT|Ethernet0: lanes: Mandatory node "lanes" instance does not exist. [YANG]',
    ),
}


@pytest.mark.parametrize("name", MORE)
def test_more_mistakes_are_reported_once(yang_dir: Path, good: dict[str, Any], name: str) -> None:
    mutate, fragment = MORE[name]
    mutate(good)
    problems = validate_config_db(good, yang_dir)
    messages = [p.message for p in problems]
    assert len(problems) == 1, messages  # no duplicate, no cascade
    assert fragment in messages[0]


def test_every_instance_is_reported(yang_dir: Path, good: dict[str, Any]) -> None:
    for port in _ports(good):
        good["PFC_WD"][port]["detection_time"] = "50"
        good["PORT_QOS_MAP"][port]["tc_to_queue_map"] = "MISSING"
    problems = validate_config_db(good, yang_dir)
    assert len(problems) == 2 * len(_ports(good))


def test_libyang_errors_are_collected_up_to_a_cap(yang_dir: Path, good: dict[str, Any]) -> None:
    for port in _ports(good):
        good["PFC_WD"][port]["action"] = "shutdown"  # enum: only libyang checks it
    problems = validate_config_db(good, yang_dir, max_yang_errors=3)
    assert len(problems) == 4
    assert all('action "shutdown": Invalid enumeration value' in p.message for p in problems[:3])
    assert "stopped after 3 YANG errors" in problems[3].message
    everything = validate_config_db(good, yang_dir)
    assert len(everything) == len(_ports(good))


def test_a_pruned_entry_does_not_cascade(yang_dir: Path, good: dict[str, Any]) -> None:
    """Ethernet0 is unusable, but QUEUE, BUFFER_PG, CABLE_LENGTH... still name it."""
    del good["PORT"]["Ethernet0"]["speed"]
    del good["PORT"]["Ethernet8"]["lanes"]
    problems = validate_config_db(good, yang_dir)
    assert [p.path for p in problems] == [
        '.PORT["Ethernet0"]["speed"]',
        '.PORT["Ethernet8"]["lanes"]',
    ]


def test_a_malformed_entry_is_reported_once(yang_dir: Path, good: dict[str, Any]) -> None:
    """A dozen tables name Ethernet0; its own problem is the only one reported."""
    good["PORT"]["Ethernet0"] = "400000"
    good["PFC_WD"]["Ethernet8"] = {"action": "drop", "detection_time": None}
    problems = validate_config_db(good, yang_dir)
    assert [p.message for p in problems] == [
        "PORT|Ethernet0: an entry must be an object of field: value",
        "PFC_WD|Ethernet8: detection_time: null is not a CONFIG_DB value; leave the field out",
    ]


def test_comma_joined_leaf_list(yang_dir: Path, good: dict[str, Any]) -> None:
    """profile_list is a YANG leaf-list that CONFIG_DB stores as "a,b"."""
    good["BUFFER_PORT_INGRESS_PROFILE_LIST"] = {
        "Ethernet0": {"profile_list": "ingress_lossy_profile,pg_lossless_400000_40m_profile"}
    }
    good["BUFFER_PORT_EGRESS_PROFILE_LIST"] = {
        "Ethernet0": {"profile_list": ["egress_lossy_profile", "egress_lossless_profile"]}
    }
    assert validate_config_db(good, yang_dir) == []
    good["BUFFER_PORT_INGRESS_PROFILE_LIST"]["Ethernet0"]["profile_list"] += ",nope"
    (problem,) = validate_config_db(good, yang_dir)
    assert 'profile_list "nope" names no BUFFER_PROFILE entry' in problem.message


# ------------------------------------------------------------------ files


def _line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_bad_file_reports_all_planted_errors_with_positions(yang_dir: Path) -> None:
    text = BAD.read_text()
    problems = check_sonic_files([BAD], yang_dir)
    found = {p.path: p for p in problems}
    expected = {
        '.DSCP_TO_TC_MAP["ROCE"]["64"]': '"64": "3"',
        '.PORT_QOS_MAP["Ethernet8"]["dscp_to_tc_map"]': '"ROCE_V2"',
        '.PORT_QOS_MAP["Ethernet16"]["pfc_enable"]': '"3,8"',
        '.WRED_PROFILE["ROCE_LOSSLESS"]["green_max_threshold"]': '"15360"',
        '.PFC_WD["Ethernet24"]["detection_time"]': '"detection_time": "50"',
        ".PFC_WATCHDOG": '"PFC_WATCHDOG"',
    }
    assert set(found) == set(expected), [str(p) for p in problems]
    for path, needle in expected.items():
        problem = found[path]
        assert problem.file == str(BAD)
        assert problem.line == _line_of(text, needle), str(problem)
        assert problem.col > 1
        assert str(problem).startswith(f"{BAD}:{problem.line}:{problem.col}: ")
    assert [p.line for p in problems] == sorted(p.line for p in problems)


def test_files_with_syntax_errors_and_duplicates(yang_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "PORT": {\n    "Ethernet0": {"speed": "400000",}\n  }\n}\n')
    duplicate = tmp_path / "duplicate.json"
    duplicate.write_text(
        GOOD.read_text().replace('"mtu": "9100",', '"mtu": "9100",\n "mtu": "1500",', 1)
    )
    missing = tmp_path / "missing.json"
    problems = check_sonic_files([broken, duplicate, missing], yang_dir)
    assert [p.file for p in problems] == [str(broken), str(duplicate), str(missing)]
    assert problems[0].message.startswith("invalid JSON") and problems[0].line == 3
    assert 'duplicate key "mtu"' in problems[1].message
    assert problems[1].path == '.PORT["Ethernet0"]["mtu"]'
    assert problems[2].message.startswith("no such file")


def test_model_directory_errors(yang_dir: Path, tmp_path: Path, good: dict[str, Any]) -> None:
    with pytest.raises(FabgenError, match=r"no \.yang files"):
        validate_config_db(good, tmp_path)
    with pytest.raises(FabgenError, match="not found"):
        validate_config_db(good, tmp_path / "absent")


def test_missing_libyang_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Runs everywhere: it hides libyang rather than needing it."""
    monkeypatch.setitem(sys.modules, "libyang", None)  # makes `import libyang` fail
    with pytest.raises(FabgenError) as info:
        validate_config_db({}, tmp_path)
    text = str(info.value)
    assert "pip install 'fabgen[yang]'" in text
    assert "apt-get install libyang2-dev" in text


def test_threads_on_different_yang_dirs_do_not_mix_errors(yang_dir: Path, good: dict[str, Any],
                                                          tmp_path: Path) -> None:
    """libyang's logger is process-wide: runs against two directories must not read each other's errors."""
    import shutil
    import threading

    other = tmp_path / "yang-copy"
    shutil.copytree(yang_dir, other)
    configs = {}
    for field in ("detection_time", "restoration_time"):
        config = copy.deepcopy(good)
        for entry in config["PFC_WD"].values():
            if field in entry:
                entry[field] = "7"
        configs[field] = config
    expected = {kind: validate_config_db(config, yang_dir) for kind, config in configs.items()}
    assert all(expected.values()) and expected["detection_time"] != expected["restoration_time"]
    results: list[tuple[str, list[Problem]]] = []
    lock = threading.Lock()

    def work(kind: str, directory: Path) -> None:
        for _ in range(8):
            found = validate_config_db(configs[kind], directory)
            with lock:
                results.append((kind, found))

    threads = [threading.Thread(target=work, args=(kind, directory))
               for kind in configs for directory in (yang_dir, other)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so an unguarded logger would be shared
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    finally:
        sys.setswitchinterval(interval)
    assert len(results) == 32
    assert all(found == expected[kind] for kind, found in results)
