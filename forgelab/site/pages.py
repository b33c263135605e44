"""HTML for the course page: the index and one page per stage.

Every value from the registry is escaped (``esc``) or rendered through the safe Markdown subset
(``md``). Pages load only their own files (``assets/…``), so they work from ``file://`` and from
``forgelab site serve``; the Content-Security-Policy forbids any connection.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from forgelab import figures
from forgelab.registry import Course, Stage
from forgelab.site import markdown

STATES = (
    ("not-started", "Not started"),
    ("reading", "Reading"),
    ("lab-downloaded", "Lab downloaded"),
    ("results-read", "Results read"),
    ("self-check-passed", "Self-check passed"),
)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'none'; form-action 'none'; base-uri 'none'")


def esc(text: object) -> str:
    return escape(str(text), quote=True)


# A code span opens with a run of backticks and closes with a run of the same length (CommonMark), so
# ```` ```json ```` shows a fence marker as code. A run that is never closed is a literal backtick.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_KEPT_SPAN = re.compile("\x00(\\d+)\x00")
_LITERAL_BACKTICK = "\x01"


def _with_code_spans(text: str, renderer: Callable[[str], str]) -> str:
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:
        content = match.group(2).replace("\n", " ")
        if len(content) > 2 and content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        spans.append(content)
        return f"\x00{len(spans) - 1}\x00"

    protected = _CODE_SPAN.sub(keep, text.replace("\x00", "").replace(_LITERAL_BACKTICK, ""))
    rendered = renderer(protected.replace("`", _LITERAL_BACKTICK))
    rendered = rendered.replace(_LITERAL_BACKTICK, "`")
    return _KEPT_SPAN.sub(lambda m: f"<code>{escape(spans[int(m.group(1))], quote=False)}</code>", rendered)


def inline(text: str) -> str:
    """One line of stage text as HTML: escaped; code spans (any backtick run), **bold** and *emphasis*."""
    return _with_code_spans(text, markdown.inline)


def md(text: str) -> str:
    """A block of stage text (paragraphs, lists) as HTML, with the inline rules of :func:`inline`."""
    return _with_code_spans(text, markdown.render)


@dataclass(frozen=True)
class SiteContext:
    course: Course
    language: str
    bundle_href: str | None  # relative link to the zip, if one was built
    bundle_size: int

    @property
    def title(self) -> str:
        return self.course.text("title", self.language)


def stage_page(stage: Stage) -> str:
    return f"{stage.key}.html"


def figure_file(stage: Stage, figure: figures.Figure) -> str:
    """Where a stage's figure is published on the site (relative to the site's root)."""
    return f"figures/{stage.key}-{figure.name}.svg"


WIDE_FIGURE = 736  # px: wider figures may use more than the text column on a large screen


def _figures(stage: Stage) -> str:
    items = []
    for figure in figures.stage_figures(stage.source_dir):
        width, height = figures.svg_size(figure.svg)
        wide = " wide" if width > WIDE_FIGURE else ""
        items.append(f"""<figure class="figure{wide}" data-figure="{esc(figure.name)}">
<img src="{esc(figure_file(stage, figure))}" alt="{esc(figure.alt)}" width="{width}" height="{height}">
<figcaption>{inline(figure.caption)}</figcaption>
</figure>""")
    if not items:
        return ""
    return f"""<section id="figure" aria-labelledby="figure-title">
<h2 id="figure-title">In a picture</h2>
{chr(10).join(items)}
</section>"""


def _recovery_point(ctx: SiteContext) -> str:
    return f"""<section id="recovery-point" aria-labelledby="recovery-point-title">
<h2 id="recovery-point-title">Stuck? The recovery point</h2>
{md(ctx.course.text("recovery_point", ctx.language))}
</section>"""


def _bundle_link(ctx: SiteContext) -> str:
    if not ctx.bundle_href:
        return ('<p>The lab bundle is not part of this build: get the workbook from your instructor, '
                'or run <code>forgelab release --out DIR</code> in the course repository.</p>')
    kb = max(1, round(ctx.bundle_size / 1024))
    return (f'<p><a class="download" href="{esc(ctx.bundle_href)}" download data-bundle>'
            f'Download the lab bundle</a> <span class="size">(zip, {kb} KB)</span></p>'
            '<p>Unzip it and run <code>make lab</code> in the unzipped folder: it installs the workbook into '
            '<code>.venv</code> and opens the notebooks (its README has the details). The bundle holds the '
            'starters, tests, notebooks, fault labs and the <code>forgelab</code> tool — no reference '
            'solutions.</p>')


def _layout(ctx: SiteContext, *, title: str, body_attributes: str, content: str) -> str:
    course = ctx.course
    return f"""<!DOCTYPE html>
