# %% [markdown] en
# First the budget. A model's context window is not all input: room must stay free for the answer
# (O), for the results of the tool calls this round will make (R), and as a protocol and safety margin
# for overhead and estimation errors (S). For a 200 000-token window that keeps 8 000 for the answer,
# 16 000 for tool results and 4 000 as a margin, the input budget is B = W − O − R − S:

# %% [markdown] zh
# 先算预算。模型的上下文窗口并不全归输入：必须给回答（O）、本轮工具调用的返回结果（R）留出空间，还要留一段协议与安全余量来应对额外开销和估算误差（S）。对一个 200,000 Token 的窗口，如果为回答留 8,000、为工具结果留 16,000、余量留 4,000，输入预算就是 B = W − O − R − S：

# %%
from forge.prompt_assembly import (MEMORY_NOTICE, PromptBudgetError, Segment, assemble, input_budget,
                                   safety_margin_for)

print(input_budget(200_000, 8_000, 16_000, 4_000))

# %% [markdown] en
# Where does S come from? The token-safe assembler this stage follows fills at most 75 % of the window
# (`SAFETY_THRESHOLD`), so a quarter stays free: for its example window of 204 000 tokens that is
# 51 000, and with nothing else reserved the budget is 153 000. And where an API caps the output on its
# own, that cap is checked on its own: here the window would happily "reserve" 16 000 tokens of answer,
# but the API never returns more than 8 000.

# %% [markdown] zh
# S 从哪里来？本阶段参照的 Token 安全组装器最多只填满窗口的 75%（`SAFETY_THRESHOLD`），空出四分之一：对它举例用的 204,000 Token 窗口来说就是 51,000，其他什么都不预留时，预算是 153,000。另外，如果 API 对输出另有上限，就要单独检查这个上限：只看窗口，为回答预留 16,000 Token 完全放得下，可这个 API 一次最多只返回 8,000 个。

# %%
print(safety_margin_for(204_000), input_budget(204_000, 0, 0, safety_margin_for(204_000)))
try:
    input_budget(200_000, 16_000, 4_000, 2_000, max_output=8_000)
except ValueError as error:
    print("ValueError:", error)  # [en]
    print("ValueError：要为回答预留 16,000 个 Token，可这个 API 一次最多只返回 8,000 个——预留不能超过输出上限。")  # [zh]
    print(f"  原文：{error}")  # [zh]

# %% [markdown] en
# To keep the numbers readable, the rest of this demo pretends the window is tiny: 1 000 tokens, of
# which 700 are kept for the answer, 120 for tool results and 70 as a margin. That leaves 110 for the
# input of one call. The call is the search-box task from the software scenario, with all seven kinds
# of segment. Tokens are counted with the same transparent teaching units as in stage 09.

# %% [markdown] zh
# 为了让数字好读，演示的其余部分假设窗口很小：1,000 Token，其中 700 留给回答，120 留给工具结果，70 作为余量，一次调用的输入还剩 110。这次调用是 software 场景里的搜索框任务，七种片段一应俱全。Token 用与阶段 09 相同的透明教学单位计数。

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
print(f"budget {assembly.budget}, used {assembly.used_tokens}")  # [en]
print(f"预算 {assembly.budget}，已用 {assembly.used_tokens}")  # [zh]
rows = [(decision.name, decision.kind, decision.tokens, decision.reason) for decision in assembly.decisions]
lab.table(["segment", "kind", "tokens", "decision"], rows, right=(2,))  # [en]
lab.table(["片段", "类型", "Token", "决定"], rows, right=(2,))  # [zh]

# %% [markdown] en
# The input list was in no particular order; the prompt always has the same one: system, tools,
# policy, memory, evidence, dialogue, user. The four required segments need 74 tokens, and because
# memory is on offer, 12 more are set aside for its notice. Evidence and then the dialogue share the
# 24 that are left (14 + 10). Memory comes last: its 26 tokens do not fit in the 0 left over plus the
# 12 kept for the notice, so the safety valve drops it — whole — and the notice takes its place. Here
# is the prompt the model receives for this budget of 110; the user's request is there word for word,
# and so is the notice, `[System Notice] Relevant memory skipped due to token budget.`:

# %% [markdown] zh
# 输入列表的顺序是随意的；Prompt 的顺序却始终如一：`system`、`tools`、`policy`、`memory`、`evidence`、`dialogue`、`user`。四个必需片段需要 74 个 Token；由于提供了记忆，还要另外为它的提示行预留 12 个。证据和对话依次分享剩下的 24 个（14 + 10）。记忆排在最后：它的 26 个 Token 放不进剩下的 0 个加上为提示行预留的 12 个，于是安全阀把它——整块——舍弃，由提示行顶替它的位置。下面是预算为 110 时模型收到的 Prompt，用户的请求一字不差地在里面，提示行 `[System Notice] Relevant memory skipped due to token budget.` 也在：

# %%
print(assemble(segments, 110).prompt)

# %% [markdown] en
# With a larger budget nothing has to give way, and memory goes in instead of the notice.

# %% [markdown] zh
# 预算更大时，什么都不必让路，放进去的就是记忆，而不是提示行。

# %%
roomy = assemble(segments, 160)
print(f"used {roomy.used_tokens} of {roomy.budget};",  # [en]
      "notice shown" if MEMORY_NOTICE in roomy.prompt else "memory included, no notice")  # [en]
print(f"已用 {roomy.used_tokens} / {roomy.budget}；",  # [zh]
      "出现了提示行" if MEMORY_NOTICE in roomy.prompt else "记忆已放入，没有提示行", sep="")  # [zh]

# %% [markdown] en
# When the required segments alone do not fit, nothing is cut to make them fit. The call fails
# before anything is sent, and the message says by how much.

# %% [markdown] zh
# 如果光是必需片段就放不下，不会为了塞进去而截断任何东西。调用在发送之前就会失败，错误信息会说明差了多少。

# %%
try:
    assemble(segments, 80)
except PromptBudgetError as error:
    print("PromptBudgetError:", error)  # [en]
    print("PromptBudgetError：必需片段要 74 个 Token，再加上为提示行预留的 12 个，预算却只有 80。"  # [zh]
          "必需的文本从不截断，所以调用在发送之前就失败了。")  # [zh]
    print(f"  原文：{error}")  # [zh]

# %% [markdown] en
# Assembly does not summarize either. A memory of four lines breaks the starting configuration (at
# most `MEMORY_SUMMARY_MAX` = 3 lines per memory), and the assembler refuses it instead of cutting a
# line off: summarizing is done before assembly, where someone can check what was left out.

# %% [markdown] zh
# 组装也不负责摘要。一条四行的记忆违反了起步配置（每条记忆最多 `MEMORY_SUMMARY_MAX` = 3 行），组装器会拒绝它，而不是砍掉一行：摘要发生在组装之前，在那里才有人能核对被省掉了什么。

# %%
too_long = Segment("memory", "memory", "Ana prefers small pull requests.\nShe wants Go for this task.\n"
                   "She reviews every diff.\nShe merges on Mondays.")
try:
    assemble([s for s in segments if s.kind != "memory"] + [too_long], 500)
except ValueError as error:
    print("ValueError:", error)  # [en]
    print("ValueError：这条记忆有 4 行，超过了 MEMORY_SUMMARY_MAX = 3。请先把它摘要好再组装——组装器从不删减。")  # [zh]
    print(f"  原文：{error}")  # [zh]
