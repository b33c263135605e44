# %% [markdown]
# First the budget. A model's context window is not all input: room must stay free for the answer
# (O), for the results of the tool calls this round will make (R), and as a protocol and safety margin
# for overhead and estimation errors (S). For a 200 000-token window that keeps 8 000 for the answer,
# 16 000 for tool results and 4 000 as a margin, the input budget is B = W − O − R − S:

# %%
from forge.prompt_assembly import (MEMORY_NOTICE, PromptBudgetError, Segment, assemble, input_budget,
                                   safety_margin_for)

print(input_budget(200_000, 8_000, 16_000, 4_000))

# %% [markdown]
# Where does S come from? The token-safe assembler this stage follows fills at most 75 % of the window
# (`SAFETY_THRESHOLD`), so a quarter stays free: for its example window of 204 000 tokens that is
# 51 000, and with nothing else reserved the budget is 153 000. And where an API caps the output on its
# own, that cap is checked on its own: here the window would happily "reserve" 16 000 tokens of answer,
# but the API never returns more than 8 000.

# %%
print(safety_margin_for(204_000), input_budget(204_000, 0, 0, safety_margin_for(204_000)))
try:
    input_budget(200_000, 16_000, 4_000, 2_000, max_output=8_000)
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# To keep the numbers readable, the rest of this demo pretends the window is tiny: 1 000 tokens, of
# which 700 are kept for the answer, 120 for tool results and 70 as a margin. That leaves 110 for the
# input of one call. The call is the search-box task from the software scenario, with all seven kinds
# of segment. Tokens are counted with the same transparent teaching units as in stage 09.

# %%
segments = [
    Segment("request", "user", "Add a search box to the product list and keep every existing test green."),
    Segment("turn-1", "dialogue", "Ana: the list gets slow with 500 products."),
    Segment("memory", "memory", "Ana prefers small pull requests. For this task she wants the release script "
            "in Go, and she reviews every diff herself before merging."),
    Segment("component", "evidence", "ProductList.tsx renders the list; filtering happens in useProducts()."),
    Segment("policy", "policy", "Write policy: deny until a human approves the plan."),
    Segment("tools", "tools",
            "Tools: read_file(path), run_tests(), write_file(path, text) - write_file needs approval."),
    Segment("system", "system",
            "You are a careful coding assistant for a front-end repository. Follow the policy exactly."),
]
budget = input_budget(1_000, 700, 120, 70)
assembly = assemble(segments, budget)
print(f"budget {assembly.budget}, used {assembly.used_tokens}")
print(f"{'segment':<15}{'kind':<10}{'tokens':>7}  decision")
for decision in assembly.decisions:
    print(f"{decision.name:<15}{decision.kind:<10}{decision.tokens:>7}  {decision.reason}")

# %% [markdown]
# The input list was in no particular order; the prompt always has the same one: system, tools,
# policy, memory, evidence, dialogue, user. The four required segments need 74 tokens, and because
# memory is on offer, 12 more are set aside for its notice. Evidence and then the dialogue share the
# 24 that are left (14 + 10). Memory comes last: its 26 tokens do not fit in the 0 left over plus the
# 12 kept for the notice, so the safety valve drops it — whole — and the notice takes its place. Here
# is the prompt the model receives for this budget of 110; the user's request is there word for word,
# and so is the notice, `[System Notice] Relevant memory skipped due to token budget.`:

# %%
print(assemble(segments, 110).prompt)

# %% [markdown]
# With a larger budget nothing has to give way, and memory goes in instead of the notice.

# %%
roomy = assemble(segments, 160)
print(f"used {roomy.used_tokens} of {roomy.budget};",
      "notice shown" if MEMORY_NOTICE in roomy.prompt else "memory included, no notice")

# %% [markdown]
# When the required segments alone do not fit, nothing is cut to make them fit. The call fails
# before anything is sent, and the message says by how much.

# %%
try:
    assemble(segments, 80)
except PromptBudgetError as error:
    print("PromptBudgetError:", error)

# %% [markdown]
# Assembly does not summarize either. A memory of four lines breaks the starting configuration (at
# most `MEMORY_SUMMARY_MAX` = 3 lines per memory), and the assembler refuses it instead of cutting a
# line off: summarizing is done before assembly, where someone can check what was left out.

# %%
too_long = Segment("memory", "memory", "Ana prefers small pull requests.\nShe wants Go for this task.\n"
                   "She reviews every diff.\nShe merges on Mondays.")
try:
    assemble([s for s in segments if s.kind != "memory"] + [too_long], 500)
except ValueError as error:
    print("ValueError:", error)
