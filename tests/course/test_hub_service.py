"""The course service on a real JupyterHub (configurable-http-proxy, DummyAuthenticator), tried with the hub's tokens.

* security: a learner's token never reads, lists, overwrites or deletes another learner's submissions or feedback,
  nor reaches an instructor action; no token is 401, a token without the service's scope 403;
* bad uploads: not a zip, a zip without forge/, a zip grading would refuse, and an upload over the cap are refused with
  a reason, and nothing of them is kept;
* a crash: the service killed (SIGKILL) in the middle of an upload — the hub restarts it, every earlier submission is
  there byte for byte, and nothing half-written is kept or listed;
* a restart: the whole hub stopped and started again on the same folder keeps every submission, receipt, deadline and
  feedback page;
* grading from the instructors' page: only an instructor starts a run (a learner's token gets 403), and the run
  collects, grades, publishes and writes the gradebook and the class report;
* a browser's cookie alone (the hub's OAuth, no token, no XSRF token) changes nothing;
* the notebook's Submit button hands in from a learner's server and shows the receipt.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import os
import re
import signal
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import wait_until
from hub_fixtures import RunningHub, receipts_of, start_hub, workbook_zip

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hub")]
CAP = 1024 * 1024  # the service's upload cap in these tests


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHub]:
    folder = tmp_path_factory.mktemp("hub")
    bundle = folder / "bundle.zip"
    bundle.write_bytes(workbook_zip())
    running = start_hub(folder / "state", bundle, max_upload=CAP)
    yield running
    running.stop()


def _submit(hub: RunningHub, user: str, data: bytes, stage: str = "all") -> httpx.Response:
    with hub.as_user(user) as client:
        return client.post("api/submissions", params={"stage": stage}, content=data)


def _kept_files(hub: RunningHub) -> set[Path]:
    return {path for path in (hub.data / "blobs").rglob("*") if path.is_file()}


def test_a_learner_reaches_only_their_own_work(hub: RunningHub) -> None:
    alice_zip = workbook_zip("ALICE = 1\n")
    first = _submit(hub, "alice", alice_zip, "01")
    assert first.status_code == 201, first.text
    receipt = first.json()
    assert receipt["learner"] == "alice" and receipt["sha256"] == hashlib.sha256(alice_zip).hexdigest()
    assert "forge/instructions.py" in receipt["files"]
    assert _submit(hub, "bob", workbook_zip("BOB = 2\n")).status_code == 201

    with hub.as_user("bob") as bob:
        listed = bob.get("api/submissions").json()
        assert listed["learner"] == "bob" and {r["learner"] for r in listed["submissions"]} == {"bob"}
        # another learner's zip and feedback: refused, whether it exists or not
        for path in (f"api/submissions/{receipt['id']}/zip", "api/submissions/999999/zip", "feedback/alice",
                     "api/feedback/alice"):
            refused = bob.get(path)
            assert refused.status_code == 403, (path, refused.status_code)
            assert alice_zip not in refused.content
        # instructor actions
        assert bob.get("api/collect").status_code == 403
        assert bob.get("api/totals").status_code == 403
        assert bob.put("api/deadlines", content=json.dumps({"deadlines": [
            {"stage": "01", "due": "2020-01-01T00:00:00+00:00"}]})).status_code == 403
        published = bob.put("api/feedback/alice", content=json.dumps({"points": 99.0, "max_points": 99.0,
                                                                       "html": "<p>forged</p>"}))
        assert published.status_code == 403 and published.json()["reason"] == "forbidden"
        assert bob.put("api/feedback/bob", content=json.dumps({"points": 99.0, "max_points": 99.0,
                                                               "html": "<p>mine</p>"})).status_code == 403
        # nothing overwrites or deletes a submission: no such method exists for anyone
        for method in ("DELETE", "PUT"):
            assert bob.request(method, "api/submissions").status_code == 405
            assert bob.request(method, f"api/submissions/{receipt['id']}/zip").status_code == 405
    assert [r["sha256"] for r in receipts_of(hub, "alice")] == [receipt["sha256"]]

    with hub.as_user("teacher") as teacher:
        collected = teacher.get("api/collect").json()
        assert {r["learner"] for r in collected["submissions"]} >= {"alice", "bob"}
        assert teacher.get(f"api/submissions/{receipt['id']}/zip").content == alice_zip
        assert teacher.put("api/feedback/alice", content=json.dumps({
            "points": 7.0, "max_points": 10.0, "html": "<p>alice's page</p>", "submission_id": receipt["id"]})
        ).status_code == 201
    with hub.as_user("alice") as alice:
        assert alice.get("feedback").text == "<p>alice's page</p>"
        assert alice.get("api/feedback").json()["points"] == 7.0
    with hub.as_user("bob") as bob:
        assert bob.get("api/feedback").status_code == 404  # bob has none; he never sees alice's
        assert bob.get("feedback").status_code == 404
        assert "alice's page" not in bob.get("feedback").text


def test_no_token_or_a_token_without_the_service_scope_is_refused(hub: RunningHub) -> None:
    paths = ["api/whoami", "api/submissions", "api/collect", "api/totals", "api/feedback", "api/deadlines",
             "api/submissions/1/zip", "api/feedback/alice"]
    for path in paths:
        bare = httpx.get(hub.service_url + path, timeout=30)
        assert bare.status_code == 401, (path, bare.status_code)
        assert bare.json()["reason"] == "unauthenticated"
        forged = httpx.get(hub.service_url + path, headers={"Authorization": "token not-a-hub-token"}, timeout=30)
        assert forged.status_code == 403, (path, forged.status_code)
    assert httpx.post(hub.service_url + "api/submissions", content=workbook_zip(), timeout=30).status_code == 401
    narrow = hub.token("alice", scopes=["read:users:name!user"])  # a real token of alice, without the service's scope
    refused = httpx.get(hub.service_url + "api/submissions", headers={"Authorization": f"token {narrow}"}, timeout=30)
    assert refused.status_code == 403 and refused.json()["reason"] == "forbidden"
    # through the hub's proxy, as a browser or a server outside the hub's machine would come
    assert httpx.get(f"{hub.url}services/forge-course/api/submissions", timeout=30).status_code == 401


def _zip_with(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize("data, reason, said", [
    (b"this is not a zip at all", "malformed", "not a readable zip"),
    (_zip_with({"notes.txt": b"hello"}), "malformed", "no forge/ folder"),
    (_zip_with({"forge/__init__.py": b"", **{f"forge/m{i}.py": b"x" for i in range(5001)}}), "malformed",
     "more than 5000 files"),
    (os.urandom(CAP + 1), "too_large", "at most 1048576 bytes"),
])
def test_a_bad_upload_is_refused_with_its_reason_and_nothing_is_kept(hub: RunningHub, data: bytes, reason: str,
                                                                      said: str) -> None:
    before_rows, before_files = receipts_of(hub, "carol"), _kept_files(hub)
    refused = _submit(hub, "carol", data)
    assert refused.status_code in (400, 413)
    body = refused.json()
    assert body["reason"] == reason and said in body["message"], body
    assert body["next_step"]
    assert receipts_of(hub, "carol") == before_rows
    assert _kept_files(hub) == before_files
    assert list((hub.data / "incoming").iterdir()) == []


def test_an_upload_over_the_cap_without_a_length_is_cut_off(hub: RunningHub) -> None:
    before = _kept_files(hub)

    def chunks() -> Iterator[bytes]:
        for _ in range(20):
            yield os.urandom(64 * 1024)

    refused = _submit(hub, "carol", chunks())  # type: ignore[arg-type]  # chunked: no Content-Length
    assert refused.status_code == 413 and refused.json()["reason"] == "too_large"
    assert _kept_files(hub) == before and list((hub.data / "incoming").iterdir()) == []


def test_killing_the_service_mid_upload_loses_nothing_and_keeps_nothing_half_written(hub: RunningHub) -> None:
    earlier = [_submit(hub, "dave", workbook_zip(f"V = {n}\n")).json() for n in range(3)]
    kept_before = {r["sha256"]: hub.data / "blobs" / r["sha256"][:2] / r["sha256"] for r in earlier}
    pid = hub.service_pid()
    first_half, release = threading.Event(), threading.Event()
    outcome: list[object] = []

    def slow_body() -> Iterator[bytes]:
        yield workbook_zip("HALF = 1\n")[:200]
        first_half.set()
        release.wait(120)
        yield b"the rest never arrives"

    def upload() -> None:
        try:
            outcome.append(_submit(hub, "dave", slow_body()))  # type: ignore[arg-type]
        except httpx.HTTPError as error:
            outcome.append(error)

    thread = threading.Thread(target=upload, daemon=True)
    thread.start()
    first_half.wait(60)
    wait_until(lambda: [p for p in (hub.data / "incoming").iterdir() if p.stat().st_size > 0] or None, timeout=60,
               what="the upload's first bytes in the service's incoming/ folder")
    os.kill(pid, signal.SIGKILL)
    release.set()
    thread.join(120)
    assert outcome and not (isinstance(outcome[0], httpx.Response) and outcome[0].status_code == 201)

    hub.wait_for_service(not_pid=pid)  # the hub restarts a managed service that died
    after = receipts_of(hub, "dave")
    assert [r["sha256"] for r in after] == [r["sha256"] for r in earlier]
    for sha, path in kept_before.items():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    assert list((hub.data / "incoming").iterdir()) == []  # the cut-off upload is gone, never listed
    again = _submit(hub, "dave", workbook_zip("AFTER = 1\n"))
    assert again.status_code == 201 and len(receipts_of(hub, "dave")) == 4


def test_restarting_the_hub_keeps_every_submission_receipt_deadline_and_feedback(hub: RunningHub) -> None:
    mine = _submit(hub, "erin", workbook_zip("ERIN = 1\n"), "02").json()
    with hub.as_user("teacher") as teacher:
        assert teacher.put("api/deadlines", content=json.dumps({"deadlines": [
            {"stage": "02", "due": "2099-01-01T00:00:00+00:00"}]})).status_code == 200
        assert teacher.put("api/feedback/erin", content=json.dumps({
            "points": 3.0, "max_points": 4.0, "html": "<p>erin</p>", "submission_id": mine["id"]})).status_code == 201
    everyone = {user: receipts_of(hub, user) for user in ("alice", "bob", "dave", "erin")}
    bundle = Path(json.loads((hub.state / "hub-plan.json").read_text())["bundle"])
    ports = [hub.port, hub.hub_port, json.loads((hub.state / "hub-plan.json").read_text())["proxy_api_port"],
             hub.service_port]
    hub.stop()

    again = start_hub(hub.state, bundle, max_upload=CAP, ports=ports)
    hub.__dict__.update(again.__dict__)  # the module's teardown stops the hub that runs now
    assert {user: receipts_of(again, user) for user in everyone} == everyone
    with again.as_user("erin") as erin:
        assert erin.get("feedback").text == "<p>erin</p>"
        assert erin.get("api/deadlines").json()["deadlines"][0]["stage"] == "02"
        assert erin.get(f"api/submissions/{mine['id']}/zip").content == workbook_zip("ERIN = 1\n")


def test_the_notebooks_submit_button_hands_in_shows_the_receipt_and_links_the_feedback(
        hub: RunningHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a learner's server (its token and the service's address in the environment), the stage notebook's hand-in
    cell is a Submit button: pressed, it hands in for the notebook's stage and shows the receipt the service gave; once
    the learner's feedback is published, the cell links it (the service's page, on the hub's address)."""
    from test_hub_units import _Lab, _workbook

    from forgelab.hub.handin import hand_in

    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", hub.token("frida"))
    monkeypatch.setenv("FORGELAB_COURSE_URL", hub.service_url)
    monkeypatch.delenv("FORGELAB_COURSE_TOKEN", raising=False)
    root = _workbook(tmp_path / "frida")
    button, shown, link = hand_in(_Lab(root, "01")).children
    assert button.description == "Submit stage 01" and shown.value == ""
    assert "No feedback published for you yet" in html.unescape(link.value) and "<a" not in link.value
    button.click()
    [receipt] = receipts_of(hub, "frida")
    assert receipt["stage"] == "01"
    receipt_text = html.unescape(shown.value)
    for words in (f"submitted: stage 01, submission {receipt['id']}", f"digest:    sha256 {receipt['sha256']}",
                  receipt["received_at"][:10], "contents:  5 file(s): evidence/", "forge/instructions.py"):
        assert words in receipt_text, (words, receipt_text)
    kept = list((root / ".forgelab" / "receipts").glob(f"*-{receipt['id']}.json"))
    assert len(kept) == 1 and json.loads(kept[0].read_text())["sha256"] == receipt["sha256"]
    assert f"receipt kept in .forgelab/receipts/{kept[0].name}" in receipt_text

    with hub.as_user("teacher") as teacher:
        assert teacher.put("api/feedback/frida", content=json.dumps({
            "points": 7.0, "max_points": 10.0, "html": "<p>well done</p>", "submission_id": receipt["id"]})
        ).status_code == 201
    _button, _shown, link = hand_in(_Lab(root, "01")).children
    assert "Your feedback: 7 of 10 points" in html.unescape(link.value), link.value
    assert 'href="/services/forge-course/feedback"' in link.value, link.value
    page = httpx.get(hub.url.rstrip("/") + "/services/forge-course/feedback",
                     headers={"Authorization": f"token {hub.token('frida')}"}, timeout=60)
    assert page.status_code == 200 and "well done" in page.text  # the address the link names serves the page


