"""``forgelab site build|serve`` and ``forgelab release``: the course page and the learner bundle."""

from __future__ import annotations

import argparse
from pathlib import Path
from forgelab.core.paths import Workbook
from forgelab.core.display import fail
from forgelab.core.i18n import N_, _, ngettext
from forgelab.core.registry import load_course

DEFAULT_SITE = Path("build") / "site"
DEFAULT_PORT = 8000


def _shown(path: Path) -> str:
    """A path as typed by the user: relative to the current folder when it is below it."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix() or "."
    except ValueError:
        return path.as_posix()


def _site_dir(given: str | None) -> Path:
    if given:
        return Path(given).expanduser().resolve()

    return Workbook.locate().root / DEFAULT_SITE


EDITION_NAMES = {"en": N_("English"), "zh": N_("Chinese (zh)")}  # said with _() where shown


def cmd_site_build(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring.publish import publish_site
    from forgelab.authoring.release.source import ReleaseError
    from forgelab.site.builder import SiteError

    workbook = Workbook.locate()
    course = load_course(workbook.root)
    out = _site_dir(args.out)
    editions = tuple(getattr(args, "editions", None) or ("en",))
    try:
        published = publish_site(course, out, editions=editions)
    except (SiteError, ReleaseError) as error:
        return fail(str(error), _("fix that, then run `forgelab site build` again"))
    except OSError as error:
        return fail(_("cannot write the site into {path} ({error})").format(path=_shown(out),
                                                                         error=error.strerror or error),
                    _("choose a writable folder with --out"))
    built = published.site
    for edition in built.editions:
        folder = out / edition.folder
        stages = len(edition.pages) - 1
        name = _(EDITION_NAMES.get(edition.language, edition.language))
        print(ngettext("site built ({name} edition): {folder} (index and {count} stage page)",
                       "site built ({name} edition): {folder} (index and {count} stage pages)", stages).format(
            name=name, folder=_shown(folder), count=stages))
        bundle = published.bundles.get(edition.language)
        if bundle:
            print(_("  lab bundle: {path} ({files} files, {size} KB, no reference solutions)").format(
                path=_shown(bundle.path), files=len(bundle.files), size=round(bundle.size / 1024)))
    if len(built.editions) > 1:
        print(_("every page has a language switch to the same page in the other edition (and hreflang links)"))
    print(_("open it:    {url}").format(url=(out / "index.html").as_uri()))
    print(_("or serve:   {command}").format(command=f"forgelab site serve --dir {_shown(out)}"))
    return 0


def cmd_site_serve(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.site.serve import make_server, url_of

    directory = _site_dir(args.dir)
    if not (directory / "index.html").is_file():
        return fail(_("no site in {path} (no index.html)").format(path=_shown(directory)),
                    _("run `forgelab site build` first"))
    try:
        server = make_server(directory, args.port)
    except OSError as error:
        return fail(_("cannot listen on 127.0.0.1:{port} ({error})").format(port=args.port,
                                                                          error=error.strerror or error),
                    _("choose another port with --port N (0 picks a free one)"))
    print(_("serving {path} at {url}").format(path=_shown(directory), url=url_of(server)), flush=True)
    others = sorted(path.parent.name for path in directory.glob("*/index.html") if (path.parent / "assets").is_dir())
    for language in others:  # a `--lang all` build: the other editions live in their folders
        print(_("  {name} edition: {url}").format(name=_(EDITION_NAMES.get(language, language)),
                                                 url=f"{url_of(server).removesuffix('index.html')}{language}/index.html"),
              flush=True)
    print(_("only this computer can reach it; press Ctrl-C to stop"), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\n" + _("stopped"))
    finally:
        server.server_close()
    return 0


def cmd_checkpoint(args: argparse.Namespace) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring.release.source import ReleaseError
    from forgelab.authoring.release.bundle import build_checkpoint

    workbook = Workbook.locate()
    out = Path(args.out).expanduser().resolve()
    if not workbook.has_solutions:
        return fail(_("checkpoint packs are made from the reference solutions, which this workbook does not have"),
                    _("run `forgelab release --checkpoint NN` in the instructor's course repository"))
    try:
        pack = build_checkpoint(workbook.root, out, args.checkpoint)
    except ReleaseError as error:
        return fail(str(error), _("fix that, then run `forgelab release --checkpoint` again"))
    except OSError as error:
        return fail(_("cannot write the checkpoint pack into {path} ({error})").format(path=_shown(out),
                                                                                    error=error.strerror or error),
                    _("choose a writable folder with --out"))
    print(_("checkpoint pack: {path} ({count} reference modules, {size} KB)").format(
        path=_shown(pack.path), count=len(pack.modules), size=round(pack.size / 1024)))
    print(_("built from: commit {commit} (git HEAD) — the committed reference modules, not the files on disk").format(
        commit=pack.commit[:12]))
    print(_("holds: {modules} and manifest.json — no tests, no transfer tests, no answers").format(
        modules=_(", ").join(pack.modules)))
    if pack.left_out:
        print(_("not in the pack (working-tree changes, not committed): {files}").format(
            files=_(", ").join(pack.left_out[:6])))
    print(_("release it once the deadline of stage {stage} has passed: in the bundle, a learner runs "
            "`forgelab restore NN --from {pack}` to lay in the modules of the stages before NN (any NN up to {last}), "
            "after a backup").format(stage=pack.checkpoint, pack=pack.path.name, last=f"{int(pack.checkpoint) + 1:02d}"))
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    if args.checkpoint:
        return cmd_checkpoint(args)
    workbook = Workbook.locate()
    out = Path(args.out).expanduser().resolve()
    for language in getattr(args, "editions", ("en",)):
        status = _release_one(workbook.root, out, language)
        if status:
            return status
    return 0


def _release_one(root: Path, out: Path, language: str) -> int:
    # lazy: start-up speed — `forgelab --help` loads no handler's tools (see forgelab.cli)
    from forgelab.authoring.release.bundle import BUNDLE_NAME, build_bundle
    from forgelab.authoring.release.source import ReleaseError

    try:
        bundle = build_bundle(root, out, language)
    except ReleaseError as error:
        if "would reveal a reference solution" in str(error):
            return fail(str(error), _("take the reference code out of the named files (a starter function's body goes "
                                      "back to `raise NotImplementedError(...)`), commit, and run `forgelab release` "
                                      "again — release reads the committed files (git HEAD), not the folder"))
        return fail(str(error), _("fix that, then run `forgelab release` again"))
    except OSError as error:
        return fail(_("cannot write the bundle into {path} ({error})").format(path=_shown(out),
                                                                           error=error.strerror or error),
                    _("choose a writable folder with --out"))
    edition = _(EDITION_NAMES.get(language, language))
    print(_("lab bundle ({edition} edition): {path} ({files} files, {size} KB)").format(
        edition=edition, path=_shown(bundle.path), files=len(bundle.files), size=round(bundle.size / 1024)))
    print(_("built from: commit {commit} (git HEAD) — the committed course, not the files on disk").format(
        commit=bundle.commit[:12]))
    print(_("notebooks with outputs cleared: {count}").format(count=len(bundle.cleared_notebooks)))
    print(_("pristine starters: {count} files under course/starters/ (for `forgelab starter NN`)").format(
        count=len(bundle.starters)))
    if language != "en":
        print(_("starters and transfer starters carry the {language} docstrings; course/edition.toml makes the tools "
                "and `make lab` speak {language}").format(language=edition))
    print(_("checked against solutions/: no file of solutions/, no reference function body, no reference transfer "
            "test, no reference answer inside"))
    if bundle.left_out:
        shown = _(", ").join(bundle.left_out[:8])
        if len(bundle.left_out) > 8:
            shown += _(" and {count} more").format(count=len(bundle.left_out) - 8)
        print(_("not in the bundle (working-tree changes, not committed): {files}").format(files=shown))
        print(_("  commit them and release again if they belong in the bundle"))
    print(_("a learner unzips it, runs `make lab` in {folder}/ (see its README), then `forgelab check 01`").format(
        folder=BUNDLE_NAME))
    return 0


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    site = sub.add_parser("site", help=_("build or serve the static course page with the in-browser self-check"))
    site_sub = site.add_subparsers(dest="site_command", metavar="SITE_COMMAND", required=True)

    build = site_sub.add_parser("build", help=_("render the course page (and the lab bundle it links to)"),
                                epilog=_("--lang en|zh|all chooses the edition(s): en (default) or zh builds that edition "
                                         "at the root of --out, with its own bundle (zh: forge-workbook-lab-zh.zip); all "
                                         "puts English at the root and Chinese under zh/, each page linking to the same "
                                         "page in the other edition."))
    build.add_argument("--out", help=_("output folder (default: {folder} in the workbook)").format(folder=DEFAULT_SITE))
    build.set_defaults(handler=cmd_site_build)

    serve = site_sub.add_parser("serve", help=_("serve a built course page on 127.0.0.1 and print its URL"))
    serve.add_argument("--dir", help=_("the built site (default: {folder} in the workbook)").format(folder=DEFAULT_SITE))
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help=_("port (default {port}; 0 picks a free one)").format(port=DEFAULT_PORT))
    serve.set_defaults(handler=cmd_site_serve)

    release = sub.add_parser("release", help=_("build the learner bundle from the committed course (git HEAD), "
                                                  "without the reference solutions"),
                             epilog=_("--lang en|zh|all chooses the edition(s): en (default) writes forge-workbook-lab.zip, "
                                      "zh forge-workbook-lab-zh.zip (Chinese docstrings and notebooks, tools in Chinese), "
                                      "all both."))
    release.add_argument("--out", required=True, help=_("folder that receives forge-workbook-lab.zip "
                                                        "(or, with --checkpoint NN, forge-workbook-checkpoint-NN.zip)"))
    release.add_argument("--checkpoint", metavar="NN", help=_("instead of the bundle, write a checkpoint pack: the "
                                                              "reference modules of stages 01..NN, for `forgelab restore "
                                                              "--from` after a deadline"))
    release.set_defaults(handler=cmd_release)
