# %% [markdown]
# The prediction case first. The budget is 60 tokens. The write policy is required (60 tokens,
# relevance 0.2); a design note is optional and far more relevant (60 tokens, relevance 1.0).
# We expect only the policy: required material is placed before anything is ranked, and after it
# nothing is left for the note.

# %%
from forge.context_selection import ContextCandidate, choose, explain_choice

policy = ContextCandidate("policy", tokens=60, relevance=0.2, trust=1.0, required=True)
note = ContextCandidate("note", tokens=60, relevance=1.0, trust=1.0)
print(choose([note, policy], budget=60))

# %% [markdown]
# Now a real call. The task: add a search box to the product list of a front-end repository,
# change the component and add tests. Six pieces of material compete for 400 tokens. Two are
# required (the write policy and the API contract); the rest are ranked by value density,
# `relevance * trust / max(tokens, 1)`. `explain_choice` shows every decision and its reason.

# %%
candidates = [
    ContextCandidate("write-policy", tokens=80, relevance=0.3, trust=1.0, required=True),
    ContextCandidate("api-contract", tokens=60, relevance=0.6, trust=1.0, required=True),
    ContextCandidate("product-list-component", tokens=120, relevance=0.9, trust=1.0),
    ContextCandidate("test-helpers", tokens=50, relevance=0.6, trust=1.0),
    ContextCandidate("forum-snippet", tokens=40, relevance=0.9, trust=0.2),
    ContextCandidate("design-notes", tokens=150, relevance=0.8, trust=0.9),
]
print(f"{'id':<24}{'tokens':>7}{'density':>10}  decision")
tokens = {item.id: item.tokens for item in candidates}
for decision in explain_choice(candidates, budget=400):
    print(f"{decision.id:<24}{tokens[decision.id]:>7}{decision.density:>10.4f}  {decision.reason}")
print("chosen:", choose(candidates, budget=400))

# %% [markdown]
# Read the table from the top. The two required items take 140 tokens, whatever their relevance.
# The test helpers, then the component file, have the best value per token and both fit (310
# tokens used). The design notes are relevant but cost 150 tokens — more than the 90 that are
# left — so they are skipped, and the smaller forum snippet is still tried: it fits. It was ranked
# last, below the design notes, because its low trust (0.2) cuts its value per token to 0.0045.
#
# If the required material alone is larger than the budget, nothing is returned: the call fails
# and the message says by how much.

# %%
try:
    choose(candidates, budget=120)
except ValueError as error:
    print("ValueError:", error)
