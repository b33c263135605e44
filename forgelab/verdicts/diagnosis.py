"""Diagnosis before repair: the learner states what is wrong in the fault lab before (or while) fixing it.

A diagnosis answers three questions — *which test shows the defect*, *in which function it lies*, and *what the
defect is* (one of the stage's choices: the true defect among real misconceptions) — plus a sentence in the
learner's own words. It is checked against an answer key the bundle does not carry in clear:

* ``failure_labs/NN-slug/fixtures/diagnosis.json`` (:class:`AnswerKey`, written by ``forgelab build`` from the
  stage's ``fault.toml``, the reference module, the broken variant and the tests that fail on it) holds the
  choices and, for each question, only salted SHA-256 digests of the accepted answers;
* the last diagnosis step — the one that names the defect — is sealed with a key derived from the right
  defect (:func:`seal`): it opens, in the hint ladder, once the learner has named that defect.

Every test that fails on the broken variant shows the defect; every function whose code the defect changed is
where it lies. ``forgelab verify-course`` proves both against a real run. A stated diagnosis is saved with the
evidence as ``diagnosis.json`` (:class:`DiagnosisRecord`): the choices, the sentence, whether each answer was
right, and after how many attempts. It is a local record of a learning step, like the rest of the evidence — the
key can be found by trying every choice, and the attempts say so.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forgelab.core.i18n import LANGUAGES, _
from forgelab.core.registry import CourseFileError, Stage
from forgelab.core.text import word_count
from forgelab.verdicts.variants import read_fault, variant_text
from forgelab.core import pyast

QUESTIONS = ("test", "function", "defect")
KEY_FILE = "diagnosis.json"  # next to failure.json in the stage's fault lab fixtures
RECORD_FILE = "diagnosis.json"  # in the stage's evidence folder
MIN_EXPLANATION_WORDS = 6
KEY_SCHEMA: Literal[1] = 1
RECORD_SCHEMA: Literal[1] = 1


class DiagnosisError(ValueError):
    """A diagnosis cannot be checked or saved; the message says what is wrong and what to do."""


class _Strict(BaseModel):
    # built at their first use: a check that finds no diagnosis stated validates none of them
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)


class Sealed(_Strict):
    """A text that opens only with the right defect: XOR with a SHA-256 keystream, plus a check digest."""

    data: str  # base64
    check: str  # sha256 hex of the key and "check": tells the right key from a wrong one


class Question(_Strict):
    choices: tuple[str, ...]
    answers: tuple[str, ...]  # salted digests of every accepted choice


class Defect(_Strict):
    id: str
    text: dict[str, str]  # language -> the choice as the learner reads it


class DefectQuestion(_Strict):
    choices: tuple[Defect, ...]  # in an order that does not depend on which one is right
    answers: tuple[str, ...]


class AnswerKey(_Strict):
    """``failure_labs/NN-slug/fixtures/diagnosis.json``: the questions, their choices, salted answers."""

    schema_version: Literal[1]
    stage: str
    salt: str
    source_digest: str  # of everything the key is made from (``build --check`` compares it)
    test: Question
    function: Question
    defect: DefectQuestion
    confirm: dict[str, Sealed]  # language -> the last diagnosis step, sealed with the right defect


class DiagnosisRecord(_Strict):
    """``evidence/…/NN-slug/diagnosis.json``: the learner's latest stated diagnosis and how it was judged."""

    schema_version: Literal[1]
    stage: str
    test: str
    function: str
    defect: str
    explanation: str
    right: dict[str, bool]  # question -> whether the answer is accepted
    attempts: int = Field(ge=1)
    first_right_at: int | None = None  # the attempt at which every answer was first right
    hints_shown: int = Field(ge=0)  # fault-lab hint rungs shown when it was stated
    stated_after_fix: bool  # the lab already passed its tests when the diagnosis was stated

    @property
    def is_right(self) -> bool:
        return all(self.right.get(question, False) for question in QUESTIONS)


# ---------------------------------------------------------------- digests and sealing


def answer_digest(salt: str, question: str, choice: str) -> str:
    return hashlib.sha256(f"{salt}\0{question}\0{choice}".encode()).hexdigest()


