"""A small browser fixture of our own: Debian's chromium driven by Playwright for Python.

No browser is ever downloaded and no pytest-playwright fixture is used. Test modules import the
fixtures they need from here (``from browser import ...``); screenshots go to ``test-artifacts/site/``.

The course page is built in both editions (``--lang all``: English at the root, Chinese under ``zh/``);
``site_tab`` opens each in turn, and a test compares the page's words with :meth:`SitePage.say`, the
catalog's message in the tab's language.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "test-artifacts" / "site"
STAGE_01 = "01-instruction-hierarchy"
WAIT_MS = 20_000  # generous: several chromium processes may share two busy cores under xdist
LOCAL_PREFIXES = ("file://", "http://127.0.0.1:", "data:", "blob:")
EDITIONS = ("en", "zh")
EDITION_FOLDER = {"en": "", "zh": "zh/"}  # where each edition lives in a `--lang all` build


def require_chromium() -> None:
    if not CHROMIUM.is_file():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM}: `apt-get install chromium` "
                    "(.ci/run installs it before `make test`)")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One browser per test module. Playwright's sync API allows one instance per thread at a time, and a
    fixture imported into several modules is one fixture per module: module scope closes each before the next
    module (or another module's own Playwright) starts."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


_ONCE: dict[str, Any] = {}  # what the session fixtures made, shared by every module that imports them


def _once(key: str, make: Any) -> Any:
    if key not in _ONCE:
        _ONCE[key] = make()
    return _ONCE[key]


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The course page built from this repository in both editions, each with its lab bundle."""
    from forgelab.core.registry import load_course
    from forgelab.authoring.publish import publish_site

    from released import bundles_built_once  # lazy: only this fixture needs the release machinery

    def build() -> Path:
        out = tmp_path_factory.mktemp("site") / "site"
        with bundles_built_once(tmp_path_factory):  # the bundles the site modules publish, built once per run
            publish_site(load_course(ROOT), out, editions=EDITIONS)
        return out

    return _once("built_site", build)  # type: ignore[no-any-return]


def edition_base(site: Path, language: str) -> str:
    """The URL of one edition's folder in a built site (ends with a slash)."""
    return site.as_uri() + "/" + EDITION_FOLDER[language]


@dataclass(frozen=True)
class Say:
    """A message of forgelab's catalog with its values, said in a page's language when compared (nested as a value)."""

    message: str
    values: dict[str, Any] = field(default_factory=dict)


def template(language: str, message: str) -> str:
    """The catalog's words for ``message`` in ``language``, placeholders unfilled."""
    from forgelab.core.i18n import _, speaking

    with speaking(language):
        return _(message)


def said(language: str, message: str, **values: Any) -> str:
    """``message`` as the page of ``language`` shows it: the catalog's words, ``{name}`` filled in."""
    from forgelab.core.i18n import _, speaking

    with speaking(language):
        filled = {name: said(language, value.message, **value.values) if isinstance(value, Say) else value
                  for name, value in values.items()}
        return _(message).format(**filled)


