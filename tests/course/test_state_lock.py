"""The learner's state (.forgelab/state.json) is changed under a lock: a notebook and a terminal writing at the
same moment both keep their change (forgelab/learner/state.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import wait_until

from forgelab.core.paths import Workbook
from forgelab.learner import state

WRITER = """
import sys, time
from pathlib import Path
from forgelab.core.paths import Workbook
from forgelab.learner import state

root, name, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
workbook = Workbook(root, root)
(root / f"ready-{name}").touch()
while not (root / "go").exists():
    time.sleep(0.001)
for index in range(rounds):
    state.show_fault_hints(workbook, f"{name}-{index}", index)
    state.reveal_hint(workbook, "01", 10 * rounds,
                      lambda shown: next(rung for rung in range(1, 10 * rounds + 1) if rung not in shown))
"""


def test_two_processes_updating_at_once_lose_nothing(tmp_path: Path) -> None:
    rounds = 30
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), name, str(rounds)])
               for name in ("notebook", "terminal")]
    wait_until(lambda: all((tmp_path / f"ready-{name}").exists() for name in ("notebook", "terminal")), timeout=60,
               what="both writers to start", every=0.01,
               gave_up=lambda: None if all(w.poll() is None for w in writers) else "a writer ended before it started")
    (tmp_path / "go").touch()  # both start changing the state at the same moment
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]

    saved = json.loads((tmp_path / ".forgelab" / "state.json").read_text(encoding="utf-8"))
    assert saved["fault_hints"] == {f"{name}-{index}": index for name in ("notebook", "terminal") for index in range(rounds)}
    assert saved["hints"] == {"01": list(range(1, 2 * rounds + 1))}  # each reveal once: no two chose the same rung
    assert not (tmp_path / ".forgelab" / "state.damaged.json").exists()


def test_a_change_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    workbook = Workbook(tmp_path, tmp_path)
    state.modify(workbook, lambda data: data.hints.__setitem__("01", 2))
    path = tmp_path / ".forgelab" / "state.json"
    written = path.stat().st_mtime_ns
    assert state.reveal_hint(workbook, "01", 2, lambda shown: None) == ((1, 2), None)
    assert path.stat().st_mtime_ns == written
