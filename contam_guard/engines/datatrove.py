"""A datatrove pipeline step: scan each rank's documents, annotate (or drop) the contaminated ones,
save the rank's scan for one report over every rank.

    from datatrove.executor import LocalPipelineExecutor   # or Slurm's, or Ray's
    from datatrove.pipeline.readers import JsonlReader
    from contam_guard.engines.datatrove import ContamGuardFilter

    LocalPipelineExecutor(
        [JsonlReader("data/"), ContamGuardFilter("scan-states/", drop=True), JsonlWriter("clean/")],
        tasks=8,
    ).run()
    # then: contam-guard report-merge scan-states/ --items-csv items.csv --pairs-csv pairs.csv

Each rank feeds its documents, ``batch_size`` at a time, to an accumulator of the project's
``Scanner`` (``Scanner.open``). A document with a failing finding in its batch's verdicts
(``Scanner.finish`` over the batch: the allowlist and allow markers apply) gets them in its
metadata (``FINDINGS_KEY``: rule, set, item id, test index, field; never golden text) and, with
``drop=True``, is dropped, the ``exclusion_writer`` (if any) keeping it with its
``filter_reason``. The per-item rules (PaLM's, Llama 2's, GPT-4's) are decided over everything
scanned, so a batch's verdicts on them see that batch only; the report sees every rank.

When the rank's documents are done it saves its scan (``rank_states``): ``contam-guard
report-merge FOLDER`` (or ``report``) merges every rank's into the one report the command line
would have made (``Scanner.finish``).

Records are named as the local engine names them: a document read from a local file by
datatrove's ``JsonlReader`` or ``ParquetReader`` is the file's name relative to
``names_relative_to`` (default: the folder the step was made in), its 0-based record number
and (JSONL) its 1-based line. The readers give the file as ``metadata["file_path"]`` and the
position as the id ``PATH/N`` (N counts the file's lines, blank ones too) unless the data has
an id of its own; then give the reader ``adapter=adapter`` (it keeps the position), or the
documents are numbered in the order they reach the step, which is exact when no step before
drops any and every record has text. The step reads the document's text (as the field
``text_key``), or with ``fields`` those paths of the record rebuilt from the text and metadata.
"""

from __future__ import annotations

import contextlib
import os
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from datatrove.data import Document, DocumentsPipeline
from datatrove.io import DataFolderLike, get_datafolder
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.writers.disk_base import DiskWriter
from datatrove.utils.batching import batched
from datatrove.utils.typeshelper import StatHints

from contam_guard.core.accumulator import Accumulator
from contam_guard.core.match.pairs import PairStore
from contam_guard.core.scanner import FinishOptions, Scanner
from contam_guard.engines.rank_states import FINDINGS_KEY, RankState, local_absolute, state_name
from contam_guard.io.paths import display_path
from contam_guard.io.readers import detect_format
from contam_guard.io.readers.base import ReadOptions, Record, Segment
from contam_guard.io.readers.fields import ALLOW_KEY, KEY_MARK, record_from_object
from contam_guard.io.readers.opener import open_binary

POSITION_KEY = "contam_guard_position"
"""Where ``adapter`` keeps a document's position in its file (removed by the step)."""
DROP_REASON = "contamination"
"""A dropped document's ``filter_reason`` (and the step's ``dropped_contamination`` count)."""
_LINE_FORMATS = ("jsonl", "text")
_TABLE_FORMATS = frozenset({"parquet", "arrow", "orc"})


def adapter(reader: Any, data: dict[str, Any], path: str, id_in_file: int | str) -> dict[str, Any]:
    """A datatrove reader adapter (``JsonlReader(..., adapter=adapter)``): the reader's own
    document, keeping its position in the file for the step, whatever its id."""
    parsed: dict[str, Any] = reader._default_adapter(data, path, id_in_file)
    parsed["metadata"][POSITION_KEY] = id_in_file
    return parsed