def _run_settled(hub: RunningHub, number: int) -> dict[str, Any]:
    with hub.as_user("teacher") as teacher:
        def settled() -> dict[str, Any] | None:
            run = next(r for r in teacher.get("api/grade").json()["runs"] if r["id"] == number)
            return None if run["state"] == "running" else run
        return wait_until(settled, timeout=900, what=f"grade run {number} to finish")


def test_only_an_instructor_grades_from_the_service_and_the_run_writes_the_gradebook(hub: RunningHub) -> None:
    """The instructors' page grades what `forgelab class grade` grades, in the background: a learner's token gets 403
    at every step of it (start, list, page, the run's files); an instructor's run collects, grades, publishes and
    writes the class report, and the page links it."""
    assert _submit(hub, "gina", workbook_zip("GINA = 1\n"), "01").status_code == 201
    with hub.as_user("lena") as learner:
        for refused in (learner.post("api/grade", content=b""), learner.get("api/grade"), learner.get("grade")):
            assert refused.status_code == 403, (refused.request.url, refused.text)
        assert "only an instructor" in learner.post("api/grade", content=b"").json()["message"]
    assert not list((hub.data / "grading").glob("run-*"))  # nothing was started for the learner
    with hub.as_user("teacher") as teacher:
        started = teacher.post("api/grade", content=json.dumps({"stages": "01"}))
        assert started.status_code == 202, started.text
        number = started.json()["id"]
        assert started.json()["state"] == "running" and started.json()["started_by"] == "teacher"
    run = _run_settled(hub, number)
    folder = hub.data / "grading" / f"run-{number:04d}"
    assert run["state"] == "done", (folder / "log.txt").read_text()
    gradebook = folder / "grading" / "gradebook.sqlite"
    import sqlite3

    connection = sqlite3.connect(gradebook)
    try:
        graded = {name for (name,) in connection.execute("SELECT DISTINCT submission FROM grades")}
    finally:
        connection.close()
    assert "gina" in graded, graded
    assert "forgelab class grade --into" in (folder / "log.txt").read_text()
    with hub.as_user("teacher") as teacher:
        page = teacher.get("grade").text
        assert f'href="/services/forge-course/grading/{number}/report/report.html"' in page, page
        report = teacher.get(f"grading/{number}/report/report.html")
        assert report.status_code == 200 and "Class report" in report.text
        assert teacher.get(f"grading/{number}/%2e%2e/%2e%2e/status.json").status_code == 404  # only its grading/
    with hub.as_user("gina") as gina:
        assert gina.get("api/feedback").json()["max_points"] > 0  # the run published gina's page
        assert gina.get(f"grading/{number}/report/report.html").status_code == 403


