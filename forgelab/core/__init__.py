"""The course's shared vocabulary: what every other package reads, and nothing that runs learner code.

==================  ===========================================================================
``i18n``            the tools' words in both editions (gettext catalogs)
``paths``           where the workbook lives and where tools may write (:class:`~forgelab.core.paths.Workbook`)
``registry``        the stage registry: ``course.toml`` and each stage's ``stage.toml``
``course_files``    the course's TOML files as Pydantic models: a misspelt key names file, table and key
``errors``          ``RegistryError``, apart from the models (loading it loads no Pydantic)
``opening``         the chapter's opening texts and concepts; which stage is the chapter project
``demo``            a stage's worked demonstration (``demo.py``, percent cells)
``figures``         a stage's figures as sources, captions and editions (reading only)
``targets``         which ``forge`` a run imports: learner, solution, ``fault:NN``, a path
``starters``        the pristine starters as shipped, and which functions are still stubs
``evidence``        ``verification.json``: build, seal, write, read back
``checkpoint``      checkpoint packs: the reference modules of stages 01..NN, as a zip
``submission``      a workbook someone else wrote (a submission, a path target), copied under limits
``files``           copying files someone else controls: never a link, always within limits
``text``            stage text as HTML (markdown-it-py, raw HTML off) and the one HTML escape; words counted alike
``display``         plain-text tables and messages for the terminal and the notebook
==================  ===========================================================================

**What belongs here:** a file format, a rule or a word that two or more packages above share and that needs no
judge run. **What it may import:** the standard library, Pydantic and other third-party libraries, and other
modules of ``core`` — nothing else of ``forgelab`` (the bottom layer of the dependency rule, ``pyproject.toml``
``[tool.importlinter]``).
"""
