"""Opening a manifest for a ``Scanner``: the settings as the command line finds them, the
manifest opened with its key, and the notices a reader of the scan should see."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from contam_guard.core.config import MANIFEST_NAME, load_config, with_rule_overrides
from contam_guard.core.scan_pass import ScanPass
from contam_guard.io.keys import key_for, unlocked
from contam_guard.io.manifest import store
from contam_guard.io.manifest.model import Manifest, Spec

Opened = TypeVar("Opened", bound=ScanPass)


def open_scanner(
    cls: type[Opened],
    manifest: Path,
    config: Path | None,
    rules: Mapping[str, Mapping[str, object]] | None,
    max_pairs: int | None,
) -> Opened:
    """See ``Scanner.open`` (``cls``: the class to open, ``Scanner``)."""
    manifest_path = manifest / MANIFEST_NAME if manifest.is_dir() else manifest
    loaded = load_config(config, start=manifest_path.resolve().parent.parent)
    settings = with_rule_overrides(loaded.config, {name: dict(v) for name, v in (rules or {}).items()})
    opened = unlocked(store.load(manifest_path), settings.key_env)
    return cls(
        opened,
        settings,
        key_for(opened, settings.key_env),
        root=loaded.root,
        manifest_path=manifest_path,
        max_pairs=max_pairs,
        allowlist_path=loaded.allowlist_path,
        notices=manifest_notices(manifest_path, opened),
    )


def manifest_notices(path: Path, manifest: Manifest) -> list[str]:
    """What a scan against ``manifest`` should say first: nothing to match, an older spec, the
    kernels in use."""
    notices = [] if manifest.sets else ["no golden sets are registered: nothing to match against"]
    if not manifest.spec.is_current(keyed=manifest.key_check is not None):
        notices.append(old_spec_notice(path, manifest))
    return notices


def old_spec_notice(path: Path, manifest: Manifest) -> str:
    """One line: the manifest is used with its older spec, and how to move to the current one."""
    current = Spec.current(keyed=manifest.key_check is not None)
    return (
        f"{path} uses normalisation spec {manifest.spec.words}/{manifest.spec.alnum} (text is "
        f"compared under it); `contam-guard upgrade` re-hashes it under {current.words}/"
        f"{current.alnum}, which also sees through invisible characters, fullwidth and NFD text, HTML "
        "entities and tags, and Markdown links"
    )
