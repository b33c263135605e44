# caption: Selection under a budget of 400 tokens, as the worked demonstration computes it: required items first, then by value per token; an item that does not fit is skipped and the next one is still tried.
# alt: A bar chart of the six candidates of the worked demonstration, in the order they are decided, each bar starting where the previous chosen one ended. write-policy (80 tokens) and api-contract (60) are required and go first. test-helpers (50) and product-list-component (120) are selected, filling 310 of the 400 tokens. design-notes (150) would end at 460, past the budget line, and is skipped. forum-snippet (40) still fits and ends at 350.
# caption.zh: 400 个 Token 预算下的选择，数字来自教师示范的计算：先放必需项，再按每个 Token 的价值排序；放不下的项被跳过，下一项仍会尝试。
# alt.zh: 教师示范中六个候选项的条形图，按决定的先后排列，每根条从上一个选中项结束的位置开始。write-policy（80 个 Token）和 api-contract（60）是必需项，最先放入。test-helpers（50）和 product-list-component（120）被选中，占用 400 个 Token 中的 310 个。design-notes（150）会在 460 处结束，超过预算线，因此被跳过。forum-snippet（40）仍然放得下，在 350 处结束。
"""Stage 02's figure: the worked demonstration's candidates walked by the reference ``explain_choice``.

``forgelab build`` runs this file against the reference and writes ``figure-budget.svg`` beside it, and
once more with ``--lang zh`` for ``figure-budget_zh.svg``: only the words below differ, never a number.
"""

import sys

from matplotlib.patches import Patch

from forgelab.authoring.figures import INK, MUTED, demo_namespace, plot_language, pyplot, svg_of

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
REQUIRED, SELECTED, SKIPPED = "#1f4e79", "#2a9d8f", "#a12a1f"

demo = demo_namespace(__file__)
candidates = {item.id: item for item in demo["candidates"]}
decisions = demo["explain_choice"](demo["candidates"], budget=BUDGET)

plt = pyplot(LANG)
figure, axes = plt.subplots(figsize=(8.2, 0.42 * len(decisions) + 1.6))
used = 0
for row, decision in enumerate(decisions):
    tokens = candidates[decision.id].tokens
    if decision.included:
        color = REQUIRED if decision.reason == "required" else SELECTED
        axes.barh(row, tokens, left=used, height=0.62, color=color)
        note = WORDS["included"].format(tokens=tokens, reason=decision.reason, used=used + tokens)
        end = used + tokens
        used += tokens
    else:
        axes.barh(row, tokens, left=used, height=0.62, color="#f7f7f7", hatch="//", edgecolor=SKIPPED,
                  linestyle="--", linewidth=1)
        note = WORDS["skipped"].format(tokens=tokens, left=BUDGET - used)
        end = used + tokens
    axes.annotate(note, (end, row), xytext=(6, 0), textcoords="offset points", va="center", fontsize=10,
                  color=MUTED, bbox={"facecolor": "#ffffff", "edgecolor": "none", "pad": 1})
labels = [decision.id + (WORDS["required_mark"] if decision.reason == "required" else "") for decision in decisions]
axes.set_yticks(range(len(decisions)), labels)
axes.invert_yaxis()
axes.tick_params(axis="y", length=0)
axes.spines["left"].set_visible(False)
axes.set_xlim(0, max(BUDGET, *(candidates[d.id].tokens for d in decisions)) + 100)
axes.set_xticks(range(0, BUDGET + 101, 100))
axes.set_xlabel(WORDS["axis"])
axes.axvline(BUDGET, color=SKIPPED, linestyle="--", linewidth=1.5)
axes.annotate(WORDS["budget"].format(budget=BUDGET), (BUDGET, -0.6), xytext=(0, 2), textcoords="offset points",
              ha="center", va="bottom", fontsize=10, color=SKIPPED, annotation_clip=False)
axes.set_title(WORDS["title"].format(budget=BUDGET) + "\n", loc="left", fontsize=14, fontweight="bold", color=INK)
axes.text(0, 1.045, WORDS["subtitle"], transform=axes.transAxes, fontsize=10, color=MUTED)
axes.legend(handles=[Patch(color=REQUIRED), Patch(color=SELECTED),
                     Patch(facecolor="#f7f7f7", hatch="//", edgecolor=SKIPPED, linestyle="--")],
            labels=list(WORDS["legend"]), loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=3, frameon=False,
            fontsize=10)
sys.stdout.write(svg_of(figure, WORDS["title"].format(budget=BUDGET)))
