"""plan --format json --detail: one JSON document holding every device, port, peer, address and session."""

from __future__ import annotations

import io
import json

from fabgen.pipeline import load_spec, plan_fabric
from fabgen.plan.detail import write_detail
from fabgen.plan.summary import summary
from tests.helpers import example, run_cli


def test_lab_detail_is_the_plan() -> None:
    code, out, err = run_cli("plan", str(example("lab")), "--format", "json", "--detail")
    assert code == 0, err
    doc = json.loads(out)
    fabric = plan_fabric(load_spec(example("lab")))
    assert doc["summary"] == json.loads(json.dumps(summary(fabric)))
    assert [s["name"] for s in doc["switches"]] == [s.name for s in fabric.switches]
    assert [h["name"] for h in doc["hosts"]] == [h.name for h in fabric.hosts]
    leaf = doc["switches"][0]
    assert leaf["name"] == "leaf-r0-p00-01" and leaf["ports"][0] == {
        "name": "Ethernet1/1", "index": 1, "speed": 400, "direction": "down", "peer": "lab01", "peer_port": "ens1np0",
        "peer_kind": "host", "address": "10.10.0.0/31", "peer_address": "10.10.0.1", "rail": 0, "shutdown": False}
    assert leaf["bgp"]["asn"] == fabric.switches[0].bgp.asn  # type: ignore[union-attr]
    assert {n["peer"] for n in leaf["bgp"]["neighbors"]} == {"spine-01", "spine-02"}
    lab04 = next(h for h in doc["hosts"] if h["name"] == "lab04")
    assert [n["in_service"] for n in lab04["nics"] if n["rail"] is not None] == [True, True, True, False]
    # every link's two ends are the two ports that name each other
    ports = {(s["name"], p["name"]): p for s in doc["switches"] for p in s["ports"]}
    for link in doc["links"]:
        b = ports[(link["b"], link["b_port"])]
        assert (b["peer"], b["peer_port"], b["address"]) == (link["a"], link["a_port"], link["b_address"])


def test_24k_detail_holds_every_port_and_link() -> None:
    fabric = plan_fabric(load_spec(example("llama3-24k")))
    out = io.StringIO()
    write_detail(fabric, out)
    doc = json.loads(out.getvalue())
    assert len(doc["switches"]) == 2048 and len(doc["hosts"]) == 3072 and len(doc["links"]) == 73728
    assert sum(len(s["ports"]) for s in doc["switches"]) == sum(len(s.ports) for s in fabric.switches)
    assert sum(len(s["bgp"]["neighbors"]) for s in doc["switches"]) == 2 * 49152
    assert out.getvalue().count("\n") == 2048 + 3072 + 73728 + 7  # one element per line: greppable, streamable


def test_detail_needs_json() -> None:
    code, _, err = run_cli("plan", str(example("lab")), "--detail")
    assert code == 2 and "--detail needs --format json" in err
