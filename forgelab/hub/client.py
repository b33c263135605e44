"""Talking to the course service from a learner's server or an instructor's terminal (httpx).

Inside a server the hub started, everything needed is in the environment: ``JUPYTERHUB_API_TOKEN`` (the server's
token; the hub's configuration lets it reach the course service) and ``FORGELAB_COURSE_URL`` (the service's address,
set by the hub's configuration; without it, ``JUPYTERHUB_API_URL``'s host with ``/services/forge-course/``).

:func:`pack` zips exactly what grading reads from a workbook (:func:`forgelab.core.submission.snapshot_sources`,
under grading's limits), so a learner never hands in more, or less, than grading uses.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx
from pydantic import ValidationError

from forgelab.core.i18n import _
from forgelab.core.submission import snapshot_sources
from forgelab.hub.models import (Collection, Deadline, Deadlines, Feedback, FeedbackUpload, Identity, Message,
                                 Receipt, Refusal, SubmissionList, Totals)

SERVICE = "forge-course"
T = TypeVar("T", bound=Message)


class ServiceError(RuntimeError):
    """The service refused, or could not be reached: what happened and what to do."""

    def __init__(self, message: str, next_step: str = "", status: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.message, self.next_step, self.status, self.reason = message, next_step, status, reason


@dataclass(frozen=True)
class Connection:
    url: str  # the service's base URL, ending in "/"
    token: str

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Connection:
        env = os.environ if environ is None else environ
        token = env.get("FORGELAB_COURSE_TOKEN") or env.get("JUPYTERHUB_API_TOKEN")
        url = env.get("FORGELAB_COURSE_URL")
        if not url and env.get("JUPYTERHUB_API_URL"):
            api = httpx.URL(env["JUPYTERHUB_API_URL"])
            url = str(api.copy_with(path=f"/services/{SERVICE}/", query=None))
        if not token or not url:
            raise ServiceError(_("this is not a server on the course's hub: JUPYTERHUB_API_TOKEN and the course "
                                 "service's address are not set"),
                               _("open a terminal in your JupyterLab on the hub and run the command there (or set "
                                 "FORGELAB_COURSE_URL and FORGELAB_COURSE_TOKEN)"))
        return cls(url if url.endswith("/") else url + "/", token)


class Client:
    def __init__(self, connection: Connection, timeout: float = 120.0) -> None:
        self.connection = connection
        self.http = httpx.Client(base_url=connection.url, timeout=timeout,
                                 headers={"Authorization": f"token {connection.token}"})

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_args: object) -> None:
        self.close()

    def _send(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        try:
            response = self.http.request(method, path, **kwargs)  # type: ignore[arg-type]
        except httpx.HTTPError as error:
            raise ServiceError(_("the course service at {url} cannot be reached ({error})").format(
                url=self.connection.url, error=type(error).__name__), _("try again in a minute; if it keeps failing, "
                                                                     "tell your instructor")) from None
        if response.status_code >= 400:
            try:
                refusal = Refusal.model_validate_json(response.content)
            except ValidationError:
                raise ServiceError(_("the course service answered {status}").format(status=response.status_code),
                                   _("tell your instructor"), response.status_code) from None
            raise ServiceError(refusal.message, refusal.next_step, refusal.status, refusal.reason)
        return response

    def _get(self, path: str, model: type[T], **kwargs: object) -> T:
        return model.model_validate_json(self._send("GET", path, **kwargs).content)

    # ------------------------------------------------------------ everyone

    def whoami(self) -> Identity:
        return self._get("api/whoami", Identity)

    def submit(self, data: bytes, stage: str) -> Receipt:
        response = self._send("POST", "api/submissions", params={"stage": stage}, content=data,
                              headers={"Content-Type": "application/zip"})
        return Receipt.model_validate_json(response.content)

    def submissions(self) -> SubmissionList:
        return self._get("api/submissions", SubmissionList)

    def feedback(self) -> Feedback:
        return self._get("api/feedback", Feedback)

    def feedback_page(self, learner: str | None = None) -> bytes:
        return self._send("GET", f"feedback/{learner}" if learner else "feedback").content

    def deadlines(self) -> list[Deadline]:
        return self._get("api/deadlines", Deadlines).deadlines

    def download(self, number: int) -> bytes:
        return self._send("GET", f"api/submissions/{number}/zip").content

    # ------------------------------------------------------------ instructors

    def set_deadlines(self, deadlines: list[Deadline]) -> list[Deadline]:
        response = self._send("PUT", "api/deadlines", content=Deadlines(deadlines=deadlines).model_dump_json())
        return Deadlines.model_validate_json(response.content).deadlines

    def collect(self, stage: str = "all") -> Collection:
        return self._get("api/collect", Collection, params={"stage": stage})

    def publish(self, learner: str, upload: FeedbackUpload) -> Feedback:
        response = self._send("PUT", f"api/feedback/{learner}", content=upload.model_dump_json())
        return Feedback.model_validate_json(response.content)

    def totals(self) -> Totals:
        return self._get("api/totals", Totals)


def pack(root: Path) -> tuple[bytes, list[str]]:
    """Zip what grading reads from the workbook at ``root`` → (the zip's bytes, the files in it). Raises
    :class:`forgelab.core.files.LayoutError` when the workbook breaks one of grading's limits."""
    sources = snapshot_sources(root)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for source in sources:
            info = zipfile.ZipInfo(source.relative.as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with source.open() as handle:
                archive.writestr(info, handle.read())
    return buffer.getvalue(), [source.relative.as_posix() for source in sources]
