"""Copies found, side by side: every submission's stage modules compared with each other and with the course's own.

For each graded stage, the module the learner writes (the stage registry's ``module``, e.g. ``forge/instructions.py``)
of every submission is compared with the same module of every other submission, and with every module the course
made for that stage: the reference (``solutions/forge/…``), the fault lab's broken variant
(``failure_labs/NN-slug/forge/…``) and each known-wrong mutant (``course/stages/NN-slug/mutants.toml`` applied to the
reference, as ``verify-course`` applies them). A pair whose shared code is above the thresholds is flagged for the
instructor's review, with a page that shows both files side by side and marks what they share. Nothing here reaches
a learner: the flags live in the gradebook (table ``similarity``), its CSV files and the instructor's pages, never on
a feedback page.

The comparison is copydetect's (winnowing over a token stream, Schleimer et al. 2003): each file is tokenized by
Pygments, names become ``V``/``F``/``O`` and strings ``S`` (so renamed variables do not hide a copy), and k-grams of
that stream are hashed and winnowed into a fingerprint. Every k-gram of the untouched starter module is boilerplate
and removed from every fingerprint, so two untouched starters share nothing, and neither do the parts of the module
every learner is handed. Each file is fingerprinted once per stage; pairs are then set intersections.

Everything happens in the trusted grading process over the handed-in files as *text*: nothing is imported or run.
A module that is not there, larger than :data:`MAX_MODULE_BYTES`, binary or not UTF-8 is not compared, and the
instructor's pages say so; one that does not parse as Python is still compared (Pygments tokenizes what it can) and
the page says it does not parse. The results are the same in any process: copydetect hashes k-grams with Python's
``hash()``, which is salted per process (PEP 456), so this module gives it a keyed hash of its own
(:func:`_stable_kgrams`) — otherwise the same class would get other figures in another run, at ``--jobs 1`` and
``--jobs 2`` alike.
"""

from __future__ import annotations

import ast
import enum
import functools
import hashlib
import importlib
import json
import threading
from importlib import metadata
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from forgelab.core.i18n import N_, _, active, speaking
from forgelab.core.evidence import write_atomic
from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, Stage
from forgelab.core.text import templates
from forgelab.grading import SIMILARITY_PERCENT, SIMILARITY_TOKENS
from forgelab.verdicts import jobs
from forgelab.verdicts.mutants import apply, load_mutants
from forgelab.core import pyast

MAX_MODULE_BYTES = 64 * 1024  # the largest reference module is about 10 KB; grading allows 50 MB a file (core.files)
FOLDER = "similarity"  # under grade's --out: index.html and one page per flagged pair
INDEX = "index.html"
HTML_LANG = {"en": "en", "zh": "zh-CN"}


def _stable_kgrams(string: str, k: int) -> Any:
    """copydetect's ``hashed_kgrams`` with a hash that is the same in every process (BLAKE2b, 64 bits)."""
    return np.array([int.from_bytes(hashlib.blake2b(string[offset:offset + k].encode("utf-8", "surrogatepass"),
                                                    digest_size=8).digest(), "little", signed=True)
                     for offset in range(len(string) - k + 1)], dtype=np.int64)


class Status(enum.StrEnum):
    """What was found where a submission's stage module should be."""

    TEXT = "text"  # compared
    SYNTAX_ERROR = "syntax_error"  # compared as tokens; it does not parse as Python
    MISSING = "missing"
    TOO_LARGE = "too_large"
    BINARY = "binary"
    NOT_UTF8 = "not_utf8"

    @property
    def compared(self) -> bool:
        return self in (Status.TEXT, Status.SYNTAX_ERROR)


STATUS_WORDS = {
    Status.SYNTAX_ERROR: N_("does not parse as Python: compared as tokens all the same"),
    Status.MISSING: N_("not handed in: not compared"),
    Status.TOO_LARGE: N_("larger than {limit} KB: not compared"),
    Status.BINARY: N_("holds binary data (a NUL byte): not compared"),
    Status.NOT_UTF8: N_("is not UTF-8 text: not compared"),
}


@dataclass(frozen=True)
class HandedModule:
    """One stage module as a submission handed it in (``text`` only when it can be compared)."""

    stage: str
    module: str
    status: Status
    sha256: str = ""
    text: str = ""


