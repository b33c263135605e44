"""Making the stages' figures: one source each in the stage's folder, one committed SVG per edition next to it.

Reading them (sources, captions, editions) is :mod:`forgelab.core.figures`; this module renders and checks them.

Two kinds of figure live in ``course/stages/NN-slug/``:

* **Mermaid** — ``figure.mmd`` (or ``figure-NAME.mmd``). The notebook shows the source in a
  ```` ```mermaid ```` block, which JupyterLab 4 renders by itself, offline. The course page shows
  ``figure.svg``, rendered from that source by ``forgelab build`` with Debian's chromium (through
  Playwright) and a pinned Mermaid from the npm registry (:data:`MERMAID_VERSION`, checked against
  :data:`MERMAID_INTEGRITY`, kept in ``.forgelab/mermaid/``). The SVG starts with a stamp that holds
  the SHA-256 of its source, so ``forgelab build --check`` sees a stale figure without a browser.
* **Plots** — ``figure-NAME.py``: where the data is numeric, a short script computes the stage's real
  numbers (it runs the stage's worked demonstration against the reference, :func:`demo_namespace`)
  and prints an SVG drawn with the helpers below. ``forgelab build`` runs it against the ``solution``
  target and writes ``figure-NAME.svg``; ``--check`` runs it again and compares the bytes. The notebook
  shows that SVG as a Markdown image by its relative path (JupyterLab does not render SVG attachments).

Every figure source starts with a ``caption:`` comment line (``%% caption: ...`` in Mermaid,
``# caption: ...`` in Python) and may add an ``alt:`` line, the text a screen reader gets. Another
edition's words follow as ``caption.zh:`` and ``alt.zh:`` lines.

Each edition has its own drawing from the same source: ``figure.svg`` (English) and ``figure_zh.svg``
(Chinese) side by side. A Mermaid source translates its prose labels in its header, one line per quoted
label text (or state-transition label): ``%% zh: same key:<br/>compare ranks => 同一个键：<br/>比较等级``;
:meth:`Figure.diagram` puts them in. A label that is code keeps its words (a line ``%% zh: X => X``
says so where the label looks like prose); a prose label without a line is named by
:mod:`forgelab.authoring.editions`. A plot script is run once per edition with ``--lang LANG`` (read with
:func:`plot_language`) and keeps its words per language in a small dict; numbers and code are the same
in both. The Chinese SVGs name a CJK font (:data:`FONT_ZH`, Debian's fonts-wqy-microhei first).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from forgelab.core.demo import edition, parse_percent_cells
from forgelab.core.display import Grid
from forgelab.core.evidence import write_atomic
from forgelab.core.figures import Figure, FigureError
from forgelab.core.text import esc

MERMAID_VERSION = "11.16.1"  # the version JupyterLab 4.6 renders with, so notebook and page agree
MERMAID_INTEGRITY = ("sha512-TQsq6u22fAn3rek5VOubrhKPo1g5hwC3FXUN9hiyupTckcYiGuuKGkNQrKYwGJkXUxZdojwRG46gsSCFZMDp4g==")
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
# Latin letters as in English; Chinese characters from WenQuanYi Micro Hei (Debian's fonts-wqy-microhei),
# else a common CJK font of the reader's system
FONT_ZH = ("DejaVu Sans, WenQuanYi Micro Hei, Noto Sans CJK SC, Source Han Sans SC, PingFang SC, "
           "Microsoft YaHei, sans-serif")
STAMP = re.compile(r"^<!-- forgelab figure: source sha256 ([0-9a-f]{64}), mermaid ([0-9.]+) -->\n")
PLOT_TIMEOUT = 300  # seconds: generous, the machine may be busy


# ---------------------------------------------------------------- staleness
def stale_reason(figure: Figure, plot_svg: str | None = None, language: str = "en") -> str | None:
    """Why the committed SVG of ``figure`` in ``language`` is out of date, or None.

    ``plot_svg``: a plot's fresh output in that language.
    """
    svg = figure.svg_in(language)
    if not svg.is_file():
        return "figure SVG missing"
    if figure.kind == "mermaid":
        match = STAMP.match(svg.read_text(encoding="utf-8"))
        if not match:
            return "figure SVG has no source stamp (it was not made by `forgelab build`)"
        if match.group(1) != figure.source_digest(language):
            return f"figure SVG differs from {figure.source.name}"
        if match.group(2) != MERMAID_VERSION:
            return f"figure SVG was rendered with Mermaid {match.group(2)}, not {MERMAID_VERSION}"
        return None
    if plot_svg is not None and svg.read_text(encoding="utf-8") != plot_svg:
        return f"figure SVG differs from what {figure.source.name} draws"
    return None


# ---------------------------------------------------------------- plots
def plot_language(argv: Sequence[str] | None = None) -> str:
    """The edition a plot script draws in: ``--lang zh`` on its command line (English without one)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        return "en"
    if len(args) == 2 and args[0] == "--lang" and re.fullmatch(r"[a-z]{2}", args[1]):
        return args[1]
    raise SystemExit(f"usage: python {Path(sys.argv[0]).name} [--lang LANG] (got {' '.join(args)!r})")


