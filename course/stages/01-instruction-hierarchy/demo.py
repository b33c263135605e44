# %% [markdown] en
# Two instructions disagree about `write`: the system says `deny`, a retrieved wiki page says
# `allow`. We expect the system value to win and the retrieved instruction to be rejected, because
# rank 3 beats rank 0 — wherever the two appear in the list.

# %% [markdown] zh
# 两条指令在 `write` 上意见不一：system 说 `deny`，一个检索来的 Wiki 页面说 `allow`。我们预期 system 的值胜出、检索指令被拒绝，因为等级 3 胜过等级 0——无论两者在列表中谁先谁后。

# %%
from forge.instructions import Instruction, explain, resolve

system = Instruction("system", "write", "deny")
retrieved = Instruction("retrieved", "write", "allow")
goal = Instruction("user", "goal", "add a search box to the product list, with tests")

accepted, rejected = resolve([retrieved, system, goal])
print("accepted:", accepted)  # [en]
print("rejected:", rejected)  # [en]
print("保留：", accepted, sep="")  # [zh]
print("拒绝：", rejected, sep="")  # [zh]

# %% [markdown] en
# The user's `goal` has no competitor, so it is kept even though `user` ranks below `system`.
# `explain` gives the audit trail behind the same decision: who won, who lost, and why.

# %% [markdown] zh
# 用户的 `goal` 没有竞争者，所以尽管 `user` 的等级低于 `system`，它仍被保留。`explain` 给出同一个裁决背后的审计记录：谁胜出，谁落败，为什么。

# %%
winners, rejections = explain([retrieved, system, goal, Instruction("user", "goal", "skip the tests")])
for rejection in rejections:
    print(f"{rejection.instruction.source:>9} {rejection.instruction.key}={rejection.instruction.value!r:<10}"
          f" lost to {rejection.winner.source} ({rejection.reason})")  # [en]
          f" 败给 {rejection.winner.source}（{rejection.reason}）")  # [zh]

# %% [markdown] en
# An unknown source is not guessed at; it fails closed with a message that says what to do.

# %% [markdown] zh
# 未知来源不会被猜成某个等级；它直接失败（fail closed），消息会告诉你该怎么做。

# %%
try:
    resolve([Instruction("admin", "write", "allow")])
except ValueError as error:
    print("ValueError:", error)  # [en]
    print("ValueError：来源 'admin' 不在指令层级里（只有 system、developer、user、retrieved 四种），"  # [zh]
          "所以不猜它的等级，直接失败。")  # [zh]
    print(f"  原文：{error}")  # [zh]
