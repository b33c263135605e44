"""Compile, once at install time, the bytecode of every package the command line and the judge load.

``make install`` installs without compiling bytecode (it is quicker), and Python writes a module's bytecode only
when it imports it without ``PYTHONDONTWRITEBYTECODE`` — which the judge's sessions set, so pytest's, Hypothesis'
and the judge's own modules that only a session imports were compiled from source again by every check, every
grading session and every sandboxed run of the learner's tests (and everything was, in a shell that sets it). This
step imports what ``forgelab`` and the judge's session import (:func:`forgelab.judge.warm.preload`), then compiles
each of those packages whole (their lazily imported submodules too), and forgelab whole (a check imports the
learner's tools after start-up): a second of work once, a second or more saved by every cold check. It writes ``__pycache__`` folders inside the venv and the forgelab sources only, never into
the workbook's ``forge/`` or a submission: the learner's code is never compiled here.

    python -m forgelab.cli.bytecode      (make install runs it; it prints one line)
"""

from __future__ import annotations

import compileall
import sys
import sysconfig
from pathlib import Path

import forgelab


def _roots() -> list[Path]:
    """The folders whose packages may be compiled: the venv's site-packages and forgelab's own source."""
    roots = {Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib")}
    roots.add(Path(forgelab.__file__).resolve().parent)
    return sorted(roots)


def loaded_packages() -> list[Path]:
    """The package folders (or single-module files) of every module imported now that lies under :func:`_roots`."""
    roots = _roots()
    own = Path(forgelab.__file__).resolve().parent
    found: set[Path] = {own}  # forgelab whole: a check imports the learner's tools after start-up, lazily
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not file or not file.endswith(".py"):
            continue
        path = Path(file).resolve()
        for root in roots:
            if root in path.parents and root != own:
                relative = path.relative_to(root)
                found.add(root / relative.parts[0] if len(relative.parts) > 1 else path)
                break
    return sorted(found)


def grades_here() -> bool:
    """True in the course repository (its ``instructor/`` folder, which no learner bundle ships): ``forgelab grade``
    runs here, so what it loads is compiled too. A learner's install does not pay for grading's packages."""
    return (Path(forgelab.__file__).resolve().parent.parent / "instructor").is_dir()


def import_what_runs() -> None:
    """What a check imports: the command line with every command registered, and the judge's session; in the course
    repository also what ``forgelab grade`` loads (the gradebook, the similarity check, the class report's plots):
    about 400 modules that each grading run compiled from source again where bytecode is not written."""
    from forgelab.cli.main import build_parser  # lazy: what it loads is what gets compiled, at this call
    from forgelab.judge import learner_plugin, warm  # noqa: F401  # lazy: as above (the testers run learner_plugin)

    build_parser()
    warm.preload()
    if grades_here():
        import matplotlib  # lazy: as above (the class report's plots import it when they draw)

        from forgelab.grading import batch, report, report_plots, similarity  # noqa: F401  # lazy: as above

        similarity.library()  # copydetect: grade imports it while its judge runs
        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401  # lazy: as above


def compile_all(paths: list[Path]) -> bool:
    ok = True
    for path in paths:
        if path.is_dir():
            ok = compileall.compile_dir(str(path), quiet=1, workers=0) and ok
        else:
            ok = compileall.compile_file(str(path), quiet=1) and ok
    return ok


def main() -> int:
    import_what_runs()
    packages = loaded_packages()
    ok = compile_all(packages)
    print(f"bytecode compiled for {len(packages)} packages the judge loads" + ("" if ok else " (some files failed)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
