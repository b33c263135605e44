# caption: The budget bar B = W − O − R − S with the worked demonstration's numbers, and how the reference assemble fills B: required segments and the notice's room first, then evidence and dialogue; memory does not fit and gives way to the notice.
# alt: Top bar: a context window W of 1000 tokens split into the input budget B of 110, 700 kept for the output O, 120 kept for tool results R and 70 as a safety margin S. Bottom bar: the 110 tokens of B, filled by the required segments system 18, tools 30, policy 11 and user 15, then 12 tokens kept for the memory notice, evidence 14 and dialogue 10, which fill B exactly. The memory segment of 26 tokens is drawn hatched beside the bar: it does not fit and is dropped whole, and the notice takes its place.
# caption.zh: 用教师示范里的数字画出的预算条 B = W − O − R − S，以及参考实现的 assemble 如何填满 B：先放必需片段，并为提示行留出位置，再放证据和对话；记忆放不下，让位给提示行。
# alt.zh: 上方的条：1000 个 Token 的上下文窗口 W 分成四份——输入预算 B 110、为输出 O 预留的 700、为工具结果 R 预留的 120、安全余量 S 70。下方的条：B 的 110 个 Token 先放必需片段（system 18、tools 30、policy 11、user 15），再为记忆的提示行预留 12 个 Token，然后放证据 14 和对话 10，正好填满 B。26 个 Token 的记忆片段画在条旁，带斜线：它放不下，被整段舍弃，由提示行顶替。
"""Stage 10's figure: the demonstration's window and segments, placed by the reference ``assemble``.

``forgelab build`` runs this file against the reference and writes ``figure-budget.svg`` beside it, and
once more with ``--lang zh`` for ``figure-budget_zh.svg``: only the words below differ, never a number.
"""

import sys
from typing import Any

from matplotlib.patches import Patch

from forgelab.authoring.figures import INK, MUTED, demo_namespace, plot_language, pyplot, svg_of

WINDOW, OUTPUT, TOOLS, SAFETY = 1_000, 700, 120, 70  # the demonstration's tiny window
LANG = plot_language()
WORDS = {
    "en": {"title": "The budget bar B = W − O − R − S", "heading": "B = W − O − R − S, and what fills B",
           "output": "O {n}: output", "tools": "R {n}: tool results",
           "window": "the context window W = {n} tokens", "notice": "notice {n}", "free": "free {n}",
           "input": "the input budget B = {n} tokens, as assemble fills it", "dropped": "dropped whole",
           "legend": ("required: never cut", "room kept for the notice", "optional: whole or skipped",
                      "memory: dropped first"),
           "footer": "used {used} of {budget}: the notice replaces the memory in the prompt"},
    "zh": {"title": "预算条 B = W − O − R − S", "heading": "B = W − O − R − S，以及什么填满了 B",
           "output": "O {n}：输出", "tools": "R {n}：工具结果",
           "window": "上下文窗口 W = {n} 个 Token", "notice": "提示行 {n}", "free": "空闲 {n}",
           "input": "输入预算 B = {n} 个 Token，由 assemble 填充", "dropped": "整段舍弃",
           "legend": ("必需：从不截断", "为提示行预留的空间", "可选：整段放入或整段不放", "记忆：最先舍弃"),
           "footer": "已用 {used} / {budget}：Prompt 里由提示行顶替记忆"},
}[LANG]

demo = demo_namespace(__file__)
budget = demo["input_budget"](WINDOW, OUTPUT, TOOLS, SAFETY)
assembly = demo["assemble"](demo["segments"], budget)
assert budget == demo["budget"] == assembly.budget, "the figure must use the demonstration's budget"
REQUIRED, NOTICE, OPTIONAL, DROPPED = "#1f4e79", "#8a6d1d", "#2a9d8f", "#a12a1f"
HATCHED = {"facecolor": "#f7f7f7", "hatch": "//", "edgecolor": DROPPED, "linestyle": "--"}

