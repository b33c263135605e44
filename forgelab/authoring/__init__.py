"""The course author's and instructor's tools: everything made from the stage registry, and proved about it.

==================  ===========================================================================
``build``           ``forgelab build [--check]``: notebooks, fault contracts, variants, diagnosis keys
``figures``         making the stages' figures (Mermaid in Chromium, plot scripts), checking they are current
``editions``        both editions complete: every text, cell and notebook in one exists in the other
``catalogs``        the tools' gettext catalogs: extract, check, compile (``forgelab i18n``)
``verify``          ``forgelab verify-course``: every stage's contract holds
``sourcefacts``     the curriculum's facts in the code, compared per stage
``nbval``           ``forgelab nbval``: the notebooks against a target
``scaffold``        ``forgelab new-stage``: every file a new stage needs
``publish``         ``forgelab site build``: the course page with each edition's bundle to download
``release/``        ``forgelab release``: the learner bundle (``source``, ``contents``, ``leaks``, ``bundle``,
                    ``localize``) and checkpoint packs
==================  ===========================================================================

**What belongs here:** a tool that makes or proves the course's own artefacts. **What it may import:** every
package but ``cli`` — the learner's notebook tools too (the build writes notebooks that call them).
"""
