"""Every stage has a figure: its source in the stage's folder, a committed SVG made from it, the same
figure in the notebook (a mermaid block, or the plot's SVG as an image), and a build that notices when
the SVG no longer matches its source or the plot no longer matches the demonstration's numbers."""

from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest

from forgelab.authoring import figures
from forgelab.core.figures import Figure, FigureError, stage_figures, svg_size
from forgelab.authoring.build import stale_figures
from forgelab.core.registry import load_course

ROOT = Path(__file__).resolve().parents[2]
STAGES = [stage.number for stage in load_course(ROOT).stages]


def _figure_cells(notebook) -> list:  # type: ignore[no-untyped-def]
    return [cell for cell in notebook.cells if cell.cell_type == "markdown"
            and ("```mermaid" in cell.source or re.search(r"!\[[^\]]*\]\([^)]+\.svg\)", cell.source))]


@pytest.mark.parametrize("number", STAGES)
def test_every_stage_has_a_figure_in_its_folder_and_its_notebook(course, number: str) -> None:
    stage = course.stage(number)
    found = stage_figures(stage.source_dir)
    assert found, f"{stage.key} has no figure source (figure.mmd or figure-NAME.py)"
    notebook = nbformat.read(course.root / stage.notebook, as_version=4)
    cells = _figure_cells(notebook)
    assert len(cells) == len(found), f"{stage.notebook}: one Markdown cell per figure"
    for figure, cell in zip(found, cells):
        assert figure.caption in cell.source
        if figure.kind == "mermaid":
            assert f"```mermaid\n{figure.diagram()}```" in cell.source
        else:
            target = re.search(r"!\[[^\]]*\]\(([^)]+\.svg)\)", cell.source).group(1)
            shown = (course.root / stage.notebook).parent / target
            assert shown.resolve() == figure.svg.resolve(), f"{stage.notebook}: the image is not the committed plot"
            assert not cell.get("attachments")
    headings = [c.source.splitlines()[0] for c in notebook.cells if c.cell_type == "markdown"]
    part3, part4 = (next(i for i, h in enumerate(headings) if h.startswith(p)) for p in ("## 3 ·", "## 4 ·"))
    assert headings[part3 + 1] == "### In a picture", "the figures belong to part 3, after the boundary decision"
    assert part3 < headings.index("### In a picture") < part4


def test_the_committed_figures_are_current(course) -> None:
    assert stale_figures(course, list(course.stages)) == []


@pytest.mark.parametrize("number", STAGES)
def test_figure_svgs_are_self_contained_and_described(course, number: str) -> None:
    for figure in stage_figures(course.stage(number).source_dir):
        text = figure.svg.read_text(encoding="utf-8")
        width, height = svg_size(figure.svg)
        assert 200 <= width <= 1300 and 100 <= height <= 1000, f"{figure.svg.name}: {width}×{height} is no small figure"
        assert not re.search(r"<script|<foreignObject|\son[a-z]+\s*=", text, re.I), figure.svg
        assert not re.search(r"(href|src)\s*=\s*[\"'](?!#)", text), f"{figure.svg}: an external reference"
        assert "url(http" not in text and "@import" not in text
        assert re.search(r"<title[^>]*>[^<]{10,}</title>", text), f"{figure.svg}: no title for screen readers"
        assert len(figure.alt) >= 60, f"{figure.source}: the alt text should describe the figure, not name it"
        if figure.kind == "mermaid":
            assert figures.STAMP.match(text).group(1) == figure.source_digest()


def test_the_budget_plots_show_the_demonstrations_numbers(course) -> None:
    selection = course.stage("02")
    svg = (selection.source_dir / "figure-budget.svg").read_text(encoding="utf-8")
    for words in ("budget 400", "write-policy (required)", "150 tokens · skipped: 90 left", "350 used"):
        assert words in svg
    assembly = course.stage("10")
    svg = (assembly.source_dir / "figure-budget.svg").read_text(encoding="utf-8")
    for words in ("B 110", "O 700: output", "R 120: tool results", "S 70", "memory 26", "notice 12", "dropped whole",
                  "used 110 of 110"):
        assert words in svg


