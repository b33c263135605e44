# %% [markdown]
# The prediction case first. The library holds `old` (software, schema v1), `music` (music, v2)
# and `right` (software, v2). The task is a software request answered in schema v2. Taking the
# first two examples from storage shows the model one example with the wrong output shape and one
# from another domain; `select_examples` filters before it ranks.

# %%
from forge.fewshot import Example, select_examples

items = [
    Example("old", "software", "v1", frozenset({"ui"})),
    Example("music", "music", "v2", frozenset({"release"})),
    Example("right", "software", "v2", frozenset({"ui"})),
]
print("first two in storage:", [example.id for example in items[:2]])
print("select_examples:     ", [example.id for example in select_examples(items, "software", "v2", {"ui"})])

# %% [markdown]
# A larger library for the requirement extractor. The task: add a search box to the product list
# and cover it with tests, so its tags are `ui`, `search` and `tests`. Only software examples in
# schema v2 are eligible; among them, the more tags an example shares with the task, the higher it
# ranks, and the id settles ties.

# %%
library = [
    Example("search-form-v1", "software", "v1", frozenset({"ui", "search", "tests"})),
    Example("login-form", "software", "v2", frozenset({"ui", "form", "tests"})),
    Example("filter-panel", "software", "v2", frozenset({"ui", "search"})),
    Example("csv-export", "software", "v2", frozenset({"export"})),
    Example("api-endpoint", "software", "v2", frozenset({"api", "tests"})),
    Example("release-plan", "music", "v2", frozenset({"release", "tests"})),
]
task_tags = {"ui", "search", "tests"}
for example in library:
    eligible = example.scenario == "software" and example.schema_version == "v2"
    shared = sorted(example.tags & task_tags)
    print(f"{example.id:<16}{example.scenario:<10}{example.schema_version:<4}"
          f"{'eligible' if eligible else 'filtered':<10}shared={shared}")
chosen = select_examples(library, "software", "v2", task_tags, limit=2)
print("chosen:", [example.id for example in chosen])

# %% [markdown]
# `search-form-v1` shares all three tags, yet it is filtered out: it answers in schema v1, and a
# model copies the shape of what it is shown. `filter-panel` and `login-form` both share two tags;
# the id decides, so `filter-panel` comes first. `csv-export` shares nothing but is still eligible —
# with a larger limit it would be shown last. A limit of 0 asks for no examples; a negative limit
# is a mistake and fails.

# %%
print("limit=0:", select_examples(library, "software", "v2", task_tags, limit=0))
try:
    select_examples(library, "software", "v2", task_tags, limit=-1)
except ValueError as error:
    print("ValueError:", error)
