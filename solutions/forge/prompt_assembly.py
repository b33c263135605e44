"""Stage 10 — prompt assembly: every segment of one call, placed under a token budget.

Contract
    ``input_budget(window, reserved_output, reasoning_reserve, safety_margin) -> int``
    is the room for input, ``B = W - O - R - S``: the context window minus what is kept back
    for the answer, for reasoning and tool results, and as a safety margin. A negative part,
    or reserves larger than the window, fail with ``ValueError``.

    ``assemble(segments, budget, count_tokens) -> Assembly`` builds the prompt of one call
    from ``Segment`` objects of seven kinds, always rendered in the fixed order of ``ORDER``
    (within one kind, in input order), joined by blank lines:

        system, tools, policy, memory, evidence, dialogue, user

    * ``system``, ``tools``, ``policy`` and ``user`` are required. They go in whole, never cut
      or shortened. If they do not fit, ``PromptBudgetError`` states what they need and the
      budget — no prompt is returned.
    * The optional segments share what is left, in the order of ``ADMISSION``: evidence first,
      then recent dialogue, each segment whole or not at all. One that does not fit is skipped
      (``over_budget``) and the later ones are still tried.
    * Memory is admitted last, so it is the first thing to go: the safety valve. When it does
      not fit, ``MEMORY_NOTICE`` takes its place, so the model can see that memory was skipped.
      Room for that notice is set aside with the required segments whenever memory is offered;
      memory itself may use that room when it fits.

    ``Assembly.decisions`` lists every segment in prompt order with its token count and reason
    (``required``, ``included``, ``over_budget``); a skipped memory is followed by the notice's
    own entry (name ``memory-notice``, reason ``notice``). ``used_tokens`` is the total of the
    included entries. Tokens are counted by ``count_tokens`` (inject the target model's
    tokenizer); the default ``estimate_tokens`` is a transparent offline estimate.

    Invalid input fails with ``ValueError`` before anything is placed: a negative budget, an
    unknown kind (fails closed), a repeated name, not exactly one ``system`` and one ``user``
    segment, or more than one ``memory`` segment (pack memories into one block first). The
    input list is never modified.

Boundary decision
    The budget is never met by cutting what the user asked or the rules of the call. Optional
    material is dropped whole, memory first and visibly; if the required segments alone do not
    fit, the call fails instead of sending a degraded prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

ORDER = ("system", "tools", "policy", "memory", "evidence", "dialogue", "user")
REQUIRED = ("system", "tools", "policy", "user")
# the optional kinds that share the leftover budget, in this order; memory is admitted after them
ADMISSION = ("evidence", "dialogue")
MEMORY_NOTICE = "[notice] relevant memory skipped: token budget"
NOTICE_NAME = "memory-notice"

# one teaching unit: a run of ASCII letters and digits, or any other single visible character
_UNIT = re.compile(r"[A-Za-z0-9]+|\S")


class PromptBudgetError(ValueError):
    """The required segments do not fit in the budget; nothing required is ever cut."""


@dataclass(frozen=True)
class Segment:
    name: str
    kind: str  # one of ORDER
    text: str


@dataclass(frozen=True)
class SegmentDecision:
    name: str
    kind: str
    tokens: int
    included: bool
    reason: str  # "required", "included", "over_budget" or "notice"


@dataclass(frozen=True)
class Assembly:
    prompt: str
    budget: int
    used_tokens: int
    decisions: tuple[SegmentDecision, ...]


def estimate_tokens(text: str) -> int:
    """Offline teaching units: each Latin word, CJK character or punctuation mark counts one."""
    units = _UNIT.findall(text)
    return len(units)


def input_budget(window: int, reserved_output: int, reasoning_reserve: int, safety_margin: int) -> int:
    """B = W - O - R - S, the tokens left for the input of one call."""
    parts = {
        "window": window,
        "reserved_output": reserved_output,
        "reasoning_reserve": reasoning_reserve,
        "safety_margin": safety_margin,
    }
    for name, value in parts.items():
        if value < 0:
            raise ValueError(f"{name} must be 0 or more, got {value}")
    reserves = reserved_output + reasoning_reserve + safety_margin
    if reserves > window:
        raise ValueError(f"the reserves need {reserves} tokens but the window has only {window}: "
                         "lower the reserves or use a model with a larger window")
    return window - reserves


def check_segments(segments: list[Segment], budget: int) -> None:
    """Fail with ValueError on a negative budget or on segments that cannot form a prompt."""
    if budget < 0:
        raise ValueError(f"the budget cannot be negative, got {budget}")
    names: set[str] = set()
    for item in segments:
        if item.name in names:
            raise ValueError(f"duplicate segment name {item.name!r}: every name must be unique")
        names.add(item.name)
        if item.kind not in ORDER:
            raise ValueError(f"segment {item.name!r}: unknown kind {item.kind!r}: expected one of {', '.join(ORDER)}")
    kinds = [item.kind for item in segments]
    for kind in ("system", "user"):
        if kinds.count(kind) != 1:
            raise ValueError(f"a prompt needs exactly one {kind} segment, got {kinds.count(kind)}")
    if kinds.count("memory") > 1:
        raise ValueError(
            f"at most one memory segment, got {kinds.count('memory')}: pack the memories into one block first"
        )


def assemble(
    segments: list[Segment],
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> Assembly:
    """Place every segment or say why not (see the module contract)."""
    check_segments(segments, budget)
    cost = {item.name: count_tokens(item.text) for item in segments}
    required = sum(cost[item.name] for item in segments if item.kind in REQUIRED)
    offers_memory = any(item.kind == "memory" for item in segments)
    notice = count_tokens(MEMORY_NOTICE) if offers_memory else 0
    if required + notice > budget:
        extra = f" plus {notice} for the memory notice" if offers_memory else ""
        raise PromptBudgetError(
            f"required segments need {required} tokens{extra} but the budget is {budget}: "
            "shorten them, lower the reserves or use a larger window — required text is never cut"
        )

    left = budget - required - notice
    admitted: set[str] = set()
    for kind in ADMISSION:
        for item in segments:
            if item.kind == kind and cost[item.name] <= left:
                admitted.add(item.name)
                left -= cost[item.name]
    for item in segments:
        if item.kind == "memory" and cost[item.name] <= left + notice:
            admitted.add(item.name)

    decisions: list[SegmentDecision] = []
    texts: list[str] = []
    for item in sorted(segments, key=lambda item: ORDER.index(item.kind)):
        if item.kind in REQUIRED:
            reason = "required"
        elif item.name in admitted:
            reason = "included"
        else:
            reason = "over_budget"
        decisions.append(SegmentDecision(item.name, item.kind, cost[item.name], reason != "over_budget", reason))
        if reason != "over_budget":
            texts.append(item.text)
        elif item.kind == "memory":
            decisions.append(SegmentDecision(NOTICE_NAME, "memory", notice, True, "notice"))
            texts.append(MEMORY_NOTICE)
    used = sum(decision.tokens for decision in decisions if decision.included)
    return Assembly("\n\n".join(texts), budget, used, tuple(decisions))
