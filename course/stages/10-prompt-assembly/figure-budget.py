# caption: The budget bar B = W − O − R − S with the worked demonstration's numbers, and how the reference assemble fills B: required segments and the notice's room first, then evidence and dialogue; memory does not fit and gives way to the notice.
# alt: Top bar: a context window W of 1000 tokens split into the input budget B of 110, 700 kept for the output O, 120 kept for tool results R and 70 as a safety margin S. Bottom bar: the 110 tokens of B, filled by the required segments system 18, tools 30, policy 11 and user 15, then 12 tokens kept for the memory notice, evidence 14 and dialogue 10, which fill B exactly. The memory segment of 26 tokens is drawn hatched beside the bar: it does not fit and is dropped whole, and the notice takes its place.
# caption.zh: 用教师示范里的数字画出的预算条 B = W − O − R − S，以及参考实现的 assemble 如何填满 B：先放必需片段，并为提示行留出位置，再放证据和对话；记忆放不下，让位给提示行。
# alt.zh: 上方的条：1000 个 Token 的上下文窗口 W 分成四份——输入预算 B 110、为输出 O 预留的 700、为工具结果 R 预留的 120、安全余量 S 70。下方的条：B 的 110 个 Token 先放必需片段（system 18、tools 30、policy 11、user 15），再为记忆的提示行预留 12 个 Token，然后放证据 14 和对话 10，正好填满 B。26 个 Token 的记忆片段画在条旁，带斜线：它放不下，被整段舍弃，由提示行顶替。
"""Stage 10's figure: the demonstration's window and segments, placed by the reference ``assemble``.

``forgelab build`` runs this file against the reference and writes ``figure-budget.svg`` beside it, and
once more with ``--lang zh`` for ``figure-budget_zh.svg``: only the words below differ, never a number.
"""

import sys

from forgelab.authoring.figures import Svg, demo_namespace, plot_language, text_width

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

LEFT, WIDTH = 20, 700
svg = Svg(LEFT * 2 + WIDTH, 318, WORDS["title"], LANG)
svg.text(LEFT, 22, WORDS["heading"], size=15, bold=True)


def bar(y: float, parts: list[tuple[str, int, str]], total: int, width: float) -> None:
    """One horizontal bar; labels inside the part when they fit, below it otherwise."""
    x = float(LEFT)
    for index, (label, tokens, color) in enumerate(parts):
        w = tokens * width / total
        hatched = color == "url(#hatch)"
        svg.rect(x, y, w, 30, color, stroke="#a12a1f" if hatched else "#ffffff", dashed=hatched)
        ink = Svg.INK if hatched or color in ("#dfe5ec", "#f2f4f7") else "#ffffff"
        if text_width(label, 11) * 0.9 + 4 < w:
            svg.text(x + w / 2, y + 19, label, size=11, color=ink, anchor="middle", halo=hatched)
        else:
            svg.text(x + w / 2, y + 44 + 13 * (index % 2), label, size=11, color=Svg.INK, anchor="middle")
        x += w


window_parts = [(f"B {budget}", budget, "#1f5fbf"), (WORDS["output"].format(n=OUTPUT), OUTPUT, "#dfe5ec"),
                (WORDS["tools"].format(n=TOOLS), TOOLS, "#c9d2dc"), (f"S {SAFETY}", SAFETY, "#aab6c3")]
svg.text(LEFT, 50, WORDS["window"].format(n=WINDOW), size=12, color=Svg.MUTED)
bar(58, window_parts, WINDOW, WIDTH)
b_end = LEFT + budget * WIDTH / WINDOW
svg.line(LEFT, 90, LEFT, 150, "#1f5fbf", dashed=True)
svg.line(b_end, 90, LEFT + WIDTH * 0.8, 150, "#1f5fbf", dashed=True)

required = [d for d in assembly.decisions if d.reason == "required"]
notice = [d for d in assembly.decisions if d.reason == "notice"]
optional = [d for d in assembly.decisions if d.included and d.reason not in ("required", "notice")]
dropped = [d for d in assembly.decisions if not d.included]
free = budget - assembly.used_tokens
parts = [(f"{d.name} {d.tokens}", d.tokens, "#1f4e79") for d in required]
parts += [(WORDS["notice"].format(n=d.tokens), d.tokens, "#8a6d1d") for d in notice]
parts += [(f"{d.kind} {d.tokens}", d.tokens, "#2a9d8f") for d in optional]
parts += [(WORDS["free"].format(n=free), free, "#f2f4f7")] if free else []
scale_width = WIDTH * 0.8
svg.text(LEFT + 8, 146, WORDS["input"].format(n=budget), size=12, color=Svg.MUTED)
bar(154, parts, budget, scale_width)
x = LEFT + scale_width + 12
for d in dropped:
    w = d.tokens * scale_width / budget
    svg.rect(x, 154, w, 30, "url(#hatch)", stroke="#a12a1f", dashed=True)
    svg.text(x + w / 2, 173, f"{d.name} {d.tokens}", size=11, anchor="middle", halo=False)
    svg.text(x + w / 2, 198, WORDS["dropped"], size=11, color="#a12a1f", anchor="middle")
    x += w + 8

legend = 250
for index, (color, words) in enumerate(zip(("#1f4e79", "#8a6d1d", "#2a9d8f", "url(#hatch)"), WORDS["legend"])):
    lx = LEFT + (index % 2) * 330
    ly = legend + (index // 2) * 22
    svg.rect(lx, ly - 10, 14, 12, color, stroke="#a12a1f" if "hatch" in color else "none", dashed="hatch" in color)
    svg.text(lx + 20, ly, words, size=11)
svg.text(LEFT, 306, WORDS["footer"].format(used=assembly.used_tokens, budget=budget),
         size=11, color=Svg.MUTED)
sys.stdout.write(svg.render())
