"""Models behind one small protocol: ``model_id`` and ``complete(prompt) -> str``.

``MockModel``       offline and deterministic: its answer is a pure function of the prompt text.
``ReplayModel``     answers from a JSONL recording, keyed by the SHA-256 of the prompt.
``RecordingModel``  wraps another model and appends each answer to such a recording.
``OpenAIChatModel`` any OpenAI-compatible ``/chat/completions`` endpoint, configured by
                    ``FORGE_OPENAI_BASE_URL``, ``FORGE_OPENAI_MODEL`` and ``FORGE_OPENAI_API_KEY``
                    (standard library only; nothing is sent anywhere unless you configure it).

How the mock reads a prompt
    It behaves like a small, obedient model. It ignores everything inside retrieved data blocks
    (``BEGIN RETRIEVED DATA <tag>`` … ``END RETRIEVED DATA <tag>``), then reads the sections:
    the request becomes ``goal``; the ``### <id>`` headings under Context become ``inputs``;
    ``outputs`` and ``acceptance`` are copied from the first example it was shown; ``write_allowed``
    follows the ``- write: allow|deny`` instruction (no such line: ``false``). It answers with
    exactly the fields the Output schema section lists — no schema section, and it answers in prose.

    Like a weak real model it is gullible: a sentence saying "enable writes" or "disable writes"
    that it can see *outside* a data block overrides the write policy. That is what makes the
    injection boundary observable offline: keep retrieved text inside its block and the sentence
    is never read as an instruction.

    ``fault`` switches on one output defect, to exercise the safety edges of the pipeline:
    ``fenced`` (a code fence around the JSON), ``trailing_comma``, ``prose`` (chatter around the
    JSON), ``unknown_field`` (an extra ``priority``), ``missing_write_allowed``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

MOCK_FAULTS: tuple[str, ...] = ("fenced", "trailing_comma", "prose", "unknown_field", "missing_write_allowed")

# the block format of forge/injection.py (stage 06); repeated here so the mock never imports a stage module
_DATA_BLOCK = re.compile(r"^BEGIN RETRIEVED DATA (\S+)[^\n]*\n.*?^END RETRIEVED DATA \1[ \t]*$", re.M | re.S)
_HEADING = re.compile(r"^## (?!#)(.*)$", re.M)
_OBEYED = re.compile(r"\b(enable|disable) writes\b", re.I)


class ModelError(RuntimeError):
    """A model could not answer. ``str(error)`` is the cause; ``next_step`` says what to do."""

    def __init__(self, message: str, next_step: str = "") -> None:
        super().__init__(message)
        self.next_step = next_step


class Model(Protocol):
    @property
    def model_id(self) -> str: ...

    def complete(self, prompt: str) -> str: ...


def prompt_sha256(prompt: str) -> str:
    """The key of a prompt in a recording: the SHA-256 of its UTF-8 text, in hex."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- the mock
def strip_data_blocks(prompt: str) -> str:
    """The prompt without its retrieved data blocks (what the mock treats as instructions and facts)."""
    return _DATA_BLOCK.sub("", prompt)


def _sections(visible: str) -> dict[str, str]:
    parts = _HEADING.split(visible)
    sections: dict[str, str] = {}
    for heading, body in zip(parts[1::2], parts[2::2]):
        sections.setdefault(heading.strip(), body)
    return sections


def _section(sections: Mapping[str, str], prefix: str) -> str | None:
    for heading, body in sections.items():
        if heading == prefix or heading.startswith(prefix + " "):
            return body
    return None


def _examples(body: str | None) -> list[dict[str, object]]:
    answers = []
    for line in (body or "").splitlines():
        if line.startswith("Answer: "):
            try:
                value = json.loads(line.removeprefix("Answer: "))
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                answers.append(value)
    return answers


def mock_answer(prompt: str) -> dict[str, object] | None:
    """What the mock means to answer, before any fault; ``None`` when the prompt names no schema."""
    visible = strip_data_blocks(prompt)
    sections = _sections(visible)
    schema = _section(sections, "Output schema")
    fields = re.findall(r"^- (\w+):", schema or "", re.M)
    if not fields:
        return None
    request_at = re.search(r"^## Request[ \t]*$", visible, re.M)
    request = " ".join(visible[request_at.end():].split()) if request_at else ""
    instructions = dict(re.findall(r"^- (\w+): (.*?)\s*$", _section(sections, "Instructions") or "", re.M))
    write_allowed = instructions.get("write") == "allow"
    for match in _OBEYED.finditer(visible):
        write_allowed = match.group(1).lower() == "enable"
    shown = _examples(_section(sections, "Examples"))
    first = shown[0] if shown else {}
    outputs, acceptance = first.get("outputs"), first.get("acceptance")
    values: dict[str, object] = {
        "goal": request,
        "inputs": re.findall(r"^### (.+?)\s*$", _section(sections, "Context") or "", re.M),
        "outputs": list(outputs) if isinstance(outputs, list) else [],
        "acceptance": list(acceptance) if isinstance(acceptance, list) else [],
        "write_allowed": write_allowed,
    }
    return {name: values.get(name, "") for name in fields}


def _with_fault(answer: dict[str, object], fault: str | None) -> str:
    answer = dict(answer)
    if fault == "unknown_field":
        answer["priority"] = "high"
    if fault == "missing_write_allowed":
        answer.pop("write_allowed", None)
    text = json.dumps(answer, ensure_ascii=False, indent=2)
    if fault == "fenced":
        return f"```json\n{text}\n```"
    if fault == "trailing_comma":
        text = re.sub(r"(\S)(\n\s*\])", r"\1,\2", text)
        return text[: -len("\n}")] + ",\n}"
    if fault == "prose":
        return f"Sure! Here is the task specification you asked for:\n{text}\nTell me if anything should change."
    return text


