"""The fault lab's seal: in a learner bundle, a lab's broken module ships encrypted until the learner's own code passes.

A fault lab's broken module is the reference module with one planted defect, so handing it out before the learner
has written the stage would hand out the reference. ``forgelab release`` therefore ships each lab module only as
``failure_labs/NN-slug/sealed-lab.json`` (:class:`SealedLab`): the module encrypted with AES-GCM under a key derived
(scrypt) from what the *reference* module answers to the stage's seal probes — a fixed, course-authored set of
inputs (``course/stages/NN-slug/seal.py``), run through the judge. ``forgelab fault start NN`` runs the stage's
tests and the same probes on the learner's ``forge/`` (in the sandbox; the answers come back as data), derives the
key from the learner's answers and opens the lab: a learner whose code answers as the contract says gets the key,
nobody else does. No server, no secret in the bundle.

What it protects against, and what not: it stops copying the reference out of the bundle by hand before the stage
is done. Someone who can compute the reference's answers to the probes has, in effect, solved the stage already;
and a learner who opened a lab can pass the module on. Grading's comparison of submissions is the real guard.

:func:`canonical_answers` makes the key material: the probes' answers (JSON recorded by each probe, see
:mod:`forgelab.judge.session_plugin`'s ``forgelab_record``) by probe name, as JSON with sorted keys.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
from pydantic import BaseModel, ConfigDict, ValidationError

from forgelab.core.i18n import _

FORMAT = "forge-workbook-sealed-lab/1"
SEALED_NAME = "sealed-lab.json"  # in failure_labs/NN-slug/
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1  # about 0.1 s per key on a laptop: guessing answers one by one is slow


class SealError(ValueError):
    """A sealed lab cannot be opened or written; the message names the problem and what to do."""


class SealedLab(BaseModel):
    """``failure_labs/NN-slug/sealed-lab.json``: one fault lab's broken module, encrypted (see the module's doc)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str
    stage: str  # "06"
    module: str  # the file it opens to, relative to the workbook: failure_labs/06-injection-boundary/forge/injection.py
    probes: str  # the seal probes' file, relative to the workbook: course/stages/06-injection-boundary/seal.py
    probes_sha256: str  # that file as the key was made from it (its answers are the key material)
    probe_names_sha256: str  # SHA-256 of the probe names, sorted (the questions, never the answers)
    salt: str  # base64
    nonce: str  # base64
    ciphertext: str  # base64 of AES-GCM(module bytes), with :meth:`associated` as associated data

    def associated(self) -> bytes:
        """What the ciphertext is bound to: the format, the stage, where it opens, the probes it was made with."""
        return json.dumps([self.format, self.stage, self.module, self.probes, self.probes_sha256,
                           self.probe_names_sha256], separators=(",", ":")).encode("utf-8")


def canonical_answers(answers: Mapping[str, str]) -> bytes:
    """The key material: probe name → its recorded answer (JSON text), as one JSON document with sorted keys."""
    try:
        values = {name: json.loads(text) for name, text in answers.items()}
    except ValueError as error:
        raise SealError(_("a seal probe recorded something that is not JSON ({error})").format(error=error)) from None
    return json.dumps(values, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def probe_names_digest(answers: Mapping[str, str]) -> str:
    return hashlib.sha256("\n".join(sorted(answers)).encode("utf-8")).hexdigest()


def _key(material: bytes, salt: bytes) -> bytes:
    return Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P).derive(material)


def seal(stage: str, module: str, plaintext: bytes, probes: str, probes_source: bytes, answers: Mapping[str, str],
         context: bytes) -> SealedLab:
    """Encrypt ``plaintext`` (the lab module) under the key the reference's ``answers`` make.

    ``context`` (the commit, the edition) makes salt and nonce: the same release gives the same bytes, and no key is
    ever used for two modules (each edition and stage gets its own salt, hence its own key)."""
    seed = hashlib.sha256(b"forgelab sealed lab\0" + context + b"\0" + stage.encode() + b"\0" + module.encode()).digest()
    salt, nonce = seed[:16], hashlib.sha256(seed + b"\0nonce").digest()[:12]
    header = SealedLab(format=FORMAT, stage=stage, module=module, probes=probes,
                       probes_sha256=hashlib.sha256(probes_source).hexdigest(), probe_names_sha256=probe_names_digest(answers),
                       salt=base64.b64encode(salt).decode(), nonce=base64.b64encode(nonce).decode(), ciphertext="")
    box = AESGCM(_key(canonical_answers(answers), salt))
    sealed = box.encrypt(nonce, plaintext, header.associated())
    return header.model_copy(update={"ciphertext": base64.b64encode(sealed).decode()})


def dump(sealed: SealedLab) -> bytes:
    return (json.dumps(sealed.model_dump(), indent=1, sort_keys=True) + "\n").encode("utf-8")


def load(data: bytes, shown: str) -> SealedLab:
    """Read a sealed lab file; ``shown`` is its path as the learner knows it."""
    try:
        sealed = SealedLab.model_validate_json(data)
    except ValidationError as error:
        raise SealError(_("{path} is not a sealed fault lab ({error}): restore it from the bundle").format(
            path=shown, error=error.errors()[0].get("msg", error))) from None
    if sealed.format != FORMAT:
        raise SealError(_("{path} is a sealed lab of another format ({found}, this forgelab reads {expected}): use the "
                          "bundle it came with").format(path=shown, found=sealed.format, expected=FORMAT))
    return sealed


def open_sealed(sealed: SealedLab, probes_source: bytes, answers: Mapping[str, str]) -> bytes | None:
    """The lab module, if ``answers`` are the reference's answers to the probes; None if they are not.

    Raises :class:`SealError` when the probes file is not the one the lab was sealed with (it was edited)."""
    if hashlib.sha256(probes_source).hexdigest() != sealed.probes_sha256:
        raise SealError(_("{probes} is not the file this lab was sealed with (it was changed): restore it from the "
                          "bundle, it is course code").format(probes=sealed.probes))
    if probe_names_digest(answers) != sealed.probe_names_sha256:
        return None  # some probe did not answer (it failed or raised): no key to try
    try:
        salt, nonce, ciphertext = (base64.b64decode(sealed.salt, validate=True), base64.b64decode(sealed.nonce, validate=True),
                                   base64.b64decode(sealed.ciphertext, validate=True))
        return AESGCM(_key(canonical_answers(answers), salt)).decrypt(nonce, ciphertext, sealed.associated())
    except (InvalidTag, ValueError):
        return None
