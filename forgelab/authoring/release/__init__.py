"""``forgelab release``: the learner bundle and the checkpoint packs, built from the committed course.

==================  ===========================================================================
``source``          reading the committed course from git ``HEAD``: which files a release reads and ships
``contents``        what the bundle holds: notebooks cleared, starters copied, README and page added
``localize``        another edition's docstrings in a Python source, nothing else changed
``leaks``           the leak check: nothing of ``solutions/`` may reach the bundle
``bundle``          writing the zip (deterministic), and checkpoint packs
==================  ===========================================================================

Bottom up: ``source`` ← ``localize``, ``leaks``, ``contents`` ← ``bundle``.
"""
