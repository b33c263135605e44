"""Instructor commands for a class on JupyterHub: ``forgelab hub`` (start it) and ``forgelab class …``.

``class deadline``, ``class collect``, ``class grade`` (collect, ``forgelab grade``, publish), ``class publish`` and
``class export --canvas/--moodle`` talk to the course service with the instructor's hub token (in their own server on
the hub: ``JUPYTERHUB_API_TOKEN``; elsewhere: ``FORGELAB_COURSE_URL`` and ``FORGELAB_COURSE_TOKEN``, a token made at
``/hub/token``).
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import sys
from datetime import datetime
from pathlib import Path

from forgelab.core.display import fail
from forgelab.core.i18n import _, active
from forgelab.core.paths import Workbook


def cmd_deadline(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from pydantic import ValidationError

    from forgelab.hub.client import Client, Connection, ServiceError
    from forgelab.hub.models import Deadline

    try:
        wanted = [Deadline(stage=args.stage.zfill(2), due=datetime.fromisoformat(args.due))]
    except (ValueError, ValidationError) as error:
        return fail(_("{due} is not a deadline with a time zone ({error})").format(due=repr(args.due), error=type(
            error).__name__), _("write it as 2026-12-24T18:00+00:00 (ISO 8601, with the offset), and the stage as 03"))
    try:
        with Client(Connection.from_environment()) as client:
            deadlines = client.set_deadlines(wanted)
    except ServiceError as error:
        return fail(error.message, error.next_step or None)
    for deadline in deadlines:
        print(_("stage {stage}: due {due}").format(stage=deadline.stage, due=deadline.due.isoformat()))
    return 0


def cmd_collect(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.hub.classroom import ClassError, collect
    from forgelab.hub.client import Client, Connection, ServiceError

    into = Path(args.into).expanduser().resolve()
    try:
        with Client(Connection.from_environment()) as client:
            manifest = collect(client, args.stage, into)
    except (ServiceError, ClassError) as error:
        return fail(str(error), getattr(error, "next_step", None) or None)
    for sid, receipt in sorted(manifest.submissions.items()):
        print(_("{name}: submission {number} of {time} → {path}").format(
            name=receipt.learner, number=receipt.id, time=receipt.received_at.strftime("%Y-%m-%d %H:%M:%S UTC"),
            path=into / f"{sid}.zip"))
    if manifest.late_only:
        print(_("handed in only after the deadline (not collected): {names}").format(names=", ".join(manifest.late_only)))
    print(_("collected {count} submission(s) into {folder}").format(count=len(manifest.submissions), folder=into))
    print(_("next: `forgelab grade {folder}/*.zip --out OUT`, or `forgelab class grade` to grade and publish").format(
        folder=into))
    return 0


def cmd_class_grade(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.cli.grade import cmd_grade
    from forgelab.grading import SIMILARITY_PERCENT, SIMILARITY_TOKENS
    from forgelab.hub.classroom import ClassError, collect, publish
    from forgelab.hub.client import Client, Connection, ServiceError

    work = Path(args.into).expanduser().resolve()
    folder, out = work / "submissions", work / "grading"
    try:
        with Client(Connection.from_environment()) as client:
            manifest = collect(client, args.stage, folder)
            if not manifest.submissions:
                print(_("nothing to grade: no learner has handed in on time"))
                return 0
            print(_("collected {count} submission(s) into {folder}").format(count=len(manifest.submissions),
                                                                          folder=folder), flush=True)
            graded = argparse.Namespace(
                submissions=[str(folder / f"{sid}.zip") for sid in sorted(manifest.submissions)], out=str(out),
                jobs=args.jobs, stages=args.stages, shard=None, cpu_limit=10, wall_limit=90, time_budget=600,
                unsandboxed=args.unsandboxed, similarity_percent=SIMILARITY_PERCENT,
                similarity_tokens=SIMILARITY_TOKENS)  # grade's own defaults for what `class grade` does not ask
            status = cmd_grade(graded)
            if status != 0:
                return status
            published = publish(client, manifest, out)
    except (ServiceError, ClassError) as error:
        return fail(str(error), getattr(error, "next_step", None) or None)
    print(_("published {count} feedback page(s): each learner sees their own with `forgelab feedback`").format(
        count=len(published)))
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.hub.classroom import ClassError, publish, read_manifest
    from forgelab.hub.client import Client, Connection, ServiceError

    try:
        manifest = read_manifest(Path(args.collected).expanduser().resolve())
        with Client(Connection.from_environment()) as client:
            published = publish(client, manifest, Path(args.graded).expanduser().resolve())
    except (ServiceError, ClassError) as error:
        return fail(str(error), getattr(error, "next_step", None) or None)
    print(_("published {count} feedback page(s)").format(count=len(published)))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.hub.classroom import canvas_csv, moodle_csv
    from forgelab.hub.client import Client, Connection, ServiceError

    if not args.canvas and not args.moodle:
        return fail(_("say which layout to write"), _("give --canvas FILE, --moodle FILE or both"))
    try:
        with Client(Connection.from_environment()) as client:
            totals = client.totals().totals
    except ServiceError as error:
        return fail(error.message, error.next_step or None)
    for path, text in ((args.canvas, canvas_csv(totals, args.assignment)), (args.moodle, moodle_csv(totals, args.assignment))):
        if path:
            Path(path).expanduser().write_text(text, encoding="utf-8")
            print(_("wrote {path}: {count} learner(s)").format(path=path, count=len(totals)))
    return 0


def cmd_hub(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.hub.hubconfig import PLAN, HubPlan, config_text, opening_notebook

    workbook = Workbook.locate()
    state = Path(args.state).expanduser().resolve() if args.state else workbook.root / "build" / "hub"
    state.mkdir(parents=True, exist_ok=True)
    bundle = Path(args.bundle).expanduser().resolve() if args.bundle else state / (
        "forge-workbook-lab-zh.zip" if active() == "zh" else "forge-workbook-lab.zip")
    if not bundle.is_file():
        return fail(_("the learners' bundle {path} is missing").format(path=bundle),
                    _("build it with `forgelab release --out {folder}` (make hub does), or give --bundle").format(
                        folder=bundle.parent))
    proxy = args.proxy or shutil.which("configurable-http-proxy") or str(
        workbook.root / "node_modules" / ".bin" / "configurable-http-proxy")
    if Path(proxy).exists():
        proxy = str(Path(proxy).resolve())  # the hub runs in its own folder
    elif not shutil.which(proxy):
        return fail(_("configurable-http-proxy is not installed ({path})").format(path=proxy),
                    _("`make hub` installs it from npm (npm install configurable-http-proxy), or give --proxy"))
    jupyterhub = Path(sys.executable).parent / "jupyterhub"
    if not jupyterhub.exists():
        return fail(_("JupyterHub is not installed in this environment"),
                    _("`make hub` installs it (pip install 'forge-workbook[hub]')"))
    instructors = args.instructor or [name for name in os.environ.get("FORGELAB_INSTRUCTORS", "").split(",") if name]
    if not instructors:
        return fail(_("name at least one instructor"), _("give --instructor NAME (or FORGELAB_INSTRUCTORS=a,b)"))
    admin_token = ""
    if args.admin_token_file:
        admin_token = secrets.token_hex(24)
        Path(args.admin_token_file).write_text(admin_token, encoding="utf-8")
    plan = HubPlan(state=str(state), bundle=str(bundle), language=active(), port=args.port, hub_port=args.hub_port,
                   proxy_api_port=args.proxy_api_port, service_port=args.service_port, authenticator=args.auth,
                   instructors=instructors, proxy=str(proxy), python=sys.executable, admin_token=admin_token,
                   max_upload=args.max_upload,
                   course=str(workbook.root) if (workbook.root / "solutions").is_dir() else "")
    (state / PLAN).write_text(plan.model_dump_json(indent=2), encoding="utf-8")
    config = state / "jupyterhub_config.py"
    config.write_text(config_text(state / PLAN), encoding="utf-8")
    url = f"http://127.0.0.1:{args.port}/"
    print(_("The class's hub: {url}").format(url=url))
    if args.auth == "native":
        print(_("Accounts: each learner signs up at {url}hub/signup; an instructor approves them at {url}hub/authorize. "
                "Instructors ({names}) sign up the same way first and are admins of the hub.").format(
            url=url, names=", ".join(instructors)))
    else:
        print(_("Accounts: test sign-in (DummyAuthenticator): any name is accepted. Instructors: {names}").format(
            names=", ".join(instructors)))
    print(_("Each learner gets their own workbook on first sign-in, opening on {notebook}; `forgelab submit` in their "
            "terminal hands it in. Instructors grade from the course repository: a token from {url}hub/token in "
            "FORGELAB_COURSE_TOKEN, FORGELAB_COURSE_URL={url}services/forge-course/, then `forgelab class grade`.").format(
        url=url, notebook=opening_notebook(plan)), flush=True)
    os.chdir(state)
    os.execv(str(jupyterhub), [str(jupyterhub), "-f", str(config)])


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    hub = sub.add_parser("hub", help=_("run the class on JupyterHub on this machine (make hub)"),
                         description=_("Start JupyterHub on 127.0.0.1 with the course service: each learner gets their "
                                       "own workbook from the released bundle on first sign-in."))
    hub.add_argument("--state", help=_("the hub's folder (default: build/hub)"))
    hub.add_argument("--bundle", help=_("the released bundle (default: build/hub/forge-workbook-lab.zip)"))
    hub.add_argument("--port", type=int, default=8000, help=_("the public port (default 8000)"))
    hub.add_argument("--hub-port", type=int, default=8081)
    hub.add_argument("--proxy-api-port", type=int, default=8001)
    hub.add_argument("--service-port", type=int, default=10101)
    hub.add_argument("--auth", choices=("native", "dummy"), default="native",
                     help=_("native: real accounts with sign-up approval (default); dummy: tests only"))
    hub.add_argument("--instructor", action="append", help=_("an instructor's hub name (repeat for more)"))
    hub.add_argument("--proxy", help=_("the configurable-http-proxy command"))
    hub.add_argument("--admin-token-file", help=argparse.SUPPRESS)  # tests: a token that may create users and tokens
    hub.add_argument("--max-upload", type=int, default=0, help=argparse.SUPPRESS)  # tests: a small upload cap
    hub.set_defaults(handler=cmd_hub)

    group = sub.add_parser("class", help=_("the class on the hub: deadlines, collect, grade and publish, export grades"))
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    deadline = actions.add_parser("deadline", help=_("set a stage's deadline"))
    deadline.add_argument("stage", metavar="NN")
    deadline.add_argument("due", metavar="TIME", help=_("ISO 8601 with a time zone, e.g. 2026-12-24T18:00+00:00"))
    deadline.set_defaults(handler=cmd_deadline)
    collect = actions.add_parser("collect", help=_("download every learner's latest on-time submission"))
    collect.add_argument("--stage", default="all", help=_("whose deadline counts: NN or all (default: the last one)"))
    collect.add_argument("--into", default="build/class/submissions", help=_("folder for the zips"))
    collect.set_defaults(handler=cmd_collect)
    grade = actions.add_parser("grade", help=_("collect, grade with `forgelab grade`, and publish the feedback pages"))
    grade.add_argument("--stage", default="all", help=_("whose deadline counts: NN or all (default: the last one)"))
    grade.add_argument("--stages", help=_("stages to grade: 01-07, 01,03 or 02 (default: all)"))
    grade.add_argument("--into", default="build/class", help=_("folder for submissions/ and grading/"))
    grade.add_argument("--jobs", type=int, default=1)
    grade.add_argument("--unsandboxed", action="store_true",
                       help=_("grade even where bubblewrap cannot start (NOT safe for hostile code)"))
    grade.set_defaults(handler=cmd_class_grade)
    publish = actions.add_parser("publish", help=_("publish the feedback pages of a grading run"))
    publish.add_argument("collected", metavar="COLLECTED", help=_("the folder `class collect` wrote"))
    publish.add_argument("graded", metavar="GRADED", help=_("the --out folder of `forgelab grade`"))
    publish.set_defaults(handler=cmd_publish)
    export = actions.add_parser("export", help=_("write the published totals as Canvas and Moodle grade-import CSVs"))
    export.add_argument("--canvas", metavar="FILE")
    export.add_argument("--moodle", metavar="FILE")
    export.add_argument("--assignment", default="Forge Workbook", help=_("the grade column's name"))
    export.set_defaults(handler=cmd_export)