def read_module(path: Path, stage: Stage) -> HandedModule:
    """Read a handed-in module as text, never more than :data:`MAX_MODULE_BYTES` of it."""
    if path.is_symlink() or not path.is_file():
        return HandedModule(stage.number, stage.module, Status.MISSING)
    with path.open("rb") as handle:
        data = handle.read(MAX_MODULE_BYTES + 1)
    if len(data) > MAX_MODULE_BYTES:
        return HandedModule(stage.number, stage.module, Status.TOO_LARGE)
    digest = hashlib.sha256(data).hexdigest()
    if b"\0" in data:
        return HandedModule(stage.number, stage.module, Status.BINARY, digest)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return HandedModule(stage.number, stage.module, Status.NOT_UTF8, digest)
    return HandedModule(stage.number, stage.module, Status.TEXT if _parses(text) else Status.SYNTAX_ERROR, digest, text)


def _parses(text: str) -> bool:
    """Does ``text`` parse as Python? (Parsed only: an AST is never compiled or run.)"""
    try:
        pyast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def read_modules(forge: Path, stages: list[Stage]) -> list[HandedModule]:
    """The stage modules of a laid-out submission's ``forge/`` folder, one per stage."""
    return [read_module(forge / Path(stage.module).relative_to("forge"), stage) for stage in stages]


# ---------------------------------------------------------------- thresholds and the comparison


@dataclass(frozen=True)
class Thresholds:
    """When a pair is flagged: both conditions hold.

    ``percent`` — the share of one of the two files' own code (starter removed) found in the other, in percent;
    ``min_tokens`` — how much code they share, counted in copydetect's tokens (characters of the filtered code
    stream: a name is one, ``return`` is six), so that a few shared lines of a short module are no copy.
    ``noise`` is copydetect's k: the shortest run of tokens that counts as shared.
    """

    percent: int = SIMILARITY_PERCENT
    min_tokens: int = SIMILARITY_TOKENS
    noise: int = 35

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_settings(cls, settings: str) -> Thresholds:
        """The thresholds a grading run recorded in its settings (the defaults when it recorded none)."""
        try:
            found = json.loads(settings).get("similarity") if settings else None
        except (ValueError, AttributeError):
            found = None
        return cls(**found) if isinstance(found, dict) else cls()


class Kind(enum.StrEnum):
    SUBMISSION = "submission"
    REFERENCE = "reference"
    FAULT_LAB = "fault_lab"
    MUTANT = "mutant"


KIND_WORDS = {Kind.SUBMISSION: N_("submission"), Kind.REFERENCE: N_("the reference solution"),
              Kind.FAULT_LAB: N_("the fault lab's broken copy"), Kind.MUTANT: N_("a known-wrong mutant")}


@dataclass(frozen=True)
class Pair:
    """A flagged pair: ``submission``'s module of ``stage`` and ``other`` (another submission or a course module).

    ``percent`` is the share of the submission's own code found in the other, ``other_percent`` the converse;
    ``tokens`` how much they share. ``page`` is the side-by-side page under ``similarity/``.
    """

    stage: str
    submission: str
    other: str
    kind: Kind
    percent: float
    other_percent: float
    tokens: int
    page: str

    @property
    def top(self) -> float:
        return max(self.percent, self.other_percent)


@dataclass(frozen=True)
class _Compared:
    name: str
    kind: Kind
    file: str
    text: str
    status: Status
    print_: Any  # copydetect.CodeFingerprint


@dataclass(frozen=True)
class _Found:
    stage: str
    left: _Compared
    right: _Compared
    percent: float
    other_percent: float
    tokens: int
    slices: tuple[list[tuple[int, int]], list[tuple[int, int]]]


def course_modules(workbook: Workbook, stage: Stage) -> list[tuple[str, Kind, str, str]]:
    """(name, kind, file, text) of every module the course made for ``stage``: the reference, the fault lab's variant
    and each known-wrong mutant. Names are what the gradebook says: ``reference``, ``fault_lab``, ``mutant:NAME``."""
    reference = workbook.root / stage.solution_module
    if not reference.is_file():
        return []  # a learner bundle: no reference, no mutants
    source = reference.read_text(encoding="utf-8")
    made = [(str(Kind.REFERENCE), Kind.REFERENCE, stage.solution_module, source)]
    fault = workbook.root / stage.fault_variant
    if fault.is_file():
        made.append((str(Kind.FAULT_LAB), Kind.FAULT_LAB, stage.fault_variant, fault.read_text(encoding="utf-8")))
    for mutant in load_mutants(stage):
        made.append((f"{Kind.MUTANT}:{mutant.name}", Kind.MUTANT, stage.mutants_file.relative_to(workbook.root).as_posix(),
                     apply(source, mutant, stage.solution_module)))
    return made


