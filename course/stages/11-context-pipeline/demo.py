# %% [markdown] en
# Ana's question from the problem: why does an empty exclude filter skip every item? The retriever
# found `e17`, one line of `src/filter.py` at r42. The harness knows what that line needs: the config
# type (which in turn needs the truthiness of `Filter`) and the `skip` helper. We expect `e17` to be
# admitted together with all three — a closure of four objects.

# %% [markdown] zh
# 回到问题里 Ana 的疑问：为什么一个空的 exclude 过滤器会跳过所有条目？检索器找到了 `e17`——`src/filter.py` 在 r42 版本里的一行代码。Harness 知道这行代码要读懂还需要什么：配置类型（而配置类型又要靠 `Filter` 的真值语义才说得清），以及 `skip` 这个辅助函数。我们预期 `e17` 会连同这三个对象一起被准入——一个由四个对象组成的闭包。

# %%
from forge.context_pipeline import (ContextBudgetError, ContextObject, cache_break_even, close_dependencies,
                                    estimate_tokens, invalidate, plan_deletions, render_memory_block, reusable_prefix)
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
print("admitted:", closure.admitted)  # [en]
print("准入：", closure.admitted, sep="")  # [zh]
for decision in closure.decisions:
    print(decision)

# %% [markdown] en
# Now Q050's counter-example: only the line itself was loaded. Instead of handing the model half a
# chain, `close_dependencies` refuses and names every absent object of the closure. A cycle is refused
# in the same way, naming the objects on it.

# %% [markdown] zh
# 再看 Q050 的反例：只加载了这一行本身。`close_dependencies` 不会把半条证据链交给模型，而是直接拒绝，并列出闭包里每一个缺失的对象。遇到循环依赖也一样拒绝，并指出环上的对象。

# %%
print(close_dependencies(["e17"], [e17]).decisions)
loop = [ContextObject("a", "evidence", "a", depends_on=("b",)), ContextObject("b", "evidence", "b", depends_on=("a",))]
print(close_dependencies(["a"], loop).decisions)

# %% [markdown] en
# Two rounds later the config type moves from r42 to r43. Everything that was read on top of it and
# declared `expires_on_change` goes stale, nearest first: `e17` itself, then the test that depends on
# it. The summary "why" was derived from `e17`, so it expires too — whatever its flag — with
# `source_changed`. An object without the flag would have stopped the chain.

# %% [markdown] zh
# 两轮之后，配置类型从 r42 变成了 r43。凡是在它之上读出来、并声明了 `expires_on_change` 的东西都过期了，由近及远：先是 `e17` 本身，然后是依赖它的测试。摘要“why”是从 `e17` 派生的，所以它也过期——不管有没有标志——原因是 `source_changed`。如果某个对象没有这个标志，链条就会在它那里断开。

# %%
test = ContextObject("test-exclude", "evidence", "test_empty_exclude_keeps_items expects no skip.", "r42",
                     "tests/test_filter.py", ("e17",), True)
why = ContextObject("why", "summary", "Filter([]) is truthy, so an empty exclude skips every item.",
                    derived_from=("e17", "filter-bool"))
for decision in invalidate([*code, test, why], "type-config", "r43"):
    print(f"{decision.object_id:<13}{decision.reason:<20}{', '.join(decision.related)}")

# %% [markdown] en
# A stable prefix — the system prompt and the tool schemas, 6 000 tokens — is sent with every call.
# Is a prompt cache worth it? With the prices below, caching costs `P·w + n·P·c` and not caching
# `(n+1)·P·u`. Without any reuse the cache write is pure extra cost; from the first reuse on, it pays.
# The costs are computed as exact fractions and printed here in µ$.

# %% [markdown] zh
# 一段稳定的前缀——系统提示词加工具 Schema，共 6,000 个 Token——每次调用都会发送。值不值得用 Prompt 缓存？按下面的价格，用缓存的开销是 `P·w + n·P·c`，不用缓存是 `(n+1)·P·u`。一次都不复用时，写入缓存纯属额外开销；从第一次复用开始，缓存就划算了。开销按精确分数计算，这里以 µ$ 为单位打印。

