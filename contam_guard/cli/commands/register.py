"""``contam-guard register``: hash a golden set into the manifest."""

from __future__ import annotations

from pathlib import Path

from contam_guard.cli.commands.common import load_manifest
from contam_guard.core.config import LoadedConfig
from contam_guard.core.register.build import GoldenSource, build_set, without_golden_text
from contam_guard.core.rules import RULES, gpt3
from contam_guard.errors import ContamGuardError, ExitCode, InputError
from contam_guard.io.keys import key_for
from contam_guard.io.manifest import names, store
from contam_guard.io.manifest.model import GoldenSet, all_rules, is_derived, uses_windows
from contam_guard.io.manifest.templates import TemplateSettings
from contam_guard.io.paths import manifest_display
from contam_guard.report import console


def parse_rules(text: str | None) -> tuple[str, ...] | None:
    """``--rules gpt3,palm,llama2`` as rule names (None: every rule); exit 2 for an unknown one."""
    if text is None:
        return None
    named = {part.strip() for part in text.split(",") if part.strip()}
    # a rule over another's registration (gapped reads gpt3's hashes) names that rule
    chosen = tuple(sorted({RULES[n].registered_as or n if n in RULES else n for n in named}))
    known = all_rules()
    unknown = [name for name in chosen if name not in known]
    if unknown or not chosen:
        raise ContamGuardError(
            f"--rules {text!r}: " + (f"unknown rule {', '.join(unknown)}" if unknown else "no rule named"),
            hint=f"name rules from: {', '.join(known)} (comma-separated)",
        )
    return chosen


def register(
    loaded: LoadedConfig,
    name: str,
    files: list[Path],
    fields: list[str],
    id_field: str | None,
    manifest_path: Path | None = None,
    *,
    n: int | None = None,
    benchmark: str | None = None,
    rules: str | None = None,
    template_share: float | None = None,
    template_min_items: int | None = None,
) -> int:
    path = manifest_path or loaded.manifest_path
    if not name.strip() or name != name.strip():
        raise ContamGuardError(f"set name {name!r}: a name is needed, without leading or trailing spaces")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # bytes the shell passed that are not UTF-8 (surrogate escapes)
        raise ContamGuardError(
            f"set name {name!r}: not UTF-8 text (the manifest names its sets in UTF-8 JSON)",
            hint="name the set with UTF-8 text, for example letters, digits, '.', '_' and '-'",
        ) from None
    if benchmark is not None:  # the catalogue's files, views and id field (yours win)
        from contam_guard.catalogue.fetch import for_register  # noqa: PLC0415

        files, fields, id_field, note = for_register(benchmark, files, fields, id_field, loaded.root)
        console.info(note)
    elif not files:
        raise ContamGuardError("register needs golden files (FILE...) or --benchmark NAME")
    chosen = parse_rules(rules)
    for file in files:
        if not file.exists():
            raise InputError(str(file), "no such file")
    with store.locked(path):
        path, manifest = load_manifest(loaded, path)
        key = key_for(manifest, loaded.config.key_env)
        clash = names.clash([*(other for other in manifest.sets if other != name), name])
        if clash is not None:
            raise ContamGuardError(
                f"set name {name!r}: its files would share a folder with set {clash[0]!r} on file "
                "systems that ignore case (macOS, Windows)",
                hint="choose a name that differs from every registered set's in more than case",
            )
        sources = [GoldenSource(f, manifest_display(f, loaded.root)) for f in files]
        previous = manifest.sets.get(name)
        if chosen is None and previous is not None:
            chosen = previous.rules  # a set keeps the rules it was registered for
        templates = None  # the set's own settings, else the defaults (build_set)
        if template_share is not None or template_min_items is not None:
            before = previous.templates if previous is not None and previous.templates else TemplateSettings()
            templates = TemplateSettings(
                template_share if template_share is not None else before.share,
                template_min_items if template_min_items is not None else before.min_items,
            )
        try:
            golden = build_set(
                sources,
                fields or [None],
                id_field,
                key,
                previous,
                manifest.spec.text(),
                rules=chosen,
                templates=templates,
            )
        except InputError as exc:
            raise without_golden_text(exc) from None
        golden = gpt3.with_set_n(golden, n, previous)  # the set's own GPT-3 N
        updated = manifest.model_copy(update={"sets": {**manifest.sets, name: golden}})
        store.save(path, updated)
    if previous is not None and previous.digest == golden.digest and previous.templates == golden.templates:
        console.info(f"{name}: unchanged (version {golden.version}, {golden.items} items)")
    elif previous is not None and previous.digest == golden.digest:
        console.info(f"{name}: unchanged content (version {golden.version}); template n-grams marked again")
    else:
        stored = "" if uses_windows(golden.rules) else " (no window hashes: not registered for gpt4)"
        console.info(
            f"{name}: registered version {golden.version}, {golden.items} items, views: "
            + ", ".join(sorted(v for v in golden.views if not is_derived(v)))  # not derived ones
            + f"; rules: {', '.join(golden.rules)}{stored}"
        )
    if golden.n is not None:
        console.info(f"{name}: the GPT-3 rule's N for this set is {golden.n} words")
    console.info(f"{name}: {template_line(golden)}")
    return ExitCode.CLEAN


def template_line(golden: GoldenSet) -> str:
    """What registration marked as template (counts only, never text)."""
    settings = golden.templates
    if settings is None:
        return "template n-grams: not marked (registered before they were; register it again)"
    rule = f"in more than {settings.share:.2%} of items and at least {settings.min_items}"
    parts = []
    for view_name in sorted(v for v in golden.views if not is_derived(v)):  # derived: never marked
        marks = golden.views[view_name].templates
        shared = f", the most common in {marks.top} items" if marks.ngrams else ""
        parts.append(f"{view_name}: {marks.ngrams}{shared}")
    return f"template 5-grams ({rule}): " + "; ".join(parts)
