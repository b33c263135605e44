# %% [markdown] en
# The prediction case first. The budget is 60 tokens. The write policy is required (60 tokens,
# relevance 0.2); a design note is optional and far more relevant (60 tokens, relevance 1.0).
# We expect only the policy: required material is placed before anything is ranked, and after it
# nothing is left for the note.

# %% [markdown] zh
# 先看预测题里的情形。预算为 60 Token。写入策略是必需的（60 Token，相关性 0.2）；一条设计笔记是可选的，而且相关得多（60 Token，相关性 1.0）。我们预期只返回策略：必需材料在任何排序之前就已放入，放完之后，已经没有留给笔记的空间了。

# %%
from forge.context_selection import ContextCandidate, choose, explain_choice

policy = ContextCandidate("policy", tokens=60, relevance=0.2, trust=1.0, required=True)
note = ContextCandidate("note", tokens=60, relevance=1.0, trust=1.0)
print(choose([note, policy], budget=60))

# %% [markdown] en
# Now a real call. The task: add a search box to the product list of a front-end repository,
# change the component and add tests. Six pieces of material compete for 400 tokens. Two are
# required (the write policy and the API contract); the rest are ranked by value density,
# `relevance * trust / max(tokens, 1)`. `explain_choice` shows every decision and its reason.

# %% [markdown] zh
# 再看一次真实的调用。任务：给前端仓库里的商品列表加一个搜索框，修改组件并补上测试。六份材料争夺 400 个 Token。其中两份是必需的（写入策略和 API 契约）；其余的按价值密度 `relevance * trust / max(tokens, 1)` 排序。`explain_choice` 列出每一个决定及其原因。

# %%
candidates = [
    ContextCandidate("write-policy", tokens=80, relevance=0.3, trust=1.0, required=True),
    ContextCandidate("api-contract", tokens=60, relevance=0.6, trust=1.0, required=True),
    ContextCandidate("product-list-component", tokens=120, relevance=0.9, trust=1.0),
    ContextCandidate("test-helpers", tokens=50, relevance=0.6, trust=1.0),
    ContextCandidate("forum-snippet", tokens=40, relevance=0.9, trust=0.2),
    ContextCandidate("design-notes", tokens=150, relevance=0.8, trust=0.9),
]
tokens = {item.id: item.tokens for item in candidates}
rows = [(decision.id, tokens[decision.id], f"{decision.density:.4f}", decision.reason)
        for decision in explain_choice(candidates, budget=400)]
lab.table(["id", "tokens", "density", "decision"], rows, right=(1, 2))  # [en]
lab.table(["id", "Token", "价值密度", "决定"], rows, right=(1, 2))  # [zh]
print("chosen:", choose(candidates, budget=400))  # [en]
print("选中：", choose(candidates, budget=400), sep="")  # [zh]

# %% [markdown] en
# Read the table from the top. The two required items take 140 tokens, whatever their relevance.
# The test helpers, then the component file, have the best value per token and both fit (310
# tokens used). The design notes are relevant but cost 150 tokens — more than the 90 that are
# left — so they are skipped, and the smaller forum snippet is still tried: it fits. It was ranked
# last, below the design notes, because its low trust (0.2) cuts its value per token to 0.0045.
#
# If the required material alone is larger than the budget, nothing is returned: the call fails
# and the message says by how much.

# %% [markdown] zh
# 从上往下读这张表。两个必需项占去 140 个 Token，不管它们的相关性如何。接下来每 Token 价值最高的是测试辅助代码，其次是组件文件，两者都放得下（已用 310 Token）。设计笔记很相关，却要 150 个 Token——比剩下的 90 个还多——所以被跳过；遍历并没有停下，更小的论坛片段仍会被尝试：它放得下。它之所以排在最后、落在设计笔记之下，是因为可信度低（0.2），每 Token 价值被压到了 0.0045。
#
# 如果光是必需材料就超出预算，就什么也不返回：调用失败，消息会说明超出了多少。

# %%
try:
    choose(candidates, budget=120)
except ValueError as error:
    print("ValueError:", error)  # [en]
    print("ValueError：两份必需材料共要 140 个 Token，预算却只有 120；必需材料不能舍弃，所以什么也不返回。")  # [zh]
    print(f"  原文：{error}")  # [zh]
