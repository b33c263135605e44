"""The no-halt cell wrapper: exceptions become one readable output, the last expression is still shown."""

from __future__ import annotations

import ast

from forgelab.learner.notebook_cells import (GUARD, HANDLER, LIMIT, MARKER, REFUSE, SHOW, CellTimeLimit, Guard,
    NoHaltTransformer, explain, refuse)


def _run(source: str) -> tuple[list[str], list[object]]:
    printed: list[str] = []
    shown: list[object] = []
    failed: list[str] = []

    def handle(error: BaseException) -> None:
        text = explain(error, failed)
        failed.append(text)
        printed.append(text)

    tree = NoHaltTransformer().visit(ast.parse(source))
    namespace: dict[str, object] = {HANDLER: handle, SHOW: shown.append, GUARD: Guard(), LIMIT: CellTimeLimit}
    namespace[REFUSE] = lambda names, modules: refuse(namespace, names, modules)  # as install() puts it
    exec(compile(tree, "<cell>", "exec"), namespace)
    return printed, shown


def test_not_implemented_is_one_line_and_the_cell_ends_normally() -> None:
    printed, _ = _run("raise NotImplementedError('explain() is not implemented yet — see hint 1 (forgelab hint 01)')")
    assert printed == [f"{MARKER}: explain() is not implemented yet — see hint 1 (forgelab hint 01)"]


def test_a_name_from_an_unfinished_cell_says_which_cell_stopped() -> None:
    failed = ["explain() is not implemented yet"]
    text = explain(NameError("name 'winners' is not defined", name="winners"), failed)
    assert "skipped — it needs winners" in text and "explain() is not implemented yet" in text


def test_the_last_expression_is_shown_and_none_is_not() -> None:
    _, shown = _run("x = 2\nx * 21")
    assert shown == [42]
    _, shown = _run("print('hi')")
    assert shown == [None]  # the wrapper passes it on; the notebook's display skips None


def test_any_other_error_names_its_type_and_message() -> None:
    printed, _ = _run("{}['missing']")
    assert printed == [f"{MARKER}: KeyError: 'missing'"]
