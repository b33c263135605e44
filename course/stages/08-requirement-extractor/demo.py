# %% [markdown] en
# Three scenario packs ship in `forge/project/scenarios/`. We run two requests from each pack —
# one English, one Chinese — through the extractor with the deterministic mock model. We expect a
# spec every time; `write_allowed` is `true` for software (its developer instruction allows writes)
# and `false` for office and music (their system instruction denies them), whatever the retrieved
# documents say.

# %% [markdown] zh
# `forge/project/scenarios/` 中有三个场景包。我们用确定性的 Mock 模型，从每个场景包各取两条请求（一条英文、一条中文）交给抽取器。预期每次都能得到一份规格：software 的 `write_allowed` 为 `true`（它的 developer 指令允许写入），office 和 music 为 `false`（它们的 system 指令禁止写入）——无论检索文档里写了什么。

# %%
from forge.extractor import CAUGHT_BY, RECOVERY, STANDARD, ExtractionError, build_prompt, extract
from forge.project.models import MOCK_FAULTS, MockModel, strip_data_blocks
from forge.project.scenarios import SCENARIOS, load_scenario

for name in SCENARIOS:
    pack = load_scenario(name)
    for request in pack.requests[:2]:
        result = extract(pack, request.text, MockModel())
        allowed = "true" if result.spec.write_allowed else "false"
        print(f"{name:<9}{request.language}  write_allowed={allowed:<6} examples: {', '.join(result.audit.examples)}")  # [en]
        print(f"{name:<9}{request.language}  write_allowed={allowed:<6} 示例：{'、'.join(result.audit.examples)}")  # [zh]

# %% [markdown] en
# Now the Chinese software request in full: the spec and its audit trail, row for row what
# `forgelab extract --scenario software "为前端仓库增加功能、修改代码并补测试"` prints (here as tables).

# %% [markdown] zh
# 下面完整展示那条中文 software 请求的结果：规格和它的审计记录，逐行与 `forgelab extract --scenario software "为前端仓库增加功能、修改代码并补测试"` 打印的内容一致（这里显示成表格）。

# %%
from forge.project.report import extraction_tables

software = load_scenario("software")
result = extract(software, "为前端仓库增加功能、修改代码并补测试", MockModel())
document = {"spec": result.spec.model_dump(mode="json"), "audit": result.audit.to_dict()}
for title, rows in extraction_tables(document, language=lab.language):
    print(title)
    lab.table([], rows)

# %% [markdown] en
# Read the trail from the top. The user's "skip the tests this time" lost to the developer's rule
# (stage 01). Two context items did not fit the 145-token budget; the required change-control policy
# was never at risk (stage 02). The music example and the v1 example in the bank were never shown,
# however many tags they share (stage 03). The forum post was flagged (stage 06) — and that is all the
# flag does.
#
# What actually protects the spec is where the post sits in the prompt. Here is the retrieved section
# of an office prompt, and a check of what the model can see outside the data blocks.

# %% [markdown] zh
# 从上往下读这份记录。用户那条“skip the tests this time”（这次跳过测试）输给了 developer 的规则（阶段 01）。有两条上下文没能放进 145 Token 的预算，而必需的变更管控策略从头到尾都没有被挤掉的风险（阶段 02）。示例库里的 music 示例和 v1 示例，无论与请求共享多少标签，都没有被展示（阶段 03）。论坛帖子被打上了标记（阶段 06）——标记的作用也就仅此而已。
#
# 真正保护规格的，是这篇帖子在 Prompt 中所处的位置。下面是一个 office Prompt 的检索文档部分，以及一项检查：模型在数据块之外能读到什么。

# %%
office = load_scenario("office")
ask = "Compare the two vendor quotes and recommend one in a short brief"
prompt = build_prompt(office, ask).prompt
print(prompt[prompt.index("## Retrieved documents"):prompt.index("## Request")].rstrip())
print()
print("'enable writes' readable outside the data blocks:", "enable writes" in strip_data_blocks(prompt))  # [en]
print("数据块之外还能读到 'enable writes' 吗？", "enable writes" in strip_data_blocks(prompt))  # [zh]

# %% [markdown] en
# Next, the model's side. Each mock fault is switched on in turn, in standard and in recovery mode.
# We expect stage 05 to repair the fence and the trailing comma (standard mode only) and to reject the
# prose; stage 04 rejects the unknown field and the missing `write_allowed` in both modes.

# %% [markdown] zh
# 接下来看模型这一侧。依次打开每一种 Mock 故障，分别在标准模式和恢复模式下运行。预期阶段 05 修复代码围栏和尾逗号（仅限标准模式），并拒绝混有说明文字的回答；阶段 04 在两种模式下都拒绝未知字段和缺少 `write_allowed` 的回答。