def test_a_changed_diagram_makes_its_svg_stale(workbook) -> None:
    source = workbook.root / "course/stages/03-few-shot-selection/figure.mmd"
    source.write_text(source.read_text(encoding="utf-8").replace("(default 2)", "(default 3)"), encoding="utf-8")
    result = workbook.run("build", "--check", "03", timeout=600)
    assert result.returncode != 0
    assert "out of date: course/stages/03-few-shot-selection/figure.svg — figure SVG differs from figure.mmd" \
        in result.stdout
    assert "out of date: notebooks/03-few-shot-selection.ipynb" in result.stdout  # the mermaid block changed too


def test_a_plot_follows_the_demonstration(workbook) -> None:
    demo = workbook.root / "course/stages/02-context-selection/demo.py"
    text = demo.read_text(encoding="utf-8")
    assert 'ContextCandidate("forum-snippet", tokens=40,' in text
    demo.write_text(text.replace('ContextCandidate("forum-snippet", tokens=40,', 'ContextCandidate("forum-snippet", tokens=45,'),
                    encoding="utf-8")
    result = workbook.run("build", "--check", "02", timeout=600)
    assert result.returncode != 0
    assert ("out of date: course/stages/02-context-selection/figure-budget.svg — figure SVG differs from what "
            "figure-budget.py draws") in result.stdout


def test_a_stage_without_a_figure_or_caption_is_reported(workbook) -> None:
    folder = workbook.root / "course/stages/04-task-specification-schema"
    (folder / "figure.mmd").unlink()
    (folder / "figure.svg").unlink()
    result = workbook.run("build", "--check", "04", timeout=600)
    assert "no figure: add figure.mmd (or a figure-NAME.py plot) to the stage's folder" in result.stdout
    (folder / "figure.mmd").write_text("flowchart LR\n  A --> B\n", encoding="utf-8")
    with pytest.raises(FigureError, match=r"figure\.mmd: no caption — start the file with a line `%% caption:"):
        stage_figures(folder)


def test_an_svg_without_its_source_is_reported(workbook) -> None:
    folder = workbook.root / "course/stages/01-instruction-hierarchy"
    (folder / "figure-old.svg").write_text((folder / "figure.svg").read_text(encoding="utf-8"), encoding="utf-8")
    result = workbook.run("build", "--check", "01", timeout=600)
    assert ("out of date: course/stages/01-instruction-hierarchy/figure-old.svg — figure SVG without a source"
            in result.stdout)


# ---------------------------------------------------------------- the Chinese edition's drawings
def test_a_mermaid_label_is_translated_and_code_keeps_its_words(tmp_path: Path) -> None:
    source = tmp_path / "figure.mmd"
    source.write_text('%% caption: c\n%% caption.zh: 说明\n%% zh: same key:<br/>compare => 同一个键：<br/>比较\n'
                      '%% zh: outranks => 高于\n'
                      'flowchart LR\n  A["same key:<br/>compare"] -->|"outranks"| B["lower_rank"]\n'
                      '  C["write = deny"] --> D["lost to system<br/>lower_rank"]\n', encoding="utf-8")
    figure = stage_figures(tmp_path)[0]
    zh = figure.diagram("zh")
    assert 'A["同一个键：<br/>比较"] -->|"高于"| B["lower_rank"]' in zh
    assert "%% zh:" not in zh and "%% zh:" not in figure.diagram()
    assert 'A["same key:<br/>compare"]' in figure.diagram() and "accTitle: 说明" in zh
    # code labels need no line; the mixed one does, and it is the only one named
    assert figure.untranslated("zh") == ("lost to system<br/>lower_rank",)
    assert figure.untranslated("en") == ()
    assert figure.source_digest("zh") != figure.source_digest()