def _signed_in(hub: RunningHub, user: str) -> httpx.Client:
    """A browser's session: signed in at the hub's login form, then through the hub's OAuth to the service (cookies
    only, no token)."""
    browser = httpx.Client(base_url=hub.url, follow_redirects=True, timeout=120)
    form = browser.get("hub/login")
    found = re.search(r'name="_xsrf" value="([^"]+)"', form.text)
    fields = {"username": user, "password": "any", **({"_xsrf": found.group(1)} if found else {})}
    home = browser.post("hub/login?next=/services/forge-course/", data=fields)
    assert home.status_code == 200 and str(home.url).endswith("/services/forge-course/"), (home.url, home.text[:300])
    return browser


def test_a_browsers_cookie_alone_changes_nothing(hub: RunningHub) -> None:
    """The hub's OAuth cookie lets a browser read its own pages, but no state-changing endpoint accepts it without the
    token in the Authorization header — or, on the grading page, the XSRF token that page's own form carries."""
    assert _submit(hub, "hugo", workbook_zip("HUGO = 1\n"), "01").status_code == 201  # something to grade
    teacher = _signed_in(hub, "teacher")
    base = "services/forge-course/"
    try:
        assert teacher.get(base + "api/whoami").json() == {"name": "teacher", "instructor": True}  # the cookie is good
        before = (receipts_of(hub, "teacher"), sorted((hub.data / "grading").glob("run-*")))
        attempts = [teacher.post(base + "api/submissions", params={"stage": "01"}, content=workbook_zip(),
                                 headers={"Content-Type": "application/zip"}),
                    teacher.put(base + "api/deadlines", content=json.dumps({"deadlines": []})),
                    teacher.put(base + "api/feedback/gina", content=json.dumps({"points": 0.0, "max_points": 1.0,
                                                                                "html": "forged"})),
                    teacher.post(base + "api/grade", content=b""),
                    teacher.post(base + "grade", data={"stages": "01"}),  # the form without its XSRF token
                    teacher.post(base + "grade", data={"stages": "01", "_xsrf": "forged"})]
        for refused in attempts:
            assert refused.status_code == 403, (refused.request.method, refused.request.url, refused.text[:300])
            assert "Authorization header" in refused.text, refused.text[:300]
        assert (receipts_of(hub, "teacher"), sorted((hub.data / "grading").glob("run-*"))) == before
        with hub.as_user("gina") as gina:
            assert "forged" not in gina.get("feedback").text
        # the page's own form, with the XSRF token it carries, starts a run
        page = teacher.get(base + "grade").text
        token = re.search(r'name="_xsrf" value="([^"]+)"', page)
        assert token is not None, page
        started = teacher.post(base + "grade", data={"stages": "01", "_xsrf": token.group(1)})
        assert started.status_code == 200 and 'id="run-state"' in started.text, started.text[:500]
        number = max(int(path.name.split("-")[1]) for path in (hub.data / "grading").glob("run-*"))
        assert _run_settled(hub, number)["state"] == "done"
    finally:
        teacher.close()