def run_plot(figure: Figure, import_dir: Path, language: str = "en") -> str:
    """Run a plot script with ``import_dir`` first on the path (the reference ``forge``); its SVG output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGELAB_")}
    env.update(PYTHONPATH=str(import_dir), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    command = [sys.executable, "-P", str(figure.source)] + ([] if language == "en" else ["--lang", language])
    try:
        done = subprocess.run(command, cwd=figure.source.parent, env=env,
                              capture_output=True, text=True, timeout=PLOT_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise FigureError(f"{figure.source} did not finish within {PLOT_TIMEOUT} s: check it for a loop") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise FigureError(f"{figure.source} failed against the reference (--lang {language}): {last} — fix the "
                          "script (its words for that language) or the demo")
    if not done.stdout.startswith("<svg"):
        raise FigureError(f"{figure.source} printed no SVG (its output must start with <svg)")
    return done.stdout


class _DemoLab:
    """What a demonstration uses of the notebook's ``lab`` when it runs outside a notebook: its tables, as text."""

    @staticmethod
    def table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[int] = ()) -> None:
        print(Grid(headers, rows, right).text())


def demo_namespace(script: str) -> dict[str, Any]:  # free-form: a demonstration script's globals
    """Run the worked demonstration of the stage folder that holds ``script`` and return its variables.

    A plot uses the demonstration's own inputs and results, so it can never show other numbers than
    the notebook prints. The demonstration's printed output is discarded.
    """
    demo = Path(script).resolve().parent / "demo.py"
    namespace: dict[str, Any] = {"__name__": "__demo__", "lab": _DemoLab()}  # free-form: see above
    with contextlib.redirect_stdout(io.StringIO()):
        for kind, source in parse_percent_cells(edition(demo.read_text(encoding="utf-8"), "en")):
            if kind == "code":
                exec(compile(source, str(demo), "exec"), namespace)  # noqa: S102 — the course's own demo
    return namespace


