"""Manifest format 1: one JSON file holding every array as base64 (contam-guard before format 2).

It is read as it is, with every check it always had (its digest, its arrays' sizes), so that a
project keeps scanning until ``contam-guard upgrade`` converts it (no golden files needed: the
arrays convert as they are, and every digest and version stays). It is written only by
``dumps``/``save`` here, which the tests use to make old manifests.
"""

from __future__ import annotations

import base64
import functools
import json
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, SerializerFunctionWrapHandler, ValidationError, model_serializer

from contam_guard.atomic import write_text
from contam_guard.errors import ManifestError
from contam_guard.manifest import checks
from contam_guard.manifest.digests import encode_array
from contam_guard.manifest.model import (
    FORMAT1_SCHEMA,
    GoldenFile,
    GoldenSet,
    Manifest,
    SetVersion,
    Spec,
    Version,
    View,
    ViewData,
    _Frozen,
    is_derived,
)
from contam_guard.text.hashing import GRAM_N, WINDOW_CHARS, digest

SCHEMA = FORMAT1_SCHEMA


def decode_array(text: str, dtype: str) -> NDArray[Any]:
    return np.frombuffer(base64.b64decode(text.encode("ascii"), validate=True), dtype=dtype)


class View1(_Frozen):
    field: str
    digest: str
    words: str = Field(description="int32 word count per item")
    alnum_chars: str = Field(description="int32 length of the alnum view per item")
    grams: str = Field(description="uint64 5-gram hashes, items concatenated in order")
    windows: str = Field(description="uint64 50-character window hashes, items concatenated")


class GoldenSet1(_Frozen):
    version: Version
    digest: str
    id_field: str | None
    files: list[GoldenFile]
    ids: list[str]
    views: dict[str, View1]
    history: list[SetVersion]
    n: Annotated[int, Field(ge=5, le=1_000_000)] | None = None
    """The set's own GPT-3 N (issue 14), when it has one."""

    @model_serializer(mode="wrap")
    def _without_default_n(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # A set without its own n is written as before n existed: same bytes, same digests.
        data: dict[str, object] = handler(self)
        if data.get("n") is None:
            data.pop("n", None)
        return data


class Manifest1(_Frozen):
    format: str = "contam-guard-manifest"
    schema_version: int = SCHEMA
    spec: Spec = Spec()
    key_check: str | None = None
    sets: dict[str, GoldenSet1] = Field(default_factory=dict)
    digest: str = ""


def content_digest(manifest: Manifest1) -> str:
    body = manifest.model_dump(mode="json", exclude={"digest"})
    return digest(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("utf-8"))


def from_raw(path: Path, raw: dict[str, Any], spec: Spec | None) -> Manifest:
    """The checked manifest of a format-1 file's JSON object."""
    try:
        old = Manifest1.model_validate(raw)
    except ValidationError as exc:
        raise checks.malformed(path, exc) from None
    if old.digest != content_digest(old):
        raise checks.integrity_failed(path)
    checks.check_spec(path, old.spec, old.key_check, spec)
    sets = {name: _golden(path, name, golden) for name, golden in old.sets.items()}
    return Manifest(
        spec=old.spec, key_check=old.key_check, sets=sets, schema_version=SCHEMA, digest=old.digest, path=path
    )


def _golden(path: Path, name: str, golden: GoldenSet1) -> GoldenSet:
    hint = checks.RESTORE_HINT.format(path=path)
    if sum(f.items for f in golden.files) != len(golden.ids):
        raise ManifestError(
            f"{path}: set {name!r}: the files' item counts do not add up to its items", hint=hint
        )
    views = {}
    for view_name, view in golden.views.items():
        label = f"{path}: set {name!r} view {view_name!r}"
        try:
            words = decode_array(view.words, "<i4").astype(np.int64)
            alnum = decode_array(view.alnum_chars, "<i4").astype(np.int64)
            grams = decode_array(view.grams, "<u8").astype(np.uint64)
            windows = decode_array(view.windows, "<u8").astype(np.uint64)
        except ValueError as exc:
            raise ManifestError(f"{label}: an array is not valid base64 ({exc})", hint=hint) from None
        # A negative count would hide from the sums below and index arrays backwards.
        if bool((words < 0).any() or (alnum < 0).any()):
            raise ManifestError(f"{label}: a word or character count is negative", hint=hint)
        if not (
            words.size == len(golden.ids)
            and alnum.size == len(golden.ids)
            and int(np.maximum(words - (GRAM_N - 1), 0).sum()) == grams.size
            and int(np.maximum(alnum - (WINDOW_CHARS - 1), 0).sum()) == windows.size
        ):
            raise ManifestError(f"{label}: array sizes do not match the item counts", hint=hint)
        # The tables are built when the view is first used (a sort per view: format 1 is slow).
        # A derived view (issue 15) without window hashes has no window table, as when registered.
        stored = None if is_derived(view_name) and not windows.size else windows
        views[view_name] = View(
            view.field, view.digest, functools.partial(ViewData.from_items, words, alnum, grams, stored)
        )
    return GoldenSet(
        version=golden.version,
        digest=golden.digest,
        id_field=golden.id_field,
        files=golden.files,
        ids=golden.ids,
        views=views,
        history=golden.history,
        n=golden.n,
    )


def dumps(manifest: Manifest) -> str:
    """The manifest as a format-1 file (old manifests for the tests; never written otherwise)."""
    sets = {}
    for name, golden in manifest.sets.items():
        views = {
            view_name: View1(
                field=view.field,
                digest=view.digest,
                words=encode_array(view.word_counts, "<i4"),
                alnum_chars=encode_array(view.alnum_counts, "<i4"),
                grams=encode_array(view.gram_hashes, "<u8"),
                windows=encode_array(view.window_hashes, "<u8"),
            )
            for view_name, view in golden.views.items()
        }
        sets[name] = GoldenSet1(
            version=golden.version,
            digest=golden.digest,
            id_field=golden.id_field,
            files=golden.files,
            ids=list(golden.ids),
            views=views,
            history=golden.history,
            n=golden.n,
        )
    old = Manifest1(spec=manifest.spec, key_check=manifest.key_check, sets=sets)
    sealed = old.model_copy(update={"digest": content_digest(old)})
    return json.dumps(sealed.model_dump(mode="json"), sort_keys=True, indent=2) + "\n"


def save(path: Path, manifest: Manifest) -> None:
    write_text(path, dumps(manifest))
