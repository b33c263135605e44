# %% [markdown] en
# The model was asked to turn "add a search box to the product list, with tests" into a task
# specification. When its answer has every field, in the right types, `TaskSpec.parse` returns a
# frozen spec; the JSON lists are stored as tuples, so nothing can change the spec afterwards.

# %% [markdown] zh
# 我们请模型把“给商品列表加一个搜索框，带测试”变成一份任务规格。当它的回答字段齐全、类型正确时，`TaskSpec.parse` 返回一份冻结的规格；JSON 列表以元组保存，所以之后什么也改不了这份规格。

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

# %% [markdown] en
# Now the same answer without `write_allowed`. Parsing fails, and the message says what to do.

# %% [markdown] zh
# 现在用同一个回答，只是去掉 `write_allowed`。解析失败，消息告诉你该怎么做。

# %%
forgot = {key: value for key, value in answer.items() if key != "write_allowed"}
try:
    TaskSpec.parse(forgot)
except ValueError as error:
    print("ValueError:", error)  # [en]
    print("ValueError：答案里没有 write_allowed。能不能写入必须明说，缺了它不会默认成 false。")  # [zh]
    print(f"  原文：{error}")  # [zh]

# %% [markdown] en
# Why not quietly default to `False`? It *looks* safe, but look at what it does to information.
# Below, one caller decided "no writes" and another simply forgot the field. With a default, the
# two specs are identical — the mistake is gone without a trace. Here the task *needs* to change
# code, so the agent would fail later, far from the cause, or someone would "fix" it by flipping
# the default to `True`. Only an error keeps the decision with the caller.

# %% [markdown] zh
# 为什么不悄悄默认为 `False`？它*看起来*安全，可看看它对信息做了什么。下面，一个调用方决定了“不写入”，另一个只是忘了这个字段。有了默认值，两份规格一模一样——错误消失得无影无踪。而这个任务*需要*修改代码，于是 Agent 要么在远离原因的地方失败，要么有人把默认值改成 `True` 来“修好”它。只有报错，才能把决定权留在调用方手里。

# %%
decided = {**forgot, "write_allowed": False}
with_default = {**forgot, "write_allowed": forgot.get("write_allowed", False)}
print("explicit False == defaulted False:", TaskSpec.parse(decided) == TaskSpec.parse(with_default))  # [en]
print("明确写出的 False == 靠默认值得到的 False：", TaskSpec.parse(decided) == TaskSpec.parse(with_default), sep="")  # [zh]

# %% [markdown] en
# Why strict types? Models often write booleans as text. Plain Python coercion turns any non-empty
# string into `True` — including the string `"false"`. Lax validation is smarter but still guesses
# (`"yes"`, `"on"` and `1` become `True`). A permission must never come from a guess, so strict
# mode accepts only a real `true` or `false`.

# %% [markdown] zh
# 为什么要严格类型？模型经常把布尔值写成文本。Python 的普通强制转换会把任何非空字符串变成 `True`——连字符串 `"false"` 也不例外。宽松校验聪明一些，但仍然在猜（`"yes"`、`"on"` 和 `1` 都会变成 `True`）。权限绝不能来自猜测，所以严格模式只接受真正的 `true` 或 `false`。

# %%
print('bool("false") =', bool("false"))
for text in ["false", "yes", 1]:
    try:
        TaskSpec.parse({**answer, "write_allowed": text})
    except ValueError as error:
        print("ValueError:", error)  # [en]
        print(f"ValueError：write_allowed 必须是真正的布尔值 true 或 false，{text!r} 不算。")  # [zh]
        print(f"  原文：{error}")  # [zh]

# %% [markdown] en
# Unknown fields are rejected, not dropped: a `shell` field that nothing reads is exactly the kind of
# instruction nobody would notice. Other problems are collected into one message, sorted by field.

# %% [markdown] zh
# 未知字段会被拒绝，而不是被丢掉：一个没有任何代码读取的 `shell` 字段，恰恰就是那种谁也不会注意到的指令。其他问题被汇总成一条消息，按字段排序。

# %%
for bad in [
    {**answer, "shell": "rm -rf build", "priority": "high"},
    {**answer, "goal": "   ", "acceptance": "npm test passes"},
]:
    try:
        TaskSpec.parse(bad)
    except ValueError as error:
        print("ValueError:", error)  # [en]
        print("ValueError：" + ("多出了规格里没有的字段 priority 和 shell，不会被悄悄忽略。" if "shell" in bad else  # [zh]
                               "两处都不合规格：acceptance 必须是字符串列表，而不是一个字符串；goal 不能为空白。"))  # [zh]
        print(f"  原文：{error}")  # [zh]