def starter_text(workbook: Workbook, stage: Stage, starters: Path | None = None) -> str:
    """The module as the course ships it to learners: the boilerplate of every fingerprint. ``starters``: the folder
    :func:`forgelab.verdicts.jobs.starters` gives, if the caller has it already (in the course repository, finding it
    asks git)."""
    path = (starters or jobs.starters(workbook)) / stage.module
    return path.read_text(encoding="utf-8") if path.is_file() else ""


@functools.cache
def _versions() -> bytes:
    """The versions of copydetect and Pygments, part of every token file's name: read once per process (each reading
    parses the package's metadata file; it was read twice for each of the about 280 texts of a grading run)."""
    return f"copydetect {metadata.version('copydetect')}\0pygments {metadata.version('pygments')}\0".encode("utf-8")


class _Filtered(BaseModel):
    """A file of the token cache (:class:`Tokens`): copydetect's ``filter_code`` of one module's text."""

    model_config = ConfigDict(extra="forbid", strict=True)
    filtered: str
    offsets: list[tuple[int, int]]


class _Winnowed(BaseModel):
    """A file of the fingerprint cache (:meth:`Tokens.winnowed`): one course module's winnowed k-gram hashes, the
    starter's removed, in the order of their positions; those positions; and how many tokens they cover."""

    model_config = ConfigDict(extra="forbid", strict=True)
    hashes: list[int]
    positions: list[int]
    coverage: float


@dataclass(frozen=True)
class _Hashes:
    """A fingerprint's winnowed k-gram hashes and their positions in its token stream: aligned arrays in the order of
    the positions. copydetect keeps the same as a set and a dict of lists, whose overlap it gathers one array per
    shared hash (about 600,000 arrays for one submission that copies the reference, against about 250 course
    modules); :func:`_overlap` finds it with two vectorised lookups instead."""

    values: Any  # numpy int64
    positions: Any  # numpy int64


def _overlap(hashes1: Any, hashes2: Any, idx1: Any, idx2: Any) -> tuple[Any, Any]:
    """copydetect's ``find_fingerprint_overlap``: the positions, in each file, of every hash the two share. For two
    :class:`_Hashes` they come in another order; copydetect sorts them before it uses them (``get_copied_slices``), so
    the figures are the same (tests/course/test_similarity_tokens.py compares them with copydetect's own)."""
    if not (isinstance(idx1, _Hashes) and isinstance(idx2, _Hashes)):
        return _copydetects_overlap(hashes1, hashes2, idx1, idx2)  # type: ignore[no-any-return]
    shared = np.intersect1d(idx1.values, idx2.values)
    if shared.size == 0:
        return np.array([], dtype=int), np.array([], dtype=int)
    return idx1.positions[np.isin(idx1.values, shared)], idx2.positions[np.isin(idx2.values, shared)]


_copydetects_overlap: Any = None
_loaded: ModuleType | None = None  # copydetect, once library() has put the replacements in place
_loading = threading.Lock()


def library() -> ModuleType:
    """The copydetect package, imported at its first use with this module's two replacements in place:
    :func:`_stable_kgrams` (see the module docstring) and :func:`_overlap`. Importing it imports matplotlib's pyplot,
    about a third of a second, which ``grade`` spends in a thread of its own while the judge runs
    (:func:`load_in_background`); any thread may ask, and the replacements are put in place once."""
    global _copydetects_overlap, _loaded
    if _loaded is not None:  # every fingerprint and comparison asks: no lock once it is loaded
        return _loaded
    with _loading:
        if _loaded is None:
            package = importlib.import_module("copydetect")
            utils: Any = importlib.import_module("copydetect.utils")
            detector: Any = importlib.import_module("copydetect.detector")
            utils.hashed_kgrams = _stable_kgrams
            _copydetects_overlap = utils.find_fingerprint_overlap
            detector.find_fingerprint_overlap = _overlap  # compare_files calls it by this name
            _loaded = package
        return _loaded


