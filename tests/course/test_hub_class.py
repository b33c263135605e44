"""The whole class on a real JupyterHub, in Chromium: two learners and an instructor (issue 34's "done when").

The hub runs from the released bundle on 127.0.0.1 with configurable-http-proxy and DummyAuthenticator. Each learner
signs in, gets their own workbook (made by the spawner's hook from the bundle), lands in JupyterLab on the opening
notebook, opens notebook 01, completes it (the reference module is copied in), runs `forgelab check 01` and
`forgelab submit 01` in a JupyterLab terminal, and sees the receipt on the course service's page. The instructor
sees both on the class page, collects and grades with `forgelab class grade` (the existing grader) and exports the
Canvas and Moodle CSVs. Each learner then opens their own feedback page and is refused the other's.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import ARTIFACTS, chromium, require_chromium  # noqa: F401  (chromium is a fixture)

from conftest import ROOT, run_cli
from hub_fixtures import RunningHub, start_hub
from released import released_zip

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("hub"), pytest.mark.timeout(2400)]
LEARNERS = ("alice", "bob")
WAIT_MS = 240_000  # a server's first start on two shared, busy cores
NOTEBOOK_01 = "notebooks/01-instruction-hierarchy.ipynb"


@pytest.fixture(scope="module")
def class_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHub]:
    require_chromium()
    folder = tmp_path_factory.mktemp("class")
    running = start_hub(folder / "state", released_zip(tmp_path_factory))
    yield running
    for user in (*LEARNERS, "teacher"):  # the learners' servers first, then the hub
        try:
            running.api("DELETE", f"users/{user}/server")
        except Exception:  # noqa: BLE001 - a server that never started
            pass
    running.stop()


def _sign_in(browser: Any, hub: RunningHub, user: str) -> Any:
    from playwright.sync_api import expect

    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)  # a hub page on two shared, busy cores
    page = context.new_page()
    page.goto(f"{hub.url}hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", "any")
    page.click("#login_submit")
    return page, expect


TERMINAL = """async ([base, command]) => {
  // a terminal of the learner's own server, as JupyterLab opens one: the Jupyter server's terminals API
  const xsrf = decodeURIComponent((document.cookie.match(/_xsrf=([^;]+)/) || ["", ""])[1]);
  const made = await fetch(base + "api/terminals", {method: "POST", headers: {"X-XSRFToken": xsrf}});
  const name = (await made.json()).name;
  return await new Promise((resolve, reject) => {
    const socket = new WebSocket(base.replace(/^http/, "ws") + "terminals/websocket/" + name);
    let printed = "";
    socket.onopen = () => socket.send(JSON.stringify(["stdin", command + "; echo FORGE-DONE-$?\\r"]));
    socket.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message[0] !== "stdout") return;
      printed += message[1];
      if (/FORGE-DONE-\\d/.test(printed)) { socket.close(); resolve(printed); }
    };
    socket.onerror = () => reject(new Error("the terminal's websocket failed"));
  });
}"""


def _in_terminal(page: Any, hub: RunningHub, user: str, command: str) -> str:
    """Run ``command`` in a new terminal of ``user``'s JupyterLab; what it printed."""
    return str(page.evaluate(TERMINAL, [f"{hub.url}user/{user}/", command]))


