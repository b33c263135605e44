"""forgelab — course tooling for Forge Workbook.

Sub-packages named for their purpose, in layers. A higher row may import a lower one, never the reverse;
packages in one row know nothing of each other (``pyproject.toml`` ``[tool.importlinter]``, run by
``make test``; each package's docstring says what belongs in it)::

    cli/                          argument parsing and printing only
    authoring/                    build, figures, editions, catalogs, verify-course, nbval, scaffold,
                                  publish, release/ (source, contents, localize, leaks, bundle)
    learner/ | grading/ | project/
                                  the learner's tools (check, status, fault lab, hints, answers, backups,
                                  restore, starter, notebook tools) | grading submissions | the chapter project
    site/ | verdicts/             the static page and its self-check | the course's use of the judge: jobs,
                                  the verdict on each part of a stage, diagnosis, variants, mutants
    judge/                        sandboxed execution of learner code; knows no course content
    core/                         registry, paths, targets, starters, evidence, checkpoint, submission,
                                  figures (reading), text, display, i18n

``forgelab/locale`` and ``forgelab/data`` are data, not code.
"""

__version__ = "0.1.0"
