"""Draw several plot scripts in one Python process: ``python -P -m forgelab.authoring.plot_runner`` (see
:func:`forgelab.authoring.figures.run_plots`).

Each plot script (``course/stages/NN-slug/figure-NAME.py``) is a program of its own: run in its folder with
``--lang LANG`` for another edition, it writes its SVG to standard output. Importing matplotlib is most of a script's
time, so the scripts a build draws are run here one after the other in one process, each as ``__main__`` in its
folder with its own command line, its output captured; :func:`forgelab.authoring.figures.pyplot` resets matplotlib's
settings for each drawing and ``svg_of`` closes it, so a drawing is the bytes a process of its own writes.

Standard input: a JSON list of ``[script, language]``. Standard output: one JSON object per script, in that order, as
each one finishes: ``{"svg": ...}``, or ``{"error": ...}`` with the last line of what went wrong.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import sys
import traceback


def _draw(script: str, language: str) -> dict[str, str]:
    argv, folder = sys.argv, os.getcwd()
    sys.argv = [script] + ([] if language == "en" else ["--lang", language])
    printed = io.StringIO()
    try:
        os.chdir(os.path.dirname(script))
        with contextlib.redirect_stdout(printed):
            runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (None, 0):
            return {"error": stop.code if isinstance(stop.code, str) else f"it exited with status {stop.code}"}
    except BaseException:  # noqa: BLE001 - any failure of the course's script is reported as its own
        lines = traceback.format_exc().strip().splitlines()
        return {"error": lines[-1] if lines else "no output"}
    finally:
        sys.argv = argv
        os.chdir(folder)
    return {"svg": printed.getvalue()}


def main() -> int:
    jobs = json.loads(sys.stdin.read())
    for script, language in jobs:
        sys.stdout.write(json.dumps(_draw(str(script), str(language))) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
