"""Grade ONE submission in this process: ``python -m forgelab.grading.worker JOB.json``.

The batch starts one worker per submission, each in its own process group (and network
namespace where available) with the grading environment of :mod:`forgelab.grading.isolation`.
The worker copies the course material (tests, instructor checks, stage sources, the reduced
reference notebooks) and what grading needs out of the submission into its scratch folder, grades the
stages one by one and appends each stage's rows to the result file (JSON lines) as soon as the
stage is done — so if the worker is stopped at the submission's time limit, the stages it
finished still count, and only the rest are reported as stopped.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from forgelab.grading import submission as submissions
from forgelab.grading.isolation import Limits
from forgelab.grading.rubric import ERROR
from forgelab.grading.stage_grader import Context, failed_stage, grade_stage
from forgelab.paths import Workbook
from forgelab.registry import load_course
from forgelab.targets import Target


def _append(path: Path, row: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
        handle.flush()


def run(job: dict[str, Any]) -> int:
    started = time.monotonic()
    result = Path(job["result"])
    scratch = Path(job["scratch"])
    copied = time.monotonic()
    # this worker's own copy of the course material and of the reduced reference notebooks
    course_root = Path(os.environ["FORGELAB_ROOT"])
    shutil.copytree(job["course_template"], course_root)
    notebooks: dict[str, Path] = {}
    for number, path in sorted(job["notebooks"].items()):
        notebooks[number] = scratch / "notebooks" / Path(path).name
        notebooks[number].parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, notebooks[number])
    course = load_course(course_root)
    stages = [course.stage(number) for number in job["stages"]]
    sub = submissions.Submission(job["id"], Path(job["path"]), job["kind"], job["prefix"])

    files = submissions.read_files(sub)
    import_dir, home, checker_home = submissions.lay_out(files, scratch / "submission")
    _append(result, {"kind": "submission", "content_sha256": submissions.content_digest(files), "files": len(files),
                     "copy_s": round(time.monotonic() - copied, 3)})

    workbook = Workbook(root=course_root, workspace=scratch / "workspace")
    target = Target(name=f"submission {sub.id}", kind="path", layers=(import_dir / "forge",), home=checker_home,
                    in_place=import_dir)
    context = Context(course=course, workbook=workbook, target=target, home=home, submission=sub.id,
                      scratch=scratch, env=dict(os.environ), limits=Limits(**job["limits"]),
                      notebooks=notebooks)
    for stage in stages:
        try:
            graded = grade_stage(context, stage)
            rows, timings = graded.items, graded.timings
        except Exception as error:  # noqa: BLE001 - one broken stage must not lose the others
            detail = traceback.format_exception_only(type(error), error)[-1].strip()
            rows = failed_stage(sub.id, stage, ERROR, f"the grader failed on this stage ({detail[:200]}); "
                                "this is not the learner's fault — report it to the course maintainers",
                                course_root, notebooks)
            timings = {}
        _append(result, {"kind": "stage", "stage": stage.number, "items": [row.as_dict() for row in rows],
                         "timings": timings})
    _append(result, {"kind": "done", "worker_s": round(time.monotonic() - started, 3)})
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m forgelab.grading.worker JOB.json", file=sys.stderr)
        return 2
    job = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    return run(job)


if __name__ == "__main__":
    sys.exit(main())
