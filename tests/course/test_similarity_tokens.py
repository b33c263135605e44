"""The similarity check lexes the course's own modules once, not in every grading run (issue 32, grading speed).

Lexing (copydetect's ``filter_code``, Pygments) was most of a grading run's similarity cost: about 250 course modules
(references, fault-lab variants, mutants, starters) lexed again for every ``forgelab grade``, even of one submission.
Their token streams are now kept in the workbook's cache folder, named by the text's digest. What is compared must
not change by a bit: a fingerprint made from a kept stream is the one copydetect's own constructor makes, and a
comparison with the streams kept gives exactly the figures one without them gives.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import copydetect
import copydetect.utils
import numpy as np
import pytest
from conftest import ROOT, pristine_starters
from similarity_fixtures import STAGES, modules

from forgelab.core.paths import Workbook
from forgelab.core.registry import load_course
from forgelab.grading import similarity
from forgelab.grading.similarity import HandedModule, Status, Thresholds, Tokens

similarity.library()  # copydetect with the stable k-gram hash, which the fingerprints made here must use too
COURSE = load_course(ROOT)
WORKBOOK = Workbook.locate(ROOT)
ODD = ["", "x", '"""only a docstring"""\n', "def f(:\n    pass\n", "# 注释\nname = '名字'\n", "\ud800 = 1\n"]


def _course_texts() -> list[str]:
    texts = [similarity.starter_text(WORKBOOK, stage) for stage in COURSE.stages]
    texts += [text for stage in COURSE.stages for _name, _kind, _file, text in similarity.course_modules(WORKBOOK, stage)]
    return texts


def _positions(made: Any) -> dict[int, list[int]]:
    """A fingerprint's positions by hash, as copydetect's dict holds them (in the order of the positions)."""
    found: dict[int, list[int]] = {}
    for value, position in zip(made.hash_idx.values.tolist(), made.hash_idx.positions.tolist()):
        found.setdefault(value, []).append(position)
    return found


def _same(made: Any, expected: Any) -> None:
    """``made`` (hashes and positions as one similarity._Hashes) holds what copydetect's own ``expected`` holds."""
    assert made.filtered_code == expected.filtered_code and made.raw_code == expected.raw_code
    assert made.offsets.dtype == expected.offsets.dtype and made.offsets.shape == expected.offsets.shape
    assert np.array_equal(made.offsets, expected.offsets)
    assert made.hashes is made.hash_idx and made.k == expected.k
    assert set(made.hash_idx.values.tolist()) == {int(value) for value in expected.hashes}
    assert list(made.hash_idx.positions) == sorted(made.hash_idx.positions.tolist())
    assert _positions(made) == {int(key): [int(i) for i in value] for key, value in expected.hash_idx.items()}
    assert made.token_coverage == expected.token_coverage


@pytest.mark.parametrize("boilerplate", [None, "starter"])
def test_a_fingerprint_from_a_kept_stream_is_copydetects_own(tmp_path: Path, boilerplate: str | None) -> None:
    thresholds = Thresholds()
    starter = similarity.starter_text(WORKBOOK, COURSE.stage("01"))
    plate = None if boilerplate is None else np.unique(np.array(sorted(copydetect.CodeFingerprint(
        "module.py", thresholds.noise, 1, fp=io.StringIO(starter), language="python").hashes),
        dtype=np.int64))
    texts = _course_texts()[:40] + ODD
    kept = Tokens(tmp_path)
    for text in texts:
        kept.filtered(text, keep=True)
    again = Tokens(tmp_path)  # a later run: every stream read back from the folder
    for text in texts:
        expected = copydetect.CodeFingerprint("module.py", thresholds.noise, 1, boilerplate=plate,
                                              fp=io.StringIO(text), language="python")
        _same(similarity._fingerprint(text, thresholds, plate, again, keep=True), expected)


