"""verification.json: schema-valid, sealed, and tamper-evident."""

from __future__ import annotations

import copy

from forgelab.core.evidence import canonical_bytes, integrity_holds, seal


def test_seal_and_detect_a_hand_edit(workbook, verification_validator) -> None:
    workbook.run("check", "01")
    document = workbook.evidence("01-instruction-hierarchy")
    verification_validator(document)
    assert integrity_holds(document)
    forged = copy.deepcopy(document)
    forged["accepted"] = True
    assert not integrity_holds(forged)
    assert integrity_holds(seal(forged))


def test_canonical_form_is_key_order_independent_and_keeps_unicode() -> None:
    a = {"b": 1, "a": {"y": "ü", "x": [1, 2]}, "integrity": {"digest": "ignored"}}
    b = {"a": {"x": [1, 2], "y": "ü"}, "b": 1}
    assert canonical_bytes(a) == canonical_bytes(b) == '{"a":{"x":[1,2],"y":"ü"},"b":1}'.encode()


def test_documents_hold_no_floats(workbook) -> None:
    workbook.run("check", "01", "--target", "solution")
    document = workbook.evidence("01-instruction-hierarchy")

    def walk(value: object) -> None:
        assert not isinstance(value, float), value
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(document)
