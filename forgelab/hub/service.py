"""The course service: a JupyterHub-managed Tornado application that takes submissions and gives feedback back.

It knows a caller only through the hub: an API token in the ``Authorization`` header (a learner's server has one in
``JUPYTERHUB_API_TOKEN``), or the cookie of the hub's OAuth flow in a browser (``HubOAuth``). The hub says who the
caller is, which groups they are in and which scopes their token holds; a caller needs the scope
``access:services!service=NAME``, and an instructor is a member of the hub group ``instructors``. A learner only ever
names *themselves*: the endpoints that take a learner's name or a submission's number check that it is theirs.

Routes, under the service's prefix (``/services/forge-course/``)::

    GET  api/whoami                       who the hub says you are
    POST api/submissions?stage=NN|all     a zip of your workbook (what grading reads) → your receipt (201)
    GET  api/submissions                  your submissions, oldest first
    GET  api/submissions/ID/zip           the zip of one submission (yours; an instructor: anyone's)
    GET  api/feedback                     your published feedback (points, digest); 404 until there is one
    GET  feedback  |  feedback/NAME       the feedback page (yours; an instructor: anyone's), for a browser
    GET  api/deadlines                    the stages' deadlines
    PUT  api/deadlines                    instructor: set deadlines
    GET  api/collect?stage=NN|all         instructor: the latest on-time submission of every learner
    PUT  api/feedback/NAME                instructor: publish NAME's feedback page and total
    GET  api/totals                       instructor: every learner's published total
    GET  api/grade  |  POST api/grade     instructor: the grade runs | start one ({"stages": "01-07"} or empty)
    GET  grade  |  POST grade             instructor: the page that grades (a form with its XSRF token)
    GET  grading/N/PATH                   instructor: what grade run N wrote (report, similarity, feedback)
    GET  (the prefix itself)              a page: your receipts and feedback; for an instructor, the class

An upload is streamed to a temporary file (never held in memory), refused as soon as it passes the size cap, then
read with grading's own limits (:func:`forgelab.core.submission.lay_out`) before it is kept — a zip grading would
refuse is refused here, with grading's reason, and nothing of it stays (see :mod:`forgelab.hub.store`).

Run by the hub (``c.JupyterHub.services``) as ``python -m forgelab.hub.service``; its settings come from the
environment the hub gives a service (``JUPYTERHUB_*``) and ``FORGELAB_COURSE_DATA`` (where it keeps everything).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import re
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlparse

from jupyterhub.services.auth import HubOAuth, HubOAuthCallbackHandler
from markupsafe import Markup
from pydantic import ValidationError
from tornado import httpserver, ioloop, web

from forgelab.core.files import LayoutError
from forgelab.core.i18n import _, active, resolve, use
from forgelab.core.submission import MAX_ZIP_BYTES, Submission, SubmissionError, inspect, lay_out
from forgelab.core.text import templates
from forgelab.hub.graderuns import STATE_WORDS, GradeRun, GradeRuns, RunError, Runner
from forgelab.hub.models import (STAGE_PATTERN, Collection, Deadlines, FeedbackUpload, GradeRequest, Identity, Message,
                                 Refusal, SubmissionList, Totals)
from forgelab.hub.store import Incoming, Store, now

LOG = logging.getLogger("forgelab.hub.service")
INSTRUCTORS = "instructors"
PAGE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'self'"


@dataclass(frozen=True)
class Settings:
    data: Path
    prefix: str  # e.g. /services/forge-course/
    max_upload: int = MAX_ZIP_BYTES
    instructors_group: str = INSTRUCTORS
    course: Path | None = None  # the course repository grade runs work in (None: the instructor page cannot grade)
    self_url: str = ""  # the service's own address, for the grade runs' `forgelab class grade`

    @classmethod
    def from_environment(cls) -> Settings:
        data = os.environ.get("FORGELAB_COURSE_DATA")
        if not data:
            raise SystemExit(_("the course service needs FORGELAB_COURSE_DATA: the folder where it keeps submissions "
                               "and feedback (set it in the hub's services configuration)"))
        prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/forge-course/")
        prefix = prefix if prefix.endswith("/") else prefix + "/"
        course = os.environ.get("FORGELAB_COURSE_REPO")
        bind = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
        return cls(Path(data), prefix, int(os.environ.get("FORGELAB_COURSE_MAX_UPLOAD", MAX_ZIP_BYTES)),
                   os.environ.get("FORGELAB_INSTRUCTORS_GROUP", INSTRUCTORS), Path(course) if course else None,
                   f"http://{bind.hostname}:{bind.port}{prefix}")


class Refused(web.HTTPError):
    def __init__(self, status: int, reason: str, message: str, next_step: str) -> None:
        super().__init__(status, reason=reason.replace("_", " "))
        self.refusal = Refusal(status=status, reason=reason, message=message, next_step=next_step)


def _no_token() -> Refused:
    return Refused(401, "unauthenticated", _("no hub token came with the request"),
                   _("call the course service from your server on the hub (it has JUPYTERHUB_API_TOKEN), or sign in to "
                     "the hub"))


def _not_yours(what: str) -> Refused:
    return Refused(403, "forbidden", _("{what} is not yours: a learner reaches only their own submissions and "
                                       "feedback").format(what=what), _("ask your instructor if you need it"))


class Base(web.RequestHandler):
    """Every handler: the caller as the hub identifies them, JSON refusals, no caching."""

    settings_: Settings
    store: Store
    auth: Any
    identity: Identity | None = None

    FORM_OK = False  # a POST from a browser form of the service's own page is accepted (with its XSRF token)

    def initialize(self, settings: Settings, store: Store, auth: Any, runner: Runner) -> None:
        self.settings_, self.store, self.auth, self.runner = settings, store, auth, runner

    def _xsrf_holds(self) -> bool:
        try:
            self.check_xsrf_cookie()
        except web.HTTPError:
            return False
        return True

    async def identify(self, *, browser: bool = False) -> Identity | None:
        """The caller, or None (a browser is then sent to sign in; an API call is refused)."""
        token = self.auth.get_token(self)
        if not token:
            if browser:
                return None
            raise _no_token()
        if self.request.method not in ("GET", "HEAD") and "Authorization" not in self.request.headers:
            # a browser's cookie alone never changes anything: another site's form cannot submit or publish in your
            # name. Only a form of the service's own pages (FORM_OK) may, with the XSRF token the page gave it.
            if not self.FORM_OK or not self._xsrf_holds():
                raise Refused(403, "forbidden", _("a change needs the hub token in the Authorization header, not a "
                                                  "browser's cookie"), _("use forgelab submit or forgelab class"))
        model = await self.auth.user_for_token(token, session_id=self.auth.get_session_id(self), sync=False)
        if not model:
            if browser:
                return None
            raise Refused(403, "forbidden", _("the hub does not know this token (expired or revoked)"),
                          _("start your server on the hub again, or sign in again"))
        if model.get("kind", "user") != "user" or not self.auth.check_scopes(self.auth.access_scopes, model):
            raise Refused(403, "forbidden", _("this token may not use the course service"),
                          _("use the token of your own server on the hub"))
        self.identity = Identity(name=model["name"], instructor=self.settings_.instructors_group in model.get("groups", []))
        return self.identity

    async def caller(self) -> Identity:
        identity = self.identity or await self.identify()
        assert identity is not None
        return identity

    async def instructor(self) -> Identity:
        identity = await self.caller()
        if not identity.instructor:
            raise Refused(403, "forbidden", _("only an instructor (the hub group {group}) may do this").format(
                group=self.settings_.instructors_group), _("ask an instructor"))
        return identity

    def set_default_headers(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    def reply(self, message: Message, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(message.model_dump_json())

    def body_as(self, model: type[Message]) -> Any:
        try:
            return model.model_validate_json(self.request.body)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "body"
            raise Refused(400, "malformed", _("the request's {where} is wrong: {problem}").format(
                where=where, problem=first["msg"]), _("send the JSON the service documents")) from None

    def _close_after_refusal(self) -> None:
        """A request refused before its body was read leaves the connection unusable (tornado drops it after the
        reply): say so, or the hub's proxy sends the next request down it and that one fails with 503."""
        if self.request.method not in ("GET", "HEAD"):
            self.set_header("Connection", "close")

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None, None))[1]
        refusal = error.refusal if isinstance(error, Refused) else Refusal(
            status=status_code, reason="error" if status_code >= 500 else "refused", message=self._reason,
            next_step=_("try again; if it keeps failing, tell your instructor"))
        self._close_after_refusal()
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(refusal.model_dump_json())