def load_in_background() -> threading.Thread:
    """Import copydetect (:func:`library`) in a thread of its own: ``grade`` starts it before its judge runs. An
    import that fails there fails again, with its message, where the comparison asks for it."""

    def load() -> None:
        try:
            library()
        except Exception:  # noqa: BLE001 - said where it is needed (see above)
            pass

    thread = threading.Thread(target=load, name="forgelab-similarity-import", daemon=True)
    thread.start()
    return thread


def _in_order(index: dict[Any, list[Any]]) -> _Hashes:
    """copydetect's dict of positions by hash as :class:`_Hashes`."""
    pairs = sorted((int(position), int(value)) for value, positions in index.items() for position in positions)
    return _Hashes(np.array([value for _position, value in pairs], dtype=np.int64),
                   np.array([position for position, _value in pairs], dtype=np.int64))


class Tokens:
    """copydetect's token stream of each text (``filter_code``: Pygments' lexing, most of a fingerprint's cost), made
    once per text in a process, and kept on disk in ``folder`` for the course's own modules (the reference, the fault
    lab's variant, the mutants, the starters: the same in every grading run, about 250 files to lex for 11 stages).
    A file is named by the SHA-256 of the text and of the versions of copydetect and Pygments, so it is never stale;
    one that does not read back as such a file is made again. ``folder=None``: nothing on disk."""

    _shared: ClassVar[dict[Path, Tokens]] = {}
    _sharing: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self._made: dict[str, tuple[str, Any]] = {}
        self._winnowed: dict[tuple[str, int, str], tuple[_Hashes, Any]] = {}  # made or read once in a process

    @classmethod
    def shared(cls, folder: Path) -> Tokens:
        """The process's one :class:`Tokens` for ``folder``: what :func:`prepare` made while the judge ran is there
        when :func:`compare` asks."""
        with cls._sharing:
            return cls._shared.setdefault(folder, cls(folder))

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha256(_versions() + text.encode("utf-8", "surrogatepass")).hexdigest()

    def filtered(self, text: str, keep: bool = False) -> tuple[str, Any]:
        """``filter_code(text)``: (the filtered stream, its offsets); ``keep``: a course module, kept on disk."""
        key = self._key(text)
        if key in self._made:
            return self._made[key]
        path = self.folder / f"{key}.json" if self.folder is not None and keep else None
        made = self._read(path) if path is not None else None
        if made is None:
            made = library().utils.filter_code(text, "module.py", "python")
            if path is not None:
                self._write(path, made)
        self._made[key] = made
        return made

    def winnowed(self, filtered: str, k: int, boilerplate: Any, keep: bool = False) -> tuple[_Hashes, Any]:
        """copydetect's fingerprint of a token stream — its hashes with their positions, and the tokens they cover —
        with the ``boilerplate`` hashes removed; ``keep``: a course module's, kept on disk beside its token stream (the
        same in every grading run; hashing and winnowing them was the larger part of what a run's similarity check
        costs)."""
        plate = b"" if boilerplate is None else np.asarray(boilerplate, dtype=np.int64).tobytes()
        plate_digest = hashlib.sha256(plate).digest()
        memo = (self._key(filtered), k, plate_digest.hex())
        if memo in self._winnowed:
            return self._winnowed[memo]
        path = None
        if self.folder is not None and keep:
            digest = hashlib.sha256(_versions() + f"winnowed k={k}\0".encode("utf-8") + plate_digest
                                    + filtered.encode("utf-8", "surrogatepass")).hexdigest()
            path = self.folder / f"winnowed-{digest}.json"
            try:
                found = _Winnowed.model_validate_json(path.read_bytes())
            except (OSError, ValueError):
                pass
            else:
                read = (_Hashes(np.array(found.hashes, dtype=np.int64), np.array(found.positions, dtype=np.int64)),
                        np.float64(found.coverage))
                self._winnowed[memo] = read
                return read
        _set, index = library().utils.get_document_fingerprints(filtered, k, 1,
                                                                 [] if boilerplate is None else boilerplate)
        coverage = library().utils.get_token_coverage(index, k, len(filtered))
        hashes = _in_order(index)
        if path is not None:
            document = _Winnowed(hashes=hashes.values.tolist(), positions=hashes.positions.tolist(),
                                 coverage=float(coverage))
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, document.model_dump_json())
            except OSError:  # a read-only course: the next run hashes it again
                pass
        self._winnowed[memo] = (hashes, coverage)
        return hashes, coverage

    @staticmethod
    def _read(path: Path) -> tuple[str, Any] | None:
        try:
            found = _Filtered.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            return None
        return found.filtered, np.array(found.offsets, dtype=np.int64).reshape(-1, 2)

    @staticmethod
    def _write(path: Path, made: tuple[str, Any]) -> None:
        filtered, offsets = made
        document = _Filtered(filtered=filtered, offsets=[(int(a), int(b)) for a, b in np.asarray(offsets).reshape(-1, 2)])
        try:
            text = document.model_dump_json()
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
        except (OSError, ValueError):  # a read-only course, or a text that is not UTF-8: the next run lexes it again
            pass


