"""Instructor grading: ``forgelab grade SUBMISSION...``.

A submission (a learner's workbook folder, or a zip of one) is read into a scratch copy and graded
against the COURSE's material through one judge job (:mod:`forgelab.judge`): its code runs only in
the sandbox, the course's tests, instructor checks and notebook replay decide on the trusted side.

* the stage tests and the instructor-only checks (``instructor/checks/``) against its ``forge/``;
* the worked demonstration of each reference notebook, replayed (the reference outputs are the key);
* the fault-lab fix, the transfer test (also against the known-wrong variant) and the design answer;
* a consistency check of its own ``verification.json`` against what grading observed.

Layers: :mod:`rubric` (items and points) → :mod:`plan` (the submission laid out, the judge's labels) →
:mod:`items` and :mod:`consistency` (the seven items of a stage) → :mod:`grader` (one judge job per submission)
→ :mod:`batch` (many, in parallel; shards and their merge) → :mod:`gradebook` and :mod:`feedback` (what people
read). Reading a submission itself is :mod:`forgelab.core.submission` (``forgelab check --target PATH`` reads one
the same way); judging a stage's parts is :mod:`forgelab.verdicts`, shared with ``forgelab check``.

**What belongs here:** grading many submissions and what the instructor reads. **What it may import:**
:mod:`forgelab.site`, :mod:`forgelab.verdicts`, :mod:`forgelab.judge`, :mod:`forgelab.core` — never ``learner``,
``project``, ``authoring`` or ``cli`` (``pyproject.toml`` ``[tool.importlinter]``).
"""

MIN_CLASS = 5  # the smallest class that gets per-stage and per-item figures (forgelab.grading.report; the command
# line reads it here, without importing the grading tools)
SIMILARITY_PERCENT = 60  # a pair is flagged when either file shares at least this share of its own code … (similarity)
SIMILARITY_TOKENS = 150  # … and at least this many tokens; `forgelab grade --similarity-percent/--similarity-tokens`
