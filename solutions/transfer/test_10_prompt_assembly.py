"""Transfer challenge, stage 10 — office research (reference test)."""

from forge.prompt_assembly import MEMORY_NOTICE, Segment, assemble, input_budget


def test_office_brief_keeps_the_request_whole_and_skips_memory_visibly() -> None:
    budget = input_budget(1000, 600, 200, 100)
    request = Segment("request", "user",
                      "Draft a one-page decision brief: should we replace the weekly PDF report with a live dashboard?")
    past = Segment("past-briefs", "memory",
                   "Earlier briefs for this team: in March they chose a shared spreadsheet over a BI tool because of "
                   "licence costs; in June they asked for shorter briefs with one recommendation and at most three "
                   "risks; the finance lead prefers numbers in euros.")
    survey = Segment("survey", "evidence", "Team survey, May: 14 of 18 people read the weekly report on their phone.")
    pricing = Segment("pricing", "evidence",
                      "Dashboard vendor price list: 9 euros per user and month, 12 months minimum.")
    segments = [
        Segment("system", "system", "You are a research assistant. Every claim in a brief needs a citation."),
        Segment("policy", "policy", "Cite only the evidence below; never invent a source."),
        past, survey, pricing, request,
    ]
    assembly = assemble(segments, budget)
    parts = assembly.prompt.split("\n\n")
    assert parts[-1] == request.text
    assert survey.text in parts and pricing.text in parts
    assert past.text not in assembly.prompt
    assert MEMORY_NOTICE in parts
    assert assembly.used_tokens <= budget