def run_check(workspace: Path, *args: str) -> dict[str, Any]:
    """Run the real checker for stage 01 into ``workspace`` and return the verification.json it wrote."""
    from conftest import run_cli

    done = run_cli(ROOT, "check", "01", *args, env={"FORGELAB_WORKSPACE": str(workspace)}, timeout=120)
    path = workspace / "evidence" / "prompt-context-output" / STAGE_01 / "verification.json"
    assert path.is_file(), f"forgelab check wrote no verification.json:\n{done.stdout}\n{done.stderr}"
    return json.loads(path.read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Evidence:
    """verification.json documents for stage 01 produced by the real checker."""

    passing: dict[str, Any]  # --target solution
    starter: dict[str, Any]  # the learner's untouched starter

    def passing_copy(self) -> dict[str, Any]:
        return copy.deepcopy(self.passing)


@pytest.fixture(scope="session")
def evidence(tmp_path_factory: pytest.TempPathFactory) -> Evidence:
    def check() -> Evidence:
        passing = run_check(tmp_path_factory.mktemp("evidence-solution"), "--target", "solution")
        starter = run_check(tmp_path_factory.mktemp("evidence-starter"))
        assert passing["accepted"] is True, passing["problems"]
        assert starter["accepted"] is False
        return Evidence(passing, starter)

    return _once("evidence", check)  # type: ignore[no-any-return]


def as_bytes(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def sealed(document: dict[str, Any]) -> dict[str, Any]:
    from forgelab.core.evidence import seal

    return seal(document)


@dataclass
class SitePage:
    """One browser tab on the course page, recording every request and script error."""

    page: Any
    base: str  # file:///…/site/ or http://127.0.0.1:PORT/ (…/zh/ for the Chinese edition)
    language: str = "en"
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def say(self, message: str | Say, **values: Any) -> str:
        """What this tab's edition shows for a message of the catalog (see :func:`said`)."""
        if isinstance(message, Say):
            return said(self.language, message.message, **message.values)
        return said(self.language, message, **values)

    def pattern(self, phrase: str | Say) -> str:
        """A regular expression for a phrase as the page shows it: a literal, or a message of the catalog whose
        unfilled placeholders match anything; `code` marks are not shown (they become <code> elements)."""
        if isinstance(phrase, str):
            return re.escape(phrase)
        parts = re.split(r"(\{\w+\})", template(self.language, phrase.message).replace("`", ""))
        pattern = ""
        for part in parts:
            name = part[1:-1] if re.fullmatch(r"\{\w+\}", part) else None
            if name is None:
                pattern += re.escape(part)
            elif name in phrase.values:
                value = phrase.values[name]
                pattern += re.escape(self.say(value) if isinstance(value, Say) else str(value))
            else:
                pattern += ".*?"
        return pattern

    def shows(self, phrase: str | Say, text: str) -> bool:
        return re.search(self.pattern(phrase), text, re.S) is not None

    def open(self, name: str) -> "SitePage":
        self.page.goto(self.base + name)
        return self

    def open_stage(self, key: str = STAGE_01) -> "SitePage":
        return self.open(f"{key}.html")

    # ---- the local-check panel
    def state(self) -> str:
        return self.page.get_attribute("#local-check", "data-state")

    def wait_state(self, state: str) -> None:
        self.page.wait_for_selector(f'#local-check[data-state="{state}"]', timeout=WAIT_MS)

    def scroll_to_read(self) -> None:
        self.page.mouse.wheel(0, 900)
        self.wait_state_not("not-started")

    def wait_state_not(self, state: str) -> None:
        self.page.wait_for_function(
            "s => document.getElementById('local-check').dataset.state !== s", arg=state, timeout=WAIT_MS)

    def download_bundle(self) -> Any:
        with self.page.expect_download() as download:
            self.page.click("a[data-bundle]")
        return download.value

    def pick(self, data: bytes, name: str = "verification.json", mime: str = "application/json") -> None:
        """Pick a file and wait until the page has reacted (a report or a message)."""
        before = self.page.evaluate("window.__picks = (window.__picks || 0) + 1")
        self.page.evaluate("""n => {
            const done = () => { window.__answered = n; };
            const observer = new MutationObserver(done);
            observer.observe(document.getElementById('report'), {childList: true, subtree: true});
            observer.observe(document.getElementById('file-message'), {childList: true, subtree: true, attributes: true});
            window.__observer && window.__observer.disconnect();
            window.__observer = observer;
        }""", before)
        self.page.set_input_files("#verification-file", files=[{"name": name, "mimeType": mime, "buffer": data}])
        self.page.wait_for_function("n => window.__answered === n", arg=before, timeout=WAIT_MS)

    def pick_document(self, document: dict[str, Any], name: str = "verification.json") -> None:
        self.pick(as_bytes(document), name)

    def headline(self) -> str:
        return self.page.inner_text("#report .report-headline")

    def check(self, check_id: str) -> tuple[str, str]:
        """(status, text) of one explained check."""
        locator = self.page.locator(f'#report .check[data-check="{check_id}"]')
        return locator.get_attribute("data-status"), locator.inner_text()

    def checks(self) -> dict[str, str]:
        return self.page.eval_on_selector_all(
            "#report .check", "nodes => Object.fromEntries(nodes.map(n => [n.dataset.check, n.dataset.status]))")

    def message(self) -> tuple[str | None, str]:
        """(problem code, text) of the file-level message, (None, '') when none is shown."""
        if self.page.is_hidden("#file-message"):
            return None, ""
        return self.page.get_attribute("#file-message", "data-problem"), self.page.inner_text("#file-message")

    def screenshot(self, name: str) -> Path:
        """A full-page screenshot; the Chinese edition's carry a ``zh-`` prefix."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{self._prefix()}{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def panel_screenshot(self, name: str) -> Path:
        """Only the local-check panel: the part a reviewer looks at for a state."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{self._prefix()}panel-{name}.png"
        self.page.locator("#local-check").screenshot(path=str(path))
        return path

    def _prefix(self) -> str:
        return "" if self.language == "en" else f"{self.language}-"

    def foreign_requests(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(LOCAL_PREFIXES)]


def open_tab(browser: Any, base: str, *, width: int = 1024, height: int = 700, language: str = "en",
             locale: str | None = None) -> tuple[Any, SitePage]:
    context = browser.new_context(viewport={"width": width, "height": height}, accept_downloads=True,
                                  **({"locale": locale} if locale else {}))
    context.set_default_timeout(WAIT_MS)
    page = context.new_page()
    tab = SitePage(page, base, language)
    page.on("request", lambda request: tab.requests.append(request.url))
    page.on("pageerror", lambda error: tab.errors.append(str(error)))
    # Anything that is not local would be a bug: record it (above) and never let it leave.
    context.route(lambda url: not url.startswith(LOCAL_PREFIXES), lambda route: route.abort())
    return context, tab


@pytest.fixture(params=EDITIONS)
def site_tab(request: pytest.FixtureRequest, chromium: Any, built_site: Path) -> Iterator[SitePage]:
    """A fresh browser context (empty localStorage) on the file:// site, in each edition in turn."""
    language = request.param
    context, tab = open_tab(chromium, edition_base(built_site, language), language=language)
    try:
        yield tab
    finally:
        context.close()
    assert tab.errors == [], f"the page raised script errors: {tab.errors}"