class ContamGuardFilter(PipelineStep):  # type: ignore[misc]  # datatrove ships no types
    """Scan, annotate and (``drop=True``) filter documents; save the rank's scan to
    ``output_folder`` (see the module's docstring)."""

    name = "🛡 contam-guard"
    type = "🔻 - FILTER"

    def __init__(
        self,
        output_folder: DataFolderLike | os.PathLike[str],
        manifest: str | os.PathLike[str] = ".contam-guard",
        *,
        config: str | os.PathLike[str] | None = None,
        rules: dict[str, dict[str, object]] | None = None,
        max_pairs: int | None = None,
        text_key: str = "text",
        fields: Sequence[str] | None = None,
        drop: bool = False,
        exclusion_writer: DiskWriter | None = None,
        batch_size: int = 1000,
        names_relative_to: str | os.PathLike[str] | None = None,
        use_allowlist: bool = True,
    ) -> None:
        super().__init__()
        self.output_folder = get_datafolder(local_absolute(output_folder))
        # Absolute: datatrove may run the step in another folder (a Slurm job, a Ray worker).
        self.manifest = os.path.abspath(manifest)
        self.config = None if config is None else os.path.abspath(config)
        self.rules = rules
        self.max_pairs = max_pairs
        self.text_key = text_key
        self.fields = (text_key,) if fields is None else tuple(fields)
        self.drop = drop
        self.exclusion_writer = exclusion_writer
        self.batch_size = batch_size
        self.names_relative_to = os.path.abspath(names_relative_to or os.getcwd())
        self.use_allowlist = use_allowlist

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        # A state left by an earlier run goes first: if this run fails, the merge must find this
        # rank missing, not take the earlier run's scan for this one's.
        if self.output_folder.exists(state_name(rank)):
            self.output_folder.rm(state_name(rank))
        scan = RankScan(self, rank)
        writer = self.exclusion_writer if self.drop and self.exclusion_writer is not None else None
        with writer if writer is not None else contextlib.nullcontext():
            for batch in batched(data or (), self.batch_size):
                with self.track_time("batch"):
                    found = scan.add(batch)
                for doc, failing in zip(batch, found):
                    self.stat_update(StatHints.total)
                    if failing:
                        doc.metadata[FINDINGS_KEY] = failing
                        self.stat_update("contaminated")
                    if failing and self.drop:
                        self.stat_update(StatHints.dropped, f"dropped_{DROP_REASON}")
                        if writer is not None:
                            doc.metadata["filter_reason"] = DROP_REASON
                            writer.write(doc, rank)
                        continue
                    self.stat_update(StatHints.forwarded)
                    yield doc
        scan.save(self.output_folder, world_size)


class RankScan:
    """One rank's scan: its totals and census, and per input file the pairs to list."""

    def __init__(self, step: ContamGuardFilter, rank: int) -> None:
        self.step = step
        self.rank = rank
        self.scanner = Scanner.open(
            step.manifest, config=step.config, rules=step.rules, max_pairs=step.max_pairs
        )
        self.scanner.large = True  # a rank's share is large against the manifest: build the tables
        self.options = ReadOptions(fields=step.fields)
        self.state = self.scanner.empty_state()
        self.state.census.asked = step.fields
        self.files: dict[str, PairStore] = {}
        """Per input, its pairs: each kept to the pair limit within its file, where its order is
        the whole scan's, so that the merge lists exactly what one process lists."""
        self.names = Names(step.names_relative_to, rank)
        self.finish = FinishOptions(use_allowlist=step.use_allowlist, check_stale=False)
        self.text_only = step.fields == (step.text_key,)

    def add(self, docs: list[Document]) -> list[list[dict[str, object]]]:
        """Scan ``docs``; each one's failing findings in its batch's verdicts."""
        records = [self.record(doc) for doc in docs]
        part = replace(self.scanner.empty_state(), store=PairStore(0))
        Accumulator(self.scanner, part).add_batch(records)
        report = self.scanner.finish(part, self.finish)
        where = {(r.source, r.index): k for k, r in enumerate(records)}
        found: list[list[dict[str, object]]] = [[] for _ in docs]
        for finding in report.failing:
            for pair in finding.pairs:
                found[where[(pair.source, pair.record)]].append(
                    {
                        "rule": finding.rule,
                        "set": finding.set,
                        "view": finding.view,
                        "item_id": finding.item_id,
                        "test_index": finding.test_index,
                        "field": pair.field,
                        "detail": finding.detail,
                    }
                )
        pairs = part.store.pairs()
        part.store = PairStore(0)  # the pairs go to their files' stores
        self.state.merge(part)
        for pair in pairs:
            self.files.setdefault(pair.source, PairStore(self.scanner.max_pairs)).add(pair)
        return found

    def record(self, doc: Document) -> Record:
        source, index, line = self.names.of(doc)
        meta = doc.metadata
        data: dict[str, object] = {self.step.text_key: doc.text}
        if self.text_only:  # the metadata are not read: only the allow marker counts
            if ALLOW_KEY in meta:
                data[ALLOW_KEY] = meta[ALLOW_KEY]
        else:
            data.update(
                (key, value)
                for key, value in meta.items()
                if key != FINDINGS_KEY and not (key == "file_path" and value == self.names.file_of(doc))
            )
        if source not in self.state.census.files:
            self.state.census.files.append(source)
        record = record_from_object(data, self.options, source=source, index=index, line=line, raw=None)
        path = self.names.file_of(doc)
        if self.text_only and index == 0 and path is not None and detect_format(Path(path)) in _TABLE_FORMATS:
            # a table's column name is read with its first row, as the local reader reads it
            names = (Segment(KEY_MARK, self.step.text_key),) if self.options.reads_names else ()
            record = replace(record, segments=names + record.segments)
        return record

    def save(self, folder: Any, world_size: int) -> None:
        """Write the rank's state to ``folder`` (whole or not at all)."""
        store = PairStore(0)
        for kept in self.files.values():
            store.merge(kept.pairs(), kept.unlisted())
        self.state.store = store
        part = RankState(
            self.rank,
            world_size,
            self.scanner.manifest.digest,
            self.scanner.rules,
            self.scanner.max_pairs,
            self.step.fields,
            self.state,
            tuple(self.names.notices),
        )
        _write(folder, part.name, part.dumps())


