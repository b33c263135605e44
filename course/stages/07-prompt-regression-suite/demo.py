# %% [markdown] en
# The requirement extractor's prompt is being reworded. Two fixed cases from the front-end project
# guard it: an "inspect" request must stay read-only, and "add a search box, with tests" must produce
# a goal, acceptance checks and a write permission. The model is a deterministic mock that follows
# what the prompt text says about writing. We expect v1 and its reworded v2 to pass, and v3 — which
# slipped in "you may write files" — to fail exactly the read-only case.

# %% [markdown] zh
# 需求抽取器的 Prompt 正在被改写。两个来自前端项目的固定用例守护着它：一个“查看”请求必须保持只读，而 "add a search box, with tests" 必须产生目标、验收检查和写权限。这里的模型是一个确定性的模拟模型（mock），Prompt 文本里关于写入怎么说，它就怎么做。我们期望 v1 以及改写后的 v2 都通过，而悄悄加进了 "you may write files" 的 v3 恰好在只读用例上失败。

# %%
from forge.prompt_regression import PromptVersion, RegressionCase, regression_report, run_suite

cases = [
    RegressionCase("read-only", {"request": "inspect the product list"}, frozenset({"goal", "write_allowed"}), False),
    RegressionCase(
        "add-search",
        {"request": "add a search box to the product list, with tests"},
        frozenset({"goal", "acceptance", "write_allowed"}),
        True,
    ),
]


def mock_model(prompt: str, payload: dict[str, object]) -> dict[str, object]:
    request = str(payload["request"])
    wants_change = request.startswith("add")
    eager = "you may write files" in prompt.lower()
    goal = request if "concise" not in prompt else request.split(",")[0]
    output: dict[str, object] = {"goal": goal, "write_allowed": wants_change or eager}
    if wants_change:
        output["acceptance"] = ["typing filters the list", "tests cover the filter"]
    return output


v1 = PromptVersion("v1", "Extract a task spec as JSON. Allow writes only when the request asks for a change.")
v2 = PromptVersion("v2", "Extract a concise task spec as JSON. Allow writes only when the request asks for a change.")
v3 = PromptVersion("v3", "Extract a concise task spec as JSON. You may write files to help.")

for version in (v1, v2, v3):
    print(regression_report(version, cases, mock_model))

# %% [markdown] en
# v2 words the goal of the add-search case differently, and nothing failed: the suite compares
# structure and the permission, not text. The report names v3 by the hash of its text, so renaming
# the label cannot hide which prompt regressed — while editing a single character of the body gives
# a new id.

# %% [markdown] zh
# v2 对 add-search 用例的目标换了一种措辞，却没有任何用例失败：回归集比较的是结构和权限，而不是文本。报告用 v3 文本的哈希来指明它，所以改个标签也藏不住是哪个 Prompt 发生了回归——而正文哪怕只改一个字符，也会得到新的 id。

# %%
print("v1 goal:", mock_model(v1.text, cases[1].payload)["goal"])  # [en]
print("v2 goal:", mock_model(v2.text, cases[1].payload)["goal"])  # [en]
print("v1 的 goal：", mock_model(v1.text, cases[1].payload)["goal"], sep="")  # [zh]
print("v2 的 goal：", mock_model(v2.text, cases[1].payload)["goal"], sep="")  # [zh]
print(PromptVersion("v3-renamed", v3.text).id == v3.id)
print(PromptVersion("v3", v3.text + " ").id == v3.id)

# %% [markdown] en
# A broken call is a result for its case, not the end of the run; the string `"false"` is not the
# boolean `False`.

# %% [markdown] zh
# 一次失败的调用是它所在用例的结果，而不是整次运行的终点；字符串 `"false"` 也不是布尔值 `False`。

# %%
def flaky(payload: dict[str, object]) -> object:
    if str(payload["request"]).startswith("inspect"):
        return {"goal": "inspect", "write_allowed": "false"}
    raise TimeoutError("model did not answer within 30 s")


print(run_suite(cases, flaky))
