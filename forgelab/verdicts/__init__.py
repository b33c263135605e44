"""The course's use of the judge: jobs made from the course, and the verdict on each part of a stage.

==================  ===========================================================================
``jobs``            from the course's words to the judge's: targets, starters, stage modules as a job
``parts``           the verdict on a stage's parts from the judge's rows: transfer, design answer, fault lab
``diagnosis``       the fault lab's diagnosis: its answer key, the learner's record, judged with the key
``variants``        the fault-lab variant of a stage: the reference module with the declared defect
``mutants``         known-wrong variants of a reference module (``mutants.toml``) as judge targets
==================  ===========================================================================

``forgelab check`` and ``status`` (:mod:`forgelab.learner`), ``verify-course`` and ``build``
(:mod:`forgelab.authoring`) and ``grade`` (:mod:`forgelab.grading`) all judge a stage's parts here, so they say
the same about the same files. **What belongs here:** a rule about what a judge run means for the course, used
by more than one of those. **What it may import:** :mod:`forgelab.judge` and :mod:`forgelab.core` — never
``site``, ``learner``, ``grading``, ``project``, ``authoring`` or ``cli``.
"""
