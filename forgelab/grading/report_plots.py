"""The class report's figures, drawn with matplotlib as static SVG (offline, no JavaScript).

Three pictures where a picture is faster than a table: the score distribution, a stage × test heat
map of failure rates, and the discrimination chart of the item analysis. The words are the active
language's (gettext); text stays text in the SVG (``svg.fonttype = none``), so the reader's browser
draws it with its own fonts — Chinese included. Given the same report, a figure is the same bytes:
no date, a fixed hash salt, the Agg backend.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from forgelab.core.i18n import _, active
from forgelab.core.evidence import write_atomic

if TYPE_CHECKING:
    from forgelab.grading.report import ClassReport

INK, MUTED, LINE = "#1d2430", "#566070", "#9aa5b4"
GOOD, WEAK, BAD, NONE = "#2f7d4f", "#d19a1b", "#b23a2b", "#b0b7c3"
FONTS = ["DejaVu Sans", "WenQuanYi Micro Hei", "Noto Sans CJK SC", "sans-serif"]
NAMES = ("score-distribution", "failure-heat-map", "discrimination")


def file_name(name: str, language: str) -> str:
    return f"{name}.svg" if language == "en" else f"{name}.{language}.svg"


def _pyplot() -> Any:
    import logging

    import matplotlib

    matplotlib.use("Agg")
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)  # a missing CJK font is the browser's job
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "forgelab-class-report", "font.family": FONTS,
                         "font.size": 10, "axes.edgecolor": LINE, "axes.labelcolor": INK, "xtick.color": MUTED,
                         "ytick.color": MUTED, "axes.spines.top": False, "axes.spines.right": False})
    return plt


def _svg(figure: Any) -> str:
    import warnings

    buffer = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Glyph … missing from font": the SVG keeps the text, the browser draws it
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": "forgelab grade report"},
                       bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(figure)
    return buffer.getvalue()


def score_distribution(report: ClassReport) -> str:
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6.4, 3.0))
    count = len(report.score_bins)
    bars = axes.bar([index + 0.5 for index in range(count)], report.score_bins, color="#1f5fbf", width=0.85)
    for bar, height in zip(bars, report.score_bins):
        if height:
            axes.annotate(str(height), (bar.get_x() + bar.get_width() / 2, height), ha="center", va="bottom",
                          fontsize=9, color=INK, xytext=(0, 2), textcoords="offset points")
    axes.set_xticks(range(count + 1), [str(round(100 * index / count)) for index in range(count + 1)])
    axes.set_xlim(0, count)
    axes.set_xlabel(_("share of the maximum points (%)"))
    axes.set_ylabel(_("submissions"))
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.set_ylim(0, max(report.score_bins + [1]) * 1.18)
    axes.set_title(_("Score distribution ({count} submissions)").format(count=report.submissions), color=INK, loc="left")
    return _svg(figure)


def failure_heat_map(report: ClassReport) -> str:
    import numpy as np

    plt = _pyplot()
    columns = max((len(stage.tests) for stage in report.stage_figures), default=1)
    rows = len(report.stage_figures)
    values = np.full((rows, columns), np.nan)
    for row, stage in enumerate(report.stage_figures):
        for column, test in enumerate(stage.tests):
            values[row, column] = test.fail_share
    figure, axes = plt.subplots(figsize=(max(5.0, 0.5 * columns + 1.6), 0.62 * rows + 1.5))
    colours = plt.get_cmap("Reds").with_extremes(bad="#f4f6f9")
    image = axes.imshow(np.ma.masked_invalid(values), cmap=colours, vmin=0, vmax=1, aspect="auto")
    for row, stage in enumerate(report.stage_figures):
        for column, test in enumerate(stage.tests):
            share = test.fail_share
            axes.text(column, row - 0.12, test.label, ha="center", va="center", fontsize=7,
                      color="#ffffff" if share > 0.55 else MUTED)
            axes.text(column, row + 0.2, f"{round(100 * share)}", ha="center", va="center", fontsize=8,
                      color="#ffffff" if share > 0.55 else INK)
    axes.set_yticks(range(rows), [_("stage {number}").format(number=stage.stage) for stage in report.stage_figures])
    axes.set_xticks([])
    axes.set_xlabel(_("tests (T: stage tests, C: instructor checks); the number is the % of the class failing it"))
    for side in ("left", "bottom"):
        axes.spines[side].set_visible(False)
    bar = figure.colorbar(image, ax=axes, fraction=0.04, pad=0.02)
    bar.set_label(_("share failing"))
    bar.outline.set_visible(False)
    axes.set_title(_("Failure rate per stage and test"), color=INK, loc="left")
    return _svg(figure)


def discrimination_chart(report: ClassReport, threshold: float) -> str:
    plt = _pyplot()
    items = report.items
    figure, axes = plt.subplots(figsize=(6.8, 0.24 * len(items) + 1.4))
    positions = list(range(len(items)))
    values = [item.discrimination if item.discrimination is not None else 0.0 for item in items]
    colours = [NONE if item.discrimination is None else BAD if item.discrimination < 0 else
               WEAK if item.discrimination < threshold else GOOD for item in items]
    axes.barh(positions, values, color=colours, height=0.7)
    for position, item in zip(positions, items):
        if item.discrimination is None:
            axes.text(0.02, position, _("no variance"), va="center", fontsize=7, color=MUTED)
    axes.set_yticks(positions, [f"{item.stage} {item.label}" for item in items], fontsize=7)
    axes.invert_yaxis()
    axes.axvline(0, color=INK, linewidth=0.8)
    axes.axvline(threshold, color=WEAK, linewidth=1, linestyle="--")
    low = min(values + [0.0])
    axes.set_xlim(min(-0.2, math.floor(low * 10) / 10), 1.0)
    axes.set_xlabel(_("point-biserial correlation with the rest of the total (dashed: {threshold})").format(
        threshold=threshold))
    axes.set_title(_("Item discrimination"), color=INK, loc="left")
    return _svg(figure)


def write_all(report: ClassReport, folder: Path, threshold: float) -> dict[str, Path]:
    """Draw every figure into ``folder`` in the active language; name → path."""
    language = active()
    drawn = {"score-distribution": score_distribution(report), "failure-heat-map": failure_heat_map(report),
             "discrimination": discrimination_chart(report, threshold)}
    written = {}
    for name, svg in drawn.items():
        path = folder / file_name(name, language)
        write_atomic(path, svg)
        path.chmod(0o644)
        written[name] = path
    return written
