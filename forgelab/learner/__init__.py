"""The learner's tools: what ``forgelab check``, ``status``, ``fault``, ``hint``, ``answer``, ``restore``,
``starter``, ``backup`` and the notebooks do with a workbook.

==================  ===========================================================================
``workbench``       the learner's operations, once: the command line and the notebooks say the same
``check``           ``forgelab check NN``: judge one stage for one target, write its evidence
``status``          ``forgelab status``: every stage at a glance, running only what changed
``faultlab``        the fault lab's workspace: start, check, diff, reset
``faulthints``      the fault lab's reveal ladder: story, diagnosis steps, fix principle
``stagehints``      the stage hint to reveal next: the rungs for the first failing test, then the ladder's order
``answers``         design answers, saved with the evidence
``state``           small per-workspace memory: hints shown, first failing tests, predictions, last fault checks
``backups``         timestamped backups before any write into the learner's files, and their way back
``restore``         ``forgelab restore NN``: the reference modules of the stages before NN
``starter``         ``forgelab starter NN``: bring back a stage's shipped starter
``notebook``        what the stage notebooks call (``%load_ext forgelab.learner.notebook``, ``stage_tools``)
``notebook_cells``  *Run All* never halts: a failing cell says what went wrong, and where
``recheck``         the notebook test cell's re-check on save: a watcher thread that calls a check after each save
==================  ===========================================================================

**What belongs here:** an operation on the learner's workbook, or its words. **What it may import:**
:mod:`forgelab.site`, :mod:`forgelab.verdicts`, :mod:`forgelab.judge`, :mod:`forgelab.core` — never ``grading``,
``project``, ``authoring`` or ``cli`` (``pyproject.toml`` ``[tool.importlinter]``).
"""
