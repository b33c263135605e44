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
  numbers (it runs the stage's worked demonstration against the reference, :func:`demo_namespace`),
  draws them with matplotlib (:func:`pyplot`) and prints the SVG :func:`svg_of` makes of it. ``forgelab build`` runs it against the ``solution``
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
in both. The Chinese SVGs name a CJK font (:data:`FONT_ZH` for Mermaid, :data:`PLOT_FONTS` for plots: Debian's
fonts-wqy-microhei first), and matplotlib measures a plot's Chinese words with it, so a plot is the same bytes on
every machine with the same fonts (.ci/run installs fonts-wqy-microhei).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
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


def run_plots(plots: Sequence[tuple[Figure, str]], import_dir: Path) -> list[str]:
    """Run plot scripts, each ``(figure, language)``, with ``import_dir`` first on the path (the reference ``forge``);
    their SVG outputs, in order. They run one after the other in one Python process
    (:mod:`forgelab.authoring.plot_runner`: matplotlib is imported once, not once per drawing); each gets
    :data:`PLOT_TIMEOUT` seconds."""
    if not plots:
        return []
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGELAB_")}
    env.update(PYTHONPATH=str(import_dir), PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    request = json.dumps([[str(figure.source), language] for figure, language in plots])
    drawn: list[str] = []
    with tempfile.TemporaryFile() as errors, subprocess.Popen(
            [sys.executable, "-P", "-m", "forgelab.authoring.plot_runner"], cwd=plots[0][0].source.parent, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, text=True) as process:
        assert process.stdin is not None and process.stdout is not None
        lines: queue.Queue[str] = queue.Queue()
        output = process.stdout

        def read() -> None:
            for line in output:
                lines.put(line)
            lines.put("")  # the end of the output

        threading.Thread(target=read, daemon=True).start()
        process.stdin.write(request)
        process.stdin.close()
        try:
            for figure, language in plots:
                try:
                    line = lines.get(timeout=PLOT_TIMEOUT)
                except queue.Empty:
                    raise FigureError(f"{figure.source} did not finish within {PLOT_TIMEOUT} s: check it for a "
                                      "loop") from None
                if not line:
                    process.wait(timeout=PLOT_TIMEOUT)
                    errors.seek(0)
                    last = (errors.read().decode("utf-8", "replace").strip().splitlines() or ["no output"])[-1]
                    raise FigureError(f"{figure.source} could not be drawn (the plot runner exited with "
                                      f"{process.returncode}): {last}")
                result = json.loads(line)
                if "error" in result:
                    raise FigureError(f"{figure.source} failed against the reference (--lang {language}): "
                                      f"{result['error']} — fix the script (its words for that language) or the demo")
                if not result["svg"].startswith("<svg"):
                    raise FigureError(f"{figure.source} printed no SVG (its output must start with <svg)")
                drawn.append(result["svg"])
        finally:
            if process.poll() is None:
                process.kill()
    return drawn


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


INK, MUTED, LINE, PAPER = "#1d2430", "#566070", "#9aa5b4", "#ffffff"
# what matplotlib measures text with, and what the SVG names for the reader's browser: Latin letters from DejaVu Sans
# (matplotlib ships it), Chinese characters from WenQuanYi Micro Hei (Debian's fonts-wqy-microhei, installed by
# .ci/run), else a common CJK font of the reader's system
PLOT_FONTS = ["DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC", "Source Han Sans SC", "sans-serif"]


def _know_system_cjk_fonts() -> None:
    """matplotlib keeps its list of the system's fonts in a cache written the first time it runs, and never looks
    again: a CJK font installed after that (fonts-wqy-microhei after the first ``make lab``) is not in the list, and a
    Chinese plot would be measured with another font — other bytes, so ``forgelab build --check`` reported the
    Chinese figures out of date on a machine whose fonts were right. When none of the CJK fonts the plots name is in
    the list, the system's fonts that the list lacks are added to it (this process only; the cache is not touched)."""
    from matplotlib import font_manager

    listed = font_manager.fontManager.ttflist
    if set(PLOT_FONTS[1:-1]) & {font.name for font in listed}:
        return
    known = {font.fname for font in listed}
    for path in font_manager.findSystemFonts():
        if path not in known:
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # a font file matplotlib cannot read: as when it made its list
                continue


def pyplot(language: str = "en") -> Any:  # free-form: matplotlib.pyplot, which has no type hints of its own
    """matplotlib's pyplot set up for a stage's plot: the Agg backend, the house colours and fonts, text kept as
    text in the SVG (a screen reader and a search find it; the reader's browser draws it) and a fixed hash salt.

    ``language`` picks the fonts matplotlib measures with: a Chinese label is measured with WenQuanYi Micro Hei,
    so a label's size — and the layout around it — is the font's own, not an estimate."""
    import logging

    import matplotlib

    matplotlib.use("Agg")
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    import matplotlib.pyplot as plt

    if language != "en":
        _know_system_cjk_fonts()
    plt.rcdefaults()
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "forgelab-figure", "svg.id": None,
                         "font.family": PLOT_FONTS if language != "en" else PLOT_FONTS[:1] + PLOT_FONTS[-1:],
                         "font.size": 11, "text.color": INK, "axes.edgecolor": LINE, "axes.labelcolor": MUTED,
                         "xtick.color": MUTED, "ytick.color": MUTED, "ytick.labelcolor": INK,
                         "axes.spines.top": False, "axes.spines.right": False, "hatch.color": "#b0b7c3",
                         "figure.facecolor": PAPER, "savefig.facecolor": PAPER, "path.simplify": False,
                         "text.parse_math": False})  # a µ$ in a label is a price, not mathematics
    return plt


def svg_of(figure: Any, title: str) -> str:  # figure: a matplotlib Figure (untyped)
    """The figure as a self-contained SVG, the same bytes for the same drawing: no date and no tool version in it, a
    ``<title>`` for screen readers, and whole-pixel ``width`` and ``height`` (an ``<img>`` needs its size)."""
    import warnings

    import matplotlib.pyplot as plt

    buffer = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Glyph … missing": a font without CJK (the SVG keeps the text itself)
        figure.savefig(buffer, format="svg", bbox_inches="tight", pad_inches=0.12,
                       metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    plt.close(figure)
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    head, rest = svg.split(">", 1)
    box = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', head)
    if box is None:
        raise FigureError("matplotlib wrote an SVG without a viewBox")
    width, height = (round(float(box.group(n))) for n in (1, 2))
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    rest = re.sub(r"<metadata>.*?</metadata>\s*", "", rest, flags=re.S)
    return (f'{head} width="{width}" height="{height}" role="img">\n<title>{esc(title, quote=False)}</title>'
            f'{rest.rstrip()}\n')


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
