"""The static course page, with the in-browser self-check.

* :mod:`forgelab.site.pages` renders the index and each stage's page in one edition, from the Jinja2 templates in
  ``forgelab/data/templates/site/``;
* :mod:`forgelab.site.builder` renders a whole site (``build/site``, or ``page/`` in the learner bundle) from the
  stage registry — the learner bundle it links to is put there by :mod:`forgelab.authoring.publish`;
* :mod:`forgelab.site.local` is the page inside the learner's workbook (``forgelab page``);
* :mod:`forgelab.site.serve` serves a built site on 127.0.0.1.

Static files (CSS and the two JavaScript files) live in ``forgelab/site/assets/``.

**What belongs here:** what the page shows and how it is written. **What it may import:** :mod:`forgelab.core`
only — the page knows the registry, the evidence and the figures, never the judge, the learner's tools or the
release (``pyproject.toml`` ``[tool.importlinter]``).
"""