<html lang="{esc(ctx.language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">
<meta name="referrer" content="no-referrer">
<title>{esc(title)}</title>
<link rel="stylesheet" href="assets/site.css">
</head>
<body {body_attributes}>
<a class="skip-link" href="#content">Skip to the content</a>
<main id="content">
{content}
<footer>
<p>{esc(course.text("title", ctx.language))} · course version {esc(course.version)} · experiment prefix
<code>{esc(course.module_id)}</code></p>
<p>{esc(course.text("self_check_disclaimer", ctx.language))}</p>
</footer>
</main>
<script src="assets/course-data.js"></script>
<script src="assets/verify.js"></script>
<script src="assets/page.js"></script>
</body>
</html>
"""


# ---------------------------------------------------------------- index


def _opening(ctx: SiteContext) -> str:
    """The chapter's opening, from the same course.toml texts as notebooks/00-opening.ipynb."""
    from forgelab.build import CONCEPT_PARTS, CONCEPTS, opening_texts

    text = opening_texts(ctx.course, ctx.language)
    concepts = []
    for concept, title in CONCEPTS:
        parts = "\n".join(f"<dt>{esc(label)}</dt><dd>{md(text[f'concept_{concept}_{part}'])}</dd>"
                          for part, label in CONCEPT_PARTS)
        concepts.append(f'<div class="concept" data-concept="{esc(concept)}">\n<h4>{esc(title)}</h4>\n'
                        f'<dl>\n{parts}\n</dl>\n</div>')
    return f"""<section id="opening" class="opening" aria-labelledby="opening-title">
<h2 id="opening-title">{esc(text["opening_title"])}</h2>
{md(text["opening_intro"])}
<h3>Where this chapter sits</h3>
{md(text["opening_position"])}
<h3>What you need</h3>
{md(text["opening_prerequisites"])}
<h3>Three concepts, calibrated</h3>
{chr(10).join(concepts)}
<h3>The capability chain</h3>
{md(text["capability_chain"])}
<h3>The chapter project</h3>
{md(text["opening_outcome"])}
<h3>How each stage works</h3>
{md(text["opening_how_to_work"])}
<p>In the lab bundle, the same opening is <code>notebooks/00-opening.ipynb</code>.</p>
</section>"""


def index_html(ctx: SiteContext) -> str:
    course, lang = ctx.course, ctx.language
    items = []
    for stage in course.stages:
        text = stage.text(lang)
        items.append(f"""<li>
<a class="stage-link" href="{esc(stage_page(stage))}">Stage {esc(stage.number)} · {esc(text.title)}</a>
<p>{inline(text.capability)}</p>
<p>Progress: <span class="progress-badge" data-progress-for="{esc(stage.number)}" data-state="not-started">Not started</span></p>
</li>""")
    content = f"""<header>
<p class="eyebrow">Forge Workbook · {esc(course.module_id)}</p>
<h1>{esc(ctx.title)}</h1>
<nav class="page-nav" aria-label="On this page"><a href="#opening">Before you start</a><a href="#lab">The lab</a>
<a href="#stages">Stages</a><a href="#recovery-point">Stuck? The recovery point</a></nav>
</header>
{md(course.text("summary", lang))}
<p class="disclaimer">{esc(course.text("self_check_disclaimer", lang))}</p>
{_opening(ctx)}
<h2 id="lab">The lab</h2>
{_bundle_link(ctx)}
<h2 id="stages">Stages</h2>
<p>Each stage adds one verifiable capability to <code>forge</code>. Its page explains the problem and the
experiment, and checks your <code>verification.json</code> in this browser. Progress is kept in this browser
only.</p>
<ol class="stage-list">
{chr(10).join(items)}
</ol>
<p><button type="button" id="clear-all-progress">Clear all progress</button></p>
<p id="index-status" role="status" aria-live="polite"></p>
{_recovery_point(ctx)}
<noscript><p>Progress and the local check need JavaScript; nothing you pick ever leaves this browser.</p></noscript>"""
    return _layout(ctx, title=ctx.title, body_attributes='data-page="index"', content=content)


# ---------------------------------------------------------------- stage page


def _chain(ctx: SiteContext, current: Stage) -> str:
    lang = ctx.language
    rows = []
    for stage in ctx.course.stages:
        text = stage.text(lang)
        relations = []
        if stage.number == current.number:
            relations.append('<span class="here">this stage</span>')
        if stage.number in current.builds_on:
            relations.append("this stage builds on it")
        if current.number in stage.builds_on:
            relations.append("builds on this stage")
        relation = f'<span class="relation">{" · ".join(relations)}</span>' if relations else ""
        current_attr = ' aria-current="page"' if stage.number == current.number else ""
        rows.append(f"""<li{current_attr}>
<a href="{esc(stage_page(stage))}">{esc(stage.number)} · {esc(text.title)}</a>{relation}
<span class="relation">{inline(text.capability)}</span>
</li>""")
    return f'<ol class="chain">\n{chr(10).join(rows)}\n</ol>'


