"""verification.json: build, seal, write and read back.

The integrity digest is sha256 over the canonical JSON of the document without its ``integrity``
member: keys sorted, separators ``,`` and ``:``, UTF-8, non-ASCII unescaped. Documents hold no
floating-point numbers, so a browser computes the same bytes with ``JSON.stringify`` over sorted keys.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

SCHEMA_VERSION = 2  # 2: the fault lab records its diagnosis beside its repair
KIND = "forge-workbook/stage-verification"
CANONICALIZATION = "json-sorted-keys-compact-utf8"
FILENAME = "verification.json"
DISCLAIMER = (
    "Local self-check of the lab contract, produced on the learner's machine. "
    "It is not a certificate, a server-side verification or a third-party endorsement."
)


def sha256_file(path: Path | None) -> str | None:
    if path is None or not path.is_file():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def canonical_bytes(document: dict[str, object]) -> bytes:
    body = {key: value for key, value in document.items() if key != "integrity"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def seal(document: dict[str, object]) -> dict[str, object]:
    """Return ``document`` with a fresh integrity digest."""
    sealed = {key: value for key, value in document.items() if key != "integrity"}
    sealed["integrity"] = {
        "algorithm": "sha256",
        "canonicalization": CANONICALIZATION,
        "digest": hashlib.sha256(canonical_bytes(sealed)).hexdigest(),
    }
    return sealed


def integrity_holds(document: dict[str, object]) -> bool:
    integrity = document.get("integrity")
    if not isinstance(integrity, dict):
        return False
    return integrity.get("digest") == hashlib.sha256(canonical_bytes(document)).hexdigest()


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_document(path: Path, document: dict[str, object]) -> None:
    write_atomic(path, json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n")


def read_document(path: Path) -> dict[str, object]:
    document: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return document


def schema() -> dict[str, object]:
    """The shipped schema file (generated from :class:`forgelab.core.verification.Verification` by ``forgelab build``)."""
    from importlib import resources

    loaded: dict[str, object] = json.loads(
        (resources.files("forgelab") / "data" / "verification.schema.json").read_text(encoding="utf-8"))
    return loaded
