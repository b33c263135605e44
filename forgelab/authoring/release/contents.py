"""What the bundle holds, file by file: the committed files transformed for the learner.

Notebooks are shipped with their code-cell outputs cleared — the committed notebooks carry the outputs of the
reference solution — except the worked demonstration's (:func:`keeps_reference_output`): those are outputs,
not code, and the notebook marks them as the reference output, so the learner sees the capability work before
writing it. A pristine copy of every starter is shipped as course data under ``course/starters/``
(:data:`STARTERS`): all of ``forge/`` and ``transfer/`` as committed, read by ``forgelab starter`` and the
grader. Another edition's bundle gets its docstrings (:mod:`forgelab.authoring.release.localize`), and every
bundle its learner README and the built course page (``page/``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping
from pathlib import Path

from forgelab.authoring.release.source import Committed, ReleaseError, shipped_files
from forgelab.core.registry import Course, RegistryError, load_course
from forgelab.core.i18n import N_, _, speaking
from forgelab.site.builder import BUNDLE_PAGE, SiteError, build_site
from forgelab.authoring.release.localize import LocalizeError, english_left, with_stub_messages, with_words
from forgelab.core import course_files


EDITION_FILE = "course/edition.toml"  # written into a bundle of another edition: the language its tools speak
DOCSTRINGS_FILE = "course/docstrings.toml"  # forge/'s finished files in another edition (never shipped itself)


# Pristine starters, shipped as course data: learner folder -> folder inside the bundle.
STARTERS_DIR = "course/starters"


STARTERS: tuple[tuple[str, str], ...] = (("forge", f"{STARTERS_DIR}/forge"), ("transfer", f"{STARTERS_DIR}/transfer"))


REFERENCE_OUTPUT_TAG = "nbval-check-output"  # the worked demonstration's cells (forgelab.authoring.build.GRADED)


def keeps_reference_output(cell: Mapping[str, object]) -> bool:
    """A worked-demonstration cell: graded by nbval and not one of the notebook's ``lab.`` tool cells."""
    metadata = cell.get("metadata")
    tags = metadata.get("tags", []) if isinstance(metadata, dict) else []
    source = cell.get("source", "")
    text = "".join(source) if isinstance(source, list) else str(source)
    return cell.get("cell_type") == "code" and REFERENCE_OUTPUT_TAG in tags and not text.lstrip().startswith("lab.")


