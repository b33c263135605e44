"""forge.project — the finished parts of the chapter project (you do not need to edit them).

The requirement extractor you write in ``forge/extractor.py`` strings the seven stage modules
together. Everything around it is given here:

    tokens     a transparent, offline token estimate (no vocabulary download)
    schemas    the two output schema versions, v1 and v2, and how a prompt describes them
    scenarios  the three scenario packs (software, office, music) loaded from JSON files
    prompts    the versioned prompt template and the renderers for its sections
    models     the model protocol: MockModel, ReplayModel, RecordingModel, OpenAIChatModel
    strict     the strict JSON parser of recovery mode (no repair: stage 05 is not needed)

Nothing here imports a stage module, so a half-finished stage never breaks these tools.
"""
