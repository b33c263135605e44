"""The fault lab's seal (forgelab.core.seal): the module opens with the reference's answers and with nothing else."""

from __future__ import annotations

import json

import pytest

from forgelab.core import seal

MODULE = b'"""A broken module."""\n\ndef f() -> int:\n    return 41\n'
PROBES = b"def test_probe(forgelab_record): ...\n"
ANSWERS = {"test_a": json.dumps({"b": [1, 2], "a": "x"}), "test_b": "[true, null]"}


def _sealed() -> seal.SealedLab:
    return seal.seal("06", "failure_labs/06-x/forge/x.py", MODULE, "course/stages/06-x/seal.py", PROBES, ANSWERS, b"c\0en")


def test_the_reference_answers_open_it_in_any_key_order_and_spacing() -> None:
    sealed = seal.load(seal.dump(_sealed()), "sealed-lab.json")
    assert MODULE not in seal.dump(sealed) and b"return 41" not in seal.dump(sealed)
    reordered = {"test_b": "[true,null]", "test_a": '{"a":"x","b":[1,2]}'}
    assert seal.open_sealed(sealed, PROBES, reordered) == MODULE


def test_other_answers_a_missing_probe_or_a_damaged_file_do_not_open_it() -> None:
    sealed = _sealed()
    assert seal.open_sealed(sealed, PROBES, {**ANSWERS, "test_b": "[false, null]"}) is None
    assert seal.open_sealed(sealed, PROBES, {"test_a": ANSWERS["test_a"]}) is None
    moved = sealed.model_copy(update={"module": "failure_labs/07-y/forge/x.py"})  # bound to where it opens
    assert seal.open_sealed(moved, PROBES, ANSWERS) is None
    assert seal.open_sealed(sealed.model_copy(update={"ciphertext": "not base64!"}), PROBES, ANSWERS) is None
    with pytest.raises(seal.SealError, match="is not the file this lab was sealed with"):
        seal.open_sealed(sealed, PROBES + b"# edited\n", ANSWERS)
    with pytest.raises(seal.SealError, match="is not a sealed fault lab"):
        seal.load(b'{"format": 1}', "failure_labs/06-x/sealed-lab.json")


def test_the_same_release_gives_the_same_bytes_and_each_edition_its_own_key() -> None:
    assert seal.dump(_sealed()) == seal.dump(_sealed())
    zh = seal.seal("06", "failure_labs/06-x/forge/x.py", MODULE, "course/stages/06-x/seal.py", PROBES, ANSWERS, b"c\0zh")
    assert zh.salt != _sealed().salt and zh.ciphertext != _sealed().ciphertext
