# caption: Selection under a budget of 400 tokens, as the worked demonstration computes it: required items first, then by value per token; an item that does not fit is skipped and the next one is still tried.
# alt: A bar chart of the six candidates of the worked demonstration, in the order they are decided, each bar starting where the previous chosen one ended. write-policy (80 tokens) and api-contract (60) are required and go first. test-helpers (50) and product-list-component (120) are selected, filling 310 of the 400 tokens. design-notes (150) would end at 460, past the budget line, and is skipped. forum-snippet (40) still fits and ends at 350.
# caption.zh: 400 个 Token 预算下的选择，数字来自教师示范的计算：先放必需项，再按每个 Token 的价值排序；放不下的项被跳过，下一项仍会尝试。
# alt.zh: 教师示范中六个候选项的条形图，按决定的先后排列，每根条从上一个选中项结束的位置开始。write-policy（80 个 Token）和 api-contract（60）是必需项，最先放入。test-helpers（50）和 product-list-component（120）被选中，占用 400 个 Token 中的 310 个。design-notes（150）会在 460 处结束，超过预算线，因此被跳过。forum-snippet（40）仍然放得下，在 350 处结束。
"""Stage 02's figure: the worked demonstration's candidates walked by the reference ``explain_choice``.

``forgelab build`` runs this file against the reference and writes ``figure-budget.svg`` beside it, and
once more with ``--lang zh`` for ``figure-budget_zh.svg``: only the words below differ, never a number.
"""

import sys

from forgelab.authoring.figures import Svg, demo_namespace, plot_language, text_width

BUDGET = 400  # the budget of the demonstration's real call
LANG = plot_language()
WORDS = {
    "en": {"title": "Selection under a budget of {budget} tokens",
           "subtitle": "required first, then the best value per token; a skipped item does not stop the walk",
           "required_mark": " (required)", "included": "{tokens} tokens · {reason} · {used} used",
           "skipped": "{tokens} tokens · skipped: {left} left", "axis": "tokens", "budget": "budget {budget}",
           "legend": ("required", "selected", "skipped: does not fit")},
    "zh": {"title": "{budget} 个 Token 预算下的选择",
           "subtitle": "先放必需项，再按每个 Token 的价值排序；跳过一项不会停止遍历",
           "required_mark": "（必需）", "included": "{tokens} 个 Token · {reason} · 已用 {used}",
           "skipped": "{tokens} 个 Token · 跳过：剩 {left}", "axis": "Token", "budget": "预算 {budget}",
           "legend": ("必需", "选中", "跳过：放不下")},
}[LANG]

demo = demo_namespace(__file__)
candidates = {item.id: item for item in demo["candidates"]}
decisions = demo["explain_choice"](demo["candidates"], budget=BUDGET)

LEFT, PLOT, ROW, TOP = 200, 430, 30, 58
ends, used = [], 0
for decision in decisions:
    tokens = candidates[decision.id].tokens
    ends.append(used + tokens)
    used += tokens if decision.included else 0
domain = max([BUDGET, *ends]) + 60
scale = PLOT / domain
height = TOP + ROW * len(decisions) + 70
svg = Svg(LEFT + PLOT + 80, height, WORDS["title"].format(budget=400), LANG)
svg.text(10, 22, WORDS["title"].format(budget=BUDGET), size=15, bold=True)
svg.text(10, 40, WORDS["subtitle"], size=11, color=Svg.MUTED)

used = 0
for row, decision in enumerate(decisions):
    tokens = candidates[decision.id].tokens
    y = TOP + row * ROW
    x = LEFT + used * scale
    width = tokens * scale
    label = f"{decision.id}" + (WORDS["required_mark"] if decision.reason == "required" else "")
    svg.text(LEFT - 8, y + 15, label, size=12, anchor="end")
    if decision.included:
        color = "#1f4e79" if decision.reason == "required" else "#2a9d8f"
        svg.rect(x, y + 3, width, 18, color)
        used += tokens
        note = WORDS["included"].format(tokens=tokens, reason=decision.reason, used=used)
    else:
        svg.rect(x, y + 3, width, 18, "url(#hatch)", stroke="#a12a1f", dashed=True)
        note = WORDS["skipped"].format(tokens=tokens, left=BUDGET - used)
    end = x + width + 6
    if end + text_width(note, 11) > LEFT + PLOT + 78:
        svg.text(x - 6, y + 16, note, size=11, color=Svg.MUTED, anchor="end")
    else:
        svg.text(end, y + 16, note, size=11, color=Svg.MUTED)

axis = TOP + ROW * len(decisions) + 6
svg.line(LEFT, axis, LEFT + PLOT, axis, Svg.LINE)
for tick in range(0, int(domain) + 1, 100):
    svg.line(LEFT + tick * scale, axis, LEFT + tick * scale, axis + 4, Svg.LINE)
    svg.text(LEFT + tick * scale, axis + 17, str(tick), size=10, color=Svg.MUTED, anchor="middle")
svg.text(LEFT + PLOT / 2, axis + 33, WORDS["axis"], size=11, color=Svg.MUTED, anchor="middle")
limit = LEFT + BUDGET * scale
svg.line(limit, TOP - 6, limit, axis, "#a12a1f", width=1.5, dashed=True)
svg.text(limit, TOP - 10, WORDS["budget"].format(budget=BUDGET), size=11, color="#a12a1f", anchor="middle")

legend = axis + 50
for index, (color, words) in enumerate(zip(("#1f4e79", "#2a9d8f", "url(#hatch)"), WORDS["legend"])):
    x = LEFT + index * 140
    svg.rect(x, legend - 10, 14, 12, color, stroke="#a12a1f" if "hatch" in color else "none",
             dashed="hatch" in color)
    svg.text(x + 20, legend, words, size=11)
sys.stdout.write(svg.render())