def test_a_class_signs_in_submits_is_graded_and_gets_its_own_feedback(chromium: Any, class_hub: RunningHub,
                                                                       tmp_path: Path) -> None:
    from playwright.sync_api import expect

    hub, pages = class_hub, {}
    receipts: dict[str, dict[str, Any]] = {}
    for user in LEARNERS:
        page, _expect = _sign_in(chromium, hub, user)
        pages[user] = page
        # their own workbook, made on first sign-in, and JupyterLab on the opening notebook
        expect(page).to_have_url(re.compile(rf"/user/{user}/lab"), timeout=WAIT_MS)
        expect(page.locator(".lm-TabBar-tabLabel", has_text="00-opening")).to_be_visible(timeout=WAIT_MS)
        workbook = hub.state / "homes" / user / "forge-workbook"
        assert (workbook / "forge").is_dir() and not (workbook / "solutions").exists()
        page.goto(f"{hub.url}user/{user}/lab/tree/{NOTEBOOK_01}")
        expect(page.locator(".lm-TabBar-tabLabel", has_text="01-instruction-hierarchy")).to_be_visible(timeout=WAIT_MS)
        shutil.copy(ROOT / "solutions" / "forge" / "instructions.py", workbook / "forge" / "instructions.py")
        printed = _in_terminal(page, hub, user, "forgelab check 01; forgelab submit 01")
        found = sorted((workbook / ".forgelab" / "receipts").glob("*.json"))
        assert found, printed
        receipts[user] = json.loads(found[-1].read_text())
        # the receipt as the terminal printed it: digest, time, contents
        assert f"sha256 {receipts[user]['sha256']}" in printed, printed
        assert f"{len(receipts[user]['files'])} file(s): " in printed and "submitted: stage 01" in printed, printed
        assert receipts[user]["learner"] == user and "forge/instructions.py" in receipts[user]["files"]
        assert (workbook / "evidence" / "prompt-context-output" / "01-instruction-hierarchy" / "verification.json").is_file()
        # the receipt, as the course service shows it to its learner
        page.goto(f"{hub.url}services/forge-course/")
        expect(page.locator("#receipts")).to_contain_text(receipts[user]["sha256"][:16], timeout=WAIT_MS)
        page.screenshot(path=str(ARTIFACTS.parent / "hub" / f"{user}-receipt.png"))
    assert receipts["alice"]["sha256"] != receipts["bob"]["sha256"]  # two workbooks, never one shared copy

    teacher, _expect = _sign_in(chromium, hub, "teacher")
    teacher.goto(f"{hub.url}services/forge-course/")
    for user in LEARNERS:
        expect(teacher.locator("#class")).to_contain_text(user, timeout=WAIT_MS)
    env = {"FORGELAB_COURSE_URL": f"{hub.url}services/forge-course/", "FORGELAB_COURSE_TOKEN": hub.token("teacher")}
    graded = run_cli(ROOT, "class", "grade", "--stages", "01", "--into", str(tmp_path / "class"), env=env, timeout=1800)
    assert graded.returncode == 0, graded.output
    assert "published 2 feedback page(s)" in graded.stdout
    canvas, moodle = tmp_path / "canvas.csv", tmp_path / "moodle.csv"
    exported = run_cli(ROOT, "class", "export", "--canvas", str(canvas), "--moodle", str(moodle), env=env)
    assert exported.returncode == 0, exported.output

    totals = {row["submission"]: row["points"] for row in csv.DictReader(
        io.StringIO((tmp_path / "class" / "grading" / "totals.csv").read_text()))}
    assert set(totals) == set(LEARNERS)
    canvas_rows = list(csv.reader(io.StringIO(canvas.read_text())))
    assert canvas_rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Forge Workbook"]
    assert canvas_rows[1][0] == "Points Possible"
    assert {row[3]: row[5] for row in canvas_rows[2:]} == totals
    moodle_rows = list(csv.DictReader(io.StringIO(moodle.read_text())))
    assert {row["Username"]: row["Forge Workbook"] for row in moodle_rows} == totals

    for user, other in (("alice", "bob"), ("bob", "alice")):
        page = pages[user]
        page.goto(f"{hub.url}services/forge-course/feedback")
        expect(page.locator("h1")).to_contain_text(f"Feedback for {user}", timeout=WAIT_MS)
        page.goto(f"{hub.url}services/forge-course/feedback/{other}")
        expect(page.locator("#refused")).to_be_visible(timeout=WAIT_MS)
        assert f"Feedback for {other}" not in page.content()
