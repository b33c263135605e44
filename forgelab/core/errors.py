"""The registry's one error type, apart from the models that raise it (so ``forgelab --help`` loads no Pydantic)."""


class RegistryError(ValueError):
    """A course source is malformed; the message names the file and the key."""