class Svg:
    """A tiny SVG writer for the plots: fixed fonts and colours, every text escaped, deterministic."""

    INK = "#1d2430"
    MUTED = "#566070"
    LINE = "#9aa5b4"

    def __init__(self, width: int, height: int, title: str, language: str = "en") -> None:
        self.width, self.height = width, height
        self.font = FONT if language == "en" else FONT_ZH
        self.parts = [f'<title>{esc(title)}</title>',
                      f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
                      '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
                      'patternTransform="rotate(45)"><rect width="6" height="6" fill="#f7f7f7"/>'
                      '<line x1="0" y1="0" x2="0" y2="6" stroke="#b0b7c3" stroke-width="2"/></pattern></defs>']

    def rect(self, x: float, y: float, w: float, h: float, fill: str, *, stroke: str = "none",
             dashed: bool = False) -> None:
        dash = ' stroke-dasharray="4 3"' if dashed else ""
        self.parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{h:.1f}" fill="{fill}" '
                          f'stroke="{stroke}"{dash}/>')

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str, *, width: float = 1,
             dashed: bool = False) -> None:
        dash = ' stroke-dasharray="5 4"' if dashed else ""
        self.parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}" '
                          f'stroke-width="{width}"{dash}/>')

    def text(self, x: float, y: float, words: str, *, size: int = 12, color: str = INK, anchor: str = "start",
             bold: bool = False, halo: bool = True) -> None:
        weight = ' font-weight="bold"' if bold else ""
        around = ' stroke="#ffffff" stroke-width="3" paint-order="stroke"' if halo else ""
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" fill="{color}" text-anchor="{anchor}"'
                          f'{weight}{around}>{esc(words, quote=False)}</text>')

    def render(self) -> str:
        body = "\n".join(self.parts)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
                f'viewBox="0 0 {self.width} {self.height}" font-family="{self.font}" role="img">\n{body}\n</svg>\n')


def text_width(words: str, size: int) -> float:
    """A generous estimate of a label's width, enough to decide whether it fits inside a bar.

    A Latin letter or digit takes about 0.62 em; a CJK character (and a full-width sign) a whole em.
    """
    return sum(size * (1.0 if _wide(char) else 0.62) for char in words)


def _wide(char: str) -> bool:
    import unicodedata

    return unicodedata.east_asian_width(char) in ("W", "F")


# ---------------------------------------------------------------- Mermaid
def mermaid_cache(root: Path) -> Path:
    return root / ".forgelab" / "mermaid" / MERMAID_VERSION


def _integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def mermaid_script(root: Path) -> Path:
    """``mermaid.min.js`` of :data:`MERMAID_VERSION`, fetched once with ``npm pack`` and checked."""
    cache = mermaid_cache(root)
    script = cache / "mermaid.min.js"
    if script.is_file() and (cache / "LICENSE").is_file():
        return script
    npm = shutil.which("npm")
    if npm is None:
        raise FigureError("rendering a Mermaid figure needs npm (to fetch mermaid@" + MERMAID_VERSION +
                          "): install Node.js and npm (`apt-get install npm`), then run `forgelab build` again")
    with tempfile.TemporaryDirectory(prefix="forgelab-mermaid-") as scratch:
        done = subprocess.run([npm, "pack", f"mermaid@{MERMAID_VERSION}", "--silent"], cwd=scratch,
                              capture_output=True, text=True, timeout=600)
        packed = Path(scratch) / f"mermaid-{MERMAID_VERSION}.tgz"
        if done.returncode != 0 or not packed.is_file():
            cause = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise FigureError(f"`npm pack mermaid@{MERMAID_VERSION}` failed ({cause}): check that the npm "
                              "registry is reachable, then run `forgelab build` again")
        data = packed.read_bytes()
        if _integrity(data) != MERMAID_INTEGRITY:
            raise FigureError(f"mermaid-{MERMAID_VERSION}.tgz does not match its pinned integrity: refusing to "
                              "render with it (a changed package); report it to the course maintainers")
        cache.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member, target in (("package/dist/mermaid.min.js", script), ("package/LICENSE", cache / "LICENSE")):
                handle = archive.extractfile(member)
                if handle is None:
                    raise FigureError(f"mermaid-{MERMAID_VERSION}.tgz has no {member}")
                target.write_bytes(handle.read())
    return script