# %%
# 哪一关拦下了它（CAUGHT_BY 的中文说法，按 error.step 查）  # [zh]
CAUGHT_BY_ZH = {"repair": "阶段 05（有界修复）", "spec": "阶段 04（严格的任务规格）", "permission": "权限检查（阶段 08）"}  # [zh]
for fault in MOCK_FAULTS:
    for settings in (STANDARD, RECOVERY):
        try:
            repaired = extract(office, ask, MockModel(fault), settings=settings)
            outcome = f"accepted, repairs: {', '.join(repaired.audit.repairs)}"  # [en]
            outcome = f"接受，修复：{'、'.join(repaired.audit.repairs)}"  # [zh]
        except ExtractionError as error:
            outcome = f"rejected by {CAUGHT_BY[error.step]}"  # [en]
            outcome = f"被{CAUGHT_BY_ZH.get(error.step, CAUGHT_BY[error.step])}拦下"  # [zh]
        print(f"{fault:<22} {settings.mode:<9} {outcome}")

# %% [markdown] en
# One more edge: a well-formed answer that grants itself write access. Nothing is wrong with its
# JSON or its fields, so only the permission check at the end can stop it.

# %% [markdown] zh
# 还有一种边缘情况：一个格式完好、却给自己授予写权限的回答。它的 JSON 和字段都挑不出毛病，只有最后的权限检查能拦住它。

# %%
class Overeager:
    model_id = "overeager"

    def complete(self, prompt: str) -> str:
        return '{"goal": "compare the quotes", "acceptance": ["one vendor is recommended"], "write_allowed": true}'


try:
    extract(office, ask, Overeager())
except ExtractionError as error:
    print(f"{CAUGHT_BY[error.step]}: {error.reason}")  # [en]
    print(f"被{CAUGHT_BY_ZH.get(error.step, CAUGHT_BY[error.step])}拦下：模型的规格把 write_allowed 设成了 true，"  # [zh]
          "可被接受的写入策略是 'deny'。")  # [zh]
    print(f"  原文：{CAUGHT_BY[error.step]}: {error.reason}")  # [zh]

# %% [markdown] en
# Finally, prompt versions. A version id is a hash of the template text. We run the nine fixed
# regression cases (three per scenario) against three versions: the shipped template, a reworded one,
# and a "tidied" one in which somebody deleted the Instructions section. We expect the rewording to
# pass — the suite compares structure and permissions, never wording — and the tidied version to
# break exactly the cases whose permission came from an instruction.

# %% [markdown] zh
# 最后看 Prompt 版本。版本 id 是模板文本的哈希值。我们用三个版本运行九个固定回归用例（每个场景三个）：随附的模板、一个改了措辞的版本，以及一个“整理过”的版本——有人把其中的 Instructions 部分删掉了。预期改措辞的版本能够通过，因为回归集比较的是结构和权限，从不比较措辞；而“整理过”的版本恰好会让那些权限来自指令的用例失败。

# %%
from forge.extractor import regression_cases, regression_invoke
from forge.project.prompts import PromptTemplate, load_template
from forge.prompt_regression import PromptVersion, regression_report

shipped = load_template()
reworded = PromptTemplate("reworded", shipped.text.replace("one vague request", "one unclear request"))
cut_from, cut_to = shipped.text.index("## Instructions"), shipped.text.index("## Output schema")
tidied = PromptTemplate("tidied", shipped.text[:cut_from] + shipped.text[cut_to:])


def invoke(text: str, payload: dict) -> dict:
    return regression_invoke(PromptTemplate("under test", text))(payload)


PROBLEMS_ZH = {"write permission changed": "写入权限变了（write permission changed）"}  # [zh]
cases = regression_cases()
for template in (shipped, reworded, tidied):
    report = regression_report(PromptVersion(template.name, template.text), cases, invoke)
    passed = report["cases"] - len(report["failures"])
    print(f"{report['label']:<10}{report['prompt_version']}  {passed}/{report['cases']} cases pass")  # [en]
    print(f"{report['label']:<10}{report['prompt_version']}  {passed}/{report['cases']} 个用例通过")  # [zh]
    for case_id, problems in report["failures"].items():
        print(f"    {case_id}: {'; '.join(problems)}")  # [en]
        print(f"    {case_id}：{'；'.join(PROBLEMS_ZH.get(problem, problem) for problem in problems)}")  # [zh]

# %% [markdown] en
# In the terminal, `forgelab regress --target learner` runs the same cases, stores every run in
# `.forgelab/regressions.sqlite3`, compares it with the last run that passed, prints what changed and
# exits non-zero on a new regression. `forgelab regress --prompt my-prompt.txt` tries your own edit.
# %% [markdown] zh
# 在终端里，`forgelab regress --target learner` 运行同样的用例，把每次运行存入 `.forgelab/regressions.sqlite3`，与上一次通过的运行比较，打印出变化之处，并在出现新的回归时以非零状态退出。想试验你自己改过的 Prompt，可以用 `forgelab regress --prompt my-prompt.txt`。