def _fingerprint(text: str, thresholds: Thresholds, boilerplate: Any, tokens: Tokens | None = None,
                 keep: bool = False) -> Any:
    """copydetect's ``CodeFingerprint`` of ``text``, made as its constructor makes it, with the token stream and the
    winnowed hashes from ``tokens`` (``keep``: a course module, whose stream and hashes are kept on disk). Its set of
    hashes and its dict of their positions are one :class:`_Hashes` instead, which ``compare_files`` hands to
    :func:`_overlap` and nothing else reads."""
    tokens = tokens or Tokens()
    filtered, offsets = tokens.filtered(text, keep)
    hashes, coverage = tokens.winnowed(filtered, thresholds.noise, boilerplate, keep)
    made = library().CodeFingerprint.__new__(library().CodeFingerprint)
    made.filename, made.raw_code, made.filtered_code, made.offsets = "module.py", text, filtered, offsets
    made.hashes, made.hash_idx, made.k = hashes, hashes, thresholds.noise  # both as one _Hashes (see _overlap)
    made.token_coverage = coverage
    return made


def _boilerplate(starter: Any) -> Any:
    """The starter's hashes, sorted and each once: what every other fingerprint of its stage leaves out (a fingerprint
    of copydetect's own keeps them as a set)."""
    hashes = starter.hashes
    return np.unique(hashes.values if isinstance(hashes, _Hashes) else np.array(sorted(hashes), dtype=np.int64))


def _spans(slices: Any, length: int) -> list[tuple[int, int]]:
    """copydetect's slices (starts, ends) of one file as sorted, merged (start, end) spans within its text."""
    if np.size(slices) == 0:  # no overlap: copydetect gives an empty array
        return []
    found = sorted((max(0, min(int(start), length)), max(0, min(int(end), length)))
                   for start, end in zip(slices[0], slices[1]))
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _compare(stage: str, left: _Compared, right: _Compared) -> _Found:
    tokens, (one, two), (slices_one, slices_two) = library().compare_files(left.print_, right.print_)
    return _Found(stage, left, right, round(float(one) * 100, 1), round(float(two) * 100, 1), int(tokens),
                  (_spans(slices_one, len(left.text)), _spans(slices_two, len(right.text))))


