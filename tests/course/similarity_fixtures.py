"""A class for the similarity check: honest solutions written independently, and copies of every kind it must catch.

Every submission is the pristine starter ``forge/`` with stages 01 and 02 written (or not) as below; it hands in
nothing else (no labs, transfer tests or evidence: those items are not what this class is about). The honest
modules were each written from the module's contract alone, each in its own way — the structure, the loops, the
messages, the helpers differ, as they do between learners who work alone — and each passes its stage's tests.

=========  ===========================================  ===========================================================
learner    stage 01 (forge/instructions.py)             stage 02 (forge/context_selection.py)
=========  ===========================================  ===========================================================
alice      honest: groups by key, sorts each group      honest: running budget, messages listing every problem
bruno      honest: walks the ranks from the top          honest: a heap of optional candidates
chen       honest: one key at a time, min() per key      honest: Counter, filter/filterfalse, two stable sorts
dana       honest: best per key first, then losers       honest: while loop, a table of field limits, concatenation
gil        starter                                       COPY: the fault lab's module, defect fixed, header tidied
hal        COPY: the reference, variables renamed        starter
ivy        honest: an index per key, a stable sort       starter
jon        COPY: ivy's module, variables renamed         starter
kim        starter                                       starter
lou        starter                                       starter
=========  ===========================================  ===========================================================

So exactly three pairs are copies: gil's stage 02 and the course's module, hal's stage 01 and the reference, ivy's
and jon's stage 01. Nothing else may be flagged: not the honest solutions, not the untouched starters.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from conftest import ROOT, pristine_starters

STAGES = ("01", "02")
INSTRUCTIONS, SELECTION = "forge/instructions.py", "forge/context_selection.py"
HONEST = ("alice", "bruno", "chen", "dana")
NAMES = (*HONEST, "gil", "hal", "ivy", "jon", "kim", "lou")
COPIES = {("02", "gil", "course"), ("01", "hal", "course"), ("01", "ivy", "jon")}

# ---------------------------------------------------------------- stage 01, written five ways

RANK_OF = {
    "alice": '''    rank = RANK.get(instruction.source)
    if rank is None:
        known = ", ".join(RANK)
        raise ValueError(f"unknown source {instruction.source!r}: expected one of {known}")
    return rank''',
    "bruno": '''    try:
        return RANK[instruction.source]
    except KeyError:
        names = " / ".join(sorted(RANK, key=RANK.__getitem__, reverse=True))
        raise ValueError("unknown source %r (valid sources: %s)" % (instruction.source, names)) from None''',
    "chen": '''    if instruction.source in RANK:
        return RANK[instruction.source]
    raise ValueError("unknown source '" + instruction.source + "'; use system, developer, user or retrieved")''',
    "dana": '''    known = tuple(RANK)
    source = instruction.source
    if source not in known:
        raise ValueError(f"unknown source {source!r}: pick one of {known}")
    return RANK[source]''',
    "ivy": '''    for name, value in RANK.items():
        if name == instruction.source:
            return value
    message = "unknown source {!r}; the sources are {}".format(instruction.source, ", ".join(RANK))
    raise ValueError(message)''',
}

EXPLAIN = {
    "alice": '''    for instruction in instructions:  # fail closed before anything is decided
        rank_of(instruction)
    by_key: dict[str, list[tuple[int, int, Instruction]]] = {}
    for position, instruction in enumerate(instructions):
        by_key.setdefault(instruction.key, []).append((-rank_of(instruction), position, instruction))
    winners: dict[str, Instruction] = {}
    losers: list[tuple[int, int, Rejection]] = []
    for key, entries in by_key.items():
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        best_rank, _first, best = entries[0]
        winners[key] = best
        for negative_rank, position, loser in entries[1:]:
            why = "same_rank_later" if negative_rank == best_rank else "lower_rank"
            losers.append((negative_rank, position, Rejection(loser, best, why)))
    losers.sort(key=lambda entry: (entry[0], entry[1]))
    return winners, [entry[2] for entry in losers]''',
    "bruno": '''    ranked = [(rank_of(candidate), candidate) for candidate in instructions]
    winners: dict[str, Instruction] = {}
    rejections: list[Rejection] = []
    for level in sorted(set(RANK.values()), reverse=True):
        for rank, candidate in ranked:
            if rank != level:
                continue
            current = winners.get(candidate.key)
            if current is None:
                winners[candidate.key] = candidate
                continue
            reason = "lower_rank" if RANK[current.source] > level else "same_rank_later"
            rejections.append(Rejection(candidate, current, reason))
    return winners, rejections''',
    "chen": '''    ranks = list(map(rank_of, instructions))
    keys: list[str] = []
    for one in instructions:
        if one.key not in keys:
            keys.append(one.key)
    winners: dict[str, Instruction] = {}
    rejected: list[tuple[int, int, Rejection]] = []
    for key in keys:
        positions = [p for p, one in enumerate(instructions) if one.key == key]
        top = min(positions, key=lambda p: (-ranks[p], p))
        winners[key] = instructions[top]
        for p in positions:
            if p == top:
                continue
            kind = "same_rank_later" if ranks[p] == ranks[top] else "lower_rank"
            rejected.append((-ranks[p], p, Rejection(instructions[p], instructions[top], kind)))
    rejected.sort(key=lambda row: row[:2])
    return winners, [row[2] for row in rejected]''',
    "dana": '''    checked = [(rank_of(instruction), position, instruction) for position, instruction in enumerate(instructions)]
    best: dict[str, tuple[int, int, Instruction]] = {}
    for rank, position, instruction in checked:
        held = best.get(instruction.key)
        if held is None or rank > held[0]:
            best[instruction.key] = (rank, position, instruction)
    rejections: list[Rejection] = []
    for rank, position, instruction in sorted(checked, key=lambda row: (-row[0], row[1])):
        won_rank, won_at, winner = best[instruction.key]
        if won_at != position:
            label = "same_rank_later" if rank == won_rank else "lower_rank"
            rejections.append(Rejection(instruction, winner, label))
    return {key: held[2] for key, held in best.items()}, rejections''',
    "ivy": '''    levels = [rank_of(entry) for entry in instructions]
    index: dict[str, int] = {}
    outcome: list[tuple[int, int, str]] = []
    for here in sorted(range(len(instructions)), key=lambda i: (-levels[i], i)):
        key = instructions[here].key
        if key not in index:
            index[key] = here
        else:
            there = index[key]
            outcome.append((here, there, "lower_rank" if levels[there] > levels[here] else "same_rank_later"))
    winners = {key: instructions[at] for key, at in index.items()}
    return winners, [Rejection(instructions[lost], instructions[won], why) for lost, won, why in outcome]''',
}

# jon's copy of ivy's module: every name ivy chose is renamed; the structure is hers
JON_RENAMES = {"name": "label", "value": "number", "message": "text", "levels": "trust", "entry": "item",
               "index": "first_seen", "outcome": "losses", "here": "at", "there": "holder", "i": "n",
               "winners": "chosen", "lost": "loser", "won": "kept", "why": "reason"}

# hal's copy of the reference: every local name renamed
HAL_RENAMES = {"allowed": "valid", "ranks": "levels", "order": "sequence", "index": "pos", "winners": "kept",
               "rejections": "dropped", "item": "entry", "winner": "holder"}

# ---------------------------------------------------------------- stage 02, written four ways

DENSITY = {
    "alice": '''    cost = item.tokens if item.tokens > 1 else 1
    return (item.relevance * item.trust) / cost''',
    "bruno": '''    return item.relevance * item.trust / max(1, item.tokens)''',
    "chen": '''    per_token = max(item.tokens, 1)
    value = item.relevance * item.trust
    return value / per_token''',
    "dana": '''    if item.tokens <= 1:
        return item.relevance * item.trust
    return item.relevance * item.trust / item.tokens''',
}

CHECK = {
    "alice": '''    if budget < 0:
        raise ValueError(f"negative budget {budget}: the budget must be at least 0")
    ids: set[str] = set()
    for c in candidates:
        problems = []
        if c.tokens < 0:
            problems.append(f"tokens={c.tokens} is negative")
        for field in ("relevance", "trust"):
            score = getattr(c, field)
            if not 0 <= score <= 1:
                problems.append(f"{field}={score} is outside [0, 1]")
        if c.id in ids:
            problems.append("its id is used twice")
        if problems:
            raise ValueError(f"candidate {c.id}: " + "; ".join(problems))
        ids.add(c.id)''',
    "bruno": '''    if budget < 0:
        raise ValueError("budget must not be negative (got %d)" % budget)
    seen = {}
    for candidate in candidates:
        name = candidate.id
        if name in seen:
            raise ValueError("id %r appears twice" % name)
        seen[name] = candidate
        if candidate.tokens < 0:
            raise ValueError("%s: tokens cannot be negative (%d)" % (name, candidate.tokens))
        if not (0.0 <= candidate.relevance <= 1.0):
            raise ValueError("%s: relevance %.3f not in [0, 1]" % (name, candidate.relevance))
        if not (0.0 <= candidate.trust <= 1.0):
            raise ValueError("%s: trust %.3f not in [0, 1]" % (name, candidate.trust))''',
    "chen": '''    if budget < 0:
        raise ValueError(f"the budget cannot be {budget}: use 0 or a positive number of tokens")
    counts = Counter(c.id for c in candidates)
    for c in candidates:
        if counts[c.id] > 1:
            raise ValueError(f"{c.id!r} is used as the id of {counts[c.id]} candidates")
        bad = {"tokens": c.tokens < 0, "relevance": not 0 <= c.relevance <= 1, "trust": not 0 <= c.trust <= 1}
        wrong = [field for field, broken in bad.items() if broken]
        if wrong:
            raise ValueError(f"{c.id!r} has an invalid {wrong[0]}: {getattr(c, wrong[0])}")''',
    "dana": '''    if not budget >= 0:
        raise ValueError("budget " + str(budget) + " is below zero")
    index = 0
    names = set()
    while index < len(candidates):
        one = candidates[index]
        index += 1
        if one.id in names:
            raise ValueError("duplicate id: " + one.id)
        names.add(one.id)
        limits = (("tokens", one.tokens, 0, None), ("relevance", one.relevance, 0, 1), ("trust", one.trust, 0, 1))
        for label, value, low, high in limits:
            if not (value >= low and (high is None or value <= high)):
                raise ValueError("candidate " + one.id + ": " + label + " out of range (" + str(value) + ")")''',
}

CHOICE = {
    "alice": '''    check_candidates(candidates, budget)
    must = [c for c in candidates if c.required]
    needed = sum(c.tokens for c in must)
    if needed > budget:
        raise ValueError(f"the required candidates need {needed} tokens, more than the budget of {budget}")
    left = budget - needed
    result = [Decision(c.id, True, "required", value_density(c)) for c in must]
    rest = sorted((c for c in candidates if not c.required), key=lambda c: (-value_density(c), c.id))
    for c in rest:
        fits = c.tokens <= left
        if fits:
            left -= c.tokens
        result.append(Decision(c.id, fits, "selected" if fits else "over_budget", value_density(c)))
    return result''',
    "bruno": '''    check_candidates(candidates, budget)
    decisions = []
    spent = 0
    queue: list[tuple[float, str, int]] = []
    for position, candidate in enumerate(candidates):
        if candidate.required:
            spent += candidate.tokens
            decisions.append(Decision(candidate.id, True, "required", value_density(candidate)))
        else:
            heapq.heappush(queue, (-value_density(candidate), candidate.id, position))
    if spent > budget:
        raise ValueError("required material totals %d tokens; budget is only %d" % (spent, budget))
    while queue:
        negative, _name, position = heapq.heappop(queue)
        candidate = candidates[position]
        take = spent + candidate.tokens <= budget
        spent += candidate.tokens if take else 0
        decisions.append(Decision(candidate.id, take, "selected" if take else "over_budget", -negative))
    return decisions''',
    "chen": '''    check_candidates(candidates, budget)

    def decide(item: ContextCandidate, included: bool, reason: str) -> Decision:
        return Decision(item.id, included, reason, value_density(item))

    required = list(filter(lambda c: c.required, candidates))
    optional = list(filterfalse(lambda c: c.required, candidates))
    remaining = budget - sum(map(lambda c: c.tokens, required))
    if remaining < 0:
        raise ValueError(f"{budget - remaining} required tokens do not fit in a budget of {budget}")
    out = [decide(c, True, "required") for c in required]
    ranked = sorted(sorted(optional, key=attrgetter("id")), key=value_density, reverse=True)
    for item in ranked:
        if item.tokens <= remaining:
            remaining -= item.tokens
            out.append(decide(item, True, "selected"))
        else:
            out.append(decide(item, False, "over_budget"))
    return out''',
    "dana": '''    check_candidates(candidates, budget)
    needed = 0
    for one in candidates:
        if one.required:
            needed += one.tokens
    if needed > budget:
        raise ValueError("required tokens " + str(needed) + " exceed budget " + str(budget))
    first: list[ContextCandidate] = []
    later: list[ContextCandidate] = []
    for one in candidates:
        (first if one.required else later).append(one)
    order = sorted(range(len(later)), key=lambda i: (-value_density(later[i]), later[i].id))
    decisions = [Decision(one.id, True, "required", value_density(one)) for one in first]
    free = budget - needed
    for i in order:
        one = later[i]
        fits = one.tokens <= free
        free = free - one.tokens if fits else free
        decisions.append(Decision(one.id, fits, "selected" if fits else "over_budget", value_density(one)))
    return decisions''',
}

IMPORTS_02 = {"bruno": "import heapq\n", "chen": "from collections import Counter\nfrom itertools import filterfalse\n"
              "from operator import attrgetter\n"}

# gil's fix of the fault lab's explain_choice (the lab sorts every candidate by relevance alone)
GIL_FIX_FIND = '''    decisions: list[Decision] = []
    used = 0
    for item in sorted(candidates, key=lambda item: -item.relevance):'''
GIL_FIX = '''    decisions: list[Decision] = []
    used = sum(item.tokens for item in candidates if item.required)
    if used > budget:
        raise ValueError(f"required context needs {used} tokens but the budget is {budget}")
    for item in candidates:
        if item.required:
            decisions.append(Decision(item.id, True, "required", value_density(item)))
    for item in sorted([c for c in candidates if not c.required], key=lambda item: (-value_density(item), item.id)):'''


def _stub(name: str) -> re.Pattern[str]:
    return re.compile(rf'^    raise NotImplementedError\("{name}\(\) is not implemented yet[^\n]*\n', re.M)


def implement(starter: str, bodies: dict[str, str], imports: str = "") -> str:
    """The starter with each named function's stub replaced by its body (and ``imports`` after the others)."""
    text = re.sub(r"\n\nYour task: .*?\n(?=\"\"\")", "\n", starter, count=1, flags=re.S)  # the task note goes
    for name, body in bodies.items():
        text, count = _stub(name).subn(lambda _match: body + "\n", text)
        assert count == 1, f"the starter's stub of {name}() changed: update the similarity fixtures"
    if imports:
        text = text.replace("from dataclasses import dataclass\n", imports + "from dataclasses import dataclass\n", 1)
    return text


