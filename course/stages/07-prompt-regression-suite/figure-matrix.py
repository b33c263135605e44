# caption: The case × invariant matrix of the worked demonstration, as the reference run_suite judges it: each prompt version on each fixed case, checked for structure and the exact permission — never for wording.
# alt: A grid with one row per prompt version and case and three invariant columns: required fields present, write permission unchanged, the call answered with a dict. v1 and v2 hold every invariant on both cases, although v2 words the goal differently. v3 breaks the write permission of the read-only case. A broken call breaks the read-only case's permission (the string "false") and the add-search case's answer (a timeout), and the suite still runs both.
# caption.zh: 教师示范的用例 × 不变量矩阵，由参考实现的 run_suite 判定：每个 Prompt 版本在每个固定用例上检查结构和精确的权限——从不检查措辞。
# alt.zh: 一个网格，每行是一个 Prompt 版本与用例的组合，三列不变量：必需字段齐全、写入权限不变、调用返回的是 dict。v1 和 v2 在两个用例上都满足全部不变量，尽管 v2 对目标的措辞不同。v3 破坏了只读用例的写入权限。一次出错的调用破坏了只读用例的权限（字符串 "false"）和添加搜索用例的回答（超时），而回归集仍然把两个用例都运行完。
"""Stage 07's figure: the demonstration's cases and prompt versions through the reference ``run_suite``.

``forgelab build`` runs this file against the reference and writes ``figure-matrix.svg`` beside it, and
once more with ``--lang zh`` for ``figure-matrix_zh.svg``: only the words below differ.
"""

import sys
from functools import partial

from matplotlib.patches import Rectangle

from forgelab.authoring.figures import INK, LINE, MUTED, demo_namespace, plot_language, pyplot, svg_of

LANG = plot_language()
WORDS = {
    "en": {"broken_call": "a broken call", "columns": ("required fields", "write permission", "answered a dict"),
           "title_long": "Each prompt version on each fixed case, by invariant",
           "title": "Each version on each fixed case, by invariant",
           "subtitle": "run_suite reports only what breaks; wording is never compared",
           "not_checked": "not checked", "broken": "✗ broken", "holds": "✓ holds",
           "footer": "a failing case is reported for itself; the suite goes on with the next one"},
    "zh": {"broken_call": "一次出错的调用", "columns": ("必需字段", "写入权限", "返回 dict"),
           "title_long": "每个 Prompt 版本在每个固定用例上，按不变量",
           "title": "每个版本在每个固定用例上，按不变量",
           "subtitle": "run_suite 只报告被破坏的部分；从不比较措辞",
           "not_checked": "未检查", "broken": "✗ 破坏", "holds": "✓ 满足",
           "footer": "失败的用例单独报告；回归集继续运行下一个用例"},
}[LANG]

demo = demo_namespace(__file__)
cases, run_suite = demo["cases"], demo["run_suite"]
runs = [(f"{v.label} · {v.id}", partial(demo["mock_model"], v.text)) for v in (demo["v1"], demo["v2"], demo["v3"])]
runs.append((WORDS["broken_call"], demo["flaky"]))
INVARIANTS = tuple(zip(WORDS["columns"], ("missing:", "write permission changed", "error:")))
GAP = 0.35  # between two versions' rows

plt = pyplot(LANG)
rows = len(runs) * len(cases) + GAP * (len(runs) - 1)
figure, axes = plt.subplots(figsize=(7.6, 0.34 * rows + 1.5))
axes.set_xlim(-1.3, len(INVARIANTS))
axes.set_ylim(rows, -1.2)
axes.axis("off")
for index, (name, _) in enumerate(INVARIANTS):
    header = "\n".join(name.rsplit(" ", 1)) if len(name) > 12 else name  # two lines where a long one would touch
    axes.text(index + 0.5, -0.2, header, ha="center", va="bottom", fontweight="bold")
y = 0.0
for label, invoke in runs:
    failures = run_suite(cases, invoke)
    axes.plot([-2.3, len(INVARIANTS)], [y - GAP / 2, y - GAP / 2], color=LINE, linewidth=0.8, clip_on=False)
    for row, case in enumerate(cases):
        problems = failures.get(case.id, [])
        if row == 0:
            axes.text(-2.3, y + 0.5, label, va="center", fontweight="bold")
        axes.text(-0.1, y + 0.5, case.id, ha="right", va="center")
        errored = any(problem.startswith("error:") for problem in problems)
        for index, (_, prefix) in enumerate(INVARIANTS):
            broken = any(problem.startswith(prefix) for problem in problems)
            if errored and prefix != "error:":
                fill, ink, word = "#f2f4f7", MUTED, WORDS["not_checked"]
            elif broken:
                fill, ink, word = "#fbecea", "#a12a1f", WORDS["broken"]
            else:
                fill, ink, word = "#e7f5ec", "#17683a", WORDS["holds"]
            axes.add_patch(Rectangle((index + 0.03, y + 0.08), 0.94, 0.84, color=fill))
            axes.text(index + 0.5, y + 0.5, word, ha="center", va="center", color=ink)
        y += 1
    y += GAP
axes.text(-2.3, -2.6, WORDS["title"], fontsize=14, fontweight="bold", color=INK)
axes.text(-2.3, -2.05, WORDS["subtitle"], fontsize=10, color=MUTED)
axes.text(-2.3, rows + 0.6, WORDS["footer"], fontsize=10, color=MUTED, va="top")
sys.stdout.write(svg_of(figure, WORDS["title_long"]))