MERMAID_CONFIG: dict[str, Any] = {  # free-form: mermaid's own configuration object
    "startOnLoad": False,
    "securityLevel": "strict",
    "deterministicIds": True,
    "deterministicIDSeed": "forge",
    "theme": "neutral",
    "htmlLabels": False,
    "flowchart": {"htmlLabels": False, "curve": "basis", "padding": 8, "wrappingWidth": 260, "nodeSpacing": 28, "rankSpacing": 34,
                  "diagramPadding": 6},
    "state": {"nodeSpacing": 28, "rankSpacing": 34},
    "themeVariables": {"fontFamily": FONT, "fontSize": "15px"},
}


@contextlib.contextmanager
def _browser_page() -> Iterator[Any]:
    if not CHROMIUM.is_file():
        raise FigureError(f"rendering a Mermaid figure needs Debian's chromium at {CHROMIUM}: "
                          "`apt-get install chromium`, then run `forgelab build` again")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise FigureError("rendering a Mermaid figure needs Playwright for Python: "
                          "`.venv/bin/pip install -e '.[dev]'` (or `make install`)") from None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.route("**/*", lambda route: route.abort())  # the renderer never reaches the network
            page.set_content("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body></body></html>")
            yield page
        finally:
            browser.close()


def mermaid_config(language: str = "en") -> dict[str, Any]:  # free-form: see MERMAID_CONFIG
    """:data:`MERMAID_CONFIG` with the font stack of the edition (a CJK font for Chinese)."""
    if language == "en":
        return MERMAID_CONFIG
    theme = {**MERMAID_CONFIG["themeVariables"], "fontFamily": FONT_ZH}
    return {**MERMAID_CONFIG, "themeVariables": theme}


def render_mermaid(root: Path, figures: Sequence[Figure], language: str = "en") -> dict[Path, str]:
    """SVG text for each Mermaid figure in ``language`` (one browser for all), stamped with its source digest."""
    if not figures:
        return {}
    script = mermaid_script(root).read_text(encoding="utf-8")
    import json

    rendered: dict[Path, str] = {}
    with _browser_page() as page:
        page.add_script_tag(content=script)
        page.evaluate(f"mermaid.initialize({json.dumps(mermaid_config(language))})")
        for figure in figures:
            suffix = "" if language == "en" else f"-{language}"
            name = "fig-" + re.sub(r"[^a-z0-9]+", "-", f"{figure.source.parent.name}-{figure.name}{suffix}".lower())
            try:
                svg = page.evaluate("async ([id, text]) => (await mermaid.render(id, text)).svg",
                                    [name, figure.diagram(language)])
            except Exception as error:  # playwright reports the page's exception text
                first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                raise FigureError(f"{figure.source}: Mermaid cannot render it ({first[:300]})") from None
            rendered[figure.svg_in(language)] = _stamp(_sized(str(svg)), figure.source_digest(language))
    return rendered


def _sized(svg: str) -> str:
    """Give the root element the diagram's own width and height (an <img> needs an intrinsic size)."""
    match = re.search(r'viewBox="([-\d.]+) ([-\d.]+) ([\d.]+) ([\d.]+)"', svg)
    if not match:
        raise FigureError("Mermaid produced an SVG without a viewBox")
    width, height = (round(float(match.group(n))) for n in (3, 4))
    head, rest = svg.split(">", 1)
    head = re.sub(r'\swidth="[^"]*"', "", head)
    head = re.sub(r'\sstyle="[^"]*"', "", head)
    return f'{head} width="{width}" height="{height}">{rest}'


def _stamp(svg: str, digest: str) -> str:
    if re.search(r"<script|\shref=\"(?!#)|\son[a-z]+=", svg, re.I):
        raise FigureError("Mermaid produced an SVG with a script, a link or an event handler: refusing it")
    return f"<!-- forgelab figure: source sha256 {digest}, mermaid {MERMAID_VERSION} -->\n{svg}\n"


def write_figures(root: Path, rendered: Mapping[Path, str]) -> list[str]:
    written = []
    for path, text in sorted(rendered.items()):
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            write_atomic(path, text)
            written.append(path.relative_to(root).as_posix())
    return written
