# %% [markdown]
# The model was asked to turn "add a search box to the product list, with tests" into a task
# specification. When its answer has every field, in the right types, `TaskSpec.parse` returns a
# frozen spec; the JSON lists are stored as tuples, so nothing can change the spec afterwards.

# %%
from forge.task_spec import TaskSpec

answer = {
    "goal": "add a search box to the product list",
    "inputs": ["src/components/ProductList.tsx"],
    "outputs": ["src/components/SearchBox.tsx", "src/components/SearchBox.test.tsx"],
    "acceptance": ["the list filters as you type", "npm test passes"],
    "write_allowed": True,
}
spec = TaskSpec.parse(answer)
print(spec.goal)
print("acceptance:", spec.acceptance)
print("write_allowed:", spec.write_allowed)

# %% [markdown]
# Now the same answer without `write_allowed`. Parsing fails, and the message says what to do.

# %%
forgot = {key: value for key, value in answer.items() if key != "write_allowed"}
try:
    TaskSpec.parse(forgot)
except ValueError as error:
    print("ValueError:", error)

# %% [markdown]
# Why not quietly default to `False`? It *looks* safe, but look at what it does to information.
# Below, one caller decided "no writes" and another simply forgot the field. With a default, the
# two specs are identical — the mistake is gone without a trace. Here the task *needs* to change
# code, so the agent would fail later, far from the cause, or someone would "fix" it by flipping
# the default to `True`. Only an error keeps the decision with the caller.

# %%
decided = {**forgot, "write_allowed": False}
with_default = {**forgot, "write_allowed": forgot.get("write_allowed", False)}
print("explicit False == defaulted False:", TaskSpec.parse(decided) == TaskSpec.parse(with_default))

# %% [markdown]
# Why strict types? Models often write booleans as text. Plain Python coercion turns any non-empty
# string into `True` — including the string `"false"`. Lax validation is smarter but still guesses
# (`"yes"`, `"on"` and `1` become `True`). A permission must never come from a guess, so strict
# mode accepts only a real `true` or `false`.

# %%
print('bool("false") =', bool("false"))
for text in ["false", "yes", 1]:
    try:
        TaskSpec.parse({**answer, "write_allowed": text})
    except ValueError as error:
        print("ValueError:", error)

# %% [markdown]
# Unknown fields are rejected, not dropped: a `shell` field that nothing reads is exactly the kind of
# instruction nobody would notice. Other problems are collected into one message, sorted by field.

# %%
for bad in [
    {**answer, "shell": "rm -rf build", "priority": "high"},
    {**answer, "goal": "   ", "acceptance": "npm test passes"},
]:
    try:
        TaskSpec.parse(bad)
    except ValueError as error:
        print("ValueError:", error)
