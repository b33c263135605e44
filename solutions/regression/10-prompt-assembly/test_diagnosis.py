"""Regression test for fault lab 10 (prompt-assembly): the course's example.

It pins the lab's defect: it fails on the broken copy of forge/prompt_assembly.py and passes on the reference. It is
the stage test that shows the defect (test_user_input_is_never_cut_memory_is_dropped_instead) with what it needs from
tests/stages/test_10_prompt_assembly.py. Never shipped to learners: it names the defect.
"""

from __future__ import annotations

from forge.prompt_assembly import MEMORY_NOTICE, Assembly, Segment, assemble


SYSTEM = Segment("system", "system",
                 "You are a careful coding assistant for a front-end repository. Follow the policy exactly.")  # 18


TOOLS = Segment("tools", "tools",
                "Tools: read_file(path), run_tests(), write_file(path, text) - write_file needs approval.")  # 30


POLICY = Segment("policy", "policy", "Write policy: deny until a human approves the plan.")  # 11


MEMORY = Segment("memory", "memory", "Ana prefers small pull requests. For this task she wants the release script "
                 "in Go, and she reviews every diff herself before merging.")  # 26


EVIDENCE = Segment("component", "evidence",
                   "ProductList.tsx renders the list; filtering happens in useProducts().")  # 14


DIALOGUE = Segment("turn-1", "dialogue", "Ana: the list gets slow with 500 products.")  # 10


USER = Segment("request", "user", "Add a search box to the product list and keep every existing test green.")  # 15


ALL = [SYSTEM, TOOLS, POLICY, MEMORY, EVIDENCE, DIALOGUE, USER]


def parts(assembly: Assembly) -> list[str]:
    return assembly.prompt.split("\n\n")


def test_user_input_is_never_cut_memory_is_dropped_instead() -> None:
    # 74 required + 12 notice + 14 evidence + 10 dialogue = 110; the 26-unit memory does not fit in 110
    assembly = assemble(ALL, 110)
    assert parts(assembly)[-1] == USER.text
    assert MEMORY.text not in assembly.prompt
    assert MEMORY_NOTICE in parts(assembly)
    assert assembly.used_tokens == 110