def _keystream(key: bytes, length: int) -> bytes:
    blocks = (hashlib.sha256(key + counter.to_bytes(8, "big")).digest() for counter in range((length + 31) // 32))
    return b"".join(blocks)[:length]


def _seal_key(salt: str, defect: str) -> bytes:
    return hashlib.sha256(f"{salt}\0seal\0{defect}".encode()).digest()


def seal(text: str, salt: str, defect: str) -> Sealed:
    key = _seal_key(salt, defect)
    data = text.encode("utf-8")
    sealed = bytes(a ^ b for a, b in zip(data, _keystream(key, len(data))))
    return Sealed(data=base64.b64encode(sealed).decode("ascii"), check=hashlib.sha256(key + b"check").hexdigest())


def unseal(sealed: Sealed, salt: str, defect: str) -> str | None:
    """The sealed text, when ``defect`` is the one it was sealed with; else None."""
    key = _seal_key(salt, defect)
    if hashlib.sha256(key + b"check").hexdigest() != sealed.check:
        return None
    data = base64.b64decode(sealed.data)
    return bytes(a ^ b for a, b in zip(data, _keystream(key, len(data)))).decode("utf-8")


# ---------------------------------------------------------------- the answer key (course side: forgelab build)


def key_path(root: Path, stage: Stage) -> Path:
    return root / stage.failure_lab / "fixtures" / KEY_FILE


def key_file(stage: Stage) -> str:
    return f"{stage.failure_lab}/fixtures/{KEY_FILE}"


def declared(stage: Stage, languages: tuple[str, ...]) -> tuple[str, list[Defect], dict[str, str]]:
    """The stage's ``[diagnosis]`` in fault.toml: the right defect's id, every choice, the sealed step's texts."""
    where = f"{stage.source_dir / 'fault.toml'} [diagnosis]"
    table = read_fault(stage).diagnosis
    if table is None:
        raise CourseFileError(_("{where} is missing: declare the right defect (defect = \"id\"), the choices "
                              "([[diagnosis.choice]] with id and one text per language) and the sealed last step "
                              "([diagnosis.confirm], one text per language)").format(where=where))
    answer, raw, confirm = table.defect, table.choice, table.confirm
    choices = []
    for index, entry in enumerate(raw, 1):
        if not entry.get("id"):
            raise CourseFileError(_("{where}: choice {index} needs an id and one text per language").format(
                where=where, index=index))
        texts = {language: " ".join(entry.get(language, "").split()) for language in languages}
        missing = [language for language, text in texts.items() if not text]
        extra = sorted(set(entry) - {"id", *languages, *LANGUAGES})
        if missing or extra:
            raise CourseFileError(_("{where}: choice {choice!r} lacks its {languages} text").format(
                where=where, choice=entry["id"], languages=_(", ").join(missing)) if missing else
                _("{where}: choice {choice!r} has unknown key {key!r}").format(where=where, choice=entry["id"],
                                                                             key=extra[0]))
        choices.append(Defect(id=entry["id"], text=texts))
    ids = [choice.id for choice in choices]
    if len(set(ids)) != len(ids) or len(ids) < 3:
        raise CourseFileError(_("{where}: give at least three choices with different ids (the true defect and real "
                              "misconceptions)").format(where=where))
    if answer not in ids:
        raise CourseFileError(_("{where}: defect {answer!r} is not the id of a choice ({ids})").format(
            where=where, answer=answer, ids=_(", ").join(ids)))
    steps = {language: " ".join(confirm.get(language, "").split()) for language in languages}
    if not all(steps.values()) or set(confirm) - {*languages, *LANGUAGES}:
        raise CourseFileError(_("{where}: [diagnosis.confirm] needs exactly one text per language ({languages})").format(
            where=where, languages=_(", ").join(languages)))
    return answer, choices, steps


def functions(source: str) -> dict[str, str]:
    """Each function and method of a module (``name`` or ``Class.name``) → a dump of its code, docstring left out."""
    found: dict[str, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = child.body
                if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                        and isinstance(body[0].value.value, str):
                    body = body[1:]
                found[prefix + child.name] = ast.dump(ast.Module(body=list(body), type_ignores=[])) + ast.dump(child.args)
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")

    visit(pyast.parse(source), "")
    return {name: dump for name, dump in found.items() if not name.rsplit(".", 1)[-1].startswith("__")}


def changed_functions(reference: str, variant: str) -> list[str]:
    """The functions of the broken variant whose code differs from the reference's: where the defect lies."""
    before, after = functions(reference), functions(variant)
    return sorted(name for name, dump in after.items() if before.get(name) != dump)


def source_digest(stage: Stage, reference: str, variant: str, tests: str) -> str:
    """What the key is made of: ``build --check`` calls the key stale when this changes."""
    digest = hashlib.sha256(f"diagnosis-key-{KEY_SCHEMA}\0{stage.number}\0".encode())
    for part in (reference, variant, tests, (stage.source_dir / "fault.toml").read_text(encoding="utf-8"),
                 "\0".join(stage.required_tests)):
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()


def make_key(stage: Stage, languages: tuple[str, ...], reference: str, variant: str, tests: str,
             failing: list[str]) -> AnswerKey:
    """The answer key of a stage, from its fault.toml, reference, variant and the tests that fail on the variant."""
    answer, choices, steps = declared(stage, languages)
    digest = source_digest(stage, reference, variant, tests)
    salt = hashlib.sha256(f"salt\0{digest}".encode()).hexdigest()[:32]
    where = changed_functions(reference, variant)
    shown = [name for name in stage.required_tests if name in failing]
    if not where:
        raise CourseFileError(_("stage {number}: the fault changes no function's code: there is nothing to "
                              "diagnose").format(number=stage.number))
    if stage.fault.target_test not in shown:
        raise CourseFileError(_("stage {number}: the target test {test} does not fail on the broken variant").format(
            number=stage.number, test=stage.fault.target_test))
    ordered = sorted(choices, key=lambda choice: answer_digest(salt, "order", choice.id))
    return AnswerKey(
        schema_version=KEY_SCHEMA, stage=stage.number, salt=salt, source_digest=digest,
        test=Question(choices=stage.required_tests, answers=tuple(answer_digest(salt, "test", name) for name in shown)),
        function=Question(choices=tuple(sorted(functions(variant))),
                          answers=tuple(answer_digest(salt, "function", name) for name in where)),
        defect=DefectQuestion(choices=tuple(ordered), answers=(answer_digest(salt, "defect", answer),)),
        confirm={language: seal(text, salt, answer) for language, text in steps.items()})


def key_text(key: AnswerKey) -> str:
    return json.dumps(key.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- checking a diagnosis (learner side)


def load_key(root: Path, stage: Stage) -> AnswerKey:
    path = key_path(root, stage)
    try:
        return AnswerKey.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise DiagnosisError(_("{path} is missing, so a diagnosis cannot be checked: restore the workbook's "
                               "failure_labs/ folder from the bundle").format(path=key_file(stage))) from None
    except ValidationError as error:
        raise DiagnosisError(_("{path} is damaged ({count} problem(s)): restore it from the bundle").format(
            path=key_file(stage), count=error.error_count())) from None


def judge(key: AnswerKey, test: str, function: str, defect: str) -> dict[str, bool]:
    """Whether each answer is accepted."""
    return {"test": answer_digest(key.salt, "test", test) in key.test.answers,
            "function": answer_digest(key.salt, "function", function) in key.function.answers,
            "defect": answer_digest(key.salt, "defect", defect) in key.defect.answers}


def confirm_step(key: AnswerKey, defect: str, language: str) -> str | None:
    """The last diagnosis step in ``language`` (else English), opened with ``defect``; None if it does not open."""
    sealed = key.confirm.get(language) or key.confirm.get("en")
    return unseal(sealed, key.salt, defect) if sealed is not None else None


def defect_text(key: AnswerKey, defect: str, language: str) -> str:
    for choice in key.defect.choices:
        if choice.id == defect:
            return choice.text.get(language) or choice.text.get("en") or defect
    return defect


def explanation_words(text: str) -> int:
    return word_count(text)


# ---------------------------------------------------------------- the record with the evidence


def record_file(stage: Stage) -> str:
    return f"{stage.evidence_dir}/{RECORD_FILE}"


def load_record(home: Path, stage: Stage) -> DiagnosisRecord | None:
    """The diagnosis saved in the workspace (or a submission) ``home``; None when there is none or it is damaged."""
    path = home / record_file(stage)
    try:
        record = DiagnosisRecord.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None
    return record if record.stage == stage.number else None


def judged_record(root: Path, home: Path, stage: Stage) -> tuple[DiagnosisRecord | None, dict[str, bool]]:
    """The saved diagnosis in ``home`` and each answer judged again with the course's key (a record says what the
    learner chose; whether it is right is never taken from the record itself)."""
    record = load_record(home, stage)
    if record is None:
        return None, {}
    try:
        key = load_key(root, stage)
    except DiagnosisError:
        return record, {question: False for question in QUESTIONS}
    return record, judge(key, record.test, record.function, record.defect)


def grading_note(root: Path, home: Path, stage: Stage) -> tuple[str, bool]:
    """For the instructor and the learner's feedback page: the diagnosis a submission handed in, judged with the
    course's key — one line in the active language (the class's) and whether it is right. Grading shows it beside
    the repaired file. The learner's own words are quoted as they wrote them."""
    record, right = judged_record(root, home, stage)
    if record is None:
        return _("diagnosis: not stated (no {file} handed in)").format(file=record_file(stage)), False
    words = record.explanation if len(record.explanation) <= 300 else record.explanation[:299] + "…"
    if all(right.values()):
        text = (_("diagnosis: right at attempt {attempt}, stated after the repair ({test}, {function}(), defect "
                  "{defect}); in their words: {words}") if record.stated_after_fix else
                _("diagnosis: right at attempt {attempt}, stated before the repair ({test}, {function}(), defect "
                  "{defect}); in their words: {words}"))
        return text.format(attempt=record.attempts, test=record.test, function=record.function,
                           defect=repr(record.defect), words=repr(words)), True
    wrong = _(", ").join(question for question in QUESTIONS if not right.get(question))
    text = (_("diagnosis: stated after the repair but not right ({wrong} wrong, attempt {attempt}); in their words: "
              "{words}") if record.stated_after_fix else
            _("diagnosis: stated before the repair but not right ({wrong} wrong, attempt {attempt}); in their words: "
              "{words}"))
    return text.format(wrong=wrong, attempt=record.attempts, words=repr(words)), False


def reference_answers(root: Path, stage: Stage) -> tuple[str, str, str]:
    """The course's own diagnosis (test, function, defect) — from fault.toml and the reference, so only where those
    are: the course repository. Tests and demonstrations use it to state a right diagnosis."""
    answer, _choices, _steps = declared(stage, ("en",))
    where = changed_functions((root / stage.solution_module).read_text(encoding="utf-8"), variant_text(root, stage))
    return stage.fault.target_test, where[0], answer