def rename(text: str, names: dict[str, str]) -> str:
    """Every whole-word occurrence of each name renamed (what a copier does with search and replace)."""
    for old, new in names.items():
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
    return text


def _rename_body(module: str, function: str, names: dict[str, str]) -> str:
    """``names`` renamed inside ``function`` only (its signature's types and the module's names stay)."""
    start = module.index(f"\ndef {function}(")
    body_at = module.index('"""\n', module.index('"""', start) + 3) + 4
    end = module.find("\n\ndef ", body_at)
    end = len(module) if end < 0 else end
    return module[:body_at] + rename(module[body_at:end], names) + module[end:]


def modules(starter: Path) -> dict[str, dict[str, str]]:
    """Each learner's stage modules by module path (a stage left out keeps the starter)."""
    start_01 = (starter / INSTRUCTIONS).read_text(encoding="utf-8")
    start_02 = (starter / SELECTION).read_text(encoding="utf-8")
    made: dict[str, dict[str, str]] = {name: {} for name in NAMES}
    for name in HONEST:
        made[name][INSTRUCTIONS] = implement(start_01, {"rank_of": RANK_OF[name], "explain": EXPLAIN[name]})
        made[name][SELECTION] = implement(start_02, {"value_density": DENSITY[name], "check_candidates": CHECK[name],
                                                     "explain_choice": CHOICE[name]}, IMPORTS_02.get(name, ""))
    ivy = implement(start_01, {"rank_of": RANK_OF["ivy"], "explain": EXPLAIN["ivy"]})
    made["ivy"][INSTRUCTIONS] = ivy
    made["jon"][INSTRUCTIONS] = _rename_body(_rename_body(ivy, "rank_of", JON_RENAMES), "explain", JON_RENAMES)
    reference = (ROOT / "solutions" / INSTRUCTIONS).read_text(encoding="utf-8")
    made["hal"][INSTRUCTIONS] = _rename_body(_rename_body(reference, "rank_of", HAL_RENAMES), "explain", HAL_RENAMES)
    lab = (ROOT / "failure_labs" / "02-context-selection" / SELECTION).read_text(encoding="utf-8")
    assert GIL_FIX_FIND in lab, "the stage-02 fault lab changed: update the similarity fixtures"
    made["gil"][SELECTION] = lab.replace(GIL_FIX_FIND, GIL_FIX).replace(
        " (FAULT LAB: this copy has a defect to find and fix)", "")
    return made


def build_class(folder: Path) -> dict[str, str]:
    """The ten learners under ``folder`` (each the pristine ``forge/`` with their modules written in)."""
    starter = pristine_starters()
    paths = {}
    for name, written in modules(starter).items():
        root = folder / name
        shutil.copytree(starter / "forge", root / "forge", ignore=shutil.ignore_patterns("__pycache__"))
        for module, text in written.items():
            (root / module).write_text(text, encoding="utf-8")
        paths[name] = str(root)
    return paths


__all__ = ["COPIES", "HONEST", "NAMES", "STAGES", "build_class", "implement", "modules", "rename"]
