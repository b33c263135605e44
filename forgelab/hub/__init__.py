"""The class on a JupyterHub: the course service, its client, the hub's configuration, and the class commands.

* :mod:`forgelab.hub.models` — every wire message and stored record (Pydantic, strict, ``extra="forbid"``);
* :mod:`forgelab.hub.store` — the service's storage: SQLite rows plus content-addressed files, each written to a
  temporary file, flushed to disk and renamed into place before a row points at it (a crash mid-upload leaves no
  half-written submission and loses no earlier one);
* :mod:`forgelab.hub.service` — the course service, a JupyterHub-managed Tornado application that knows a caller
  only through the hub's OAuth tokens and scopes (``HubOAuth``); learners' servers share no filesystem with it;
* :mod:`forgelab.hub.client` — what a learner's server and an instructor's terminal use to talk to it (httpx);
* :mod:`forgelab.hub.classroom` — collect, grade (the existing grader) and publish, and the Canvas/Moodle exports;
* :mod:`forgelab.hub.hubconfig` — the JupyterHub configuration of ``make hub`` (spawner, roles, the service).

It sits above grading (``class grade`` runs the grader) and below the command line; ``core`` gives it grading's
submission limits. Only :mod:`forgelab.hub.service` and :mod:`forgelab.hub.hubconfig` import JupyterHub.
"""
