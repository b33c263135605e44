# %% [markdown]
# Ana's question from the problem: why does an empty exclude filter skip every item? The retriever
# found `e17`, one line of `src/filter.py` at r42. The harness knows what that line needs: the config
# type (which in turn needs the truthiness of `Filter`) and the `skip` helper. We expect `e17` to be
# admitted together with all three — a closure of four objects.

# %%
from forge.context_pipeline import (ContextBudgetError, ContextObject, cache_break_even, close_dependencies,
                                    estimate_tokens, invalidate, plan_deletions, render_memory_block)
from forge.memory_selection import MemoryCandidate

e17 = ContextObject("e17", "evidence", "if config.exclude: return skip(item)", "r42", "src/filter.py#L60-95",
                    ("type-config", "skip-def"), True)
code = [
    e17,
    ContextObject("type-config", "evidence", "exclude: Filter = Filter([])", "r42", "src/config.py",
                  ("filter-bool",), True),
    ContextObject("filter-bool", "evidence", "Filter.__bool__ is True while the rule list object exists.", "r42",
                  "src/filter_types.py", (), True),
    ContextObject("skip-def", "evidence", "skip(item) writes the item to the audit log.", "r42", "src/skip.py",
                  (), True),
]
closure = close_dependencies(["e17"], code)
print("admitted:", closure.admitted)
for decision in closure.decisions:
    print(decision)

# %% [markdown]
# Now Q050's counter-example: only the line itself was loaded. Instead of handing the model half a
# chain, `close_dependencies` refuses and names every absent object of the closure. A cycle is refused
# in the same way, naming the objects on it.

# %%
print(close_dependencies(["e17"], [e17]).decisions)
loop = [ContextObject("a", "evidence", "a", depends_on=("b",)), ContextObject("b", "evidence", "b", depends_on=("a",))]
print(close_dependencies(["a"], loop).decisions)

# %% [markdown]
# Two rounds later the config type moves from r42 to r43. Everything that was read on top of it and
# declared `expires_on_change` goes stale, nearest first: `e17` itself, then the test that depends on
# it. The summary "why" was derived from `e17`, so it expires too — whatever its flag — with
# `source_changed`. An object without the flag would have stopped the chain.

# %%
test = ContextObject("test-exclude", "evidence", "test_empty_exclude_keeps_items expects no skip.", "r42",
                     "tests/test_filter.py", ("e17",), True)
why = ContextObject("why", "summary", "Filter([]) is truthy, so an empty exclude skips every item.",
                    derived_from=("e17", "filter-bool"))
for decision in invalidate([*code, test, why], "type-config", "r43"):
    print(f"{decision.object_id:<13}{decision.reason:<20}{', '.join(decision.related)}")

# %% [markdown]
# A stable prefix — the system prompt and the tool schemas, 6 000 tokens — is sent with every call.
# Is a prompt cache worth it? With the prices below, caching costs `P·w + n·P·c` and not caching
# `(n+1)·P·u`. Without any reuse the cache write is pure extra cost; from the first reuse on, it pays.
# The costs are computed as exact fractions and printed here in µ$.

# %%
# prices per token in millionths of a dollar (µ$): $3.00, $0.30 and $3.75 per million tokens
PREFIX, UNCACHED, CACHED, WRITE = 6_000, 3, 0.3, 3.75
for reuses in range(4):
    result = cache_break_even(PREFIX, reuses, UNCACHED, CACHED, WRITE)
    print(f"n = {reuses}: cached {float(result.cached_cost):>8.0f}  uncached {float(result.uncached_cost):>8.0f}"
          f"  -> {result.decision}")

# %% [markdown]
# Compressing a long history is a different bargain. Suppose 40 000 tokens of history are already in
# the cache and read at the cache price every round. Compressing them to a 4 000-token summary costs a
# model call (here 8 000 µ$), and the summary is a new prefix that must be written first. In the first
# rounds, keeping the cached history is cheaper; only from the third round on does the compression pay
# — and that is before counting the risk that the summary dropped a condition or a piece of evidence.

# %%
history, summary, call = 40_000, 4_000, 8_000  # tokens of history and summary; the compression call in µ$
for rounds in range(1, 6):
    keep = rounds * history * CACHED
    compress = call + summary * WRITE + (rounds - 1) * summary * CACHED
    print(f"after {rounds} round(s): keep the cached history {keep:>8.0f}  compress it {compress:>8.0f}")

# %% [markdown]
# Later in the session the context is 120 tokens over budget. Besides the code objects it holds Ana's
# goal, her first message "Do not change the public API", a deploy started earlier whose outcome is
# unknown, the negative result about option B, three turns of chat, ten search hits and a pasted copy
# of one of them. `plan_deletions` goes by role, not by age: the duplicate first, then the tool output,
# larger first, then history. The goal, the constraint, the pending deploy, the negative result and
# the code the request depends on stay.

# %%
goal = ContextObject("goal", "goal", "Explain why an empty exclude filter skips items.")
keep_api = ContextObject("keep-api", "constraint", "Do not change the public API.")
deploy = ContextObject("deploy", "pending_action", "deploy-preview started; outcome unknown")
ruled_out = ContextObject("option-b", "negative_result", "Option B (cache Filter truthiness) breaks test_exclude_none.")
turns = [ContextObject(f"turn-{n}", "history", text) for n, text in
         enumerate(["Ana: the list skips everything.", "Bot: reading src/filter.py now.", "Ana: ok, thanks!"], 1)]
hits = [ContextObject(f"hit-{n:02d}", "tool_output", f"Search result {n}: a forum page about filters.",
                      source=f"search:filters#{n}") for n in range(10)]
pasted = ContextObject("hit-pasted", "tool_output", "search result 3:  a forum page about FILTERS.", source="chat")
context = [goal, keep_api, *turns, *code, deploy, ruled_out, *hits, pasted]
plan = plan_deletions(context, 120)
print(f"{'deleted':<12}{'reason':<13}{'tokens':>6}  related")
for decision in plan:
    print(f"{decision.object_id:<12}{decision.reason:<13}{decision.tokens:>6}  {', '.join(decision.related)}")
print("still there:", ", ".join(item.id for item in context if item.id not in {d.object_id for d in plan}))

# %% [markdown]
# When even deleting everything that may go is not enough, nothing protected is touched: the call
# fails and says how much could be freed against how much was needed. The round has to become smaller.

# %%
try:
    plan_deletions(context, 200)
except ContextBudgetError as error:
    print("ContextBudgetError:", error)

# %% [markdown]
# Memory enters a context like any other object — priced as the block the model reads. Stage 09's
# `render_memory_block` is re-exported here: the three units of "Use Go." become 43 once the wrapper,
# the id and the source are counted.

# %%
memory = MemoryCandidate("m-go", "Use Go.", "ana", 0.9, 1, source="chat:2026-03-02")
block = render_memory_block([memory])
print(f"the text: {estimate_tokens(memory.text)} units; the block the model reads: {block.tokens} units")
print(block.text)