def test_a_state_diagram_translates_its_transition_labels(tmp_path: Path) -> None:
    (tmp_path / "figure-states.mmd").write_text(
        "%% caption: c\n%% zh: a quote => 双引号\nstateDiagram-v2\n  [*] --> outside\n"
        "  outside --> in_string: a quote\n  in_string --> outside: any character\n", encoding="utf-8")
    figure = stage_figures(tmp_path)[0]
    assert "outside --> in_string: 双引号" in figure.diagram("zh")
    assert "in_string --> outside: any character" in figure.diagram("zh")
    assert figure.untranslated("zh") == ("any character",)
    assert figure.svg_in("zh").name == "figure-states_zh.svg" and figure.svg_in("en").name == "figure-states.svg"


def test_a_translation_with_a_double_quote_is_refused(tmp_path: Path) -> None:
    (tmp_path / "figure.mmd").write_text('%% caption: c\n%% zh: x y => "引号"\nflowchart LR\n  A["x y"]\n',
                                         encoding="utf-8")
    with pytest.raises(FigureError, match=r"figure\.mmd:2: the translation of 'x y' contains a double quote"):
        stage_figures(tmp_path)


def test_the_plots_are_matplotlibs_with_their_words_as_text_and_a_cjk_font_for_chinese(course) -> None:
    plots = [figure for stage in course.stages for figure in stage_figures(stage.source_dir) if figure.kind == "plot"]
    assert len(plots) >= 5
    for figure in plots:
        english, chinese = (figure.svg_in(language).read_text(encoding="utf-8") for language in ("en", "zh"))
        for text in (english, chinese):
            assert re.search(r'<g id="axes_1">', text) and "<metadata>" not in text, figure.svg  # drawn by matplotlib
            assert "<text " in text and "<path d=\"M" in text  # words as text (a reader finds them), shapes as paths
        assert "'WenQuanYi Micro Hei'" in chinese and "WenQuanYi" not in english, figure.svg
        assert re.search(r"<text [^>]*>[^<]*[\u4e00-\u9fff]", chinese), f"{figure.svg_in('zh')}: no Chinese words"


def test_a_chinese_label_is_measured_with_a_cjk_font_and_the_drawing_is_the_same_bytes_every_time() -> None:
    def draw() -> tuple[str, float]:
        plt = figures.pyplot("zh")
        figure, axes = plt.subplots(figsize=(3, 1))
        label = axes.text(0, 0, "预算预算")
        em = 11 * figure.dpi / 72  # the font size in pixels at the figure's resolution
        width = label.get_window_extent(figure.canvas.get_renderer()).width / em
        return figures.svg_of(figure, "一个测试图形"), width

    (first, width), (second, _) = draw(), draw()
    assert first == second and first.startswith("<svg ") and "<title>一个测试图形</title>" in first
    assert 3.8 <= width <= 4.2  # four CJK characters of about 1 em each: WenQuanYi's widths, not a missing glyph's


def test_a_cjk_font_installed_after_matplotlibs_font_list_was_made_is_still_used(tmp_path: Path) -> None:
    """matplotlib lists the system's fonts once, in a cache, and never looks again: a CJK font installed later (the
    first `make lab`, then fonts-wqy-microhei) is missing from that list. A Chinese plot is still measured with it."""
    import json
    import subprocess
    import sys

    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", "import matplotlib.font_manager"], env=env, check=True)
    (cache,) = tmp_path.glob("fontlist-*.json")
    listed = json.loads(cache.read_text(encoding="utf-8"))
    cjk = set(figures.PLOT_FONTS[1:-1])
    assert any(font["name"] in cjk for font in listed["ttflist"]), "no CJK font on this machine (.ci/run installs one)"
    files = {font["fname"] for font in listed["ttflist"] if font["name"] in cjk}
    listed["ttflist"] = [font for font in listed["ttflist"] if font["fname"] not in files]  # as before they were installed
    cache.write_text(json.dumps(listed), encoding="utf-8")
    measure = ("from forgelab.authoring import figures\n"
               "plt = figures.pyplot('zh')\n"
               "figure, axes = plt.subplots(figsize=(3, 1))\n"
               "label = axes.text(0, 0, '预算预算')\n"
               "print(label.get_window_extent(figure.canvas.get_renderer()).width / (11 * figure.dpi / 72))\n")
    done = subprocess.run([sys.executable, "-c", measure], env=env, capture_output=True, text=True, check=True)
    assert 3.8 <= float(done.stdout) <= 4.2, done.stdout  # WenQuanYi's widths, not a missing glyph's
    still = json.loads(cache.read_text(encoding="utf-8"))
    assert not any(font["name"] in cjk for font in still["ttflist"])  # the user's cache is left as it was


