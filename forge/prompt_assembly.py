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

Your task: implement ``input_budget``, ``check_segments`` and ``assemble``. The constants, the
data classes and ``estimate_tokens`` (the same teaching units as in stage 09) are given. Check
your work with ``forgelab check 10``; ask for help with ``forgelab hint 10``.
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
    raise NotImplementedError("input_budget() is not implemented yet — see hints 1–3 (forgelab hint 10)")


def check_segments(segments: list[Segment], budget: int) -> None:
    """Fail with ValueError on a negative budget or on segments that cannot form a prompt."""
    raise NotImplementedError("check_segments() is not implemented yet — see hints 4–6 (forgelab hint 10)")


def assemble(
    segments: list[Segment],
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> Assembly:
    """Place every segment or say why not (see the module contract)."""
    raise NotImplementedError("assemble() is not implemented yet — see hints 7–9 (forgelab hint 10)")
