"""`forgelab site build|serve`: what the static course page contains, and that it is reproducible."""

from __future__ import annotations

import hashlib
import html
import json
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from browser import ROOT
from conftest import CliResult, OutputLines, run_cli, start_cli, wait_for_http
from ports import reported_port
from released import bundles_built_once

from forgelab.core.registry import load_course
from forgelab.site.builder import SiteError, build_site
from forgelab.authoring.publish import publish_site
from forgelab.core.text import inline, md


# The published site is a module fixture: made once per run only if the module keeps to one xdist worker (make test
# runs --dist loadgroup).
pytestmark = pytest.mark.xdist_group("site-build")


@pytest.fixture(scope="module", autouse=True)
def bundles_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every site this module publishes gets each edition's bundle built once per run (released.py)."""
    with bundles_built_once(tmp_path_factory):
        yield


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site-build") / "site"
    publish_site(load_course(ROOT), out)
    return out


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _course_data(site: Path) -> dict:
    text = (site / "assets" / "course-data.js").read_text(encoding="utf-8")
    return json.loads(text.split("window.FORGE_COURSE = ", 1)[1].rstrip().rstrip(";"))


# ---------------------------------------------------------------- markdown subset


def test_markdown_escapes_html_and_renders_the_subset() -> None:
    html = md("A **bold** `x < y` and *rank*.\n\n<script>alert(1)</script>\n\n* one\n  more\n* `two`\n\n1. first\n2. second")
    assert "<p>A <strong>bold</strong> <code>x &lt; y</code> and <em>rank</em>.</p>" in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<ul>\n<li>one\nmore</li>\n<li><code>two</code></li>\n</ul>" in html
    assert "<ol>\n<li>first</li>\n<li>second</li>\n</ol>" in html


def test_markdown_leaves_code_spans_and_stray_marks_alone() -> None:
    assert inline("`**not bold**`") == "<code>**not bold**</code>"
    assert inline("3 * 4 * 5") == "3 * 4 * 5"
    assert inline("an odd ` backtick") == "an odd ` backtick"
    assert inline('"quoted" & <b>') == '&quot;quoted&quot; &amp; &lt;b&gt;'


def test_emphasis_next_to_chinese_follows_commonmark_flanking() -> None:
    # the stage texts' own phrases: * touching a Chinese character (or full-width punctuation) opens and closes
    assert inline("按指令来源的*可信等级*（trust rank）裁决") == "按指令来源的<em>可信等级</em>（trust rank）裁决"
    assert inline("场景*和* Schema 版本") == "场景<em>和</em> Schema 版本"
    assert inline("落败的指令被拒绝，*并且被记录下来*。") == "落败的指令被拒绝，<em>并且被记录下来</em>。"
    assert inline("这是**重点**：不要丢") == "这是<strong>重点</strong>：不要丢"
    assert inline("foo*bar*baz") == "foo<em>bar</em>baz"  # intraword * emphasis is allowed
    assert inline("***a* b**") == "<strong><em>a</em> b</strong>"
    # _ stays word-bound: identifiers keep their underscores, in English and in Chinese
    assert inline("snake_case_name and _x_") == "snake_case_name and <em>x</em>"
    assert inline("调用 test_input_is_not_mutated 时") == "调用 test_input_is_not_mutated 时"
    assert inline("中_文_字") == "中_文_字"
    # no flanking run, no emphasis
    assert inline("a * b * c") == "a * b * c" and inline("* 不是强调 *") == "* 不是强调 *"
    assert inline("*<b>*") == "<em>&lt;b&gt;</em>"


def test_emphasis_agrees_with_a_commonmark_implementation() -> None:
    """Random runs of *, _, letters, spaces, Chinese characters and punctuation render as markdown-it does."""
    import random

    from markdown_it import MarkdownIt

    reference = MarkdownIt("commonmark")
    alphabet = ["*", "*", "*", "_", "_", "a", "b", " ", "中", "文", "（", "）", "。", ".", "，"]
    generator = random.Random(14)
    compared = 0
    while compared < 4000:
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(1, 12))).strip()
        if not text or text[0] in "*_" and set(text) <= {"*", "_", " "} or text.startswith(("* ", "*\t")):
            continue  # a line of only marks (a thematic break) or a list item is block syntax, not inline
        assert inline(text) == reference.renderInline(text), text
        compared += 1


