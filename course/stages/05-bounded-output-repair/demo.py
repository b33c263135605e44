# %% [markdown] en
# The model was asked for a task specification for a front-end change: add a search box to the
# product list, with tests. It answered with the right object, but inside a `~~~json` fence and with
# trailing commas. `json.loads` refuses it. We expect `parse_json_object` to return the object exactly
# as written, and `repair_json_text` to report the two repairs it made.

# %% [markdown] zh
# 模型被要求为一项前端改动给出任务规格：在商品列表中加一个搜索框，并补上测试。它给出的对象没错，却包在 `~~~json` 围栏里，还带着尾逗号，`json.loads` 因此拒绝了它。我们期望 `parse_json_object` 原样返回模型写下的对象，`repair_json_text` 则报告它做了哪两项修复。

# %%
import json

from forge.output_repair import parse_json_object, repair_json_text

raw = """~~~json
{
  "goal": "add a search box to the product list",
  "acceptance": ["typing filters the list", "an empty query shows every product",],
  "write_allowed": false,
}
~~~"""

try:
    json.loads(raw)
except json.JSONDecodeError as error:
    print("json.loads:", error)  # [en]
    print("json.loads 在第 1 行第 1 列就卡住了：那里是代码围栏 ~~~json，不是 JSON 的开头。")  # [zh]
    print(f"  原文：{error}")  # [zh]

repair = repair_json_text(raw)
print("repairs applied:", repair.applied)  # [en]
print("做过的修复：", repair.applied, sep="")  # [zh]
print(parse_json_object(raw))

# %% [markdown] en
# The scanner knows where strings are. The comma inside `"a, }"` is data and stays; only the comma
# before the final brace is removed. A regular expression such as `,\s*}` would have changed the
# string as well.

# %% [markdown] zh
# 扫描器知道字符串在哪里。`"a, }"` 里的逗号是数据，会保留下来；只有最后那个右花括号前面的逗号被删掉。换成 `,\s*}` 这样的正则表达式，连字符串也会一起被改掉。

# %%
print(parse_json_object('{"note": "a, }",}'))
print(repair_json_text('{"note": "a, }",}'))

# %% [markdown] en
# Everything that is not wrapping fails with `ValueError`: prose, prose around the object, a missing
# value, a fence for another language. No field is invented — in particular no `write_allowed`.

# %% [markdown] zh
# 凡是不属于外壳的问题都以 `ValueError` 失败：普通文字、包着对象的文字、缺失的值、其他语言的围栏。不会凭空多出任何字段——尤其不会多出 `write_allowed`。

# %%
attempts = [
    "please write files",
    'Here is the spec: {"goal": "add a search box", "write_allowed": false}',
    '{"goal": "add a search box", "write_allowed": }',
    '```python\n{"goal": "add a search box"}\n```',
    '[{"goal": "add a search box"}]',
]
WHY_ZH = dict(zip(attempts, ["根本没有 JSON", "JSON 对象前面还有别的文字", "缺了一个值：修复不会替模型补上",  # [zh]
                             "代码围栏标的是 python，不是 JSON 围栏", "是 JSON 数组，不是对象"]))  # 每次失败的中文说明  # [zh]
for text in attempts:
    try:
        parse_json_object(text)
    except ValueError as error:
        print(f"{text[:28]!r:32} -> ValueError: {error}")  # [en]
        print(f"{text[:28]!r:32} -> ValueError：{WHY_ZH[text]}")  # [zh]
        print(f"{'':32}    原文：{error}")  # [zh]
