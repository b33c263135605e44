"""verification.schema.json is generated from its Pydantic model (forgelab/core/verification.py): `forgelab build`
writes it, `forgelab build --check` fails while it differs, and the model accepts the evidence `check` writes."""

from __future__ import annotations

import json

from conftest import WorkbookCopy
from forgelab.core.evidence import schema as shipped_schema
from forgelab.core.verification import Verification, schema, schema_text

SCHEMA = "forgelab/data/verification.schema.json"


def test_the_shipped_schema_is_the_generated_one() -> None:
    assert shipped_schema() == schema()
    assert schema()["additionalProperties"] is False and "anyOf" not in schema_text()  # what the page's validator reads


def test_build_writes_the_schema_and_check_reports_it_stale(workbook: WorkbookCopy) -> None:
    path = workbook.root / SCHEMA
    edited = json.loads(path.read_text(encoding="utf-8"))
    edited["properties"]["accepted"] = {"type": "string"}  # an edit by hand
    path.write_text(json.dumps(edited, indent=2) + "\n", encoding="utf-8")

    stale = workbook.run("build", "--check", timeout=600)
    assert stale.returncode != 0
    assert f"out of date: {SCHEMA} — differs from the model in forgelab/core/verification.py" in stale.stdout

    built = workbook.run("build", "01", timeout=300)
    assert built.returncode == 0, built.output
    assert f"wrote {SCHEMA} from its model" in built.stdout
    assert path.read_text(encoding="utf-8") == schema_text()
    assert workbook.run("build", "--check", timeout=600).returncode == 0


def test_the_model_reads_the_evidence_check_writes(workbook: WorkbookCopy, verification_validator) -> None:
    result = workbook.run("check", "01", "--target", "solution")
    assert result.returncode in (0, 1), result.output
    document = workbook.evidence("01-instruction-hierarchy")
    verification_validator(document)
    assert Verification.model_validate(document).stage.number == "01"
