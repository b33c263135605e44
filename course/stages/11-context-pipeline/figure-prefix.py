# caption: Four pairs of requests from the worked demonstration, part by part, and how many tokens of the second one a prompt cache can reuse, as the reference reusable_prefix computes it.
# alt: Four rows of coloured boxes, one box per request part: model, tools, system text, question and, in two rows, a timestamp. Reused parts are green, recomputed parts red. With the timestamp at the end every part but the timestamp is green. With the timestamp at the front every part is red: nothing is reused although the rest is identical. With another model every part is red. With the tools listed in another order only the model part is green. The number of reused tokens of the total is written at the right of each row.
# caption.zh: 教师示范里的四对请求，逐部分画出；以及参考实现的 reusable_prefix 算出的、Prompt 缓存能复用第二个请求的多少个 Token。
# alt.zh: 四行彩色方块，每个方块是请求的一部分：模型、工具、系统正文、问题，其中两行还有一个时间戳。被复用的部分是绿色，需要重新计算的部分是红色。时间戳在末尾时，除了时间戳，其余部分都是绿色。时间戳在开头时，所有部分都是红色：其余内容完全相同，却什么也复用不了。换了模型时，所有部分都是红色。工具换了顺序时，只有模型那一部分是绿色。每一行右边写着复用的 Token 数和总数。
"""Stage 11's second figure: what a prompt cache can reuse of four requests, computed by the reference ``reusable_prefix``.

``forgelab build`` runs this file against the reference and writes ``figure-prefix.svg`` beside it, and
once more with ``--lang zh`` for ``figure-prefix_zh.svg``: only the words below differ, never a number.
"""

import sys

from forgelab.authoring.figures import Svg, demo_namespace, plot_language

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

LEFT, TOP, ROW, UNIT = 190, 56, 46, 5
svg = Svg(760, TOP + ROW * len(cases) + 40, WORDS["title"], LANG)
svg.text(20, 28, WORDS["title"], size=14, bold=True)
for row, (label, (before, now)) in enumerate(zip(WORDS["rows"], cases)):
    y = TOP + row * ROW
    svg.text(LEFT - 12, y + 19, label, size=12, anchor="end")
    same = next((i for i, (a, b) in enumerate(zip(before, now)) if a != b), min(len(before), len(now)))
    reused, x = reusable(before, now), LEFT
    assert reused == sum(count(part) for part in now[:same]), "whole parts are reused, up to the first difference"
    for index, part in enumerate(now):
        width = count(part) * UNIT
        svg.rect(x, y + 4, width - 2, 24, "#2e7d4f" if index < same else "#b3372b")
        name = WORDS["parts"][part.split(":")[0].split()[0]]
        svg.text(x + (width - 2) / 2, y + 21, name, size=10, color="#ffffff", anchor="middle", halo=False)
        x += width
    svg.text(x + 10, y + 21, WORDS["reused"].format(r=reused, t=sum(count(part) for part in now)), size=11,
             color=Svg.MUTED)
svg.text(20, TOP + ROW * len(cases) + 20, WORDS["legend"], size=11, color=Svg.MUTED)
sys.stdout.write(svg.render())