@pytest.mark.parametrize("number", STAGES)
def test_every_chinese_notebook_shows_the_chinese_drawing(course, number: str) -> None:
    stage = course.stage(number)
    notebook = nbformat.read(course.root / stage.notebook_in("zh"), as_version=4)
    cells = _figure_cells(notebook)
    found = stage_figures(stage.source_dir)
    assert len(cells) == len(found)
    for figure, cell in zip(found, cells):
        assert figure.caption_in("zh") in cell.source
        zh_svg = figure.svg_in("zh")
        assert zh_svg.is_file() and svg_size(zh_svg)
        if figure.kind == "mermaid":
            assert f"```mermaid\n{figure.diagram('zh')}```" in cell.source
            assert figure.diagram("zh") != figure.diagram(), f"{figure.source}: no label was translated"
            assert figure.untranslated("zh") == ()
            assert figures.STAMP.match(zh_svg.read_text(encoding="utf-8")).group(1) == figure.source_digest("zh")
        else:
            target = re.search(r"!\[[^\]]*\]\(([^)]+\.svg)\)", cell.source).group(1)
            shown = (course.root / stage.notebook_in("zh")).parent / target
            assert shown.resolve() == zh_svg.resolve(), f"{stage.notebook_in('zh')}: the image is not the zh plot"
        assert re.search(r"[\u4e00-\u9fff]", zh_svg.read_text(encoding="utf-8")), f"{zh_svg.name}: no Chinese in it"
        stack = figures.FONT_ZH if figure.kind == "mermaid" else ",".join(f"'{font}'" for font in figures.PLOT_FONTS[:-1])
        assert stack.replace(", ", ",") in zh_svg.read_text(encoding="utf-8").replace(", ", ","), \
            f"{zh_svg.name}: not drawn with the Chinese font stack"


def test_the_chinese_plots_keep_the_numbers_and_translate_the_words(course) -> None:
    svg = (course.stage("02").source_dir / "figure-budget_zh.svg").read_text(encoding="utf-8")
    for words in ("预算 400", "write-policy（必需）", "150 个 Token · 跳过：剩 90", "已用 350"):
        assert words in svg
    assert "skipped" not in svg and "budget 400" not in svg
    svg = (course.stage("10").source_dir / "figure-budget_zh.svg").read_text(encoding="utf-8")
    for words in ("B 110", "O 700：输出", "R 120：工具结果", "S 70", "memory 26", "整段舍弃", "已用 110 / 110"):
        assert words in svg
    svg = (course.stage("07").source_dir / "figure-matrix_zh.svg").read_text(encoding="utf-8")
    assert "✓ 满足" in svg and "✗ 破坏" in svg and "run_suite" in svg and "holds" not in svg


def test_a_changed_chinese_label_makes_only_the_chinese_svg_stale(workbook) -> None:
    source = workbook.root / "course/stages/03-few-shot-selection/figure.mmd"
    text = source.read_text(encoding="utf-8")
    assert "%% zh: example library => 示例库\n" in text
    source.write_text(text.replace("%% zh: example library => 示例库\n", "%% zh: example library => 示例集\n"),
                      encoding="utf-8")
    result = workbook.run("build", "--check", "03", timeout=600)
    assert result.returncode != 0
    assert ("out of date: course/stages/03-few-shot-selection/figure_zh.svg — figure SVG differs from figure.mmd"
            in result.stdout)
    assert "figure.svg —" not in result.stdout  # the English drawing did not change
    assert "out of date: notebooks/zh/03-few-shot-selection.ipynb — cells differ" in result.stdout


