"""Lossless headroom: fabgen's numbers against SONiC's own ``buffer_headroom_mellanox.lua``.

The Lua (sonic-swss ``cfgmgr/``, in ../shared/reference/sonic-swss) runs
unchanged inside a real ``redis-server`` that this module starts on a Unix
socket of its own and stops by pid. Its inputs are loaded where the script
reads them: ``ASIC_TABLE|MELLANOX-SPECTRUM-N`` in STATE_DB (6) with the
constants of ``asic_table.j2`` (parsed from the reference, not fabgen's
copy), ``LOSSLESS_TRAFFIC_PATTERN``, ``DEFAULT_LOSSLESS_BUFFER_PARAMETER`` and
``BUFFER_POOL|ingress_lossless_pool`` in CONFIG_DB (4); then ``EVAL`` with the
port's speed, cable, MTU, gearbox delay and lane count, as buffermgrd passes
them. Without redis-server the tests skip (fail under FABGEN_REQUIRE_REFERENCE=1).
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require_reference

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan.model import FabricPlan
from fabgen.spec.buffers import ASIC_PRESETS, SonicBuffers
from fabgen.targets.sonic import config_db as sonic
from fabgen.targets.sonic.buffers import (
    Headroom,
    asic_generation,
    lossless_headroom,
    switch_buffers,
)
from tests.helpers import edited, example

CONFIG_DB, STATE_DB = 4, 6


class Redis:
    """The few RESP commands these tests need, over a Unix socket (no client library)."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""

    def call(self, *args: str | int) -> Any:
        parts = [str(a).encode() for a in args]
        self.sock.sendall(b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts))
        return self._read()

    def _line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def _read(self) -> Any:
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            while len(self.buffer) < size + 2:
                self.buffer += self.sock.recv(65536)
            data, self.buffer = self.buffer[:size], self.buffer[size + 2:]
            return data.decode()
        if kind == b"*":
            return [self._read() for _ in range(int(rest))]
        raise RuntimeError(f"unexpected reply {line!r}")


