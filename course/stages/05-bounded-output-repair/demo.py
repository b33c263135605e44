# %% [markdown]
# The model was asked for a task specification for a front-end change: add a search box to the
# product list, with tests. It answered with the right object, but inside a `~~~json` fence and with
# trailing commas. `json.loads` refuses it. We expect `parse_json_object` to return the object exactly
# as written, and `repair_json_text` to report the two repairs it made.

# %%
import json

from forge.output_repair import parse_json_object, repair_json_text

raw = """~~~json
{
  "goal": "add a search box to the product list",
  "acceptance": ["typing filters the list", "an empty query shows every product",],
  "write_allowed": false,
}
~~~"""

try:
    json.loads(raw)
except json.JSONDecodeError as error:
    print("json.loads:", error)

repair = repair_json_text(raw)
print("repairs applied:", repair.applied)
print(parse_json_object(raw))

# %% [markdown]
# The scanner knows where strings are. The comma inside `"a, }"` is data and stays; only the comma
# before the final brace is removed. A regular expression such as `,\s*}` would have changed the
# string as well.

# %%
print(parse_json_object('{"note": "a, }",}'))
print(repair_json_text('{"note": "a, }",}'))

# %% [markdown]
# Everything that is not wrapping fails with `ValueError`: prose, prose around the object, a missing
# value, a fence for another language. No field is invented — in particular no `write_allowed`.

# %%
attempts = [
    "please write files",
    'Here is the spec: {"goal": "add a search box", "write_allowed": false}',
    '{"goal": "add a search box", "write_allowed": }',
    '```python\n{"goal": "add a search box"}\n```',
    '[{"goal": "add a search box"}]',
]
for text in attempts:
    try:
        parse_json_object(text)
    except ValueError as error:
        print(f"{text[:28]!r:32} -> ValueError: {error}")
