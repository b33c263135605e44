# %% [markdown] en
# The prediction case first. The library holds `old` (software, schema v1), `music` (music, v2)
# and `right` (software, v2). The task is a software request answered in schema v2. Taking the
# first two examples from storage shows the model one example with the wrong output shape and one
# from another domain; `select_examples` filters before it ranks.

# %% [markdown] zh
# 先看预测题里的情形。示例库里有 `old`（software，Schema v1）、`music`（music，v2）和 `right`（software，v2）。任务是一个要用 Schema v2 作答的软件请求。直接从存储中取前两个示例，模型看到的会是一个输出形状不对的示例，和一个来自别的领域的示例；`select_examples` 则先过滤、再排序。

# %%
from forge.fewshot import Example, select_examples

items = [
    Example("old", "software", "v1", frozenset({"ui"})),
    Example("music", "music", "v2", frozenset({"release"})),
    Example("right", "software", "v2", frozenset({"ui"})),
]
print("first two in storage:", [example.id for example in items[:2]])  # [en]
print("select_examples:     ", [example.id for example in select_examples(items, "software", "v2", {"ui"})])  # [en]
print("存储顺序的前两个：", [example.id for example in items[:2]], sep="")  # [zh]
print("select_examples：  ", [example.id for example in select_examples(items, "software", "v2", {"ui"})], sep="")  # [zh]

# %% [markdown] en
# A larger library for the requirement extractor. The task: add a search box to the product list
# and cover it with tests, so its tags are `ui`, `search` and `tests`. Only software examples in
# schema v2 are eligible; among them, the more tags an example shares with the task, the higher it
# ranks, and the id settles ties.

# %% [markdown] zh
# 为需求抽取器准备一个更大的示例库。任务：给商品列表加一个搜索框，并用测试覆盖它，所以它的标签是 `ui`、`search` 和 `tests`。只有 Schema v2 的软件示例才有资格入选；在这些示例里，与任务共有的标签越多，排得越靠前，平局由 id 决定。

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
rows = []
for example in library:
    eligible = example.scenario == "software" and example.schema_version == "v2"
    rows.append((example.id, example.scenario, example.schema_version, eligible, sorted(example.tags & task_tags)))
lab.table(["id", "scenario", "version", "", "shared tags"],  # [en]
          [(*row[:3], "eligible" if row[3] else "filtered", row[4]) for row in rows])  # [en]
lab.table(["id", "场景", "版本", "", "共有标签"],  # [zh]
          [(*row[:3], "可选" if row[3] else "已滤掉", row[4]) for row in rows])  # [zh]
chosen = select_examples(library, "software", "v2", task_tags, limit=2)
print("chosen:", [example.id for example in chosen])  # [en]
print("选中：", [example.id for example in chosen], sep="")  # [zh]

# %% [markdown] en
# `search-form-v1` shares all three tags, yet it is filtered out: it answers in schema v1, and a
# model copies the shape of what it is shown. `filter-panel` and `login-form` both share two tags;
# the id decides, so `filter-panel` comes first. `csv-export` shares nothing but is still eligible —
# with a larger limit it would be shown last. A limit of 0 asks for no examples; a negative limit
# is a mistake and fails.

# %% [markdown] zh
# `search-form-v1` 三个标签全部命中，却被过滤掉了：它用 Schema v1 作答，而模型会照抄它看到的形状。`filter-panel` 和 `login-form` 都共有两个标签；由 id 决定，所以 `filter-panel` 排在前面。`csv-export` 一个标签也不共有，但依然合格——上限再大一些，它就会排在最后展示出来。上限为 0 表示不要任何示例；负数上限是个错误，会直接失败。

# %%
print("limit=0:", select_examples(library, "software", "v2", task_tags, limit=0))
try:
    select_examples(library, "software", "v2", task_tags, limit=-1)
except ValueError as error:
    print("ValueError:", error)  # [en]
    print("ValueError：limit 是要选的示例个数，不能是负数；-1 不会被悄悄当成 0。")  # [zh]
    print(f"  原文：{error}")  # [zh]
