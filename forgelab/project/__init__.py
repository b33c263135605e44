"""Tooling for the chapter project: ``forgelab extract`` and ``forgelab regress``.

``driver``   runs inside a subprocess whose ``PYTHONPATH`` starts with the target's ``forge``;
             it is the only module here that imports ``forge``.
``launch``   starts the driver for a target and reads its one JSON answer.
``history``  the regression history: a versioned SQLite file under the workspace.
``regress``  runs the fixed cases for a prompt version, stores the run, compares with a baseline.
``recovery`` the recovery point: which earlier stages the project needs finished, and which are open.

**What it may import:** :mod:`forgelab.site`, :mod:`forgelab.verdicts`, :mod:`forgelab.judge`,
:mod:`forgelab.core` — never ``learner``, ``grading``, ``authoring`` or ``cli`` (``pyproject.toml``
``[tool.importlinter]``).
"""
