"""HTML for the course page: the index and one page per stage, in one edition (English or Chinese).

Every value from the registry is escaped (``esc``) or rendered through the safe Markdown subset
(``md``). Pages load only their own files (``assets/…``), so they work from ``file://`` and from
``forgelab site serve``; the Content-Security-Policy forbids any connection.

The page's own words go through the tools' gettext catalog: each public function renders inside
``speaking(ctx.language)``, so ``_()`` says them in the edition's language; the course's texts come from
the registry in the same language. A page built beside the other edition links to the same page there
(the language switch, and ``<link rel="alternate" hreflang>`` in its head).
"""

from __future__ import annotations

from dataclasses import dataclass

from forgelab.core import figures
from forgelab.core.i18n import N_, _, speaking
from forgelab.core.registry import Course, Stage, edition_notebook
from forgelab.core.text import esc, inline, md
from forgelab.core.opening import CONCEPT_PARTS, CONCEPTS, opening_texts, is_project

STATES = (
    ("not-started", N_("Not started")),
    ("reading", N_("Reading")),
    ("lab-downloaded", N_("Lab downloaded")),
    ("results-read", N_("Results read")),
    ("self-check-passed", N_("Self-check passed")),
)
HTML_LANG = {"en": "en", "zh": "zh-CN"}  # <html lang> and hreflang of each edition
# Each edition's name for itself: what the language switch shows (a reader looks for their own language's name).
AUTONYM = {"en": "English", "zh": "中文"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'none'; form-action 'none'; base-uri 'none'")


def say(template: str, **values: object) -> str:
    """A translated message (``_("…")``) with ``values`` filled in, as inline HTML: code spans, bold, emphasis.

    (``_()`` is always called outside f-strings: Babel's extractor does not look inside them.)"""
    return inline(template.format(**values))


@dataclass(frozen=True)
class Edition:
    """One edition of the site: its language and its folder (``""`` for the site's root, else e.g. ``"zh"``)."""

    language: str
    folder: str = ""

    def href(self, page: str, *, seen_from: "Edition") -> str:
        """A relative link from a page of ``seen_from`` to ``page`` of this edition."""
        up = "../" * len([part for part in seen_from.folder.split("/") if part])
        return f"{up}{self.folder + '/' if self.folder else ''}{page}"


@dataclass(frozen=True)
class SiteContext:
    course: Course
    language: str
    bundle_href: str | None  # relative link to the zip, if one was built
    bundle_size: int
    folder: str = ""  # where this edition lives in the site ("" is the root)
    editions: tuple[Edition, ...] = ()  # every edition of this build, this one included; fewer than two: no switch
    in_bundle: bool = False  # the copy inside the learner's bundle (page/): the lab is already there

    @property
    def title(self) -> str:
        return self.course.text("title", self.language)

    @property
    def edition(self) -> Edition:
        return Edition(self.language, self.folder)


def stage_page(stage: Stage) -> str:
    return f"{stage.key}.html"


def figure_file(stage: Stage, figure: figures.Figure) -> str:
    """Where a stage's figure is published on the site (relative to the edition's root).

    Every edition publishes its own drawing (``figure_zh.svg`` for Chinese) under this same name in its folder.
    """
    return f"figures/{stage.key}-{figure.name}.svg"


WIDE_FIGURE = 736  # px: wider figures may use more than the text column on a large screen


def _figures(ctx: SiteContext, stage: Stage) -> str:
    items = []
    for figure in figures.stage_figures(stage.source_dir):
        width, height = figures.svg_size(figure.svg_in(ctx.language))
        wide = " wide" if width > WIDE_FIGURE else ""
        items.append(f"""<figure class="figure{wide}" data-figure="{esc(figure.name)}">
<img src="{esc(figure_file(stage, figure))}" alt="{esc(figure.alt_in(ctx.language))}" width="{width}" height="{height}">
<figcaption>{inline(figure.caption_in(ctx.language))}</figcaption>
</figure>""")
    if not items:
        return ""
    heading = esc(_("In a picture"))
    return f"""<section id="figure" aria-labelledby="figure-title">
<h2 id="figure-title">{heading}</h2>
{chr(10).join(items)}
</section>"""


def _recovery_point(ctx: SiteContext) -> str:
    heading = esc(_("Stuck? The recovery point"))
    return f"""<section id="recovery-point" aria-labelledby="recovery-point-title">
<h2 id="recovery-point-title">{heading}</h2>
{md(ctx.course.text("recovery_point", ctx.language))}
</section>"""


BUNDLE_TEXT = {
    "en": N_("Unzip it and run `make lab` in the unzipped folder: it installs the workbook into `.venv` and opens "
             "the notebooks (its README has the details). The bundle holds the starters, tests, notebooks, fault "
             "labs and the `forgelab` tool — no reference solutions."),
    "zh": N_("This is the Chinese edition of the lab bundle: its starters and transfer starters carry Chinese "
             "docstrings, `make lab` opens the Chinese notebooks in `notebooks/zh/`, and the `forgelab` tool speaks "
             "Chinese (its `course/edition.toml` says so; `--lang en` switches a command to English). Unzip it and "
             "run `make lab` in the unzipped folder: it installs the workbook into `.venv` (`README.zh-CN.md` has the "
             "details). Like the English bundle, it holds the starters, tests, notebooks, fault labs and the "
             "`forgelab` tool — no reference solutions."),
}


def _release_command(language: str) -> str:
    return "forgelab release --out DIR" if language == "en" else f"forgelab release --lang {language} --out DIR"


def _bundle_link(ctx: SiteContext) -> str:
    if ctx.in_bundle:
        here = say(_("This page came with your workbook (its `page/` folder), so the lab is already on your computer: "
                     "work in JupyterLab (`make lab`) or the terminal, run `forgelab check NN`, and pick the "
                     "verification.json it writes below. `forgelab page NN` opens a stage's page from the terminal."))
        return f'<p class="in-bundle">{here}</p>'
    if not ctx.bundle_href:
        missing = say(_("The lab bundle is not part of this build: get the workbook from your instructor, or run "
                        "`{command}` in the course repository."), command=_release_command(ctx.language))
        return f"<p>{missing}</p>"
    link = esc(_("Download the lab bundle"))
    size = esc(_("(zip, {size} KB)").format(size=max(1, round(ctx.bundle_size / 1024))))
    about = say(_(BUNDLE_TEXT.get(ctx.language, BUNDLE_TEXT["en"])))
    return (f'<p><a class="download" href="{esc(ctx.bundle_href)}" download data-bundle>{link}</a> '
            f'<span class="size">{size}</span></p>\n<p>{about}</p>')


def _alternates(ctx: SiteContext, page: str) -> tuple[str, str]:
    """The hreflang links of the head and the language switch, for a page built beside another edition."""
    if len(ctx.editions) < 2:
        return "", ""
    here = ctx.edition
    links = [f'<link rel="alternate" hreflang="{HTML_LANG[edition.language]}" '
             f'href="{esc(edition.href(page, seen_from=here))}">' for edition in ctx.editions]
    root = next((edition for edition in ctx.editions if not edition.folder), ctx.editions[0])
    links.append(f'<link rel="alternate" hreflang="x-default" href="{esc(root.href(page, seen_from=here))}">')
    choices = []
    for edition in ctx.editions:
        lang = HTML_LANG[edition.language]
        if edition.language == ctx.language:
            choices.append(f'<span class="current-language" lang="{lang}" aria-current="true">'
                           f'{esc(AUTONYM[edition.language])}</span>')
        else:
            choices.append(f'<a href="{esc(edition.href(page, seen_from=here))}" hreflang="{lang}" lang="{lang}" '
                           f'data-language="{esc(edition.language)}">{esc(AUTONYM[edition.language])}</a>')
    label = esc(_("This page in another language"))
    switch = f'<nav class="language-switch" aria-label="{label}">' + " · ".join(choices) + "</nav>"
    return "\n".join(links) + "\n", switch + "\n"


def _layout(ctx: SiteContext, *, page: str, title: str, body_attributes: str, content: str) -> str:
    course = ctx.course
    alternates, switch = _alternates(ctx, page)
    skip = esc(_("Skip to the content"))
    footer = say(_("{title} · course version {version} · experiment prefix `{prefix}`"),
                 title=course.text("title", ctx.language), version=course.version, prefix=course.module_id)
    return f"""<!DOCTYPE html>
<html lang="{HTML_LANG.get(ctx.language, ctx.language)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">
<meta name="referrer" content="no-referrer">
<title>{esc(title)}</title>
{alternates}<link rel="stylesheet" href="assets/site.css">
</head>
<body {body_attributes}>
<a class="skip-link" href="#content">{skip}</a>
{switch}<main id="content">
{content}
<footer>
<p>{footer}</p>
<p>{esc(course.text("self_check_disclaimer", ctx.language))}</p>
</footer>
</main>
<script src="assets/strings.js"></script>
<script src="assets/course-data.js"></script>
<script src="assets/verify.js"></script>
<script src="assets/page.js"></script>
</body>
</html>
"""


# ---------------------------------------------------------------- index


def _opening(ctx: SiteContext) -> str:
    """The chapter's opening, from the same course.toml texts as notebooks/00-opening.ipynb."""
    text = opening_texts(ctx.course, ctx.language)
    concepts = []
    for concept, title in CONCEPTS:
        parts = "\n".join(f"<dt>{esc(_(label))}</dt><dd>{md(text[f'concept_{concept}_{part}'])}</dd>"
                          for part, label in CONCEPT_PARTS)
        concepts.append(f'<div class="concept" data-concept="{esc(concept)}">\n<h4>{esc(_(title))}</h4>\n'
                        f'<dl>\n{parts}\n</dl>\n</div>')
    position, needs, calibrated = esc(_("Where this chapter sits")), esc(_("What you need")), esc(_("Three concepts, calibrated"))
    chain, project, how = esc(_("The capability chain")), esc(_("The chapter project")), esc(_("How each stage works"))
    same = say(_("In the lab bundle, the same opening is `{notebook}`."),
               notebook=edition_notebook("00-opening.ipynb", ctx.language))
    return f"""<section id="opening" class="opening" aria-labelledby="opening-title">
<h2 id="opening-title">{esc(text["opening_title"])}</h2>
{md(text["opening_intro"])}
<h3>{position}</h3>
{md(text["opening_position"])}
<h3>{needs}</h3>
{md(text["opening_prerequisites"])}
<h3>{calibrated}</h3>
{chr(10).join(concepts)}
<h3>{chain}</h3>
{md(text["capability_chain"])}
<h3>{project}</h3>
{md(text["opening_outcome"])}
<h3>{how}</h3>
{md(text["opening_how_to_work"])}
<p>{same}</p>
</section>"""


def _stage_label(stage: Stage) -> str:
    """``Stage 01`` in the active language."""
    return _("Stage {number}").format(number=stage.number)


def index_html(ctx: SiteContext) -> str:
    with speaking(ctx.language):
        return _index_html(ctx)


def _index_html(ctx: SiteContext) -> str:
    course, lang = ctx.course, ctx.language
    progress, not_started = esc(_("Progress:")), esc(_(STATES[0][1]))
    items = []
    for stage in course.stages:
        text = stage.text(lang)
        items.append(f"""<li>
<a class="stage-link" href="{esc(stage_page(stage))}">{esc(_stage_label(stage))} · {esc(text.title)}</a>
<p>{inline(text.capability)}</p>
<p>{progress} <span class="progress-badge" data-progress-for="{esc(stage.number)}" data-state="not-started">{not_started}</span></p>
</li>""")
    on_this_page, before, lab, stages = (esc(_("On this page")), esc(_("Before you start")), esc(_("The lab")),
                                         esc(_("Stages")))
    recovery = esc(_("Stuck? The recovery point"))
    about_stages = say(_("Each stage adds one verifiable capability to `forge`. Its page explains the problem and the "
                         "experiment, and checks your `verification.json` in this browser. Progress is kept in this "
                         "browser only."))
    clear_all = esc(_("Clear all progress"))
    noscript = esc(_("Progress and the local check need JavaScript; nothing you pick ever leaves this browser."))
    content = f"""<header>
<p class="eyebrow">Forge Workbook · {esc(course.module_id)}</p>
<h1>{esc(ctx.title)}</h1>
<nav class="page-nav" aria-label="{on_this_page}"><a href="#opening">{before}</a><a href="#lab">{lab}</a>
<a href="#stages">{stages}</a><a href="#recovery-point">{recovery}</a></nav>
</header>
{md(course.text("summary", lang))}
<p class="disclaimer">{esc(course.text("self_check_disclaimer", lang))}</p>
{_opening(ctx)}
<h2 id="lab">{lab}</h2>
{_bundle_link(ctx)}
<h2 id="stages">{stages}</h2>
<p>{about_stages}</p>
<ol class="stage-list">
{chr(10).join(items)}
</ol>
<p><button type="button" id="clear-all-progress">{clear_all}</button></p>
<p id="index-status" role="status" aria-live="polite"></p>
{_recovery_point(ctx)}
<noscript><p>{noscript}</p></noscript>"""
    return _layout(ctx, page="index.html", title=ctx.title, body_attributes='data-page="index"', content=content)


# ---------------------------------------------------------------- stage page


def _chain(ctx: SiteContext, current: Stage) -> str:
    lang = ctx.language
    here, builds_on_it, built_on = esc(_("this stage")), esc(_("this stage builds on it")), esc(_("builds on this stage"))
    rows = []
    for stage in ctx.course.stages:
        text = stage.text(lang)
        relations = []
        if stage.number == current.number:
            relations.append(f'<span class="here">{here}</span>')
        if stage.number in current.builds_on:
            relations.append(builds_on_it)
        if current.number in stage.builds_on:
            relations.append(built_on)
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
    required = say(_("**Required tests** in `{file}` — all {count} pass:"), file=stage.test_file,
                   count=len(stage.required_tests))
    fault = say(_("**Fault lab fixed**: in the lab copy of `{file}`, `{test}` and the whole stage pass again."),
                file=stage.fault.fault_file, test=stage.fault.target_test)
    transfer = say(_("**Transfer challenge passed** ({scenario}): your own test in `{file}` passes."),
                   scenario=transfer_scenario.name, file=stage.transfer_file)
    design = say(_("**Design answer present** in `{file}`:"), file=stage.design_answer_file)
    experiment_id, input_scenario, module, evidence = (esc(_("Experiment id")), esc(_("Input scenario")),
                                                       esc(_("Module")), esc(_("Evidence folder")))
    criteria = esc(_("Acceptance criteria"))
    return f"""<div class="card">
<dl>
<dt>{experiment_id}</dt><dd><code>{esc(stage.experiment_id)}</code></dd>
<dt>{input_scenario}</dt><dd>{esc(scenario.input)}</dd>
<dt>{module}</dt><dd><code>{esc(stage.module)}</code></dd>
<dt>{evidence}</dt><dd><code>{esc(stage.evidence_dir)}/</code></dd>
</dl>
<h3>{criteria}</h3>
<ul>
<li>{required}
<ul>{tests}</ul></li>
<li>{fault}</li>
<li>{transfer} {inline(text.transfer.changed_condition)}</li>
<li>{design} {inline(text.design.question)}</li>
</ul>
</div>"""


def _local_check(ctx: SiteContext, stage: Stage) -> str:
    current, to_do = esc(_("current")), esc(_("to do"))
    steps = "\n".join(
        f'<li data-step="{state}"><span><span class="step-number">{index + 1}.</span>{esc(_(label))}</span>'
        f'<span class="step-status">{current if index == 0 else to_do}</span></li>'
        for index, (state, label) in enumerate(STATES)
    )
    state_line = esc(_("State: {state} (step {step} of {total}).").format(state=_(STATES[0][1]), step=1,
                                                                         total=len(STATES)))
    heading, progress, check = esc(_("Local check")), esc(_("Progress of this stage")), esc(_("Check your evidence"))
    run = say(_("Run `forgelab check {number}` in the workbook (the notebook's evidence button, part 10, does the "
                "same)."), number=stage.number)
    writes = say(_("It writes `{path}`."), path=f"{stage.evidence_dir}/verification.json")
    pick = esc(_("Pick that file below. It is read here, in this browser; it is not uploaded."))
    label = esc(_("Pick your verification.json"))
    clear = esc(_("Clear progress for this stage"))
    noscript = esc(_("The local check needs JavaScript. Nothing you pick ever leaves this browser."))
    return f"""<section id="local-check" class="local-check" data-state="not-started" aria-labelledby="local-check-title">
<h2 id="local-check-title">{heading}</h2>
<p class="disclaimer">{esc(ctx.course.text("self_check_disclaimer", ctx.language))}</p>
<ol id="check-steps" class="steps" aria-label="{progress}">
{steps}
</ol>
<p id="check-state" class="state-line" role="status" aria-live="polite">{state_line}</p>
{_bundle_link(ctx)}
<h3>{check}</h3>
<ol>
<li>{run}</li>
<li>{writes}</li>
<li>{pick}</li>
</ol>
<div class="picker">
<label for="verification-file">{label}</label>
<input type="file" id="verification-file" accept=".json,application/json">
</div>
<div id="file-message" class="file-message" role="alert" hidden></div>
<div id="report" class="report" aria-live="polite"></div>
<div id="previous-report" class="report previous-report" hidden></div>
<p><button type="button" id="clear-progress">{clear}</button></p>
<noscript><p>{noscript}</p></noscript>
</section>"""


def stage_html(ctx: SiteContext, stage: Stage) -> str:
    with speaking(ctx.language):
        return _stage_html(ctx, stage)


def _stage_html(ctx: SiteContext, stage: Stage) -> str:
    text = stage.text(ctx.language)
    label = _stage_label(stage)
    breadcrumb = esc(_("Breadcrumb"))
    problem = say(_("The problem: {title}"), title=text.problem_title)
    chain, highlighted = esc(_("Capability chain")), esc(_("Every stage adds one capability; this one is highlighted."))
    card, done_when = esc(_("Experiment card")), esc(_("Done when"))
    content = f"""<nav class="crumbs" aria-label="{breadcrumb}"><a href="index.html">{esc(ctx.title)}</a> › {esc(label)}</nav>
<header>
<p class="eyebrow">{esc(label)} · <code>{esc(stage.experiment_id)}</code></p>
<h1>{esc(text.title)}</h1>
<p class="capability">{inline(text.capability)}</p>
</header>
<section id="problem" aria-labelledby="problem-title">
<h2 id="problem-title">{problem}</h2>
{md(text.problem)}
</section>
{_figures(ctx, stage)}
<section id="chain" aria-labelledby="chain-title">
<h2 id="chain-title">{chain}</h2>
<p>{highlighted}</p>
{_chain(ctx, stage)}
</section>
<section id="experiment" aria-labelledby="experiment-title">
<h2 id="experiment-title">{card}</h2>
{_experiment_card(ctx, stage)}
<h3>{done_when}</h3>
<ul>{"".join(f"<li>{inline(item)}</li>" for item in text.done_when)}</ul>
</section>
{_recovery_point(ctx) if is_project(stage) else ""}
{_local_check(ctx, stage)}"""
    attributes = f'data-page="stage" data-stage="{esc(stage.number)}"'
    return _layout(ctx, page=stage_page(stage), title=f"{label} · {text.title} — {ctx.title}",
                   body_attributes=attributes, content=content)