def _experiment_card(ctx: SiteContext, stage: Stage) -> str:
    text = stage.text(ctx.language)
    scenario = ctx.course.scenario(stage.scenario, ctx.language)
    transfer_scenario = ctx.course.scenario(stage.transfer_scenario, ctx.language)
    tests = "".join(f"<li><code>{esc(name)}</code></li>" for name in stage.required_tests)
    return f"""<div class="card">
<dl>
<dt>Experiment id</dt><dd><code>{esc(stage.experiment_id)}</code></dd>
<dt>Input scenario</dt><dd>{esc(scenario.input)}</dd>
<dt>Module</dt><dd><code>{esc(stage.module)}</code></dd>
<dt>Evidence folder</dt><dd><code>{esc(stage.evidence_dir)}/</code></dd>
</dl>
<h3>Acceptance criteria</h3>
<ul>
<li><strong>Required tests</strong> in <code>{esc(stage.test_file)}</code> — all {len(stage.required_tests)} pass:
<ul>{tests}</ul></li>
<li><strong>Fault lab fixed</strong>: in the lab copy of <code>{esc(stage.fault.fault_file)}</code>,
<code>{esc(stage.fault.target_test)}</code> and the whole stage pass again.</li>
<li><strong>Transfer challenge passed</strong> ({esc(transfer_scenario.name)}): your own test in
<code>{esc(stage.transfer_file)}</code> passes. {inline(text.transfer_changed_condition)}</li>
<li><strong>Design answer present</strong> in <code>{esc(stage.design_answer_file)}</code>: {inline(text.design_question)}</li>
</ul>
</div>"""


def _local_check(ctx: SiteContext, stage: Stage) -> str:
    steps = "\n".join(
        f'<li data-step="{state}"><span><span class="step-number">{index + 1}.</span>{esc(label)}</span>'
        f'<span class="step-status">{"current" if index == 0 else "to do"}</span></li>'
        for index, (state, label) in enumerate(STATES)
    )
    return f"""<section id="local-check" class="local-check" data-state="not-started" aria-labelledby="local-check-title">
<h2 id="local-check-title">Local check</h2>
<p class="disclaimer">{esc(ctx.course.text("self_check_disclaimer", ctx.language))}</p>
<ol id="check-steps" class="steps" aria-label="Progress of this stage">
{steps}
</ol>
<p id="check-state" class="state-line" role="status" aria-live="polite">State: Not started (step 1 of 5).</p>
{_bundle_link(ctx)}
<h3>Check your evidence</h3>
<ol>
<li>Run <code>forgelab check {esc(stage.number)}</code> in the workbook (the notebook's last cell does the same).</li>
<li>It writes <code>{esc(stage.evidence_dir)}/verification.json</code>.</li>
<li>Pick that file below. It is read here, in this browser; it is not uploaded.</li>
</ol>
<div class="picker">
<label for="verification-file">Pick your verification.json</label>
<input type="file" id="verification-file" accept=".json,application/json">
</div>
<div id="file-message" class="file-message" role="alert" hidden></div>
<div id="report" class="report" aria-live="polite"></div>
<div id="previous-report" class="report previous-report" hidden></div>
<p><button type="button" id="clear-progress">Clear progress for this stage</button></p>
<noscript><p>The local check needs JavaScript. Nothing you pick ever leaves this browser.</p></noscript>
</section>"""


def stage_html(ctx: SiteContext, stage: Stage) -> str:
    from forgelab.build import is_project

    text = stage.text(ctx.language)
    content = f"""<nav class="crumbs" aria-label="Breadcrumb"><a href="index.html">{esc(ctx.title)}</a> › Stage {esc(stage.number)}</nav>
<header>
<p class="eyebrow">Stage {esc(stage.number)} · <code>{esc(stage.experiment_id)}</code></p>
<h1>{esc(text.title)}</h1>
<p class="capability">{inline(text.capability)}</p>
</header>
<section id="problem" aria-labelledby="problem-title">
<h2 id="problem-title">The problem: {inline(text.problem_title)}</h2>
{md(text.problem)}
</section>
{_figures(stage)}
<section id="chain" aria-labelledby="chain-title">
<h2 id="chain-title">Capability chain</h2>
<p>Every stage adds one capability; this one is highlighted.</p>
{_chain(ctx, stage)}
</section>
<section id="experiment" aria-labelledby="experiment-title">
<h2 id="experiment-title">Experiment card</h2>
{_experiment_card(ctx, stage)}
<h3>Done when</h3>
<ul>{"".join(f"<li>{inline(item)}</li>" for item in text.done_when)}</ul>
</section>
{_recovery_point(ctx) if is_project(stage) else ""}
{_local_check(ctx, stage)}"""
    attributes = f'data-page="stage" data-stage="{esc(stage.number)}"'
    return _layout(ctx, title=f"Stage {stage.number} · {text.title} — {ctx.title}", body_attributes=attributes,
                   content=content)
