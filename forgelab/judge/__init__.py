"""The judge: the one execution core for everything that runs learner code.

``check``, ``status``, ``fault check``, ``verify-course``, the notebooks and ``grade`` all run
learner code through :func:`forgelab.judge.core.run`. The layers, bottom up:

==================  ===========================================================================
``settings``        the limits and the sandbox mode, one object passed down explicitly
``outcomes``        typed results: ``Outcome``, ``Limit``, ``ImportProblem``, ``TestRow``, ``RunReport``
``wire``            how values cross the boundary as data (shared with the sandbox)
``host``            the server inside the sandbox that runs the learner's functions
``sandbox``         bubblewrap (or a plain child process where it cannot start)
``watchdog``        the one watch over a process tree it waits on: output, wall clock, CPU
``channel``         the judge's side of one host: calls, callbacks, its limits (through the watchdog)
``remote``          the course's ``forge`` interface on the trusted side
``interface``       builds that interface from the pristine starters
``events``          what a learner's test run reports, read as strict models (claims, not facts)
``session_plugin``  the pytest plugin of the trusted session; ``explain``: first differences
``core``            jobs: targets, course tests, learner tests → one report
``warm``            watch mode's warm worker: the trusted session kept imported, a fresh fork per run
==================  ===========================================================================

**The judge knows no course content.** A job names folders, test files and labels; what they mean for a stage
— which target, which starters, which tests — is decided above it (:mod:`forgelab.verdicts.jobs`). So the judge
imports nothing of ``forgelab`` but its own modules and the tools' words (:mod:`forgelab.core.i18n`): not the
registry, not the workbook's paths, not targets or starters (``pyproject.toml`` ``[tool.importlinter]``, contract
``judge-knows-no-course``). **What belongs here:** running code someone else wrote, and typing what happened.
"""