def test_a_chinese_plot_out_of_date_is_stale(workbook) -> None:
    svg = workbook.root / "course/stages/07-prompt-regression-suite/figure-matrix_zh.svg"
    svg.write_text(svg.read_text(encoding="utf-8").replace("✓ 满足", "✓ holds"), encoding="utf-8")
    result = workbook.run("build", "--check", "07", timeout=600)
    assert result.returncode != 0
    assert ("out of date: course/stages/07-prompt-regression-suite/figure-matrix_zh.svg — figure SVG differs from "
            "what figure-matrix.py draws") in result.stdout
    assert "figure-matrix.svg —" not in result.stdout


def test_the_chinese_site_publishes_the_chinese_drawings(course, tmp_path: Path) -> None:
    from forgelab.site.builder import build_site
    from forgelab.site.pages import figure_file

    built = build_site(course, tmp_path / "site", editions=("en", "zh"))
    assert [edition.folder for edition in built.editions] == ["", "zh"]
    for stage in course.stages:
        english = (tmp_path / "site" / f"{stage.key}.html").read_text(encoding="utf-8")
        chinese = (tmp_path / "site" / "zh" / f"{stage.key}.html").read_text(encoding="utf-8")
        for figure in stage_figures(stage.source_dir):
            src = figure_file(stage, figure)
            assert (tmp_path / "site" / src).read_bytes() == figure.svg.read_bytes()
            assert (tmp_path / "site" / "zh" / src).read_bytes() == figure.svg_in("zh").read_bytes()
            for page, language in ((english, "en"), (chinese, "zh")):
                width, height = svg_size(figure.svg_in(language))
                assert f'<img src="{src}" alt=' in page and f'width="{width}" height="{height}">' in page


def test_the_bundle_ships_the_chinese_drawings(course) -> None:
    from forgelab.authoring.release.source import select_files

    shipped = set(select_files(course.root))
    for stage in course.stages:
        for figure in stage_figures(stage.source_dir):
            for language in ("en", "zh"):
                assert figure.svg_in(language).relative_to(course.root).as_posix() in shipped


def test_the_chinese_drawings_belong_to_their_stage(course) -> None:
    from forgelab.authoring.scaffold import unowned_files

    assert not [path for path in unowned_files(course) if "/figure" in path]


def test_plots_are_drawn_in_one_process_each_in_its_folder_and_a_failing_one_is_named(tmp_path: Path) -> None:
    """``build`` and ``build --check`` draw every plot in one Python process (matplotlib imported once): each script
    still runs as a program of its own — in its folder, with its own ``--lang`` — and one that fails is named."""
    script = ("import os, sys\n"
              "from forgelab.authoring.figures import plot_language\n"
              "sys.stdout.write(f'<svg>{plot_language()} {os.path.basename(os.getcwd())} {os.getpid()}</svg>')\n")
    one, two = tmp_path / "one" / "figure-a.py", tmp_path / "two" / "figure-b.py"
    for path in (one, two):
        path.parent.mkdir()
        path.write_text(script, encoding="utf-8")
    plots = [(Figure("plot", one, "a", "a"), "en"), (Figure("plot", two, "b", "b"), "zh"), (Figure("plot", one, "a", "a"), "zh")]
    drawn = figures.run_plots(plots, tmp_path)
    assert [svg.split(" ")[:2] for svg in drawn] == [["<svg>en", "one"], ["<svg>zh", "two"], ["<svg>zh", "one"]], drawn
    assert len({svg.split(" ")[2] for svg in drawn}) == 1, drawn  # one process drew them all
    two.write_text("raise ValueError('no numbers for this plot')\n", encoding="utf-8")
    with pytest.raises(FigureError, match=r"figure-b\.py failed against the reference \(--lang zh\): ValueError: no "
                                          r"numbers for this plot"):
        figures.run_plots(plots, tmp_path)
