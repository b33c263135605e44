# caption: What a stable prefix of 6 000 tokens costs over n reuses with the worked demonstration's prices, with and without a prompt cache, as the reference cache_break_even computes it; the break-even is marked.
# alt: A line chart. The horizontal axis is the number of reuses n from 0 to 8, the vertical axis the cost in millionths of a dollar. The uncached line starts at 18 000 for n = 0 and rises by 18 000 per reuse, to 162 000 at n = 8. The cached line starts higher, at 22 500, because writing the cache costs more than one plain read, and rises by only 1 800 per reuse, to 36 900 at n = 8. The lines cross at n of about 0.28, marked with a dashed vertical line: at n = 0 not caching is cheaper, from n = 1 on the cache is.
# caption.zh: 用教师示范里的价格，画出一段 6,000 Token 的稳定前缀在复用 n 次后的开销：用与不用 Prompt 缓存各一条线，由参考实现的 cache_break_even 计算，并标出盈亏平衡点。
# alt.zh: 一张折线图。横轴是复用次数 n，从 0 到 8；纵轴是开销，单位为百万分之一美元。不用缓存的线在 n = 0 时是 18,000，每多复用一次就涨 18,000，到 n = 8 时是 162,000。用缓存的线起点更高，是 22,500，因为写入缓存比普通读取一次更贵；但每多复用一次只涨 1,800，到 n = 8 时是 36,900。两条线在 n 约为 0.28 处相交，用一条竖直虚线标出：n = 0 时不用缓存更便宜，从 n = 1 开始缓存更划算。
"""Stage 11's figure: the demonstration's cache prices over n reuses, computed by the reference ``cache_break_even``.

``forgelab build`` runs this file against the reference and writes ``figure-cache.svg`` beside it, and
once more with ``--lang zh`` for ``figure-cache_zh.svg``: only the words below differ, never a number.
"""

import sys
from fractions import Fraction

from forgelab.authoring.figures import INK, MUTED, demo_namespace, plot_language, pyplot, svg_of

LANG = plot_language()
WORDS = {
    "en": {"title": "Cached and uncached cost of a stable prefix over n reuses",
           "heading": "P·w + n·P·c (cached) against (n+1)·P·u (uncached), P = {p} tokens",
           "axis_x": "reuses n", "axis_y": "cost in µ$", "cached": "cached: w = {w} µ$ per token once, then c = {c} µ$ per token and reuse",
           "uncached": "uncached: u = {u} µ$ per token, every round", "even": "break-even n ≈ {n}",
           "footer": "n = 0: no_cache ({a} against {b}) · from n = 1 on: cache ({c} against {d})"},
    "zh": {"title": "稳定前缀在复用 n 次后用与不用缓存的开销",
           "heading": "P·w + n·P·c（用缓存）对比 (n+1)·P·u（不用缓存），P = {p} 个 Token",
           "axis_x": "复用次数 n", "axis_y": "开销（µ$）", "cached": "用缓存：先写入一次，每 Token w = {w} µ$；之后每次复用，每 Token c = {c} µ$",
           "uncached": "不用缓存：每一轮每 Token u = {u} µ$", "even": "盈亏平衡 n ≈ {n}",
           "footer": "n = 0：no_cache（{a} 对 {b}）· 从 n = 1 起：cache（{c} 对 {d}）"},
}[LANG]

demo = demo_namespace(__file__)
P, U, C, W = demo["PREFIX"], demo["UNCACHED"], demo["CACHED"], demo["WRITE"]
runs = [demo["cache_break_even"](P, n, U, C, W) for n in range(9)]
u, c, w = (Fraction(str(value)) for value in (U, C, W))
even = (w - u) / (u - c)  # where P·w + n·P·c = (n+1)·P·u
assert runs[0].decision == "no_cache" and runs[1].decision == "cache", "the figure tells the demonstration's story"
CACHED, UNCACHED, EVEN = "#1f5fbf", "#a12a1f", "#8a6d1d"


def spaced(value: float) -> str:
    return f"{value:,.0f}".replace(",", " ")


plt = pyplot(LANG)
figure, axes = plt.subplots(figsize=(8.2, 4.1))
reuses = list(range(9))
cached = [float(run.cached_cost) for run in runs]
uncached = [float(run.uncached_cost) for run in runs]
axes.plot(reuses, cached, color=CACHED, linewidth=2, marker="s", markersize=5)
axes.plot(reuses, uncached, color=UNCACHED, linewidth=2, marker="s", markersize=5)
axes.axvline(float(even), color=EVEN, linestyle="--", linewidth=1.2)
axes.annotate(WORDS["even"].format(n=f"{float(even):.2f}"), (float(even), max(uncached)), xytext=(6, -4),
              textcoords="offset points", va="top", fontsize=10, color=EVEN)
axes.annotate(WORDS["uncached"].format(u=U), (5, uncached[5]), xytext=(-10, 8), textcoords="offset points",
              ha="right", fontsize=10, color=UNCACHED)
axes.annotate(WORDS["cached"].format(w=W, c=C), (8, cached[8]), xytext=(0, -16), textcoords="offset points",
              ha="right", va="top", fontsize=10, color=CACHED)
axes.set_xticks(reuses)
axes.set_xlim(0, 8.2)
axes.set_ylim(0, max(uncached) * 1.05)
axes.yaxis.set_major_formatter(lambda value, _position: spaced(value))
axes.set_xlabel(WORDS["axis_x"])
axes.set_ylabel(WORDS["axis_y"])
axes.set_title(WORDS["heading"].format(p=spaced(P)), loc="left", fontsize=13, fontweight="bold", color=INK)
cost = [spaced(float(value)) for value in (runs[0].cached_cost, runs[0].uncached_cost, runs[1].cached_cost,
                                            runs[1].uncached_cost)]
axes.text(0, -0.2, WORDS["footer"].format(a=cost[0], b=cost[1], c=cost[2], d=cost[3]), transform=axes.transAxes,
          va="top", fontsize=10, color=MUTED)
sys.stdout.write(svg_of(figure, WORDS["title"]))