@pytest.fixture(scope="module")
def redis() -> Iterator[Redis]:
    binary = shutil.which("redis-server")
    if binary is None:
        message = "redis-server not installed (apt-get install -y redis-server)"
        if os.environ.get("FABGEN_REQUIRE_REFERENCE") == "1":
            pytest.fail(message)
        pytest.skip(message)
    with tempfile.TemporaryDirectory(prefix="fabgen-redis-") as tmp:
        path = str(Path(tmp) / "redis.sock")
        proc = subprocess.Popen([binary, "--port", "0", "--unixsocket", path, "--save", "", "--appendonly", "no",
                                 "--dir", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not Path(path).exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("redis-server did not start")
                time.sleep(0.02)
            yield Redis(path)
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def lua() -> str:
    return require_reference("sonic-swss", "buffer_headroom_mellanox.lua").read_text()


def asic_table() -> dict[str, dict[str, str]]:
    """``ASIC_TABLE:<key>`` -> its fields, from the reference asic_table.j2."""
    text = require_reference("sonic-device", "templates", "asic_table.j2").read_text()
    tables = {}
    for key, body in re.findall(r'"ASIC_TABLE:([A-Z0-9-]+)":\s*{([^}]*)}', text):
        tables[key] = dict(re.findall(r'"(\w+)":\s*"([^"]*)"', body))
    return tables


def _preset_key(asic_key: str) -> str:
    """``MELLANOX-SPECTRUM-4`` -> ``spectrum4``; ``MELLANOX-SPECTRUM`` -> ``spectrum``."""
    return asic_key.removeprefix("MELLANOX-").lower().replace("-", "")


class Lua:
    """The script in redis with one ASIC and one traffic pattern loaded."""

    def __init__(self, redis: Redis, script: str) -> None:
        self.redis = redis
        self.sha = redis.call("SCRIPT", "LOAD", script)
        self.state: tuple[str, int, int, int] | None = None

    def load(self, asic: str, lossless_mtu: int, small: int, shp: int) -> None:
        if self.state == (asic, lossless_mtu, small, shp):
            return
        r = self.redis
        r.call("FLUSHALL")
        r.call("SELECT", STATE_DB)
        fields = asic_table()[asic]
        r.call("HSET", f"ASIC_TABLE|{asic}", *itertools.chain.from_iterable(fields.items()))
        r.call("SELECT", CONFIG_DB)
        r.call("HSET", "LOSSLESS_TRAFFIC_PATTERN|AZURE", "mtu", lossless_mtu, "small_packet_percentage", small)
        r.call("HSET", "DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE", "default_dynamic_th", "0")
        pool = ["type", "ingress", "mode", "dynamic"] + (["xoff", str(shp)] if shp else [])
        r.call("HSET", "BUFFER_POOL|ingress_lossless_pool", *pool)
        self.state = (asic, lossless_mtu, small, shp)

    def headroom(self, speed_mbps: int, cable: str, mtu: int, lanes: int, gearbox: str = "") -> Headroom:
        # buffermgrd runs the script on APPL_DB (0); it SELECTs its own databases.
        self.redis.call("SELECT", 0)
        reply = self.redis.call("EVALSHA", self.sha, 1, "pg_lossless_profile", speed_mbps, cable, mtu, gearbox,
                                lanes)
        values = dict(item.split(":", 1) for item in reply)
        return Headroom(xoff=int(values["xoff"]), xon=int(values["xon"]), size=int(values["size"]))


@pytest.fixture(scope="module")
def script(redis: Redis, lua: str) -> Lua:
    return Lua(redis, lua)


def _fabgen(asic: str, speed_mbps: int, cable: int, mtu: int, lanes: int, lossless_mtu: int = 1024,
            small: int = 50, shp: int = 0) -> Headroom:
    constants = ASIC_PRESETS[_preset_key(asic)].model_copy(
        update={"lossless_mtu": lossless_mtu, "small_packet_percentage": small})
    return lossless_headroom(speed_mbps // 1000, cable, mtu, lanes, constants, asic_generation(_preset_key(asic)),
                             shp > 0)


# -- the constants ---------------------------------------------------------------------------


def test_asic_presets_are_asic_table_j2() -> None:
    """fabgen's per-ASIC constants are SONiC's, for every Spectrum generation the template lists."""
    tables = asic_table()
    assert {_preset_key(k) for k in tables} >= {"spectrum", "spectrum2", "spectrum3", "spectrum4", "spectrum5",
                                                "spectrum6"}
    for key, fields in tables.items():
        preset = ASIC_PRESETS[_preset_key(key)]
        assert preset.cell_size == int(fields["cell_size"]), key
        assert preset.pipeline_latency_kb == float(fields["pipeline_latency"]), key
        assert preset.mac_phy_delay_kb == float(fields["mac_phy_delay"]), key
        assert preset.peer_response_time_kb == float(fields["peer_response_time"]), key
    assert asic_generation("spectrum") == 1 and asic_generation("Spectrum-4") == 4


# -- the script, run unchanged ---------------------------------------------------------------


def test_the_issues_table(script: Lua) -> None:
    """Issue 14: 400G, 40 m, 8 lanes, port MTU 9100, Spectrum-4, SONiC's default traffic pattern."""
    script.load("MELLANOX-SPECTRUM-4", 1024, 50, 0)
    expected = Headroom(xoff=119_808, xon=38_912, size=167_936)
    assert script.headroom(400_000, "40m", 9100, 8) == expected
    assert _fabgen("MELLANOX-SPECTRUM-4", 400_000, 40, 9100, 8) == expected


SPEEDS = (10_000, 25_000, 40_000, 50_000, 100_000, 200_000, 400_000, 800_000, 5_000, 20_000)
"""5G and 20G have no pause-quanta figure: the script falls back to the ASIC's peer response time."""
CABLES = (1, 3, 5, 40, 100, 300, 2000)


@pytest.mark.parametrize("asic", sorted(asic_table()) if require_reference("sonic-device").exists() else [])
@pytest.mark.parametrize(("lossless_mtu", "small", "shp"), [(1024, 50, 0), (1024, 50, 16 << 20), (4096, 0, 0),
                                                              (1500, 100, 0), (9216, 90, 0)])
def test_fabgen_equals_the_lua_everywhere(script: Lua, asic: str, lossless_mtu: int, small: int, shp: int) -> None:
    script.load(asic, lossless_mtu, small, shp)
    differ = []
    for speed, cable, mtu, lanes in itertools.product(SPEEDS, CABLES, (1500, 9100, 9216), (4, 8)):
        lua = script.headroom(speed, f"{cable}m", mtu, lanes)
        ours = _fabgen(asic, speed, cable, mtu, lanes, lossless_mtu, small, shp)
        if lua != ours:
            differ.append((speed, cable, mtu, lanes, lua, ours))
    assert differ == []


def test_gearbox_delay_is_passed_through(script: Lua) -> None:
    script.load("MELLANOX-SPECTRUM-4", 1024, 50, 0)
    constants = SonicBuffers(gearbox_delay_ns=730)
    assert script.headroom(100_000, "5m", 9100, 4, "730") == lossless_headroom(100, 5, 9100, 4, constants, 4)


# -- what fabgen plans and writes ------------------------------------------------------------


def _sonic_plans() -> list[FabricPlan]:
    def traditional(data: dict[str, Any]) -> None:
        for tier in ("leaf", "spine"):
            data["fabric"]["tiers"][tier]["buffers"] = {"model": "traditional"}

    def acs(data: dict[str, Any]) -> None:  # ACS-SN5600: 400G on 8-lane cages (xon doubled, one more MTU)
        for tier in ("leaf", "spine"):
            del data["fabric"]["tiers"][tier]["hwsku"]
            data["fabric"]["tiers"][tier]["ports"] = 64

    return [plan_fabric(load_spec(example("sonic-pod"))), plan_fabric(load_spec(edited(traditional, "sonic-pod"))),
            plan_fabric(load_spec(edited(acs, "sonic-pod")))]


def test_every_port_fabgen_plans_gets_the_lua_headroom(script: Lua) -> None:
    """The headroom fabgen computes for each port of each SONiC switch is what buffermgrd will compute."""
    checked = 0
    for fabric in _sonic_plans():
        for switch in (s for s in fabric.switches if s.os == "sonic"):
            buffers = switch_buffers(fabric, switch)
            c = buffers.constants
            asic = f"MELLANOX-SPECTRUM-{asic_generation(switch.asic or buffers.sku.asic)}"
            script.load(asic, c.lossless_mtu, c.small_packet_percentage, c.shared_headroom_pool)
            config = sonic.config_db(fabric, switch)
            for port, headroom in buffers.headroom:
                row = config["PORT"][port]
                cable = config["CABLE_LENGTH"]["AZURE"][port] if buffers.model == "dynamic" else None
                lanes = len(row["lanes"].split(","))
                lua = script.headroom(int(row["speed"]), cable or f"{_port(switch, port).cable_m}m",
                                      int(row["mtu"]), lanes)
                assert headroom == lua, (switch.name, port)
                checked += 1
    assert checked > 150


def _port(switch: Any, name: str) -> Any:
    return next(p for p in switch.ports if p.name == name)


def test_traditional_profiles_are_the_reference_lookup_rows() -> None:
    """Every lossless profile fabgen writes in the traditional model is a row of the SKU's own file."""
    fabric = _sonic_plans()[1]
    written = 0
    for switch in fabric.switches:
        folder = require_reference("sonic-device", switch.platform or "", switch.hwsku or "")
        rows = {}
        for line in (folder / "pg_profile_lookup.ini").read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                speed, cable, size, xon, xoff, threshold = line.split()
                rows[f"pg_lossless_{speed}_{cable}_profile"] = {
                    "pool": "ingress_lossless_pool", "size": size, "xon": xon, "xoff": xoff, "dynamic_th": threshold}
        config = sonic.config_db(fabric, switch)
        for name, profile in config["BUFFER_PROFILE"].items():
            if name.startswith("pg_lossless_"):
                assert profile == rows[name], (switch.name, name)
                written += 1
        for key, pg in config["BUFFER_PG"].items():
            port = key.split("|")[0]
            if pg["profile"].startswith("pg_lossless_"):
                speed, cable = config["PORT"][port]["speed"], config["CABLE_LENGTH"]["AZURE"][port]
                assert pg["profile"] == f"pg_lossless_{speed}_{cable}_profile"  # buffermgr.cpp's own key
    assert written >= 2
