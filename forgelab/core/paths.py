"""Where the workbook lives and where tools may write.

* ``root`` holds the course material and the learner's ``forge/`` package. It is found from the
  ``FORGELAB_ROOT`` environment variable, else by walking up from the current directory to a folder
  with ``course/course.toml``, else next to the installed ``forgelab`` package.
* ``workspace`` is where tools write: ``evidence/``, ``labs/`` and ``.forgelab/`` (state, backups).
  It is ``root`` unless ``FORGELAB_WORKSPACE`` names another folder (tests and graders use that).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from forgelab.core.i18n import _

MARKER = Path("course") / "course.toml"


class WorkbookNotFound(RuntimeError):
    """No workbook folder could be located."""


def find_root(start: Path | None = None) -> Path:
    env = os.environ.get("FORGELAB_ROOT")
    if env:
        root = Path(env).expanduser().resolve()
        if not (root / MARKER).is_file():
            raise WorkbookNotFound(_("FORGELAB_ROOT={path} has no {marker}: point it at the workbook folder").format(
                path=env, marker=MARKER))
        return root
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / MARKER).is_file():
            return folder
    beside_package = Path(__file__).resolve().parents[2]  # the folder that holds forgelab/
    if (beside_package / MARKER).is_file():
        return beside_package
    raise WorkbookNotFound(_("no workbook found from {here}: run forgelab inside the workbook folder (the one with "
                             "{marker})").format(here=here, marker=MARKER))


@dataclass(frozen=True)
class Workbook:
    root: Path
    workspace: Path

    @classmethod
    def locate(cls, start: Path | None = None) -> "Workbook":
        root = find_root(start)
        env = os.environ.get("FORGELAB_WORKSPACE")
        workspace = Path(env).expanduser().resolve() if env else root
        return cls(root=root, workspace=workspace)

    # material (read-only for tools, except forge/ through backups)
    @property
    def forge(self) -> Path:
        return self.root / "forge"

    @property
    def solutions(self) -> Path:
        return self.root / "solutions"

    @property
    def has_solutions(self) -> bool:
        return (self.solutions / "forge").is_dir()

    @property
    def is_learner_bundle(self) -> bool:
        """An unzipped learner bundle: it ships its starters in course/starters/ and no reference solutions."""
        return (self.root / "course" / "starters").is_dir() and not self.has_solutions

    # written by tools
    @property
    def state_dir(self) -> Path:
        return self.workspace / ".forgelab"

    @property
    def evidence(self) -> Path:
        return self.workspace / "evidence"

    @property
    def labs(self) -> Path:
        return self.workspace / "labs"

    @property
    def backups(self) -> Path:
        return self.state_dir / "backups"

    def relative(self, path: Path) -> str:
        """A path as the learner should see it: relative to root or workspace when possible."""
        for base in (self.workspace, self.root):
            try:
                return path.resolve().relative_to(base).as_posix()
            except ValueError:
                continue
        return path.as_posix()