def _flagged(found: _Found, thresholds: Thresholds) -> bool:
    return found.tokens >= thresholds.min_tokens and max(found.percent, found.other_percent) >= thresholds.percent


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` found: the flagged pairs (with what their pages show) and the modules not compared."""

    pairs: list[_Found]
    not_compared: list[tuple[str, str, Status]]  # (submission, stage, status)
    unparsable: list[tuple[str, str]]  # (submission, stage): compared, but not Python
    compared: int  # pairs looked at


def compare(workbook: Workbook, stages: list[Stage], modules: dict[str, list[HandedModule]],
            thresholds: Thresholds, tokens: Tokens | None = None) -> Comparison:
    """Every submission's module of each stage against every other's and against the course's own modules.

    Pairs of submissions are flagged above the thresholds; against the course's modules, the closest one above
    them is flagged (a copy of the reference also matches most mutants: one page says it). ``tokens``: where the
    token streams come from (by default, the course's modules' are kept in the workbook's cache folder)."""
    tokens = tokens or Tokens.shared(_cache_folder(workbook))
    pairs: list[_Found] = []
    not_compared: list[tuple[str, str, Status]] = []
    unparsable: list[tuple[str, str]] = []
    looked = 0
    starters = jobs.starters(workbook)
    for stage in stages:
        starter = _fingerprint(starter_text(workbook, stage, starters), thresholds, None, tokens, keep=True)
        boilerplate = _boilerplate(starter)
        handed: list[_Compared] = []
        for submission in sorted(modules):
            for module in modules[submission]:
                if module.stage != stage.number:
                    continue
                if not module.status.compared:
                    not_compared.append((submission, stage.number, module.status))
                    continue
                if module.status is Status.SYNTAX_ERROR:
                    unparsable.append((submission, stage.number))
                handed.append(_Compared(submission, Kind.SUBMISSION, module.module, module.text, module.status,
                                        _fingerprint(module.text, thresholds, boilerplate, tokens)))
        made = [_Compared(name, kind, file, text, Status.TEXT, _fingerprint(text, thresholds, boilerplate, tokens,
                                                                            keep=True))
                for name, kind, file, text in course_modules(workbook, stage)]
        for index, left in enumerate(handed):
            for right in handed[index + 1:]:
                looked += 1
                found = _compare(stage.number, left, right)
                if _flagged(found, thresholds):
                    pairs.append(found)
            closest = None
            for right in made:
                looked += 1
                found = _compare(stage.number, left, right)
                if _flagged(found, thresholds) and (closest is None or _closer(found, closest)):
                    closest = found
            if closest is not None:
                pairs.append(closest)
    return Comparison(pairs, not_compared, unparsable, looked)


def _cache_folder(workbook: Workbook) -> Path:
    return workbook.state_dir / "cache" / "similarity"


def prepare(workbook: Workbook, stages: list[Stage], thresholds: Thresholds, handed: list[HandedModule]) -> None:
    """Make ahead what :func:`compare` needs of one submission (``handed``: its modules) and of the course's modules
    of ``stages``, in the process's shared :class:`Tokens`: lexing and winnowing, most of what the similarity check
    costs. ``grade`` calls it while the judge runs (:func:`prepare_in_background`), so that the check after the last
    submission is graded is only the comparisons. It changes no figure: what it made is what compare would make."""
    tokens = Tokens.shared(_cache_folder(workbook))
    starters: Path | None = None
    for stage in stages:
        texts = [module.text for module in handed if module.stage == stage.number and module.status.compared]
        if not texts:
            continue
        starters = starters or jobs.starters(workbook)
        boilerplate = _boilerplate(_fingerprint(starter_text(workbook, stage, starters), thresholds, None, tokens,
                                                keep=True))
        for _name, _kind, _file, text in course_modules(workbook, stage):
            _fingerprint(text, thresholds, boilerplate, tokens, keep=True)
        for text in texts:
            _fingerprint(text, thresholds, boilerplate, tokens)


def prepare_in_background(workbook: Workbook, stages: list[Stage], thresholds: Thresholds,
                          handed: list[HandedModule]) -> threading.Thread:
    """:func:`prepare` in a thread of its own. A failure there costs nothing but the head start: compare makes the
    same again, and says what went wrong if it goes wrong again."""

    def run() -> None:
        try:
            prepare(workbook, stages, thresholds, handed)
        except Exception:  # noqa: BLE001 - said where it is needed (see above)
            pass

    thread = threading.Thread(target=run, name="forgelab-similarity-prepare", daemon=True)
    thread.start()
    return thread


def _closer(found: _Found, than: _Found) -> bool:
    """Closer: a larger share of either file, then of the submission's, then more tokens; on a tie, the earlier
    course module (the reference, then the fault lab's variant, then the mutants in their file's order)."""
    return (max(found.percent, found.other_percent), found.percent, found.tokens) > \
        (max(than.percent, than.other_percent), than.percent, than.tokens)


# ---------------------------------------------------------------- pages


def _segments(text: str, spans: list[tuple[int, int]]) -> list[list[tuple[str, bool]]]:
    """``text`` as lines of (piece, shared) segments, for the template (which escapes every piece)."""
    lines: list[list[tuple[str, bool]]] = [[]]
    position = 0
    for start, end in [*spans, (len(text), len(text))]:
        for piece, shared in ((text[position:start], False), (text[start:end], True)):
            for number, part in enumerate(piece.split("\n")):
                if number:
                    lines.append([])
                if part:
                    lines[-1].append((part, shared))
        position = end
    return lines


def page_names(pairs: list[_Found]) -> list[str]:
    """One page per pair, numbered per stage in the pairs' stable order."""
    names: list[str] = []
    counts: dict[str, int] = {}
    for found in pairs:
        counts[found.stage] = counts.get(found.stage, 0) + 1
        names.append(f"{found.stage}-{counts[found.stage]:03d}.html")
    return names


def _name(compared: _Compared) -> str:
    if compared.kind is Kind.SUBMISSION:
        return compared.name
    words = _(KIND_WORDS[compared.kind])
    return f"{words} ({compared.name.split(':', 1)[1]})" if compared.kind is Kind.MUTANT else words


def write_pages(course: Course, out: Path, comparison: Comparison, thresholds: Thresholds,
                lang: str | None = None) -> tuple[list[Pair], Path]:
    """The index and one side-by-side page per flagged pair under ``out/similarity/`` (in ``lang``, by default the
    active language); returns the pairs as the gradebook keeps them and the index page."""
    lang = lang or active()
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.html"):
        old.unlink()
    pairs: list[Pair] = []
    with speaking(lang):
        environment = templates(lang)
        pair_template = environment.get_template("similarity-pair.html.j2")
        rows = []
        for found, name in zip(comparison.pairs, page_names(comparison.pairs)):
            stage = course.stage(found.stage)
            sides = []
            for compared, spans, percent in ((found.left, found.slices[0], found.percent),
                                             (found.right, found.slices[1], found.other_percent)):
                sides.append({"name": _name(compared), "file": compared.file, "kind": _(KIND_WORDS[compared.kind]),
                              "percent": percent,
                              "lines": _segments(compared.text, spans),
                              "unparsable": compared.status is Status.SYNTAX_ERROR})
            (folder / name).write_text(pair_template.render(
                html_lang=HTML_LANG.get(lang, "en"), stage=stage.number, title=stage.text(lang).title,
                module=stage.module, tokens=found.tokens, sides=sides, thresholds=thresholds), encoding="utf-8")
            pairs.append(Pair(found.stage, found.left.name, found.right.name, found.right.kind, found.percent,
                              found.other_percent, found.tokens, f"{FOLDER}/{name}"))
            rows.append({"stage": found.stage, "left": sides[0]["name"], "right": sides[1]["name"],
                         "kind": sides[1]["kind"], "percent": max(found.percent, found.other_percent),
                         "tokens": found.tokens, "page": name})
        notes = [{"submission": submission, "stage": stage, "words": _(STATUS_WORDS[status]).format(
            limit=MAX_MODULE_BYTES // 1024)} for submission, stage, status in comparison.not_compared
                 if status is not Status.MISSING]
        notes += [{"submission": submission, "stage": stage, "words": _(STATUS_WORDS[Status.SYNTAX_ERROR])}
                  for submission, stage in comparison.unparsable]
        index = folder / INDEX
        index.write_text(environment.get_template("similarity-index.html.j2").render(
            html_lang=HTML_LANG.get(lang, "en"), rows=rows, notes=sorted(notes, key=lambda n: (n["stage"],
                                                                                               n["submission"])),
            compared=comparison.compared, thresholds=thresholds), encoding="utf-8")
    return pairs, index


def cell(pairs: list[Pair], submission: str, stage: str | None = None) -> str:
    """What a CSV line says about ``submission``'s flagged pairs (of ``stage``, or of every stage, prefixed by it)."""
    said = []
    for pair in pairs:
        if pair.submission == submission:
            other = pair.other
        elif pair.other == submission and pair.kind is Kind.SUBMISSION:
            other = pair.submission
        else:
            continue
        if stage is not None and pair.stage != stage:
            continue
        # a mutant's name describes a known-wrong implementation: the CSV says "mutant", its page says which
        shown = "mutant" if other.startswith("mutant:") else other
        text = f"{shown} {pair.top:.0f}% {pair.page}"
        said.append(text if stage is not None else f"{pair.stage}: {text}")
    return "; ".join(said)


__all__ = ["FOLDER", "HandedModule", "Kind", "MAX_MODULE_BYTES", "Pair", "Status", "Thresholds", "cell", "compare",
           "read_modules", "write_pages"]