def test_page_text_renders_code_spans_of_any_backtick_run() -> None:
    assert inline("a fence (```` ```json ````) or") == "a fence (<code>```json</code>) or"
    assert inline("start with ```` ``` ```` or `~~~`") == "start with <code>```</code> or <code>~~~</code>"
    assert inline("an unclosed ```json fence and `code`") == "an unclosed ```json fence and <code>code</code>"
    assert inline("``a `tick` inside`` and *x*") == "<code>a `tick` inside</code> and <em>x</em>"
    assert md("`<b>` stays text\n\n* `**x**`") == "<p><code>&lt;b&gt;</code> stays text</p>\n<ul>\n<li><code>**x**</code></li>\n</ul>"


def test_a_stage_page_shows_fence_markers_as_code(site: Path) -> None:
    course = load_course(ROOT)
    stage = next(s for s in course.stages if "```` ```json ````" in s.text().problem)
    page = (site / f"{stage.key}.html").read_text(encoding="utf-8")
    assert "<code>```json</code>" in page and "<code></code>" not in page


# ---------------------------------------------------------------- the pages


def test_the_build_is_reproducible(site: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    publish_site(load_course(ROOT), again)
    assert _files(again) == _files(site)


def test_every_stage_has_a_page_with_its_facts(site: Path) -> None:
    course = load_course(ROOT)
    index = (site / "index.html").read_text(encoding="utf-8")
    for stage in course.stages:
        page = (site / f"{stage.key}.html").read_text(encoding="utf-8")
        text = stage.text()
        assert f'href="{stage.key}.html"' in index
        assert f'data-progress-for="{stage.number}"' in index
        assert f'data-stage="{stage.number}"' in page
        assert stage.experiment_id in page
        assert f"{stage.evidence_dir}/" in page
        assert course.scenario(stage.scenario).input in page
        for name in stage.required_tests:
            assert f"<code>{name}</code>" in page
        assert stage.fault.target_test in page and stage.transfer_file in page and stage.design_answer_file in page
        assert re.search(r'<li aria-current="page">\s*<a href="%s.html">' % re.escape(stage.key), page)
        for other in course.stages:  # the capability chain lists every stage
            assert f'<a href="{other.key}.html">{other.number} · ' in page
        assert text.title in page
        for state in ("Not started", "Reading", "Lab downloaded", "Results read", "Self-check passed"):
            assert state in page
        assert "not a certificate" in page
        assert 'href="downloads/forge-workbook-lab.zip" download data-bundle' in page
        assert '<div id="previous-report" class="report previous-report" hidden></div>' in page


def test_the_page_publishes_the_digests_of_the_stage_tests(site: Path) -> None:
    course = load_course(ROOT)
    data = _course_data(site)
    assert data["course_version"] == course.version
    assert data["schema_versions"] == [2]
    for stage in course.stages:
        published = data["stages"][stage.number]
        assert published["experiment_id"] == stage.experiment_id
        assert published["required_tests"] == list(stage.required_tests)
        digest = hashlib.sha256((ROOT / stage.test_file).read_bytes()).hexdigest()
        assert published["test_digests"] == [{"path": stage.test_file, "sha256": digest}]


def test_nothing_on_the_site_points_off_the_machine(site: Path) -> None:
    for relative, data in _files(site).items():
        if not relative.endswith((".html", ".css", ".js")):
            continue
        text = data.decode("utf-8")
        assert not re.search(r'(src|href)\s*=\s*["\']?(https?:)?//', text), relative
        assert "@import" not in text and "url(" not in text, relative
        assert not re.search(r"\b(fetch|XMLHttpRequest|WebSocket|sendBeacon|EventSource)\b", text), relative
        if relative.endswith(".html"):
            assert "connect-src 'none'" in html.unescape(text)
            assert not re.search(r"<[^>]+\son[a-z]+\s*=", text), f"{relative} has an inline event handler"


def test_the_bundle_is_on_the_site(site: Path) -> None:
    assert (site / "downloads" / "forge-workbook-lab.zip").stat().st_size > 10_000


def test_a_stage_without_its_test_file_fails_clearly(workbook, tmp_path: Path) -> None:  # noqa: ANN001
    course = load_course(workbook.root)
    stage = course.stages[0]
    (workbook.root / stage.test_file).unlink()
    with pytest.raises(SiteError, match=re.escape(stage.test_file) + " does not exist"):
        publish_site(course, tmp_path / "site")


def test_build_refuses_to_replace_a_folder_it_did_not_make(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(SiteError, match="not empty and was not built by forgelab"):
        build_site(load_course(ROOT), out)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"


# ---------------------------------------------------------------- the commands


BARE_SHELL = {"PATH": "/usr/bin:/bin", "FORGELAB_ROOT": str(ROOT)}


def _cli(*args: str, cwd: Path = ROOT, timeout: int = 60) -> CliResult:
    return run_cli(ROOT, *args, cwd=cwd, timeout=timeout, bare_env=BARE_SHELL)


def test_site_build_command_says_what_it_wrote(tmp_path: Path) -> None:
    done = _cli("site", "build", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert "site built (English edition):" in done.stdout and "lab bundle:" in done.stdout
    assert "forge-workbook-lab.zip" in done.stdout and "language switch" not in done.stdout
    assert (tmp_path / "out" / "index.html").as_uri() in done.stdout
    assert "forgelab site serve --dir" in done.stdout


def test_site_serve_without_a_site_names_the_next_step(tmp_path: Path) -> None:
    done = _cli("site", "serve", "--dir", str(tmp_path / "nothing"))
    assert done.returncode == 2
    assert "no site in" in done.stderr and "forgelab site build" in done.stderr


def test_site_serve_serves_on_127_0_0_1_and_prints_the_url(site: Path) -> None:
    process = start_cli(ROOT, "site", "serve", "--dir", str(site), "--port", "0", bare_env=BARE_SHELL)
    try:
        assert process.stdout is not None
        output = OutputLines(process.stdout)
        [line] = output.first(1, timeout=30)
        port = reported_port(line)  # the server picked it
        assert f"http://127.0.0.1:{port}/index.html" in line
        body = wait_for_http(f"http://127.0.0.1:{port}/index.html", timeout=10, process=process)
        assert b'data-page="index"' in body
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_site_serve_on_a_busy_port_says_so(site: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        done = _cli("site", "serve", "--dir", str(site), "--port", str(busy.getsockname()[1]))
    assert done.returncode == 2
    assert "cannot listen on 127.0.0.1" in done.stderr and "--port" in done.stderr


# ---------------------------------------------------------------- figures, opening, recovery point


def test_every_stage_page_shows_its_figures_from_the_site_itself(site: Path) -> None:
    from forgelab.core import figures

    course = load_course(ROOT)
    for stage in course.stages:
        page = (site / f"{stage.key}.html").read_text(encoding="utf-8")
        stage_figures = figures.stage_figures(stage.source_dir)
        assert stage_figures
        images = re.findall(r'<img src="([^"]+)" alt="([^"]+)" width="(\d+)" height="(\d+)">', page)
        assert [src for src, *_ in images] == [f"figures/{stage.key}-{f.name}.svg" for f in stage_figures]
        for (src, alt, width, height), figure in zip(images, stage_figures):
            assert (site / src).read_bytes() == figure.svg.read_bytes()
            assert html.unescape(alt) == figure.alt
            assert (int(width), int(height)) == figures.svg_size(figure.svg)
        assert page.index('id="figure"') < page.index('id="chain"')


def test_published_figures_reach_nothing_outside(site: Path) -> None:
    for path in sorted((site / "figures").glob("*.svg")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"<script|\son[a-z]+\s*=|<foreignObject", text, re.I), path.name
        assert not re.search(r"(href|src)\s*=\s*[\"'](?!#)", text), path.name
        assert "url(http" not in text and "@import" not in text, path.name


def test_the_index_opens_the_chapter_and_names_the_recovery_point(site: Path) -> None:
    course = load_course(ROOT)
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.index('id="opening"') < index.index('id="lab"') < index.index('id="stages"') \
        < index.index('id="recovery-point"')
    visible = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"</?(code|strong|em)>", "", index))).split())
    recovery = " ".join(re.sub(r"`([^`]*)`", r"\1", course.text("recovery_point")).split())
    assert recovery in visible
    for stage in course.stages:
        page = (site / f"{stage.key}.html").read_text(encoding="utf-8")
        assert ('id="recovery-point"' in page) == (stage.module == "forge/extractor.py"), stage.key
