"""The registry's error types, apart from the models that raise them (so ``forgelab --help`` loads no Pydantic)."""


class RegistryError(ValueError):
    """The course cannot answer: a stage selection names no stage, or a course source is malformed (see
    :class:`CourseFileError`); the message names what and says what to do."""


class CourseFileError(RegistryError):
    """A course source file (course.toml, stage.toml, fault.toml, mutants.toml, glossary.toml) is malformed: the
    course author's to fix, never the learner's work; the message names the file and the key."""
