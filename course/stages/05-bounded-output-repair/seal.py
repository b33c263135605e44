"""Stage 05's seal probes: inputs the stage tests do not use, whose answers the contract fixes exactly.

The fault lab opens with a key made from these answers (forgelab.core.seal): the objects parsed from repairable
outputs, the repairs each one needed, and which outputs are refused (not how the refusal is worded).
"""

from __future__ import annotations

from collections.abc import Callable

from forge.output_repair import parse_json_object, repair_json_text

REPAIRABLE = ['\n\n~~~json\n{"tasks": ["a,", "b"], "done": false,}\n~~~\n',
              '```\n{"nested": {"list": [1, 2, 3,], "s": "x,]"},\n "n": null}\n```',
              '  {"plain": "no repair", "count": 12}  ',
              '```json\n{"open": "fence never closed", "k": [true,\n]}']
REFUSED = ['Here is the JSON: {"a": 1}', '{"a": 1} hope that helps', '```python\n{"a": 1}\n```', '[1, 2, 3]',
           '{"a": 1, "a": 2}', '{"ratio": NaN}', '~~~\n~~~', '{"a": [1, 2}', '```json {"a": 1}\n```']


def test_parsed(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([parse_json_object(text) for text in REPAIRABLE])


def test_repairs_applied(forgelab_record: Callable[[object], None]) -> None:
    forgelab_record([list(repair_json_text(text).applied) for text in REPAIRABLE])


def test_refused(forgelab_record: Callable[[object], None]) -> None:
    refused = []
    for text in REFUSED:
        try:
            parse_json_object(text)
        except ValueError:
            refused.append(True)
        else:
            refused.append(False)
    forgelab_record(refused)