# %%
# prices per token in millionths of a dollar (µ$): $3.00, $0.30 and $3.75 per million tokens
PREFIX, UNCACHED, CACHED, WRITE = 6_000, 3, 0.3, 3.75
for reuses in range(4):
    result = cache_break_even(PREFIX, reuses, UNCACHED, CACHED, WRITE)
    print(f"n = {reuses}: cached {float(result.cached_cost):>8.0f}  uncached {float(result.uncached_cost):>8.0f}"  # [en]
    print(f"n = {reuses}：用缓存 {float(result.cached_cost):>8.0f}  不用缓存 {float(result.uncached_cost):>8.0f}"  # [zh]
          f"  -> {result.decision}")

# %% [markdown] en
# Compressing a long history is a different bargain. Suppose 40 000 tokens of history are already in
# the cache and read at the cache price every round. Compressing them to a 4 000-token summary costs a
# model call (here 8 000 µ$), and the summary is a new prefix that must be written first. In the first
# rounds, keeping the cached history is cheaper; only from the third round on does the compression pay
# — and that is before counting the risk that the summary dropped a condition or a piece of evidence.

# %% [markdown] zh
# 压缩一段长历史则是另一笔账。假设 40,000 Token 的历史已经在缓存里，每一轮都按缓存价格读取。把它压缩成 4,000 Token 的摘要，要花一次模型调用（这里算 8,000 µ$），而摘要是一段新的前缀，得先写入缓存。头两轮里，留着缓存的历史更便宜；要到第三轮，压缩才开始回本——这还没算上摘要可能丢掉某个前提条件或某条证据的风险。

# %%
history, summary, call = 40_000, 4_000, 8_000  # tokens of history and summary; the compression call in µ$
for rounds in range(1, 6):
    keep = rounds * history * CACHED
    compress = call + summary * WRITE + (rounds - 1) * summary * CACHED
    print(f"after {rounds} round(s): keep the cached history {keep:>8.0f}  compress it {compress:>8.0f}")  # [en]
    print(f"{rounds} 轮之后：保留缓存中的历史 {keep:>8.0f}  压缩它 {compress:>8.0f}")  # [zh]

# %% [markdown] en
# The break-even assumes one thing the inequality does not show: the prefix must be *identical*. A cache
# reuses a request only up to its first difference (`reusable_prefix` compares two requests part by
# part). A timestamp at the front of every request changes the very first part, so nothing after it is
# reused, although every other word is the same; at the end it costs only itself. Identical text can
# still miss: another model, or the same tools serialized in another order, changes the prefix before
# the text begins — and a cache can also have expired or been evicted, which no string comparison shows,
# so read the cache usage the service reports. Some services cache on their own and charge no separate
# write: then w = u, a tie at n = 0, and a gain from the first reuse on.

# %% [markdown] zh
# 盈亏平衡还默认了一件不等式里看不出来的事：前缀必须**完全相同**。缓存只能复用一个请求到它第一处不同为止（`reusable_prefix` 逐部分比较两个请求）。如果每个请求的最前面都放一个时间戳，第一部分就变了，后面哪怕每个字都一样，也什么都复用不了；放在末尾，它只让自己那一小段失效。文本相同也可能没命中：换了模型，或者同样的工具按另一种顺序序列化，前缀在正文开始之前就已经不同——缓存也可能已经过期或被逐出，这些字符串比较都看不出来，所以要看服务报告的缓存用量。有些服务自动缓存，不单独收写入费：这时 w = u，n = 0 时打平，从第一次复用起就划算。

# %%
STABLE_PARTS = ["model: coder-1", "Tools: read_file(path), run_tests(), write_file(path, text).",
                "You are a careful coding assistant for a front-end repository. Follow the policy exactly."]
ASKED = "Why does an empty exclude filter skip every item?"
PREFIX_CASES = [
    ([*STABLE_PARTS, ASKED, "Now: 09:15"], [*STABLE_PARTS, ASKED, "Now: 09:16"]),
    (["Now: 09:15", *STABLE_PARTS, ASKED], ["Now: 09:16", *STABLE_PARTS, ASKED]),
    ([*STABLE_PARTS, ASKED], ["model: coder-2", *STABLE_PARTS[1:], ASKED]),
    ([*STABLE_PARTS, ASKED], [STABLE_PARTS[0], "Tools: run_tests(), read_file(path), write_file(path, text).",
                              *STABLE_PARTS[2:], ASKED]),
]
LABELS = ["timestamp at the end", "timestamp at the front", "another model", "tools in another order"]
LABELS_ZH = ["时间戳在末尾", "时间戳在开头", "换了模型", "工具换了顺序"]
for label, label_zh, (before, now) in zip(LABELS, LABELS_ZH, PREFIX_CASES):
    total = sum(estimate_tokens(part) for part in now)
    print(f"{label:<24}reused {reusable_prefix(before, now):>3} of {total} tokens")  # [en]
    print(f"{label_zh}：{total} 个 Token 里复用了 {reusable_prefix(before, now)} 个")  # [zh]
print("no write price (w = u):", [cache_break_even(PREFIX, n, UNCACHED, CACHED, UNCACHED).decision for n in range(3)])  # [en]
print("不单独收写入费（w = u）：", [cache_break_even(PREFIX, n, UNCACHED, CACHED, UNCACHED).decision for n in range(3)], sep="")  # [zh]

# %% [markdown] en
# Just-in-time loading saves the tokens of what is not needed, never a premise. The harness first shows a
# light index — ids, sources and dependencies, no text — and loads content only once the round knows what
# it needs, with its dependency closure. Here the index lists the four code objects and ten search hits
# without their text; asking for `e17` fetches exactly its four objects and none of the hits. An index whose entry for `e17`
# misses a dependency would be caught when `e17` arrives: a stale index is refused, not trusted. Loading
# just in time, trimming, summarizing and moving material out of the context are four different
# operations, chosen per object: freshly retrieved code is usually kept whole, because an early summary
# can drop the exact condition.

# %% [markdown] zh
# 按需加载省下的是用不上的内容的 Token，从来不是前提。Harness 先给出一份轻量索引——id、来源和依赖，不带正文——等这一轮确定了需要什么，才连同依赖闭包一起加载内容。这里，索引列出四个代码对象和十条搜索结果，但不带正文；请求 `e17` 时，恰好取回它的四个对象，一条搜索结果也不取。如果索引里 `e17` 的条目漏了一个依赖，`e17` 一取回来就会被发现：过时的索引会被拒绝，而不是被信任。按需加载、裁剪、摘要和把材料移出上下文是四种不同的操作，要按对象来选：刚检索到的代码通常保留原样，因为过早的摘要可能丢掉那个精确的条件。

# %%
from forge.context_pipeline import load_just_in_time, light_index

library = {item.id: item for item in [*code, *(ContextObject(f"hit-{n:02d}", "tool_output",
                                                                  f"Search result {n}: a forum page about filters.",
                                                                  source=f"search:filters#{n}") for n in range(10))]}
index = light_index(list(library.values()))
fetched: list[str] = []


def fetch(object_id: str) -> ContextObject:
    fetched.append(object_id)
    return library[object_id]


load = load_just_in_time(["e17"], list(index), fetch)
loaded_units = sum(estimate_tokens(item.text) for item in load.loaded)
text_units = sum(estimate_tokens(item.text) for item in library.values())
print(f"index: {len(index)} entries, no text; loaded {len(load.loaded)} objects, {loaded_units} of {text_units} units")  # [en]
print(f"索引：{len(index)} 条，不带正文；加载了 {len(load.loaded)} 个对象，{text_units} 个单位里的 {loaded_units} 个")  # [zh]
print("fetched:", fetched)  # [en]
print("取回：", fetched, sep="")  # [zh]
print(load.decisions)

# %% [markdown] en
# Later in the session the context is 120 tokens over budget. Besides the code objects it holds Ana's
# goal, her first message "Do not change the public API", a deploy started earlier whose outcome is
# unknown, the negative result about option B, three turns of chat, ten search hits, and a fourth turn
# in which Ana pasted her first message again. `plan_deletions` goes by role, not by age: the pasted
# copy first — a duplicate, and the copy kept is the constraint, which nothing deletes — then the tool
# output, larger first, then history. The goal, the constraint, the pending deploy, the negative result
# and the code the request depends on stay.

# %% [markdown] zh
# 会话后段，上下文超出预算 120 个 Token。除了那几个代码对象，里面还有 Ana 的目标、她的第一句话“Do not change the public API”（不要改公共 API）、一个早先启动、结果未知的部署、关于方案 B 的否定结论、三轮对话、十条搜索结果，以及第四轮对话——Ana 把她的第一句话又粘贴了一遍。`plan_deletions` 按角色删除，而不是按新旧：先删这份粘贴的副本——它是重复项，保留下来的那一份是那条约束，而约束什么都删不掉——再删工具输出（大的在前），然后是历史。目标、约束、未决的部署、否定结论，以及请求所依赖的代码，都留了下来。

# %%
goal = ContextObject("goal", "goal", "Explain why an empty exclude filter skips items.")
keep_api = ContextObject("keep-api", "constraint", "Do not change the public API.")
deploy = ContextObject("deploy", "pending_action", "deploy-preview started; outcome unknown")
ruled_out = ContextObject("option-b", "negative_result", "Option B (cache Filter truthiness) breaks test_exclude_none.")
turns = [ContextObject(f"turn-{n}", "history", text) for n, text in
         enumerate(["Ana: the list skips everything.", "Bot: reading src/filter.py now.", "Ana: ok, thanks!"], 1)]
hits = [ContextObject(f"hit-{n:02d}", "tool_output", f"Search result {n}: a forum page about filters.",
                      source=f"search:filters#{n}") for n in range(10)]
pasted = ContextObject("turn-4", "history", "do not change the  PUBLIC API.")
context = [goal, keep_api, *turns, pasted, *code, deploy, ruled_out, *hits]
plan = plan_deletions(context, 120)
rows = [(decision.object_id, decision.reason, decision.tokens, ", ".join(decision.related)) for decision in plan]
lab.table(["deleted", "reason", "tokens", "related"], rows, right=(2,))  # [en]
lab.table(["删除", "原因", "Token", "关联"], rows, right=(2,))  # [zh]
print("still there:", ", ".join(item.id for item in context if item.id not in {d.object_id for d in plan}))  # [en]
print("仍然保留：", "、".join(item.id for item in context if item.id not in {d.object_id for d in plan}), sep="")  # [zh]

# %% [markdown] en
# When even deleting everything that may go is not enough, nothing protected is touched: the call
# fails and says how much could be freed against how much was needed. The round has to become smaller.

# %% [markdown] zh
# 如果把能删的全删掉还是不够，受保护的东西也一样不动：调用直接失败，并说明最多能腾出多少、实际需要多少。这一轮的范围得缩小。

# %%
try:
    plan_deletions(context, 200)
except ContextBudgetError as error:
    print("ContextBudgetError:", error)  # [en]
    print("ContextBudgetError：把删除顺序允许删的全删掉，也只腾出 130 个 Token，可上下文超出预算 200 个。"  # [zh]
          "请收窄这一轮的目标，或者把工作拆开。")  # [zh]
    print(f"  原文：{error}")  # [zh]

# %% [markdown] en
# Source 004 *reduces* tool returns before it drops them; here the caller does that, and `plan_deletions`
# only decides. Say the caller summarizes the ten search hits into one line: the summary names what it
# was made from in `derived_from`, frees most of their tokens, and expires as soon as one of them changes
# — it is derived material, never a source of its own.

# %% [markdown] zh
# 资料 004 在删掉工具返回之前先**缩减**它们；在这里缩减由调用方来做，`plan_deletions` 只做决定。假设调用方把十条搜索结果摘要成一行：摘要在 `derived_from` 里写明它由哪些对象生成，腾出了它们大部分的 Token，而只要其中一条变了，它就随之过期——它是派生材料，自己永远成不了来源。

# %%
digest = ContextObject("hits-digest", "summary", "Ten forum pages on filters; none explains Filter.__bool__.",
                       derived_from=tuple(hit.id for hit in hits))
before, after = sum(estimate_tokens(hit.text) for hit in hits), estimate_tokens(digest.text)
print(f"ten hits: {before} tokens; the summary: {after}")  # [en]
print(f"十条搜索结果：{before} 个 Token；摘要：{after} 个", sep="")  # [zh]
for decision in invalidate([*hits, digest], "hit-03", "r2"):
    print(decision)

# %% [markdown] en
# Memory enters a context like any other object — priced as the block the model reads. Stage 09's
# `render_memory_block` is re-exported here: the three units of "Use Go." become 43 once the wrapper,
# the id and the source are counted.

# %% [markdown] zh
# 记忆进入上下文，和其他对象没有两样——按模型真正读到的那个块计价。阶段 09 的 `render_memory_block` 在这里被重新导出：“Use Go.”这三个单位，算上外壳、id 和出处之后就成了 43 个。

# %%
memory = MemoryCandidate("m-go", "Use Go.", "ana", 0.9, 1, source="chat:2026-03-02")
block = render_memory_block([memory])
print(f"the text: {estimate_tokens(memory.text)} units; the block the model reads: {block.tokens} units")  # [en]
print(f"正文 {estimate_tokens(memory.text)} 个单位；模型读到的整个块 {block.tokens} 个单位")  # [zh]
print(block.text)

# %% [markdown] en
# **One turn through stages 09 → 10 → 11.** The three extension stages are one pipeline: each stage's
# real output is the next one's input. Stage 09 decides Ana's recalled memories with its defaults
# (`top_k = 3`) and renders the selected ones as one `<recalled_memory>` block. Bo's memory never passes
# the scope gate, the Python default loses its slot to this turn's Go request, and the note about commit
# messages is the fourth survivor: `top_k_reached`.

# %% [markdown] zh
# **一轮对话，依次走过阶段 09 → 10 → 11。** 这三个扩展阶段是同一条流水线：每个阶段真实的输出，就是下一个阶段的输入。阶段 09 用它的默认值（`top_k = 3`）裁决 Ana 被召回的记忆，并把选中的记忆渲染成一个 `<recalled_memory>` 块。Bo 的记忆过不了作用域门禁；Python 那条默认偏好把槽位输给了本轮的 Go 要求；关于提交信息的那条是第四条存活的记忆：`top_k_reached`。

# %%
from forge.memory_selection import select_memories
from forge.prompt_assembly import Segment, assemble, input_budget, safety_margin_for

recalled = [
    MemoryCandidate("m-go", "Write the release script in Go.", "ana", 0.62, 3, "preference:automation-language",
                    "current_turn", "chat:turn-7"),
    MemoryCandidate("m-py", "I usually write automation in Python.", "ana", 0.91, 1, "preference:automation-language",
                    "user_default", "chat:2026-01-12"),
    MemoryCandidate("m-diff", "Ana reviews every diff herself before merging.", "ana", 0.8, 2, source="chat:2026-02-20"),
    MemoryCandidate("m-vitest", "Tests run with Vitest, never Jest.", "ana", 0.7, 4, source="repo:package.json"),
    MemoryCandidate("m-commits", "Commit messages follow Conventional Commits.", "ana", 0.5, 5,
                    source="repo:CONTRIBUTING.md"),
    MemoryCandidate("m-bo", "Use Rust for everything.", "bo", 0.99, 1),
]
selection = select_memories(recalled, "ana")
for decision in selection.decisions:
    print(f"{decision.memory_id:<10}{decision.reason}")
print(selection.context)

# %% [markdown] en
# Stage 10 takes that block as it is, as one memory segment: its limits count the three `<memory_hit>`
# entries, not the five lines of XML. With `B = 1000 − 400 − 100 − 250 = 250` everything fits. On a budget
# one token too small, the safety valve drops the whole block — memory is the first to go — and the notice
# takes its place; the evidence and the dialogue stay.

# %% [markdown] zh
# 阶段 10 把这个块原样当作一个记忆片段接过来：它的限制数的是块里的三个 `<memory_hit>`，而不是五行 XML。预算 `B = 1000 − 400 − 100 − 250 = 250` 时，所有片段都放得下。预算只差一个 Token 时，安全阀把整个块舍弃——记忆最先被舍弃——由提示行顶替它的位置；证据和对话都留着。

# %%
segments = [
    Segment("system", "system", "You are a careful coding assistant for a front-end repository."),
    Segment("tools", "tools", "Tools: read_file(path), run_tests(), write_file(path, text) - write_file needs approval."),
    Segment("policy", "policy", "Write policy: deny until a human approves the plan."),
    Segment("memory", "memory", selection.context),
    Segment("e17", "evidence", "if config.exclude: return skip(item)"),
    Segment("turn-1", "dialogue", "Ana: the list skips every item once exclude is empty."),
    Segment("request", "user", "Explain why an empty exclude filter skips items; do not change the public API."),
]
budget = input_budget(1000, 400, 100, safety_margin_for(1000))
turn = assemble(segments, budget)
tight = assemble(segments, turn.used_tokens - 1)
print(f"budget {budget}: {turn.used_tokens} used")  # [en]
print(f"预算 {budget}：用了 {turn.used_tokens}")  # [zh]
for decision in turn.decisions:
    print(f"  {decision.name:<15}{decision.tokens:>4}  {decision.reason}")
print(f"budget {tight.budget}:")  # [en]
print(f"预算 {tight.budget}：")  # [zh]
for decision in tight.decisions:
    print(f"  {decision.name:<15}{decision.tokens:>4}  {decision.reason}")

# %% [markdown] en
# Stage 11 keeps the turn's segments as context objects across turns. The next turn brings ten search
# hits and a reply, and keeps more room for tool results (R = 200), so the budget falls to 150 while the
# context grows. Nothing is a duplicate, stale or irrelevant, so the first to go is the memory — whole,
# priced exactly as stage 10 priced it — and then the largest tool output. The goal, the rules and the
# evidence stay, and what is left fits the next call.

# %% [markdown] zh
# 阶段 11 把这一轮的片段作为上下文对象，跨轮保留下来。下一轮带来十条搜索结果和一条回复，还要为工具结果多留空间（R = 200），于是上下文在增长，预算却降到 150。没有哪个对象是重复的、过时的或无关的，所以最先删掉的是记忆——整块删除，价格和阶段 10 算的一模一样——然后是最大的工具输出。目标、规则和证据都留着，剩下的内容放得进下一次调用。

# %%
kind_of = {"system": "constraint", "tools": "tool_schema", "policy": "constraint", "memory": "memory",
           "evidence": "evidence", "dialogue": "history", "user": "goal"}
session = [ContextObject(item.name, kind_of[item.kind], item.text) for item in segments]
session += [ContextObject(f"hit-{n:02d}", "tool_output", f"Search result {n}: a forum page about filters.",
                          source=f"search:filters#{n}") for n in range(10)]
session.append(ContextObject("turn-2", "history", "Bot: reading src/filter.py now."))
next_budget = input_budget(1000, 400, 200, safety_margin_for(1000))
over_by = sum(estimate_tokens(item.text) for item in session) - next_budget
deletions = plan_deletions(session, over_by)
print(f"next budget {next_budget}, over by {over_by}:")  # [en]
print(f"下一轮预算 {next_budget}，超出 {over_by}：")  # [zh]
for decision in deletions:
    print(f"  {decision.object_id:<8}{decision.reason:<13}{decision.tokens:>4}")
gone = {decision.object_id for decision in deletions}
by_name = {item.name: item for item in segments}
left = [by_name.get(item.id, Segment(item.id, "dialogue" if item.kind == "history" else "evidence", item.text))
        for item in session if item.id not in gone]
after = assemble(left, next_budget)
print(f"the next call: {after.used_tokens} of {next_budget}, every segment whole")  # [en]
print(f"下一次调用：{next_budget} 里用了 {after.used_tokens}，每个片段都完整")  # [zh]
