# %% [markdown]
# Three scenario packs ship in `forge/project/scenarios/`. We run two requests from each pack —
# one English, one Chinese — through the extractor with the deterministic mock model. We expect a
# spec every time; `write_allowed` is `true` for software (its developer instruction allows writes)
# and `false` for office and music (their system instruction denies them), whatever the retrieved
# documents say.

# %%
from forge.extractor import CAUGHT_BY, RECOVERY, STANDARD, ExtractionError, build_prompt, extract
from forge.project.models import MOCK_FAULTS, MockModel, strip_data_blocks
from forge.project.scenarios import SCENARIOS, load_scenario

for name in SCENARIOS:
    pack = load_scenario(name)
    for request in pack.requests[:2]:
        result = extract(pack, request.text, MockModel())
        allowed = "true" if result.spec.write_allowed else "false"
        print(f"{name:<9}{request.language}  write_allowed={allowed:<6} examples: {', '.join(result.audit.examples)}")

# %% [markdown]
# Now the Chinese software request in full: the spec and its audit trail, exactly as
# `forgelab extract --scenario software "为前端仓库增加功能、修改代码并补测试"` prints them.

# %%
from forge.project.report import format_extraction

software = load_scenario("software")
result = extract(software, "为前端仓库增加功能、修改代码并补测试", MockModel())
print(format_extraction({"spec": result.spec.model_dump(mode="json"), "audit": result.audit.to_dict()}))

# %% [markdown]
# Read the trail from the top. The user's "skip the tests this time" lost to the developer's rule
# (stage 01). Two context items did not fit the 145-token budget; the required change-control policy
# was never at risk (stage 02). The music example and the v1 example in the bank were never shown,
# however many tags they share (stage 03). The forum post was flagged (stage 06) — and that is all the
# flag does.
#
# What actually protects the spec is where the post sits in the prompt. Here is the retrieved section
# of an office prompt, and a check of what the model can see outside the data blocks.

# %%
office = load_scenario("office")
ask = "Compare the two vendor quotes and recommend one in a short brief"
prompt = build_prompt(office, ask).prompt
print(prompt[prompt.index("## Retrieved documents"):prompt.index("## Request")].rstrip())
print()
print("'enable writes' readable outside the data blocks:", "enable writes" in strip_data_blocks(prompt))

# %% [markdown]
# Next, the model's side. Each mock fault is switched on in turn, in standard and in recovery mode.
# We expect stage 05 to repair the fence and the trailing comma (standard mode only) and to reject the
# prose; stage 04 rejects the unknown field and the missing `write_allowed` in both modes.

# %%
for fault in MOCK_FAULTS:
    for settings in (STANDARD, RECOVERY):
        try:
            repaired = extract(office, ask, MockModel(fault), settings=settings)
            outcome = f"accepted, repairs: {', '.join(repaired.audit.repairs)}"
        except ExtractionError as error:
            outcome = f"rejected by {CAUGHT_BY[error.step]}"
        print(f"{fault:<22} {settings.mode:<9} {outcome}")

# %% [markdown]
# One more edge: a well-formed answer that grants itself write access. Nothing is wrong with its
# JSON or its fields, so only the permission check at the end can stop it.

# %%
class Overeager:
    model_id = "overeager"

    def complete(self, prompt: str) -> str:
        return '{"goal": "compare the quotes", "acceptance": ["one vendor is recommended"], "write_allowed": true}'


try:
    extract(office, ask, Overeager())
except ExtractionError as error:
    print(f"{CAUGHT_BY[error.step]}: {error.reason}")

# %% [markdown]
# Finally, prompt versions. A version id is a hash of the template text. We run the nine fixed
# regression cases (three per scenario) against three versions: the shipped template, a reworded one,
# and a "tidied" one in which somebody deleted the Instructions section. We expect the rewording to
# pass — the suite compares structure and permissions, never wording — and the tidied version to
# break exactly the cases whose permission came from an instruction.

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


cases = regression_cases()
for template in (shipped, reworded, tidied):
    report = regression_report(PromptVersion(template.name, template.text), cases, invoke)
    passed = report["cases"] - len(report["failures"])
    print(f"{report['label']:<10}{report['prompt_version']}  {passed}/{report['cases']} cases pass")
    for case_id, problems in report["failures"].items():
        print(f"    {case_id}: {'; '.join(problems)}")

# %% [markdown]
# In the terminal, `forgelab regress --target learner` runs the same cases, stores every run in
# `.forgelab/regressions.sqlite3`, compares it with the last run that passed, prints what changed and
# exits non-zero on a new regression. `forgelab regress --prompt my-prompt.txt` tries your own edit.
