# %% [markdown]
# Two instructions disagree about `write`: the system says `deny`, a retrieved wiki page says
# `allow`. We expect the system value to win and the retrieved instruction to be rejected, because
# rank 3 beats rank 0 — wherever the two appear in the list.

# %%
from forge.instructions import Instruction, explain, resolve

system = Instruction("system", "write", "deny")
retrieved = Instruction("retrieved", "write", "allow")
goal = Instruction("user", "goal", "add a search box to the product list, with tests")

accepted, rejected = resolve([retrieved, system, goal])
print("accepted:", accepted)
print("rejected:", rejected)

# %% [markdown]
# The user's `goal` has no competitor, so it is kept even though `user` ranks below `system`.
# `explain` gives the audit trail behind the same decision: who won, who lost, and why.

# %%
winners, rejections = explain([retrieved, system, goal, Instruction("user", "goal", "skip the tests")])
for rejection in rejections:
    print(f"{rejection.instruction.source:>9} {rejection.instruction.key}={rejection.instruction.value!r:<10}"
          f" lost to {rejection.winner.source} ({rejection.reason})")

# %% [markdown]
# An unknown source is not guessed at; it fails closed with a message that says what to do.

# %%
try:
    resolve([Instruction("admin", "write", "allow")])
except ValueError as error:
    print("ValueError:", error)
