"""Stage 10 — prompt assembly: every segment of one call, placed under a token budget.

Contract
    ``input_budget(window, reserved_output, tool_result_reserve, safety_margin, *, max_output=None)
    -> int`` is the room for input, ``B = W - O - R - S``: the context window minus what is kept
    back for the answer (O), for the results of tool calls (R) and as a safety margin (S). A
    negative part, or reserves larger than the window, fail with ``ValueError``. Where an API
    limits the output apart from the window, pass that limit as ``max_output``: it is checked on
    its own, and reserving more output than the API will ever return fails too.
    ``safety_margin_for(window) -> int`` is the part of the window that ``SAFETY_THRESHOLD``
    keeps free (a quarter): ``W - floor(0.75 * W)``.

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
    * Memory is admitted last, so it is the first thing to go: the safety valve. The memory
      segments (at most ``MEMORY_TOP_K`` memories in all, each at most ``MEMORY_SUMMARY_MAX``
      lines) go in together or not at all; when they do not fit, ``MEMORY_NOTICE`` takes their
      place, so the model can see that memory was skipped. Room for that notice is set aside
      with the required segments whenever memory is offered; memory may use that room.

    ``Assembly.decisions`` lists every segment in prompt order with its token count and reason
    (``required``, ``included``, ``over_budget``); skipped memory is followed by the notice's
    own entry (name ``memory-notice``, reason ``notice``). ``used_tokens`` is the total of the
    included entries. Tokens are counted by ``count_tokens`` (inject the target model's
    tokenizer); the default ``estimate_tokens`` is a transparent offline estimate.

    Invalid input fails with ``ValueError`` before anything is placed: a negative budget, an
    unknown kind (fails closed), a repeated name, not exactly one ``system`` and one ``user``
    segment, more than ``MEMORY_TOP_K`` memories, a memory of more than ``MEMORY_SUMMARY_MAX``
    lines, or more than ``RECENT_MESSAGES`` dialogue segments (the caller summarizes and trims;
    assembly never cuts). The input list is never modified. ``memory_entries`` says what counts
    as one memory: each ``<memory_hit>`` of a ``<recalled_memory>`` block (stage 09's
    ``render_memory_block``, passed as one segment), else a memory segment's whole text.

    ``plan_prompt(segments, budget, count_tokens) -> Assembly`` is the memory-selection chapter's
    planner for a system prompt of ``PromptSegment`` objects (its ten are ``TEN_SEGMENTS``). Two
    numbers, two questions: ``priority`` is where a segment is rendered, ``budget_priority`` who
    gets a tight budget first (lower first for both; ties by name). The required segments are
    reserved first (``PromptBudgetError`` when they do not fit); the optional ones are then tried
    whole in ``budget_priority`` order; the chosen ones are rendered in ``priority`` order. Its
    decisions (kind ``required`` or ``optional``) come in rendering order. A negative budget or a
    repeated name fails with ``ValueError``.

Boundary decision
    The budget is never met by cutting what the user asked or the rules of the call. Optional
    material is dropped whole, memory first and visibly; if the required segments alone do not
    fit, the call fails instead of sending a degraded prompt.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

ORDER = ("system", "tools", "policy", "memory", "evidence", "dialogue", "user")
REQUIRED = ("system", "tools", "policy", "user")
# the optional kinds that share the leftover budget, in this order; memory is admitted after them
ADMISSION = ("evidence", "dialogue")
MEMORY_NOTICE = "[System Notice] Relevant memory skipped due to token budget."
NOTICE_NAME = "memory-notice"
# The starting configuration of a token-safe assembler, with the reason for each value:
SAFETY_THRESHOLD = 0.75  # fill at most 75 % of the window: estimates err, requests carry overhead, turns burst
MEMORY_TOP_K = 3  # at most three memories: recall beyond the best few adds noise faster than facts
MEMORY_SUMMARY_MAX = 3  # each memory summarized to at most three lines: memory informs, it never dominates
RECENT_MESSAGES = 3  # the minimal context keeps the three most recent messages; older turns are summarized
# the memory-selection chapter's ten segments of a system prompt, in its order; three of them are required
TEN_SEGMENTS = ("base_instructions", "identity", "recalled_memory", "project_context", "tool_descriptions",
                "expert_instructions", "skill_instructions", "connector_status", "regional_conventions", "working_mode")

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
class PromptSegment:
    name: str
    text: str
    required: bool
    priority: int  # where it is rendered: lower first
    budget_priority: int  # who gets a tight budget first: lower first


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
    """Offline teaching units: a run of ASCII letters and digits is one, any other visible character one ("café": 2)."""
    units = _UNIT.findall(text)
    return len(units)


def safety_margin_for(window: int) -> int:
    """S as a share of the window: the part that SAFETY_THRESHOLD keeps free."""
    if window < 0:
        raise ValueError(f"window must be 0 or more, got {window}")
    return window - math.floor(window * SAFETY_THRESHOLD)


def input_budget(
    window: int,
    reserved_output: int,
    tool_result_reserve: int,
    safety_margin: int,
    *,
    max_output: int | None = None,
) -> int:
    """B = W - O - R - S, the tokens left for the input of one call; O is also checked against max_output."""
    parts = {
        "window": window,
        "reserved_output": reserved_output,
        "tool_result_reserve": tool_result_reserve,
        "safety_margin": safety_margin,
    }
    if max_output is not None:
        parts["max_output"] = max_output
    for name, value in parts.items():
        if value < 0:
            raise ValueError(f"{name} must be 0 or more, got {value}")
    if max_output is not None and reserved_output > max_output:
        raise ValueError(f"reserved_output is {reserved_output} but the API returns at most max_output = "
                         f"{max_output} tokens: reserve at most {max_output} for the answer")
    reserves = reserved_output + tool_result_reserve + safety_margin
    if reserves > window:
        raise ValueError(f"the reserves need {reserves} tokens but the window has only {window}: "
                         "lower the reserves or use a model with a larger window")
    return window - reserves


def memory_entries(text: str) -> list[str]:
    """The memories in one memory segment: each <memory_hit> of a stage-09 block, else the text as one."""
    lines = text.splitlines()
    if len(lines) < 2 or lines[0] != "<recalled_memory>" or lines[-1] != "</recalled_memory>":
        return [text]
    entries: list[str] = []
    for line in lines[1:-1]:
        if line.startswith("<memory_hit ") or not entries:
            entries.append(line)
        else:
            entries[-1] += "\n" + line  # a memory text of several lines continues its hit
    return entries


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
    entries = [(item.name, entry) for item in segments if item.kind == "memory" for entry in memory_entries(item.text)]
    for name, entry in entries:
        lines = len(entry.splitlines())
        if lines > MEMORY_SUMMARY_MAX:
            raise ValueError(f"memory {name!r} has {lines} lines in one memory, more than MEMORY_SUMMARY_MAX = "
                             f"{MEMORY_SUMMARY_MAX}: summarize it before assembly — assembly never cuts")
    kinds = [item.kind for item in segments]
    for kind in ("system", "user"):
        if kinds.count(kind) != 1:
            raise ValueError(f"a prompt needs exactly one {kind} segment, got {kinds.count(kind)}")
    if len(entries) > MEMORY_TOP_K:
        raise ValueError(f"at most MEMORY_TOP_K = {MEMORY_TOP_K} memory entries, got {len(entries)}: "
                         "pass only the best memories")
    if kinds.count("dialogue") > RECENT_MESSAGES:
        raise ValueError(f"at most RECENT_MESSAGES = {RECENT_MESSAGES} dialogue segments, got "
                         f"{kinds.count('dialogue')}: pass only the most recent messages")


def assemble(
    segments: list[Segment],
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> Assembly:
    """Place every segment or say why not (see the module contract)."""
    check_segments(segments, budget)
    cost = {item.name: count_tokens(item.text) for item in segments}
    required = sum(cost[item.name] for item in segments if item.kind in REQUIRED)
    memories = [item for item in segments if item.kind == "memory"]
    notice = count_tokens(MEMORY_NOTICE) if memories else 0
    if required + notice > budget:
        extra = f" plus {notice} for the memory notice" if memories else ""
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
    if sum(cost[item.name] for item in memories) <= left + notice:
        admitted.update(item.name for item in memories)

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
        elif item.kind == "memory" and item is memories[-1]:
            decisions.append(SegmentDecision(NOTICE_NAME, "memory", notice, True, "notice"))
            texts.append(MEMORY_NOTICE)
    used = sum(decision.tokens for decision in decisions if decision.included)
    return Assembly("\n\n".join(texts), budget, used, tuple(decisions))


def plan_prompt(
    segments: list[PromptSegment],
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> Assembly:
    """Reserve the required segments, admit the rest by budget_priority, render by priority."""
    if budget < 0:
        raise ValueError(f"the budget cannot be negative, got {budget}")
    names = [item.name for item in segments]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"duplicate segment names {repeated}: every name must be unique")
    cost = {item.name: count_tokens(item.text) for item in segments}
    required = sum(cost[item.name] for item in segments if item.required)
    if required > budget:
        raise PromptBudgetError(f"required segments need {required} tokens but the budget is {budget}: "
                                "required segments are never dropped")
    left = budget - required
    chosen = {item.name for item in segments if item.required}
    for item in sorted(segments, key=lambda item: (item.budget_priority, item.name)):
        if not item.required and cost[item.name] <= left:
            chosen.add(item.name)
            left -= cost[item.name]
    shown = sorted(segments, key=lambda item: (item.priority, item.name))
    decisions = tuple(SegmentDecision(item.name, "required" if item.required else "optional", cost[item.name],
                                      item.name in chosen, "required" if item.required else
                                      "included" if item.name in chosen else "over_budget") for item in shown)
    prompt = "\n\n".join(item.text for item in shown if item.name in chosen)
    return Assembly(prompt, budget, sum(d.tokens for d in decisions if d.included), decisions)
