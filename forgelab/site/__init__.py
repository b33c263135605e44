"""The static course page (with the in-browser self-check) and the learner bundle.

* :mod:`forgelab.site.builder` renders ``build/site`` from the stage registry;
* :mod:`forgelab.site.release` packs the learner bundle, without the reference solutions;
* :mod:`forgelab.site.serve` serves a built site on 127.0.0.1.

Static files (CSS and the two JavaScript files) live in ``forgelab/site/assets/``.
"""
