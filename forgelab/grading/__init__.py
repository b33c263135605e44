"""Instructor grading: ``forgelab grade SUBMISSION...``.

A submission (a learner's workbook folder, or a zip of one) is graded stage by stage, in its own
subprocess tree and its own temporary copy, against the COURSE's material:

* the stage tests and the instructor-only checks (``instructor/checks/``) against its ``forge/``;
* the reference notebooks under ``nbval --nbval-lax`` (the reference outputs are the answer key);
* the fault-lab fix, the transfer test and the design answer it hands in, re-run here;
* a consistency check of its own ``verification.json`` against what grading observed.

Layers: :mod:`rubric` (items and points) → :mod:`submission` (read and copy a submission) →
:mod:`isolation` (environment, network, process trees) → :mod:`notebooks`, :mod:`consistency`,
:mod:`stage_grader` → :mod:`worker` (one submission, one subprocess) → :mod:`batch` (many, in
parallel) → :mod:`gradebook` and :mod:`feedback` (what people read).
"""
