"""The class's pieces that need no hub: what `forgelab submit` packs, the store's crash rules, the LMS exports."""

from __future__ import annotations

import csv
import hashlib
import html
import io
import re
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from forgelab.core.files import LayoutError
from forgelab.hub.classroom import canvas_csv, moodle_csv
from forgelab.hub.client import Connection, ServiceError, pack
from forgelab.hub.models import Deadline, Feedback, Receipt
from forgelab.hub.store import Store


def _workbook(root: Path) -> Path:
    for relative, text in {"forge/__init__.py": "", "forge/instructions.py": "X = 1\n",
                           "transfer/test_transfer_01.py": "def test_t():\n    pass\n",
                           "labs/01-instruction-hierarchy/forge/instructions.py": "Y = 2\n",
                           "labs/01-instruction-hierarchy/notes.txt": "not graded\n",
                           "evidence/prompt-context-output/01-instruction-hierarchy/design-answer.md": "answer\n",
                           "notebooks/01.ipynb": "{}", ".forgelab/receipts/old.json": "{}",
                           "forge/__pycache__/instructions.cpython-311.pyc": "x", "secret.txt": "no"}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_submit_packs_exactly_what_grading_reads(tmp_path: Path) -> None:
    data, files = pack(_workbook(tmp_path))
    assert files == ["evidence/prompt-context-output/01-instruction-hierarchy/design-answer.md", "forge/__init__.py",
                     "forge/instructions.py", "labs/01-instruction-hierarchy/forge/instructions.py",
                     "transfer/test_transfer_01.py"]
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.namelist() == files
        assert archive.read("forge/instructions.py") == b"X = 1\n"
    assert pack(tmp_path)[0] == data  # the same workbook packs to the same bytes (the same digest)


def test_submit_refuses_a_workbook_over_grading_limits(tmp_path: Path) -> None:
    _workbook(tmp_path)
    with (tmp_path / "forge" / "huge.bin").open("wb") as handle:
        handle.write(b"\1" * (51 * 1024 * 1024))
    with pytest.raises(LayoutError, match="per file"):
        pack(tmp_path)


def test_a_connection_outside_the_hub_says_what_is_missing() -> None:
    with pytest.raises(ServiceError, match="JUPYTERHUB_API_TOKEN"):
        Connection.from_environment({})
    inside = Connection.from_environment({"JUPYTERHUB_API_TOKEN": "t", "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api"})
    assert inside.url == "http://127.0.0.1:8081/services/forge-course/"


def test_the_store_drops_a_cut_off_upload_and_keeps_every_version(tmp_path: Path) -> None:
    store = Store(tmp_path)
    orphan = store.incoming()
    orphan.write(b"half of a zip")  # the process dies here: never finished, never renamed
    kept = [store.keep_bytes(f"v{n}".encode()) for n in range(2)]
    for sha in kept:
        store.add_submission("ann", "01", sha, sha, 2, ["forge/x.py"])
    again = Store(tmp_path)  # a restart
    assert list((tmp_path / "incoming").iterdir()) == []
    assert [r.sha256 for r in again.submissions("ann")] == kept
    assert again.submissions("bob") == []


def test_lateness_and_collection_follow_each_stages_deadline(tmp_path: Path) -> None:
    store, start = Store(tmp_path), datetime(2026, 12, 1, tzinfo=UTC)
    store.set_deadlines([Deadline(stage="01", due=start), Deadline(stage="02", due=start + timedelta(days=2))])
    sha = store.keep_bytes(b"zip")
    early = store.add_submission("ann", "01", sha, sha, 3, [], at=start - timedelta(hours=1))
    late = store.add_submission("ann", "01", sha, sha, 3, [], at=start + timedelta(hours=1))
    whole = store.add_submission("ann", "all", sha, sha, 3, [], at=start + timedelta(hours=2))
    store.add_submission("bob", "01", sha, sha, 3, [], at=start + timedelta(days=3))
    assert (early.late_for, late.late_for, whole.late_for) == ([], ["01"], ["01"])
    assert [r.id for r in store.collect("01").submissions] == [early.id]
    assert [r.id for r in store.collect("02").submissions] == [whole.id]
    assert store.collect("01").late_only == ["bob"]


def test_a_deadline_without_a_time_zone_is_refused() -> None:
    with pytest.raises(ValidationError, match="time zone"):
        Deadline.model_validate_json('{"stage": "01", "due": "2026-12-24T18:00:00"}')
    with pytest.raises(ValidationError):
        Receipt.model_validate_json('{"id": 1}')


def _feedback(name: str, points: float) -> Feedback:
    return Feedback(learner=name, points=points, max_points=40.0, sha256=hashlib.sha256(name.encode()).hexdigest(),
                    published_at=datetime(2026, 12, 1, tzinfo=UTC), submission_id=1)


def test_the_exports_use_the_layouts_canvas_and_moodle_document() -> None:
    totals = [_feedback("alice", 37.0), _feedback("bob", 12.5)]
    canvas = list(csv.reader(io.StringIO(canvas_csv(totals, "Forge Workbook"))))
    assert canvas == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Forge Workbook"],
                      ["Points Possible", "", "", "", "", "40"],
                      ["alice", "", "", "alice", "", "37"], ["bob", "", "", "bob", "", "12.5"]]
    moodle = list(csv.reader(io.StringIO(moodle_csv(totals, "Forge Workbook"))))
    assert moodle == [["Username", "Forge Workbook"], ["alice", "37"], ["bob", "12.5"]]


class _Lab:
    """What the notebook's hand-in cell uses of its ``lab`` (forgelab.learner.notebook.StageTools)."""

    def __init__(self, root: Path, number: str = "01") -> None:
        from forgelab.core.paths import Workbook

        self.workbook = Workbook(root, root)
        self.stage = type("Stage", (), {"number": number})()

    def _spoken(self, callback: Any) -> Any:
        return callback


def test_outside_a_hub_the_notebooks_hand_in_cell_says_how_to_hand_in_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from forgelab.core.i18n import speaking
    from forgelab.hub.handin import hand_in

    for name in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_API_URL", "FORGELAB_COURSE_URL", "FORGELAB_COURSE_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for language, words in (("en", "Not on the class's hub, so nothing is sent from here"),
                            ("zh", "这里不是班级的 Hub，所以不会从这里发送任何东西")):
        with speaking(language):
            shown = hand_in(_Lab(_workbook(tmp_path / language), "03"))
        text = html.unescape(re.sub(r"<[^>]+>", "", shown.value))
        assert words in text and "forgelab submit 03" in text, text
        assert shown.value.count("<p") == 1 and "\n" not in text  # one line, no button
