"""forge — a small, honest context-engineering harness.

This is the learner's package. Each stage of the workbook adds one module:

    01 instructions        resolve conflicting instructions by trust rank
    02 context_selection   pick material by relevance, trust and token cost
    03 fewshot             choose few-shot examples that match scenario and schema
    04 task_spec           parse model output into a strict task specification
    05 output_repair       repair only provably safe JSON wrapping
    06 injection           treat retrieved text as untrusted data
    07 prompt_regression   check versioned prompts by structure and invariants
    08 extractor           the chapter project: one pipeline from a vague request to a strict spec
    09 memory_selection    gate, rank, dedupe and pack remembered facts (extension)
    10 prompt_assembly     assemble a prompt under a token budget; memory is dropped first, with a notice (extension)
    11 context_pipeline    versioned context objects: dependency closure, invalidation, cache cost,
                           deletion order (extension)

``forge.project`` is finished infrastructure for the chapter project (scenario packs, prompt
template, token estimates, models); you use it, you do not need to change it.

Nothing is imported here on purpose: a mistake in one module must not break the others.
"""
