"""The spec's JSON Schema, exported from the pydantic models (for YAML language servers).

``schemas/fabgen-spec.schema.json`` is this text, committed; a test fails when it
falls out of sync with the models.
"""

from __future__ import annotations

import json

from fabgen.spec import ClusterSpec

SCHEMA_ID = "https://fabgen.invalid/schemas/fabgen-spec.schema.json"


def spec_schema() -> dict[str, object]:
    schema = ClusterSpec.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}


def spec_schema_text() -> str:
    return json.dumps(spec_schema(), indent=2, sort_keys=True) + "\n"