def clear_notebook(raw: bytes) -> bytes:
    """The notebook with every code-cell output and execution count removed, except the reference output
    of the worked demonstration (:func:`keeps_reference_output`)."""
    notebook = json.loads(raw.decode("utf-8"))
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code" and not keeps_reference_output(cell):
            cell["outputs"] = []
            cell["execution_count"] = None
            cell.get("metadata", {}).pop("execution", None)
    notebook.get("metadata", {}).pop("widgets", None)
    return (json.dumps(notebook, indent=1, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def starter_copies(committed: Committed) -> dict[str, bytes]:
    """``course/starters/forge/...`` and ``course/starters/transfer/...``: every committed starter file, untouched."""
    copies: dict[str, bytes] = {}
    for source, destination in STARTERS:
        for path in shipped_files(committed):
            if path.startswith(source + "/"):
                copies[f"{destination}/{path.removeprefix(source + '/')}"] = committed.files[path]
    return copies


# the first line of every fault variant's module docstring ends with this (fault.toml writes it)
FAULT_HEADER = N_("(FAULT LAB: this copy has a defect to find and fix)")


def localized(contents: dict[str, bytes], course: Course, language: str,
              finished: Mapping[str, course_files.FileDocstrings] | None = None) -> dict[str, bytes]:
    """The bundle in another edition: each starter and transfer starter (and their pristine copies under
    ``course/starters/``) with that edition's docstrings, comments and stub messages, every finished file of
    ``forge/`` with its words from ``finished`` (``course/docstrings.toml``), each fault lab's copy with its header in
    that edition, and ``course/edition.toml`` so the tools and ``make lab`` speak it. Code is unchanged
    (:mod:`forgelab.authoring.release.localize` checks that), and a Python file of ``forge/`` or ``transfer/`` that
    still has an English docstring or comment is refused: the learner edits these files in their own language."""
    if language == "en":
        return contents
    result = dict(contents)

    def localize(path: str, module: str | None, functions: Mapping[str, str], comments: Mapping[str, str],
                 every_key: bool = True) -> None:
        try:
            source = result[path].decode("utf-8")
            text = with_stub_messages(with_words(source, module, functions, comments, where=path,
                                                 every_key=every_key), language)
        except (LocalizeError, UnicodeDecodeError) as error:
            raise ReleaseError(_("cannot make the {language} edition of {path}: {error}").format(
                language=language, path=path, error=error)) from None
        result[path] = text.encode("utf-8")

    for stage in course.stages:
        docs = stage.texts[language].docstrings if language in stage.texts else None
        if docs is None:
            raise ReleaseError(_("stage {number} has no [text.{language}.docstrings]: the {language} bundle would ship "
                                 "English starters — translate them (forgelab build --check lists what is "
                                 "missing)").format(number=stage.number, language=language))
        for shipped, module_doc, functions, comments in ((stage.module, docs.starter, docs.functions, docs.comments),
                                                         (stage.transfer_file, docs.transfer, {}, {})):
            for path in (shipped, f"{STARTERS_DIR}/{shipped}"):
                if path in result:
                    localize(path, module_doc, functions, comments)
        variant = result.get(stage.fault_variant)
        if variant is not None:  # the fault lab's copy: the edition's docstrings, its first line saying what the copy is
            with speaking(language):
                header = _(FAULT_HEADER)
            first, _newline, rest = docs.starter.partition("\n")
            localize(stage.fault_variant, f"{first}{header}\n{rest}", docs.functions, docs.comments, every_key=False)
    for path, words in (finished or {}).items():
        for shipped in (path, f"{STARTERS_DIR}/{path}"):
            if shipped in result:
                localize(shipped, words.module or None, words.functions, words.comments)
    left = [f"{path} {line}" for path in sorted(result) if _edited_by_learner(path)
            for line in english_left(result[path].decode("utf-8", "replace"), where=path)]
    if left:
        raise ReleaseError(_("the {language} edition would ship English where the learner edits: {places} — translate "
                             "them in the stage's [text.{language}.docstrings] (a stage module) or in {file} (any other "
                             "file of forge/)").format(language=language, places=_(", ").join(left[:6]) +
                                                       ("…" if len(left) > 6 else ""), file=DOCSTRINGS_FILE))
    result[EDITION_FILE] = (f'# This bundle is the "{language}" edition: forgelab and `make lab` speak it\n'
                            f'# (--lang en or FORGE_LANG=en switches the tools back to English).\n'
                            f'language = "{language}"\n').encode("utf-8")
    return result


def _edited_by_learner(path: str) -> bool:
    """A Python file the learner opens and edits: ``forge/…`` and ``transfer/…`` (and their pristine copies)."""
    relative = path.removeprefix(f"{STARTERS_DIR}/")
    return relative.endswith(".py") and relative.split("/", 1)[0] in ("forge", "transfer")


def finished_docstrings(committed_files: Mapping[str, bytes], language: str) -> dict[str, course_files.FileDocstrings]:
    """``course/docstrings.toml``'s words for ``language`` (path → words); none when the file is not committed."""
    data = committed_files.get(DOCSTRINGS_FILE)
    if data is None or language == "en":
        return {}
    try:
        table = course_files.parse(Path(DOCSTRINGS_FILE), data, course_files.DocstringsFile)
    except RegistryError as error:
        raise ReleaseError(str(error)) from None
    return dict(table.text.get(language, {}))


def bundle_contents(committed: Committed) -> tuple[dict[str, bytes], list[str]]:
    """The bundle's files (path → bytes) and the notebooks whose outputs were cleared."""
    contents: dict[str, bytes] = {}
    cleared: list[str] = []
    generated = [path for path in committed.files if path.startswith(STARTERS_DIR + "/")]
    if generated:
        raise ReleaseError(_("{folder}/ is committed ({first}…), but release writes it itself from forge/ and "
                             "transfer/: remove it (`git rm -r {folder}` and commit)").format(folder=STARTERS_DIR,
                                                                                          first=generated[0]))
    for relative in shipped_files(committed):
        data = committed.files[relative]
        if relative.endswith(".ipynb"):
            try:
                data = clear_notebook(data)
            except (ValueError, UnicodeDecodeError) as error:
                raise ReleaseError(_("{path} is not a readable notebook ({error}): rebuild it with `forgelab "
                                     "build`").format(path=relative, error=error)) from None
            cleared.append(relative)
        contents[relative] = data
    contents.update(starter_copies(committed))
    return contents, cleared


LEARNER_READMES = {"en": {"README.md": ("course/learner/README.md", "en"),
                          "README.zh-CN.md": ("course/learner/README.zh-CN.md", "zh")},
                   "zh": {"README.md": ("course/learner/README.zh-CN.md", "zh"),
                          "README.en.md": ("course/learner/README.md", "en")}}
"""Per bundle edition: each README the bundle ships at its root and its source. The bundle's own edition is README.md;
the other edition sits beside it, and each README's first line links to the other under its shipped name."""


STAGES_PLACEHOLDER = "<!-- forgelab release: the stages -->"


def stage_table(course: Course, language: str) -> str:
    """The stages as a Markdown table in one edition (the learner README's list, made from the registry)."""
    with speaking(language):
        head = f"| # | {_('stage')} | {_('you write')} | {_('capability')} |"
        rows = [f"| {stage.number} | {stage.text(language).title} | `{stage.module}` | {stage.text(language).capability} |"
                for stage in course.stages]
    return "\n".join([head, "|---|---|---|---|", *rows])


def learner_readmes(committed: Committed, course: Course, edition: str = "en") -> dict[str, bytes]:
    """The bundle's READMEs (:data:`LEARNER_READMES`): the learner's own (``course/learner/``), with the stage table
    filled in from the registry and the link to the other edition pointing at the name it ships under — not the
    course repository's README, which is the front door of the course for everyone."""
    shipped_as = LEARNER_READMES["zh" if edition == "zh" else "en"]
    by_source = {source: shipped for shipped, (source, _language) in shipped_as.items()}
    readmes: dict[str, bytes] = {}
    for shipped, (source, language) in shipped_as.items():
        data = committed.files.get(source)
        if data is None:
            raise ReleaseError(_("{source} is not committed at HEAD ({commit}): the bundle's {shipped} is the learner's "
                                 "README, written there; add it (`git add {source} && git commit`)").format(
                source=source, commit=committed.commit[:12], shipped=shipped))
        text = data.decode("utf-8")
        if STAGES_PLACEHOLDER not in text:
            raise ReleaseError(_("{source} has no {placeholder} line: put it where the list of stages goes").format(
                source=source, placeholder=STAGES_PLACEHOLDER))
        text = text.replace(STAGES_PLACEHOLDER, stage_table(course, language))
        first, newline, rest = text.partition("\n")
        for other_source, other_shipped in by_source.items():
            if other_source != source:
                first = first.replace(f"({Path(other_source).name})", f"({other_shipped})")
        readmes[shipped] = (first + newline + rest).encode("utf-8")
    return readmes


def bundle_page(contents: Mapping[str, bytes]) -> dict[str, bytes]:
    """The course page as it ships inside the bundle (``page/``, every edition), built from the bundle's own files
    — exactly what ``forgelab page`` builds in an unzipped bundle, where there is no git."""
    with tempfile.TemporaryDirectory(prefix="forgelab-bundle-page-") as scratch:
        base = Path(scratch) / "workbook"
        for path, data in contents.items():
            if path.startswith(("course/", "tests/stages/")) or path == "pyproject.toml":
                (base / path).parent.mkdir(parents=True, exist_ok=True)
                (base / path).write_bytes(data)
        try:
            course = load_course(base)
            build_site(course, base / BUNDLE_PAGE, editions=course.languages, in_bundle=True)
        except (RegistryError, SiteError) as error:
            raise ReleaseError(_("the course page for the bundle cannot be built ({error}): fix that and "
                                 "commit").format(error=error)) from None
        return {f"{BUNDLE_PAGE}/{path.relative_to(base / BUNDLE_PAGE).as_posix()}": path.read_bytes()
                for path in sorted((base / BUNDLE_PAGE).rglob("*")) if path.is_file()}
