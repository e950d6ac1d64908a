"""The committed JSON Schema is the one the models export; examples point their language server at it."""

from __future__ import annotations

import json
import re

from fabgen.schema import spec_schema_text
from tests.helpers import EXAMPLE_NAMES, ROOT, example, run_cli

SCHEMA = ROOT / "schemas" / "fabgen-spec.schema.json"


def test_committed_schema_is_fresh() -> None:
    assert SCHEMA.read_text() == spec_schema_text(), "run: fabgen schema -o schemas/fabgen-spec.schema.json"


def test_schema_command_prints_it() -> None:
    code, stdout, _ = run_cli("schema")
    assert code == 0 and json.loads(stdout)["title"] == "ClusterSpec"


def test_examples_carry_the_language_server_header() -> None:
    for name in EXAMPLE_NAMES:
        first = example(name).read_text().splitlines()[0]
        assert first == "# yaml-language-server: $schema=../../schemas/fabgen-spec.schema.json", name


def test_schema_accepts_unit_strings() -> None:
    schema = json.loads(SCHEMA.read_text())
    speed = schema["$defs"]["Tier"]["properties"]["speed"]
    assert speed["type"] == "string" and "anyOf" not in speed, "a bare speed (400) needs a unit, as in the models"
    assert re.fullmatch(speed["pattern"], "400G") and not re.fullmatch(speed["pattern"], "400")