def _write(folder: Any, name: str, data: bytes) -> None:
    from fsspec.implementations.local import LocalFileSystem  # noqa: PLC0415 (datatrove's own dependency)

    if isinstance(folder.fs, LocalFileSystem):
        from contam_guard.io.atomic import write_bytes  # noqa: PLC0415

        target = Path(folder.path) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(target, data)
        return
    temporary = f"{name}.part-{os.getpid()}"
    with folder.open(temporary, "wb") as handle:
        handle.write(data)
    folder.mv(temporary, name)  # an object store's rename: a whole object or none


@dataclass
class _File:
    """How one input's documents are numbered so far."""

    line_based: bool
    received: int = 0
    next_position: int = 0
    gapped: bool = False
    """A document's position skipped lines (blank, or dropped before the step): from here on,
    record numbers come from the file's blank lines."""
    blanks: list[int] | None = None
    """The file's blank lines (1-based), read when first needed."""


@dataclass
class Names:
    """Each document's (input, record number, line), as the local engine names its record."""

    relative_to: str
    rank: int
    files: dict[str, _File] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    displays: dict[str, str] = field(default_factory=dict)
    """Each file's display name, by its path (worked out once)."""
    loose: int = 0
    """Documents of this rank with no file: numbered in order under the rank's name."""

    @staticmethod
    def file_of(doc: Document) -> str | None:
        path = doc.metadata.get("file_path")
        return path if isinstance(path, str) else None

    def of(self, doc: Document) -> tuple[str, int, int | None]:
        path = self.file_of(doc)
        if path is None:
            self.loose += 1
            return f"rank-{self.rank:05d}", self.loose - 1, None
        display = self.displays.get(path)
        if display is None:
            display = self.displays[path] = _display(path, self.relative_to)
        known = self.files.get(display)
        if known is None:
            known = self.files[display] = _File(detect_format(Path(path)) in _LINE_FORMATS)
        position = doc.metadata.pop(POSITION_KEY, None)
        if not isinstance(position, int):
            position = _default_position(doc.id, path)
        known.received += 1
        if position is None:  # an id of the data's own: the order the documents arrive in
            record = known.received - 1
            return display, record, self._line_of(known, path, display, record) if known.line_based else None
        if not known.line_based:
            return display, position, None
        if position != known.next_position:
            known.gapped = True
        known.next_position = position + 1
        line = position + 1
        if not known.gapped:
            return display, position, line
        blanks = self._blanks(known, path, display)
        return display, line - 1 - bisect_left(blanks, line), line

    def _line_of(self, known: _File, path: str, display: str, record: int) -> int:
        """The line of the ``record``-th non-blank line."""
        line = record + 1
        for blank in self._blanks(known, path, display):
            if blank > line:
                break
            line += 1
        return line

    def _blanks(self, known: _File, path: str, display: str) -> list[int]:
        if known.blanks is None:
            known.blanks = list(_blank_lines(path, display, self.notices))
        return known.blanks


def _blank_lines(path: str, display: str, notices: list[str]) -> Iterator[int]:
    """The 1-based numbers of the blank lines of the local file ``path`` (read as the local
    engine reads it: compressed or not, a BOM dropped); none, with a notice, for a remote one."""
    if "://" in path:
        notices.append(f"{display}: a remote file: its record numbers assume it has no blank lines")
        return
    with open_binary(Path(path), display) as src:
        for line, raw in enumerate(src.stream, start=1):
            if raw.isspace():
                yield line


def _default_position(doc_id: str, path: str) -> int | None:
    """N in the readers' default id ``PATH/N`` (PATH: the file relative to the reader's
    folder, which ``path`` ends with); None for an id of the data's own."""
    head, _, number = doc_id.rpartition("/")
    if not head or not number.isdigit() or not (path == head or path.endswith("/" + head)):
        return None
    return int(number)


def _display(path: str, relative_to: str) -> str:
    """``path`` as the command line names it (``io.paths.display_path``); a URL as given."""
    return path if "://" in path else display_path(Path(path), Path(relative_to))