plt = pyplot(LANG)
figure, (window, inputs) = plt.subplots(2, 1, figsize=(8.4, 3.2), gridspec_kw={"hspace": 1.3})


def bar(axes: Any, parts: list[tuple[str, int, Any]], extent: float) -> None:  # Any: matplotlib is untyped
    """One horizontal bar of (label, tokens, style) on an axis of ``extent`` tokens; a label goes inside its part when
    it fits, else below it."""
    axes.set_xlim(0, extent)
    axes.set_ylim(-0.5, 0.5)
    axes.axis("off")
    renderer = figure.canvas.get_renderer()
    left, below = 0, 0
    for label, tokens, style in parts:
        axes.barh(0, tokens, left=left, height=0.8, linewidth=1, **({"color": style, "edgecolor": "#ffffff"}
                                                                    if isinstance(style, str) else style))
        light = not isinstance(style, str) or style in ("#dfe5ec", "#c9d2dc", "#aab6c3", "#f2f4f7")
        text = axes.text(left + tokens / 2, 0, label, ha="center", va="center", fontsize=10,
                         color=INK if light else "#ffffff")
        box, part = text.get_window_extent(renderer), axes.transData.transform([(left, 0), (left + tokens, 0)])
        if box.width + 6 > part[1][0] - part[0][0]:  # measured with the font that draws it, not estimated
            text.set(y=-0.75 - 0.55 * below, va="top", color=INK)
            below = 1 - below
        left += tokens


window.set_title(WORDS["window"].format(n=WINDOW), loc="left", fontsize=11, color=MUTED)
bar(window, [(f"B {budget}", budget, "#1f5fbf"), (WORDS["output"].format(n=OUTPUT), OUTPUT, "#dfe5ec"),
             (WORDS["tools"].format(n=TOOLS), TOOLS, "#c9d2dc"), (f"S {SAFETY}", SAFETY, "#aab6c3")], WINDOW)
figure.suptitle(WORDS["heading"], x=0.125, y=1.02, ha="left", fontsize=14, fontweight="bold", color=INK)

required = [d for d in assembly.decisions if d.reason == "required"]
notice = [d for d in assembly.decisions if d.reason == "notice"]
optional = [d for d in assembly.decisions if d.included and d.reason not in ("required", "notice")]
dropped = [d for d in assembly.decisions if not d.included]
free = budget - assembly.used_tokens
parts = [(f"{d.name} {d.tokens}", d.tokens, REQUIRED) for d in required]
parts += [(WORDS["notice"].format(n=d.tokens), d.tokens, NOTICE) for d in notice]
parts += [(f"{d.kind} {d.tokens}", d.tokens, OPTIONAL) for d in optional]
parts += [(WORDS["free"].format(n=free), free, "#f2f4f7")] if free else []
inputs.set_title(WORDS["input"].format(n=budget), loc="left", fontsize=11, color=MUTED)
gap = budget * 0.04  # the dropped segments stand apart, after the budget's end
bar(inputs, parts, budget + gap + sum(d.tokens + gap for d in dropped))
left = budget + gap
for d in dropped:
    inputs.barh(0, d.tokens, left=left, height=0.8, **HATCHED)
    inputs.text(left + d.tokens / 2, 0, f"{d.name} {d.tokens}", ha="center", va="center", fontsize=10)
    inputs.text(left + d.tokens / 2, -0.75, WORDS["dropped"], ha="center", va="top", fontsize=10, color=DROPPED)
    left += d.tokens + gap
inputs.legend(handles=[Patch(color=REQUIRED), Patch(color=NOTICE), Patch(color=OPTIONAL), Patch(**HATCHED)],
              labels=list(WORDS["legend"]), loc="upper left", bbox_to_anchor=(0, -1.75), ncols=2, frameon=False,
              fontsize=10)
inputs.text(0, -3.35, WORDS["footer"].format(used=assembly.used_tokens, budget=budget), transform=inputs.transAxes,
            fontsize=10, color=MUTED)
sys.stdout.write(svg_of(figure, WORDS["title"]))
