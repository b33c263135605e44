"""The command line, ``forgelab``: argument parsing and printing only.

:mod:`forgelab.cli.launch` is the command's entry point (a one-stage ``check`` starts its trusted session there,
before the rest loads); :mod:`forgelab.cli.main` builds the parser and dispatches; each other module here registers
one group of sub-commands (``register(subparsers)``) and holds their handlers, which call the packages below — the learner's
operations (:mod:`forgelab.learner`), the course author's (:mod:`forgelab.authoring`), grading
(:mod:`forgelab.grading`), the chapter project (:mod:`forgelab.project`) — and print what they return.
:mod:`forgelab.cli.context` is what every handler shares (the workbook, the judge's flags).

Nothing imports ``forgelab.cli``. Handlers import what they need inside the function: ``forgelab --help`` and
``forgelab check`` then load only their own tools (start-up speed; the only function-local imports the
dependency rule allows, each marked ``# lazy:``). A handler does the work through one call below and prints;
behaviour that the notebooks share lives in :mod:`forgelab.learner.workbench`, never here.
"""
