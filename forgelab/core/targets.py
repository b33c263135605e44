"""Targets: which implementation of ``forge`` a run imports.

=============  ==============================================================================
``learner``    ``forge/`` as the learner left it (imported in place)
``solution``   ``forge/`` with every file of ``solutions/forge/`` laid over it
``fault:NN``   the ``solution`` target with ``failure_labs/NN-slug/forge/`` laid over it
a path         a submitted workbook folder (its ``forge/``), or a ``forge/`` folder itself
=============  ==============================================================================

A target also says where its transfer tests, design answers and fault-lab workspace live, because
``forgelab check`` judges all four parts of a stage for the same target.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from forgelab.core.paths import Workbook
from forgelab.core.registry import Course, RegistryError
from forgelab.core.i18n import N_, _
from forgelab.core.submission import LayoutError, Submission, lay_out


class TargetError(ValueError):
    """A target name or path that cannot be used; the message lists the valid ones."""


@dataclass(frozen=True)
class Target:
    name: str
    kind: str  # learner | solution | fault | path
    layers: tuple[Path, ...]  # forge folders laid over each other, first at the bottom
    home: Path  # the workbook-shaped folder that holds transfer/, evidence/ and labs/
    in_place: Path | None = None  # a folder containing forge/ that can be imported without copying

    @property
    def is_reference(self) -> bool:
        return self.kind in ("solution", "fault")

    def materialize(self, into: Path) -> Path:
        """Write ``into/forge/`` from the layers and return it."""
        destination = into / "forge"
        if destination.exists():
            shutil.rmtree(destination)
        destination.mkdir(parents=True)
        for layer in self.layers:
            if not layer.is_dir():
                raise TargetError(_("target {name}: {layer} does not exist").format(name=self.name, layer=layer))
            for source in sorted(layer.rglob("*")):
                if "__pycache__" in source.parts or source.suffix == ".pyc":
                    continue
                relative = source.relative_to(layer)
                if source.is_dir():
                    (destination / relative).mkdir(parents=True, exist_ok=True)
                else:
                    (destination / relative).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, destination / relative)
        return destination

    @contextmanager
    def importable(self) -> Iterator[Path]:
        """A folder to put first on PYTHONPATH so that ``import forge`` gets this target."""
        if self.in_place is not None:
            yield self.in_place
            return
        with tempfile.TemporaryDirectory(prefix=f"forgelab-{self.kind}-") as scratch:
            self.materialize(Path(scratch))
            yield Path(scratch)

    def module_path(self, module: str) -> Path | None:
        """The file that provides ``module`` (e.g. ``forge/instructions.py``) in this target."""
        relative = Path(module).relative_to("forge")
        for layer in reversed(self.layers):
            if (layer / relative).is_file():
                return layer / relative
        return None


TARGET_HELP = N_("learner, solution, fault:NN (NN = a stage number) or the path of a submitted workbook")


def resolve_target(name: str, workbook: Workbook, course: Course) -> Target:
    root = workbook.root
    if name == "learner":
        return Target("learner", "learner", (root / "forge",), workbook.workspace, in_place=root)
    if name == "solution":
        _require_solutions(workbook, name)
        return Target("solution", "solution", (root / "forge", root / "solutions" / "forge"), root)
    if name.startswith("fault:"):
        _require_solutions(workbook, name)
        try:
            stage = course.stage(name.split(":", 1)[1])
        except RegistryError as error:
            raise TargetError(_("unknown target {name!r}: {error}").format(name=name, error=error)) from None
        lab = root / stage.failure_lab / "forge"  # the folder that holds the broken module (stage.fault_variant)
        return Target(f"fault:{stage.number}", "fault", (root / "forge", root / "solutions" / "forge", lab), root)
    path = Path(name).expanduser()
    if path.is_dir():
        path = path.resolve()
        if (path / "forge").is_dir():
            return _read_once(path, path)
        if path.name == "forge" and (path / "__init__.py").is_file():
            return _read_once(path, path.parent)
        raise TargetError(_("target path {name!r} has no forge/ folder: give a workbook folder or a forge/ package").format(
            name=name))
    raise TargetError(_("unknown target {name!r}: expected {choices}").format(name=name, choices=_(TARGET_HELP)))


def _read_once(given: Path, workbook_folder: Path) -> Target:
    """A workbook folder someone else wrote (a submission), read the way ``forgelab grade`` reads it.

    What the tools need of it — ``forge/``, ``transfer/``, ``labs/NN-slug/forge/``, ``evidence/`` — is copied
    into a private folder first, file by file under the submission limits and never through a link
    (:func:`forgelab.core.submission.lay_out`), and every tool then works on that copy: a ``forge`` that
    is a link to the reference solutions, or a transfer test that is a link to a file outside the folder,
    is simply not there. The copy is removed when the command ends (:func:`remove_copies`, which the CLI
    calls as each command returns and the interpreter calls at exit).
    """
    copy = Path(tempfile.mkdtemp(prefix="forgelab-target-"))
    _COPIES.append(copy)
    try:
        laid = lay_out(Submission(str(given), workbook_folder, "folder", ""), copy)
    except LayoutError as problem:
        raise TargetError(_("the target {path} cannot be read as a workbook: {problem}").format(
            path=given, problem=problem)) from None
    forge = laid.import_dir / "forge"
    forge.mkdir(exist_ok=True)
    return Target(str(given), "path", (forge,), laid.home, in_place=laid.import_dir)


_COPIES: list[Path] = []


def remove_copies() -> None:
    """Remove the private copies :func:`resolve_target` made of submitted workbooks in this process.

    A command that read ``--target PATH`` calls this when it ends; a process that embeds the CLI (a test, a
    notebook) would otherwise keep every copy until the interpreter exits.
    """
    while _COPIES:
        shutil.rmtree(_COPIES.pop(), ignore_errors=True)


atexit.register(remove_copies)


def _require_solutions(workbook: Workbook, name: str) -> None:
    if not workbook.has_solutions:
        raise TargetError(_("target {name!r} needs the reference solutions, which are not part of the learner bundle: "
                            "use the learner target, or run this in the instructor's course repository").format(name=name))