def _stage(value: str | None) -> str:
    stage = value or "all"
    if not re.fullmatch(STAGE_PATTERN, stage):
        raise Refused(400, "malformed", _("{stage} is not a stage: give two digits, e.g. 03, or all").format(
            stage=repr(stage)), _("e.g. forgelab submit 03"))
    return stage


class Health(Base):
    """Unauthenticated: the service answers (for the hub's and Kubernetes' probes); says nothing about anyone."""

    def get(self) -> None:
        self.finish({"ok": True})


class WhoAmI(Base):
    async def get(self) -> None:
        self.reply(await self.caller())


@web.stream_request_body
class Submissions(Base):
    upload: Incoming | None = None
    too_large = False

    async def prepare(self) -> None:
        if self.request.method != "POST":
            return
        await self.caller()
        self.stage = _stage(self.get_argument("stage", None))
        limit = self.settings_.max_upload
        declared = self.request.headers.get("Content-Length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise self._oversized(int(declared))
        # past the cap, the rest is read and dropped (a refusal with its reason), up to twice the cap: then cut off
        self.request.connection.set_max_body_size(2 * limit)  # type: ignore[union-attr]
        self.upload = self.store.incoming()

    def _oversized(self, size: int | None) -> Refused:
        limit = self.settings_.max_upload
        said = _("the upload is {size} bytes").format(size=size) if size else _("the upload is larger than allowed")
        return Refused(413, "too_large", _("{said}; the course service takes at most {limit} bytes (grading's limit)").format(
            said=said, limit=limit), _("hand in only your workbook's forge/, transfer/, labs/ and evidence/ "
                                      "(forgelab submit does): remove large files you added"))

    def data_received(self, chunk: bytes) -> None:
        if self.upload is None or self.too_large:
            return
        self.upload.write(chunk)
        if self.upload.size > self.settings_.max_upload:
            self.too_large = True
            self.upload.discard()

    def on_connection_close(self) -> None:
        if self.upload is not None:
            self.upload.discard()

    async def post(self) -> None:
        upload = self.upload
        assert upload is not None
        identity = await self.caller()
        if self.too_large:
            raise self._oversized(None)
        try:
            sha = upload.finish()
            loop = asyncio.get_running_loop()
            content, files = await loop.run_in_executor(None, contextvars.copy_context().run, _read_snapshot,
                                                        upload.path)
            self.store.keep(upload, sha)
        except BaseException:
            upload.discard()
            raise
        receipt = await loop.run_in_executor(None, lambda: self.store.add_submission(
            identity.name, self.stage, sha, content, upload.size, files))
        LOG.info("submission %s from %s: %s (%s bytes)", receipt.id, identity.name, sha, upload.size)
        self.reply(receipt, 201)

    async def get(self) -> None:
        identity = await self.caller()
        self.reply(SubmissionList(learner=identity.name, submissions=self.store.submissions(identity.name)))


def _read_snapshot(path: Path) -> tuple[str, list[str]]:
    """Read an uploaded zip with grading's limits → (content digest, the files grading reads); a refusal otherwise."""
    try:
        found, kind, prefix = inspect(str(path))
        with tempfile.TemporaryDirectory(prefix="forgelab-intake-") as scratch:
            laid = lay_out(Submission("upload", found, "zip", prefix), Path(scratch))
    except (SubmissionError, LayoutError) as error:
        said = str(error).replace(str(path), path.name).replace(path.name, _("the upload"))  # no server paths
        raise Refused(400, "malformed", _("the upload cannot be graded: {error}").format(error=said),
                      _("hand in your workbook with `forgelab submit`, which packs what grading reads")) from None
    files = sorted(inside for _area, inside in laid.files)
    return laid.content_sha256, files


class SubmissionZip(Base):
    async def get(self, number: str) -> None:
        identity = await self.caller()
        receipt = self.store.submission(int(number))
        if receipt is None or (receipt.learner != identity.name and not identity.instructor):
            # the same answer whether it does not exist or is someone else's: a learner learns nothing of others
            raise _not_yours(_("submission {number}").format(number=number))
        self.set_header("Content-Type", "application/zip")
        self.set_header("Content-Disposition", f'attachment; filename="{receipt.learner}-{receipt.id}.zip"')
        self.finish(self.store.blob_path(receipt.sha256).read_bytes())


class DeadlinesHandler(Base):
    async def get(self) -> None:
        await self.caller()
        self.reply(Deadlines(deadlines=self.store.deadlines()))

    async def put(self) -> None:
        await self.instructor()
        wanted = cast(Deadlines, self.body_as(Deadlines))
        self.store.set_deadlines(wanted.deadlines)
        self.reply(Deadlines(deadlines=self.store.deadlines()))


class Collect(Base):
    async def get(self) -> None:
        await self.instructor()
        collection: Collection = self.store.collect(_stage(self.get_argument("stage", None)))
        self.reply(collection)


class FeedbackApi(Base):
    async def get(self, learner: str | None = None) -> None:
        identity = await self.caller()
        name = learner or identity.name
        if name != identity.name and not identity.instructor:
            raise _not_yours(_("the feedback of {name}").format(name=repr(name)))
        feedback = self.store.feedback(name)
        if feedback is None:
            raise Refused(404, "not_found", _("no feedback has been published for {name} yet").format(name=name),
                          _("wait until your instructor publishes the grades"))
        self.reply(feedback)

    async def put(self, learner: str | None = None) -> None:
        await self.instructor()
        if not learner:
            raise Refused(400, "malformed", _("say whose feedback this is: PUT api/feedback/NAME"),
                          _("use `forgelab class grade`, which publishes every page"))
        upload = cast(FeedbackUpload, self.body_as(FeedbackUpload))
        feedback = self.store.publish(learner, upload.html.encode(), upload.points, upload.max_points,
                                      upload.submission_id)
        self.reply(feedback, 201)


class TotalsHandler(Base):
    async def get(self) -> None:
        await self.instructor()
        self.reply(Totals(totals=self.store.totals()))


class Page(Base):
    """Pages for a browser: sign in through the hub (OAuth) first."""

    async def browser_identity(self) -> Identity | None:
        try:
            identity = await self.identify(browser=True)
        except Refused as refused:
            self.set_status(refused.status_code)
            self._page("refused.html", refusal=refused.refusal)
            return None
        if identity is None:
            self.redirect(self.auth_login_url())
        return identity

    def auth_login_url(self) -> str:
        login = self.auth.login_url
        state = self.auth.set_state_cookie(self, next_url=self.request.uri)
        return f"{login}{'&' if '?' in login else '?'}state={state}"

    def _page(self, template: str, **values: Any) -> None:
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", PAGE_POLICY)
        self.finish(templates(active()).get_template(f"hub/{template}.j2").render(
            prefix=self.settings_.prefix, html_lang="zh-CN" if active() == "zh" else "en", **values))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        error = kwargs.get("exc_info", (None, None, None))[1]
        refusal = error.refusal if isinstance(error, Refused) else Refusal(
            status=status_code, reason="error", message=self._reason, next_step="")
        self._close_after_refusal()
        self._page("refused.html", refusal=refusal)


class FeedbackPage(Page):
    async def get(self, learner: str | None = None) -> None:
        identity = await self.browser_identity()
        if identity is None:
            return
        name = learner or identity.name
        if name != identity.name and not identity.instructor:
            raise _not_yours(_("the feedback of {name}").format(name=repr(name)))
        feedback = self.store.feedback(name)
        if feedback is None:
            self.set_status(404)
            self._page("nofeedback.html", name=name)
            return
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.set_header("Content-Security-Policy", PAGE_POLICY)
        self.finish(self.store.blob_path(feedback.sha256).read_bytes())


class Home(Page):
    async def get(self) -> None:
        identity = await self.browser_identity()
        if identity is None:
            return
        mine = self.store.submissions(identity.name)
        values: dict[str, object] = {"me": identity, "mine": list(reversed(mine)), "feedback": self.store.feedback(
            identity.name), "deadlines": self.store.deadlines()}
        if identity.instructor:
            values["collection"] = self.store.collect("all")
            values["totals"] = {f.learner: f for f in self.store.totals()}
        self._page("home.html", **values)


def _start_run(handler: Base, identity: Identity, stages: str | None) -> GradeRun:
    token = handler.auth.get_token(handler)
    try:
        return handler.runner.start(identity.name, token, stages)
    except RunError as error:
        raise Refused(error.status, error.reason, error.message, error.next_step) from None


class GradeApi(Base):
    """``GET api/grade``: the grade runs; ``POST api/grade`` (JSON ``{"stages": "01-07"}`` or empty): start one."""

    async def get(self) -> None:
        await self.instructor()
        self.reply(GradeRuns(runs=self.runner.runs()))

    async def post(self) -> None:
        identity = await self.instructor()
        asked = cast(GradeRequest, self.body_as(GradeRequest)) if self.request.body.strip() else GradeRequest()
        self.reply(_start_run(self, identity, asked.stages), 202)


class GradePage(Page):
    """The instructors' page that grades: the runs, the latest one's progress, the button, the report's link."""

    FORM_OK = True

    async def get(self) -> None:
        identity = await self.browser_identity()
        if identity is None:
            return
        await self.instructor()
        runs = self.runner.runs()
        latest = runs[0] if runs else None
        self._page("grade.html", me=identity, runs=runs, latest=latest, can_grade=self.settings_.course is not None,
                   log=self.runner.log_tail(latest.id) if latest else "", xsrf=Markup(self.xsrf_form_html()),
                   state_words=STATE_WORDS)

    async def post(self) -> None:
        identity = await self.browser_identity()
        if identity is None:
            return
        await self.instructor()
        stages = (self.get_body_argument("stages", "") or "").strip() or None
        _start_run(self, identity, stages)
        self.redirect(self.settings_.prefix + "grade", status=303)


class RunFiles(Page):
    """``grading/N/PATH``: what a grade run wrote (the class report, its figures, the similarity index and the
    feedback pages), for instructors only."""

    async def get(self, number: str, path: str) -> None:
        identity = await self.browser_identity()
        if identity is None:
            return
        await self.instructor()
        base = (self.runner.run_folder(int(number)) / "grading").resolve()
        wanted = (base / path).resolve()
        if not wanted.is_relative_to(base) or not wanted.is_file():
            raise Refused(404, "not_found", _("grade run {number} has no {path}").format(number=number, path=path),
                          _("open the run's report from the grading page"))
        kinds = {".html": "text/html; charset=utf-8", ".svg": "image/svg+xml", ".json": "application/json",
                 ".csv": "text/csv; charset=utf-8"}
        self.set_header("Content-Type", kinds.get(wanted.suffix, "application/octet-stream"))
        self.set_header("Content-Security-Policy", PAGE_POLICY.replace("img-src data:", "img-src 'self' data:"))
        self.finish(wanted.read_bytes())


def make_app(settings: Settings, auth: Any) -> web.Application:
    store = Store(settings.data)
    base = settings.prefix
    runner = Runner(settings.data, settings.course, sys.executable, settings.self_url)
    shared = {"settings": settings, "store": store, "auth": auth, "runner": runner}
    return web.Application([
        (base, Home, shared),
        (base + "api/health", Health, shared),
        (base + "api/whoami", WhoAmI, shared),
        (base + "api/submissions", Submissions, shared),
        (base + r"api/submissions/(\d{1,18})/zip", SubmissionZip, shared),
        (base + "api/deadlines", DeadlinesHandler, shared),
        (base + "api/collect", Collect, shared),
        (base + "api/feedback", FeedbackApi, shared),
        (base + r"api/feedback/([^/]+)", FeedbackApi, shared),
        (base + "api/totals", TotalsHandler, shared),
        (base + "feedback", FeedbackPage, shared),
        (base + r"feedback/([^/]+)", FeedbackPage, shared),
        (base + "api/grade", GradeApi, shared),
        (base + "grade", GradePage, shared),
        (base + r"grading/(\d{1,9})/(.+)", RunFiles, shared),
        (base + "oauth_callback", HubOAuthCallbackHandler),
    ], hub_auth=auth, cookie_secret=os.urandom(32), xsrf_cookies=False,
        xsrf_cookie_kwargs={"path": base, "httponly": True, "samesite": "Strict"})


def main() -> None:
    """``python -m forgelab.hub.service``: serve at ``JUPYTERHUB_SERVICE_URL`` until SIGTERM/SIGINT."""
    logging.basicConfig(level=logging.INFO, format="[forge-course %(asctime)s] %(message)s")
    use(resolve())  # FORGE_LANG, which the hub's configuration sets to the course's edition
    settings = Settings.from_environment()
    auth = HubOAuth(api_token=os.environ["JUPYTERHUB_API_TOKEN"], cache_max_age=60)
    app = make_app(settings, auth)
    bind = urlparse(os.environ.get("JUPYTERHUB_SERVICE_URL", "http://127.0.0.1:10101"))
    server = httpserver.HTTPServer(app, max_body_size=settings.max_upload + 1, xheaders=True)
    server.listen(bind.port or 80, bind.hostname or "127.0.0.1")
    (settings.data / "service.pid").write_text(str(os.getpid()), encoding="utf-8")
    loop = ioloop.IOLoop.current()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_args: loop.add_callback_from_signal(loop.stop))
    print(json.dumps({"serving": f"http://{bind.hostname}:{bind.port}{settings.prefix}", "data": str(settings.data)}),
          flush=True)
    loop.start()


if __name__ == "__main__":
    main()