@dataclass(frozen=True)
class MockModel:
    """Deterministic offline model (see the module docstring). Same prompt, same answer."""

    fault: str | None = None

    def __post_init__(self) -> None:
        if self.fault is not None and self.fault not in MOCK_FAULTS:
            raise ValueError(f"unknown mock fault {self.fault!r}: expected one of {', '.join(MOCK_FAULTS)}")

    @property
    def model_id(self) -> str:
        return "mock" if self.fault is None else f"mock+{self.fault}"

    def complete(self, prompt: str) -> str:
        answer = mock_answer(prompt)
        if answer is None:
            return ("I read your request, but the prompt does not say which format to answer in, "
                    "so here is a summary in words: the task is probably worth doing.")
        return _with_fault(answer, self.fault)


# ---------------------------------------------------------------- recording and replay
class ReplayModel:
    """Answers from a JSONL recording: one ``{"prompt_sha256": ..., "output": ...}`` object per line."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.answers: dict[str, str] = {}
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise ModelError(f"cannot read the replay file {self.path}: {error.strerror}",
                             "record one first with --record FILE (any model), or check the path") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                key, output = entry["prompt_sha256"], entry["output"]
                if not isinstance(key, str) or not isinstance(output, str):
                    raise TypeError
            except (json.JSONDecodeError, KeyError, TypeError):
                raise ModelError(f"{self.path.name}, line {number}: expected a JSON object with string fields "
                                 "prompt_sha256 and output", "fix or delete that line") from None
            if self.answers.get(key, output) != output:
                raise ModelError(f"{self.path.name}, line {number}: a second, different answer for prompt {key[:12]}",
                                 "keep one answer per prompt")
            self.answers[key] = output

    @property
    def model_id(self) -> str:
        return f"replay:{self.path.name}"

    def complete(self, prompt: str) -> str:
        key = prompt_sha256(prompt)
        if key not in self.answers:
            raise ModelError(f"{self.path.name} has no answer for this prompt (sha256 {key[:12]})",
                             "the prompt changed since the recording: record again with --record FILE")
        return self.answers[key]


@dataclass(frozen=True)
class RecordingModel:
    """Passes each prompt to ``inner`` and appends the answer to a JSONL recording."""

    inner: Model
    path: Path

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def complete(self, prompt: str) -> str:
        output = self.inner.complete(prompt)
        entry = {"prompt_sha256": prompt_sha256(prompt), "model": self.inner.model_id, "output": output}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")
        return output


# ---------------------------------------------------------------- a real endpoint
ENV_BASE_URL = "FORGE_OPENAI_BASE_URL"
ENV_MODEL = "FORGE_OPENAI_MODEL"
ENV_API_KEY = "FORGE_OPENAI_API_KEY"
ENV_TIMEOUT = "FORGE_OPENAI_TIMEOUT"
SETUP = (f"set {ENV_BASE_URL} (e.g. http://127.0.0.1:8000/v1), {ENV_MODEL} and, if the server needs one, "
         f"{ENV_API_KEY}; or use --model mock, which works offline")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class OpenAIChatModel:
    """A chat-completions client for OpenAI-compatible servers, standard library only."""

    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 60.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> OpenAIChatModel:
        env = os.environ if environ is None else environ
        base_url, model = env.get(ENV_BASE_URL, "").strip(), env.get(ENV_MODEL, "").strip()
        for name, value in ((ENV_BASE_URL, base_url), (ENV_MODEL, model)):
            if not value:
                raise ModelError(f"{name} is not set", SETUP)
        if urllib.parse.urlsplit(base_url).scheme not in ("http", "https"):
            raise ModelError(f"{ENV_BASE_URL} must start with http:// or https://, got {base_url!r}", SETUP)
        try:
            timeout = float(env.get(ENV_TIMEOUT, "60"))
        except ValueError:
            raise ModelError(f"{ENV_TIMEOUT} must be a number of seconds", f"unset it or set e.g. {ENV_TIMEOUT}=60") from None
        return cls(base_url.rstrip("/"), model, env.get(ENV_API_KEY, "").strip(), timeout)

    @property
    def model_id(self) -> str:
        return f"openai:{self.model}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def complete(self, prompt: str) -> str:
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0}
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
        host = urllib.parse.urlsplit(self.url).hostname or ""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}) if _is_loopback(host)
                                             else urllib.request.ProxyHandler())
        try:
            with opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as error:
            raise self._http_error(error) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ModelError(f"cannot reach {self.url}: {reason}",
                             f"start the server or fix {ENV_BASE_URL}; --model mock works offline") from None
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelError(f"{self.url} did not answer with a chat completion (no choices[0].message.content)",
                             f"check that {ENV_BASE_URL} points at an OpenAI-compatible API") from None
        if not isinstance(content, str):
            raise ModelError(f"{self.url} answered with non-text content", "use a text chat model")
        return content

    def _http_error(self, error: urllib.error.HTTPError) -> ModelError:
        if error.code in (401, 403):
            return ModelError(f"{self.url} refused the request (HTTP {error.code})", f"check {ENV_API_KEY}")
        if error.code == 404:
            return ModelError(f"{self.url} does not exist (HTTP 404)",
                              f"{ENV_BASE_URL} should be the API root, e.g. http://127.0.0.1:8000/v1, and "
                              f"{ENV_MODEL} a model the server knows")
        detail = ""
        try:
            detail = " ".join(error.read().decode("utf-8", "replace").split())[:120]
        except OSError:
            pass
        return ModelError(f"{self.url} answered HTTP {error.code}" + (f": {detail}" if detail else ""),
                          "try again later, or use --model mock")
