# caption: Four pairs of requests from the worked demonstration, part by part, and how many tokens of the second one a prompt cache can reuse, as the reference reusable_prefix computes it.
# alt: Four rows of coloured boxes, one box per request part: model, tools, system text, question and, in two rows, a timestamp. Reused parts are green, recomputed parts red. With the timestamp at the end every part but the timestamp is green. With the timestamp at the front every part is red: nothing is reused although the rest is identical. With another model every part is red. With the tools listed in another order only the model part is green. The number of reused tokens of the total is written at the right of each row.
# caption.zh: 教师示范里的四对请求，逐部分画出；以及参考实现的 reusable_prefix 算出的、Prompt 缓存能复用第二个请求的多少个 Token。
# alt.zh: 四行彩色方块，每个方块是请求的一部分：模型、工具、系统正文、问题，其中两行还有一个时间戳。被复用的部分是绿色，需要重新计算的部分是红色。时间戳在末尾时，除了时间戳，其余部分都是绿色。时间戳在开头时，所有部分都是红色：其余内容完全相同，却什么也复用不了。换了模型时，所有部分都是红色。工具换了顺序时，只有模型那一部分是绿色。每一行右边写着复用的 Token 数和总数。
"""Stage 11's second figure: what a prompt cache can reuse of four requests, computed by the reference ``reusable_prefix``.

``forgelab build`` runs this file against the reference and writes ``figure-prefix.svg`` beside it, and
once more with ``--lang zh`` for ``figure-prefix_zh.svg``: only the words below differ, never a number.
"""

import sys

from forgelab.authoring.figures import INK, MUTED, demo_namespace, plot_language, pyplot, svg_of

LANG = plot_language()
WORDS = {
    "en": {"title": "What a prompt cache can reuse: the identical prefix, up to the first difference",
           "rows": ["timestamp at the end", "timestamp at the front", "another model", "tools in another order"],
           "parts": {"model": "model", "Tools": "tools", "You": "system", "Why": "question", "Now": "time"},
           "reused": "{r} of {t} reused", "legend": "green: reused from the cache · red: computed again"},
    "zh": {"title": "Prompt 缓存能复用什么：完全相同的前缀，到第一处不同为止",
           "rows": ["时间戳在末尾", "时间戳在开头", "换了模型", "工具换了顺序"],
           "parts": {"model": "模型", "Tools": "工具", "You": "系统", "Why": "问题", "Now": "时间"},
           "reused": "{t} 个里复用 {r} 个", "legend": "绿色：从缓存复用 · 红色：重新计算"},
}[LANG]

demo = demo_namespace(__file__)
cases, reusable, count = demo["PREFIX_CASES"], demo["reusable_prefix"], demo["estimate_tokens"]
assert reusable(*cases[1]) == 0 and reusable(*cases[0]) > 0, "the figure tells the demonstration's story"
REUSED, AGAIN = "#2e7d4f", "#b3372b"

plt = pyplot(LANG)
figure, axes = plt.subplots(figsize=(8.4, 0.55 * len(cases) + 0.9))
longest = 0
for row, (before, now) in enumerate(cases):
    same = next((i for i, (a, b) in enumerate(zip(before, now)) if a != b), min(len(before), len(now)))
    reused, left = reusable(before, now), 0
    assert reused == sum(count(part) for part in now[:same]), "whole parts are reused, up to the first difference"
    for index, part in enumerate(now):
        tokens = count(part)
        axes.barh(row, tokens, left=left, height=0.6, color=REUSED if index < same else AGAIN, edgecolor="#ffffff")
        axes.text(left + tokens / 2, row, WORDS["parts"][part.split(":")[0].split()[0]], ha="center", va="center",
                  fontsize=9, color="#ffffff")
        left += tokens
    longest = max(longest, left)
    axes.annotate(WORDS["reused"].format(r=reused, t=left), (left, row), xytext=(8, 0), textcoords="offset points",
                  va="center", fontsize=10, color=MUTED)
axes.set_yticks(range(len(cases)), WORDS["rows"])
axes.invert_yaxis()
axes.set_xlim(0, longest)
axes.tick_params(axis="y", length=0)
axes.set_xticks([])
for side in ("left", "bottom"):
    axes.spines[side].set_visible(False)
axes.set_title(WORDS["title"], loc="left", fontsize=13, fontweight="bold", color=INK)
axes.text(0, -0.12, WORDS["legend"], transform=axes.transAxes, va="top", fontsize=10, color=MUTED)
sys.stdout.write(svg_of(figure, WORDS["title"]))
