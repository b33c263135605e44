"""Plain-text views of an extraction (spec + audit trail) for the terminal and the notebook (finished
infrastructure: you use it, you do not need to change it).

Both functions take the JSON form the driver produces (``spec.model_dump(mode="json")`` and
``audit.to_dict()``), so the CLI and the notebook show exactly the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

LABEL = 15  # width of the label column


def _rows(label: str, lines: Sequence[str]) -> list[str]:
    lines = list(lines) or ["-"]
    pad = " " * (LABEL + 2)
    return [f"  {label:<{LABEL}}{lines[0]}"] + [pad + line for line in lines[1:]]


def _join(items: Sequence[str], empty: str = "none") -> str:
    return ", ".join(items) if items else empty


def format_spec(spec: Mapping[str, Any], audit: Mapping[str, Any] | None = None) -> str:
    head = "task spec"
    if audit:
        head += f" · {audit['scenario']} · prompt {audit['prompt_version']} · model {audit['model']}"
    out = [head]
    out += _rows("goal", [str(spec["goal"])])
    out += _rows("inputs", [_join(spec.get("inputs", []))])
    out += _rows("outputs", ["; ".join(spec.get("outputs", [])) or "none"])
    out += _rows("acceptance", [f"{i}. {item}" for i, item in enumerate(spec["acceptance"], 1)])
    out += _rows("write_allowed", ["true" if spec["write_allowed"] else "false"])
    return "\n".join(out)


def format_audit(audit: Mapping[str, Any]) -> str:
    out = ["audit trail"]
    accepted = [f"{item['key']}={item['value']!r} ({item['source']})" if item["key"] == "write"
                else f"{item['key']} ({item['source']})" for item in audit["accepted"]]
    rejected = [f"{item['source']} {item['key']}={item['value']!r} — {item['reason']}, won by {item['winner']}"
                for item in audit["rejected"]]
    out += _rows("instructions", [f"accepted: {_join(accepted)}"] + [f"rejected: {line}" for line in rejected])
    out += _rows("context", [f"chosen: {_join(audit['context_chosen'])} "
                             f"({audit['context_tokens']}/{audit['context_budget']} tokens)"]
                 + ([f"dropped: {_join(audit['context_dropped'])} (over budget)"] if audit["context_dropped"] else []))
    out += _rows("examples", [f"{_join(audit['examples'])} (schema {audit['schema_version']}, {audit['mode']} mode)"])
    documents = [f"{doc['source']}: " + (f"FLAGGED {', '.join(doc['flags'])} — kept as data, not obeyed"
                                         if doc["flags"] else "no flags") for doc in audit["injection"]]
    out += _rows("retrieved", documents)
    out += _rows("repairs", [_join(audit["repairs"])])
    out += _rows("tokens", [f"prompt {audit['prompt_tokens']} · output {audit['output_tokens']} (estimates)"])
    return "\n".join(out)


def format_extraction(document: Mapping[str, Any]) -> str:
    """The spec (when there is one) and the audit trail of a driver answer."""
    parts = []
    if document.get("spec") is not None:
        parts.append(format_spec(document["spec"], document.get("audit")))
    if document.get("audit") is not None:
        parts.append(format_audit(document["audit"]))
    return "\n\n".join(parts)
