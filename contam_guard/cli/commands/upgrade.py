"""``contam-guard upgrade``: bring a manifest to the current spec, and its files up to date.

1. A manifest of an older normalisation spec is re-hashed under the current one (``words-v4``,
   from spec 1, 2 or 3: a set written without spaces also gets its own GPT-3 N,
   ``gpt3.default_n``, unless it had one).
2. A manifest of the current spec written by an earlier contam-guard is saved again: its ids
   files get the record of their set (``io.manifest.record``), a keyed one's index its MAC and its
   sealed files their padding (``io.manifest.sealing``). Nothing is hashed again.

For step 1 the manifest holds hashes only, so the golden files are read again, from the paths it
records (relative to the project root). Each set is first hashed under the manifest's own spec
and must give exactly its registered digest: an upgrade changes how text is normalised, never
what was registered (a golden file edited since would otherwise slip in unreviewed). Then it is
hashed under the current spec. A set whose hashes do not change (ASCII text without markup is
the same under every normalisation spec) keeps its version; another gets the next version, its
history keeping the old digest. A keyed manifest is re-hashed under the same secret. Nothing is
written unless every set converts.
"""

from __future__ import annotations

from pathlib import Path

from contam_guard.core.config import LoadedConfig
from contam_guard.core.register.build import AUTO_VIEW, GoldenSource, build_set
from contam_guard.core.rules import gpt3
from contam_guard.core.spec.hashing import SIPHASH_SPEC
from contam_guard.core.spec.normalise import CURRENT
from contam_guard.errors import ExitCode, ManifestError
from contam_guard.io.keys import key_for, unlocked
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import GoldenSet, Manifest, Spec, is_derived
from contam_guard.report import console


def run(loaded: LoadedConfig, manifest_path: Path | None = None) -> int:
    path = manifest_path or loaded.manifest_path
    with store.locked(path):
        # A keyed index without a MAC (written before indexes had one) is read here only.
        manifest = unlocked(store.load(path, without_mac=True), loaded.config.key_env)
        keyed = manifest.key_check is not None
        current = Spec.current(keyed=keyed)
        if manifest.spec.is_current(keyed=keyed):
            key_for(manifest, loaded.config.key_env)
            if store.save(path, manifest):
                console.info(
                    f"{path}: spec {describe(current)}; its files brought up to date (each set's "
                    "own record" + (", the index's MAC, sealed files padded" if keyed else "") + ")"
                )
            else:
                console.info(f"{path}: already spec {describe(current)}, files up to date; nothing to do")
            return ExitCode.CLEAN
        sources = _golden_sources(path, manifest, loaded.root)
        key = key_for(manifest, loaded.config.key_env)
        old = manifest.spec.text()
        sets: dict[str, GoldenSet] = {}
        for name in sorted(manifest.sets):
            golden = manifest.sets[name]
            fields = [
                None if view == AUTO_VIEW else golden.views[view].field
                for view in golden.views
                if not is_derived(view)  # derived views are rebuilt by build_set
            ]
            # hashed as registered first: it must give the registered digest
            again = build_set(sources[name], fields, golden.id_field, key, None, old, golden.rules)
            if again.digest != golden.digest:
                files = ", ".join(f.path for f in golden.files)
                raise ManifestError(
                    f"{path}: set {name!r}: its golden files ({files}) changed since version "
                    f"{golden.version} was registered, so upgrading it would register new content",
                    hint="restore the registered files, or register the set again from the new "
                    f"files (contam-guard register {name} FILE...), then run `contam-guard upgrade`",
                )
            rehashed = build_set(sources[name], fields, golden.id_field, key, golden, CURRENT, golden.rules)
            sets[name] = gpt3.with_set_n(rehashed, None, golden)  # words-v3 and up may give it one
        store.save(path, manifest.model_copy(update={"spec": current, "sets": sets}))
    for name, golden in sets.items():
        before = manifest.sets[name].version
        change = "hashes unchanged" if golden.version == before else f"version {before} -> {golden.version}"
        if golden.n is not None and manifest.sets[name].n is None:
            change += f"; written without spaces: the GPT-3 rule's N for it is now {golden.n}"
        console.info(f"{name}: re-hashed under {describe(current)} ({change})")
    console.info(f"{path}: upgraded to spec {describe(current)} ({len(sets)} set(s))")
    return ExitCode.CLEAN


def describe(spec: Spec) -> str:
    """A spec as one names it: its normalisation, and its keyed function when it has one."""
    keyed = ", keyed with SipHash-2-4" if spec.hash == SIPHASH_SPEC else ""
    return f"{spec.words}/{spec.alnum}{keyed}"


def _golden_sources(path: Path, manifest: Manifest, root: Path) -> dict[str, list[GoldenSource]]:
    """Each set's golden files, from the paths the manifest records; every missing one is named."""
    sources: dict[str, list[GoldenSource]] = {}
    missing: list[str] = []
    for name, golden in sorted(manifest.sets.items()):
        sources[name] = [GoldenSource(root / f.path, f.path) for f in golden.files]
        missing += [f"set {name!r}: {s.display} ({s.path})" for s in sources[name] if not s.path.is_file()]
    if missing:
        raise ManifestError(
            f"{path}: cannot upgrade without the golden files; missing: " + "; ".join(missing),
            hint="put them back at those paths (relative to the project root, "
            f"{root}), or remove those sets (contam-guard remove NAME), upgrade, and register them again",
        )
    return sources
