"""Views of an extraction (spec + audit trail) for the terminal and the notebook (finished infrastructure: you use
it, you do not need to change it).

All functions take the JSON form the driver produces (``spec.model_dump(mode="json")`` and
``audit.to_dict()``), so the CLI and the notebook show exactly the same thing. ``language`` chooses
the words around the data: ``"en"`` (the default) or ``"zh"`` (Simplified Chinese, for the Chinese
edition). Only the labels and the sentences change; the data itself (goals, keys, sources, reason
codes, identifiers) is printed as it is in both.

``extraction_tables`` gives the report as tables of labels and lines; ``format_extraction`` prints the same
tables as text, its label column padded for a terminal (where a Chinese character takes two cells). A notebook
shows the tables as HTML tables instead, so their columns line up whatever width its font gives a Chinese
character.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any, Literal

Language = Literal["en", "zh"]

LABEL = 15  # width of the label column, in terminal cells (a Chinese character takes two)

WORDS: dict[Language, dict[str, str]] = {
    "en": {
        "spec": "task spec", "prompt": "prompt", "model": "model",
        "goal": "goal", "inputs": "inputs", "outputs": "outputs", "acceptance": "acceptance",
        "audit": "audit trail", "instructions": "instructions", "context": "context", "examples": "examples",
        "retrieved": "retrieved", "repairs": "repairs", "tokens": "tokens",
        "none": "none", "no_flags": "no flags",
        "accepted": "accepted: {items}", "rejected": "rejected: {source} {item} — {reason}, won by {winner}",
        "chosen": "chosen: {items} ({used}/{budget} tokens)", "dropped": "dropped: {items} (over budget)",
        "schema": "{items} (schema {version}, {mode} mode)",
        "flagged": "FLAGGED {flags} — kept as data, not obeyed",
        "token_counts": "prompt {prompt} · output {output} (estimates)",
        "list": ", ", "outputs_list": "; ", "label_colon": ": ", "paren": " ({text})",
        "standard": "standard", "recovery": "recovery",
    },
    "zh": {
        "spec": "任务规格", "prompt": "Prompt", "model": "模型",
        "goal": "目标", "inputs": "输入", "outputs": "输出", "acceptance": "验收标准",
        "audit": "审计记录", "instructions": "指令", "context": "上下文", "examples": "示例",
        "retrieved": "检索文档", "repairs": "修复", "tokens": "Token",
        "none": "无", "no_flags": "无标记",
        "accepted": "接受：{items}", "rejected": "拒绝：{source} 的 {item}（{reason}，{winner} 胜出）",
        "chosen": "选中：{items}（{used}/{budget} Token）", "dropped": "舍弃：{items}（超出预算）",
        "schema": "{items}（Schema {version}，{mode}模式）",
        "flagged": "已标记 {flags}——作为数据保留，不予执行",
        "token_counts": "Prompt {prompt} · 输出 {output}（估算值）",
        "list": "、", "outputs_list": "；", "label_colon": "：", "paren": "（{text}）",
        "standard": "标准", "recovery": "恢复",
    },
}


def _width(text: str) -> int:
    """Terminal cells ``text`` takes: two for a wide (Chinese) character, one for any other."""
    return sum(2 if unicodedata.east_asian_width(char) in ("W", "F") else 1 for char in text)


Row = tuple[str, str]  # a label (empty where a value goes on) and one line of its value
Table = tuple[str, list[Row]]  # a title and its rows


def _rows(label: str, lines: Sequence[str]) -> list[Row]:
    lines = list(lines) or ["-"]
    return [(label, lines[0])] + [("", line) for line in lines[1:]]


def _text(table: Table) -> str:
    title, rows = table
    return "\n".join([title] + [f"  {label}{' ' * max(1, LABEL - _width(label))}{line}" for label, line in rows])


def _join(items: Sequence[str], words: Mapping[str, str]) -> str:
    return words["list"].join(items) if items else words["none"]


def spec_table(spec: Mapping[str, Any], audit: Mapping[str, Any] | None = None, language: Language = "en") -> Table:
    """The task spec as a title and one labelled row per field; with ``audit``, the title names scenario, prompt
    version and model.

    ``language`` is ``"en"`` or ``"zh"``: the words of the labels; the spec's values are printed as they are.
    """
    words = WORDS[language]
    head = words["spec"]
    if audit:
        head += f" · {audit['scenario']} · {words['prompt']} {audit['prompt_version']} · {words['model']} {audit['model']}"
    out = _rows(words["goal"], [str(spec["goal"])])
    out += _rows(words["inputs"], [_join(spec.get("inputs", []), words)])
    out += _rows(words["outputs"], [words["outputs_list"].join(spec.get("outputs", [])) or words["none"]])
    out += _rows(words["acceptance"], [f"{i}. {item}" for i, item in enumerate(spec["acceptance"], 1)])
    out += _rows("write_allowed", ["true" if spec["write_allowed"] else "false"])  # a JSON field: never translated
    return head, out


def format_spec(spec: Mapping[str, Any], audit: Mapping[str, Any] | None = None, language: Language = "en") -> str:
    """:func:`spec_table` as terminal text: the title, then each label padded to one column, values after it."""
    return _text(spec_table(spec, audit, language))


def audit_table(audit: Mapping[str, Any], language: Language = "en") -> Table:
    """The audit trail: instructions accepted and rejected, context chosen and dropped, examples, flags, repairs, tokens.

    ``language`` is ``"en"`` or ``"zh"``: the words around the record; keys, sources and reason codes stay as they are.
    """
    words = WORDS[language]

    def paren(text: str) -> str:
        return words["paren"].format(text=text)

    out: list[Row] = []
    accepted = [f"{item['key']}={item['value']!r}{paren(item['source'])}" if item["key"] == "write"
                else f"{item['key']}{paren(item['source'])}" for item in audit["accepted"]]
    rejected = [words["rejected"].format(source=item["source"], item=f"{item['key']}={item['value']!r}",
                                         reason=item["reason"], winner=item["winner"])
                for item in audit["rejected"]]
    out += _rows(words["instructions"], [words["accepted"].format(items=_join(accepted, words))] + rejected)
    out += _rows(words["context"], [words["chosen"].format(items=_join(audit["context_chosen"], words),
                                                           used=audit["context_tokens"], budget=audit["context_budget"])]
                 + ([words["dropped"].format(items=_join(audit["context_dropped"], words))]
                    if audit["context_dropped"] else []))
    out += _rows(words["examples"], [words["schema"].format(items=_join(audit["examples"], words),
                                                            version=audit["schema_version"],
                                                            mode=words.get(audit["mode"], audit["mode"]))])
    documents = [doc["source"] + words["label_colon"]
                 + (words["flagged"].format(flags=words["list"].join(doc["flags"])) if doc["flags"] else words["no_flags"])
                 for doc in audit["injection"]]
    out += _rows(words["retrieved"], documents)
    out += _rows(words["repairs"], [_join(audit["repairs"], words)])
    out += _rows(words["tokens"], [words["token_counts"].format(prompt=audit["prompt_tokens"],
                                                                output=audit["output_tokens"])])
    return words["audit"], out


def format_audit(audit: Mapping[str, Any], language: Language = "en") -> str:
    """:func:`audit_table` as terminal text: the title, then each label padded to one column, values after it."""
    return _text(audit_table(audit, language))


def extraction_tables(document: Mapping[str, Any], language: Language = "en") -> list[Table]:
    """The spec's table (when there is one) and the audit trail's table of a driver answer, as (title, rows): what
    :func:`format_extraction` prints, for a notebook to show as HTML tables.

    ``language`` is ``"en"`` (the default) or ``"zh"``. Any other value raises ``KeyError``.
    """
    tables = []
    if document.get("spec") is not None:
        tables.append(spec_table(document["spec"], document.get("audit"), language))
    if document.get("audit") is not None:
        tables.append(audit_table(document["audit"], language))
    return tables


def format_extraction(document: Mapping[str, Any], language: Language = "en") -> str:
    """The tables of :func:`extraction_tables` as terminal text, as ``forgelab extract`` prints them.

    ``language`` is ``"en"`` (the default) or ``"zh"``: ``forgelab extract --lang zh`` passes ``"zh"``. Any other
    value raises ``KeyError``.
    """
    return "\n\n".join(_text(table) for table in extraction_tables(document, language))