def _handed() -> dict[str, list[HandedModule]]:
    starter = pristine_starters()
    stages = [COURSE.stage(number) for number in STAGES]
    found: dict[str, list[HandedModule]] = {}
    for name, mine in modules(starter).items():
        found[name] = [HandedModule(stage.number, stage.module, Status.TEXT,
                                    hashlib.sha256(text.encode()).hexdigest(), text)
                       for stage in stages
                       for text in [mine.get(stage.module) or (starter / stage.module).read_text(encoding="utf-8")]]
    return found


def _copydetects_own(text: str, thresholds: Thresholds, boilerplate: Any, _tokens: Any = None, keep: bool = False) -> Any:
    """How a fingerprint was made before the streams were kept: copydetect's constructor, which lexes every time."""
    return copydetect.CodeFingerprint("module.py", thresholds.noise, 1, boilerplate=boilerplate, fp=io.StringIO(text),
                                      language="python")


def _figures(comparison: similarity.Comparison) -> list[tuple[object, ...]]:
    return [(p.stage, p.left.name, p.right.name, p.percent, p.other_percent, p.tokens, p.slices)
            for p in comparison.pairs] + [comparison.compared]


def test_the_course_modules_are_lexed_once_and_the_figures_do_not_change(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    stages = [COURSE.stage(number) for number in STAGES]
    handed = _handed()
    lexed: list[str] = []
    lex = copydetect.utils.filter_code

    def counted(code: str, *args: Any) -> Any:
        lexed.append(code)
        return lex(code, *args)

    monkeypatch.setattr(copydetect.utils, "filter_code", counted)
    first = similarity.compare(WORKBOOK, stages, handed, Thresholds(), Tokens(tmp_path))
    course = {text for stage in stages for _n, _k, _f, text in similarity.course_modules(WORKBOOK, stage)}
    course |= {similarity.starter_text(WORKBOOK, stage) for stage in stages}
    assert course <= set(lexed) and len(lexed) == len(set(lexed))  # each text once, even within the run
    kept = [path.name for path in tmp_path.glob("*.json")]  # the course's, never a submission's own text
    assert len([name for name in kept if not name.startswith("winnowed-")]) == len(course)  # token streams
    # and their winnowed hashes, named by the token stream: two texts that lex alike (a mutant that changes a name)
    assert 0 < len([name for name in kept if name.startswith("winnowed-")]) <= len(course)  # share one
    del lexed[:]
    second = similarity.compare(WORKBOOK, stages, handed, Thresholds(), Tokens(tmp_path))  # the next grading run
    assert not course & set(lexed)  # none of the course's modules lexed again
    monkeypatch.setattr(similarity, "_fingerprint", _copydetects_own)
    fresh = similarity.compare(WORKBOOK, stages, handed, Thresholds(), Tokens(None))  # as before: copydetect's own
    monkeypatch.undo()
    assert _figures(first) == _figures(second) == _figures(fresh)
    for kept in tmp_path.glob("*.json"):  # a damaged file is made again, with the same figures
        kept.write_text('{"filtered": 1}', encoding="utf-8")
    assert _figures(similarity.compare(WORKBOOK, stages, handed, Thresholds(), Tokens(tmp_path))) == _figures(fresh)


@pytest.mark.parametrize("boilerplate", [None, "starter"])
def test_a_course_modules_winnowed_hashes_are_read_back_without_hashing(tmp_path: Path, boilerplate: str | None,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The course's modules are the same in every grading run: their winnowed hashes (the starter's removed), positions
    and token coverage are kept beside their token streams, and a later run reads them instead of hashing every
    k-gram again. What it reads back holds copydetect's own fingerprint: the same hashes at the same positions."""
    thresholds = Thresholds()
    starter = similarity.starter_text(WORKBOOK, COURSE.stage("01"))
    plate = None if boilerplate is None else np.unique(np.array(sorted(copydetect.CodeFingerprint(
        "module.py", thresholds.noise, 1, fp=io.StringIO(starter), language="python").hashes), dtype=np.int64))
    texts = _course_texts()[:40] + ODD
    expected = [copydetect.CodeFingerprint("module.py", thresholds.noise, 1, boilerplate=plate, fp=io.StringIO(text),
                                           language="python") for text in texts]
    first = Tokens(tmp_path)
    for text in texts:
        similarity._fingerprint(text, thresholds, plate, first, keep=True)

    def no_hashing(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a course module's k-grams were hashed again")

    monkeypatch.setattr(copydetect.utils, "hashed_kgrams", no_hashing)
    again = Tokens(tmp_path)  # a later run: every fingerprint read back from the folder
    for text, own in zip(texts, expected):
        made = similarity._fingerprint(text, thresholds, plate, again, keep=True)
        _same(made, own)
        assert type(made.token_coverage) is type(own.token_coverage)


def test_fingerprints_made_here_are_compared_without_gathering_one_array_per_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    """copydetect gathers the overlap of two fingerprints one array per shared hash: for one submission that copies
    the reference, about 600,000 arrays against the course's modules, most of what its similarity check cost. Two
    fingerprints made here are compared with two vectorised lookups instead; the figures are copydetect's own (the
    test above compares them with fingerprints copydetect made itself, which still go its own way)."""
    stages = [COURSE.stage(number) for number in STAGES]
    handed = _handed()
    reference = {"reference-copy": [HandedModule(stage.number, stage.module, Status.TEXT, "", text)
                                     for stage in stages
                                     for text in [(ROOT / stage.solution_module).read_text(encoding="utf-8")]]}
    expected = similarity.compare(WORKBOOK, stages, {**handed, **reference}, Thresholds(), Tokens(None))

    def gathered(*_args: object) -> None:
        raise AssertionError("copydetect's own overlap was used for two fingerprints made here")

    monkeypatch.setattr(similarity, "_copydetects_overlap", gathered)
    found = similarity.compare(WORKBOOK, stages, {**handed, **reference}, Thresholds(), Tokens(None))
    assert _figures(found) == _figures(expected)
    copies = [pair for pair in found.pairs if pair.left.name == "reference-copy"]
    assert copies and all(pair.right.name == "reference" and pair.percent == 100.0 for pair in copies)


def test_what_grade_prepares_while_the_judge_runs_leaves_the_check_only_its_comparisons(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``grade`` lexes and winnows each submission's modules, and the course's, while the judge runs
    (``similarity.prepare``): the similarity check after the batch then lexes and hashes nothing, and finds exactly
    what it finds without the head start."""
    stages = [COURSE.stage(number) for number in STAGES]
    handed = _handed()
    expected = similarity.compare(WORKBOOK, stages, handed, Thresholds(), Tokens(None))
    workbook = Workbook(root=ROOT, workspace=tmp_path)  # its own cache folder: nothing kept from another test
    for modules_of_one in handed.values():
        similarity.prepare_in_background(workbook, stages, Thresholds(), modules_of_one).join()
    worked: list[str] = []
    lex, fingerprints = copydetect.utils.filter_code, copydetect.utils.get_document_fingerprints

    def lexed(*args: Any) -> Any:
        worked.append("lexed")
        return lex(*args)

    def winnowed(*args: Any, **kwargs: Any) -> Any:
        worked.append("winnowed")
        return fingerprints(*args, **kwargs)

    monkeypatch.setattr(copydetect.utils, "filter_code", lexed)
    monkeypatch.setattr(copydetect.utils, "get_document_fingerprints", winnowed)
    found = similarity.compare(workbook, stages, handed, Thresholds())
    assert worked == []
    assert _figures(found) == _figures(expected)
    other = Workbook(root=ROOT, workspace=tmp_path / "other")  # a workbook nothing was prepared for: all made here
    assert _figures(similarity.compare(other, stages, handed, Thresholds())) == _figures(expected)
    assert "lexed" in worked and "winnowed" in worked
