"""The course page validates a verification.json with the code Ajv generates from the published schema
(forgelab/site/assets/schema-check.js, written by ``npm run schema-check``): the committed file is exactly what Ajv
writes for the committed schema, and a page is never built with a validator of another schema."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from forgelab.core.registry import load_course
from forgelab.site import builder

COMMITTED = ROOT / "forgelab" / "site" / "assets" / "schema-check.js"


def test_the_committed_validator_is_what_ajv_writes_for_the_committed_schema(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "ajv" / "package.json").is_file():
        if os.environ.get("CI"):
            pytest.fail("CI has no node or no node_modules/ajv: .ci/run runs `npm install` (package.json)")
        pytest.skip("needs node and npm's ajv: `npm install` in the repository")
    fresh = tmp_path / "schema-check.js"
    done = subprocess.run([node, str(ROOT / "forgelab" / "site" / "schema_check.cjs"), "--out", str(fresh)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert fresh.read_bytes() == COMMITTED.read_bytes(), "run `npm run schema-check` and commit the result"


def test_the_validator_names_the_schema_it_was_made_from() -> None:
    assert builder.stale_schema_check() is None


def test_a_validator_of_another_schema_is_refused_before_a_page_is_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = builder.asset_text

    def older(name: str) -> str:  # as generated from another schema: another digest in its stamp
        text = real(name)
        return re.sub(r"schema sha256 [0-9a-f]{64}", "schema sha256 " + "0" * 64, text, count=1) \
            if name == "schema-check.js" else text

    monkeypatch.setattr(builder, "asset_text", older)
    reason = builder.stale_schema_check()
    assert reason is not None and "npm run schema-check" in reason, reason
    with pytest.raises(builder.SiteError, match="generated from another verification.schema.json"):
        builder.build_site(load_course(ROOT), tmp_path / "site")
    assert not (tmp_path / "site").exists()

    monkeypatch.setattr(builder, "asset_text", lambda name: "/* hand-written */\n" if name == "schema-check.js"
                        else real(name))
    assert "has no schema stamp" in (builder.stale_schema_check() or "")
