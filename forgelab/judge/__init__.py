"""The judge: the one execution core for everything that runs learner code.

``check``, ``status``, ``fault check``, ``verify-course``, the notebooks and ``grade`` all run
learner code through :func:`forgelab.judge.core.run`. The layers, bottom up:

==================  ===========================================================================
``settings``        the limits and the sandbox mode, one object passed down explicitly
``outcomes``        typed results: ``Outcome``, ``Limit``, ``ImportProblem``, ``TestRow``, ``RunReport``
``wire``            how values cross the boundary as data (shared with the sandbox)
``host``            the server inside the sandbox that runs the learner's functions
``sandbox``         bubblewrap (or a plain child process where it cannot start)
``channel``         the judge's side of one host: calls, callbacks, CPU/wall/output watch
``remote``          the course's ``forge`` interface on the trusted side
``interface``       builds that interface from the pristine starters
``session_plugin``  the pytest plugin of the trusted session; ``explain``: first differences
``core``            jobs: targets, course tests, learner tests → one report
==================  ===========================================================================
"""
