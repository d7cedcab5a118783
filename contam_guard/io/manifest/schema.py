"""The index of a manifest (``manifest.json``): small, sorted, diffable JSON.

::

    {"format": "contam-guard-manifest", "schema_version": 2, "spec": {...}, "key_check": null,
     "seal": null, "digest": "...",
     "sets": {"gsm8k": {"version": 1, "digest": "...", "items": 1319, "history": [...],
                        "data": {"sets/gsm8k/_ids.6c1f….bin": {"bytes": 9241, "digest": "6c1f..."},
                                 "sets/gsm8k/question.9a07….bin": {...}},
                        "id_field": "id", "files": [{"path": "test.jsonl", "items": 1319}],
                        "rules": ["gpt3", "gpt4", "llama2", "palm"],
                        "views": {"question": {"field": "question", "digest": "...", "tables": "...",
                                               "file": "sets/gsm8k/question.9a07….bin",
                                               "windows": "sets/gsm8k/question.windows.2b4e….bin"}},
                        "ids": "sets/gsm8k/_ids.6c1f….bin", "ids_digest": "...", "sealed": null}}}

``data`` lists every binary file of the set with its size and digest (xxh3-128; checked when
the file is first read, and by ``verify`` for every file); a file is named by its stem and the
start of that digest (``names.py``). A view's window table has a file of its own
(``question.windows.….bin``), read only by a scan with a rule that reads windows. The ids file's
header repeats the set's entry (``record.py``). A golden file's ``path`` is relative to the
project root, with ``..`` when it lies outside.
A keyed manifest (``seal``: the AEAD, the KDF and its salt) shows per set only the version,
digest, item total, history and ``data``; the rest (``id_field``, ``files``, ``rules``,
``views``, ``ids_digest``, and ``n``, the set's own GPT-3 N when it has one) is in
``sealed``, encrypted (``sealing.py``), and its binary files are sealed too. Its index carries
``mac``, HMAC-SHA-256 under a key derived from the secret of everything but ``digest`` and
``mac``: nobody without the key can change it unseen.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from contam_guard.io.manifest.model import Count, GoldenFile, SetVersion, Spec, Version, _Frozen

Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]
Bytes = Annotated[int, Field(ge=0, le=2**50)]
SetN = Annotated[int, Field(ge=5, le=1_000_000)]
"""A set's own GPT-3 N (``register --n``)."""
RelPath = Annotated[str, Field(pattern=r"^sets/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+\.bin$")]
"""A binary file, relative to the index's folder: never absolute, never ``..``."""


def _without_n(data: dict[str, object]) -> dict[str, object]:
    if data.get("n") is None:
        data.pop("n", None)
    return data


class DataFile(_Frozen):
    bytes: Bytes
    digest: Digest
    """xxh3-128 of the file's bytes (``core.spec.hashing.digest`` of the file as one part)."""


class ViewEntry(_Frozen):
    field: str
    digest: str
    """The content digest: what the golden text hashes to (``digests.view_digest``)."""
    tables: Digest
    """``digests.tables_digest`` of what the files hold (``verify`` recomputes it)."""
    file: RelPath
    """Counts and the 5-gram table."""
    windows: RelPath | None
    """The window table (None: a set not registered for a rule that reads windows)."""


class TemplateEntry(_Frozen):
    """When the set's n-grams are template (``io.manifest.templates``): in more than ``share`` of its
    items and in at least ``min_items``. The marks are in its views' files."""

    share: float = Field(ge=0.0, lt=1.0)
    min_items: int = Field(ge=1, le=2**31 - 1)


class SetMeta(_Frozen):
    """What a keyed manifest seals of each set."""

    id_field: str | None
    files: list[GoldenFile]
    rules: list[str]
    views: dict[str, ViewEntry]
    ids_digest: str
    n: SetN | None = None
    """The set's own GPT-3 N (not content: it changes neither the version nor the view files)."""
    templates: TemplateEntry | None = None
    """None: registered before template n-grams were marked."""

    @model_serializer(mode="wrap")
    def _without_default_n(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # A set without its own N is written without the key: the index of a set that never
        # had one is as it was before N existed.
        return _without_n(handler(self))


class SetEntry(_Frozen):
    version: Version
    digest: str
    items: Count
    history: list[SetVersion]
    data: dict[RelPath, DataFile]
    ids: RelPath
    id_field: str | None = None
    files: list[GoldenFile] | None = None
    rules: list[str] | None = None
    views: dict[str, ViewEntry] | None = None
    ids_digest: str | None = None
    n: SetN | None = None
    templates: TemplateEntry | None = None
    sealed: str | None = None
    """Base64 of the sealed ``SetMeta`` (keyed manifests); the fields above are then null."""

    @model_serializer(mode="wrap")
    def _without_default_n(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        # A set without its own N is written without the key: the index of a set that never
        # had one is as it was before N existed.
        return _without_n(handler(self))

    @model_validator(mode="after")
    def _one_form(self) -> SetEntry:
        clear = (self.files, self.rules, self.views, self.ids_digest)
        if self.sealed is None and any(part is None for part in clear):
            raise ValueError("a set needs files, rules and views (or sealed metadata)")
        shown = (*clear, self.id_field, self.n, self.templates)
        if self.sealed is not None and any(part is not None for part in shown):
            raise ValueError("a sealed set shows no files, rules, views, id field, N or template settings")
        for view in (self.views or {}).values():
            for rel in (view.file, view.windows):
                if rel is not None and rel not in self.data:
                    raise ValueError(f"view file {rel} is not among the set's data files")
        if self.ids not in self.data:
            raise ValueError(f"ids file {self.ids} is not among the set's data files")
        return self

    def meta(self) -> SetMeta:
        """The clear metadata (unkeyed manifests)."""
        assert self.files is not None and self.rules is not None and self.views is not None
        assert self.ids_digest is not None
        return SetMeta(
            id_field=self.id_field,
            files=self.files,
            rules=self.rules,
            views=self.views,
            ids_digest=self.ids_digest,
            n=self.n,
            templates=self.templates,
        )


class Seal(_Frozen):
    aead: Literal["aes-256-gcm"] = "aes-256-gcm"
    kdf: Literal["hkdf-sha256"] = "hkdf-sha256"
    salt: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]


Mac = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class Index(_Frozen):
    format: Literal["contam-guard-manifest"] = "contam-guard-manifest"
    schema_version: Literal[2] = 2
    spec: Spec = Spec()
    key_check: str | None = None
    seal: Seal | None = None
    sets: dict[str, SetEntry] = Field(default_factory=dict)
    mac: Mac | None = None
    """A keyed manifest's MAC of the index (``sealing.SealKey.index_mac``; None: unkeyed, or
    written before indexes had one, which ``contam-guard upgrade`` adds)."""
    digest: str = ""
    """Integrity digest over everything above (``disk.index_digest``)."""

    @model_validator(mode="after")
    def _sealed_iff_keyed(self) -> Index:
        if (self.seal is None) != (self.key_check is None):
            raise ValueError("a keyed manifest (key_check) and only a keyed one has a seal")
        if self.mac is not None and self.seal is None:
            raise ValueError("only a keyed manifest has a MAC")
        for name, entry in self.sets.items():
            if (entry.sealed is None) != (self.seal is None):
                raise ValueError(
                    f"set {name!r}: sealed metadata in a manifest that is not keyed, or the reverse"
                )
        return self
