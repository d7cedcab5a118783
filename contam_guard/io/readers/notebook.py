"""Jupyter notebooks (``.ipynb``): one record per cell, its text as a reader of the notebook sees
it.

A notebook stores a cell's source, and an output's text, as a list of lines (nbformat's
"multiline strings"): they are joined back into one string each, so that a test item written
over several lines of a cell is one run, not a dozen strings. Every other string of the cell is
read too (outputs' other MIME data, attachments' names, metadata), or only the ``--field`` paths
(``source``, ``outputs[].text``). The notebook's own metadata is a last record, when it holds
text.
"""

from __future__ import annotations

from collections.abc import Iterator

from contam_guard.errors import InputError
from contam_guard.io.readers.base import Input, ReadOptions, Record, StreamError
from contam_guard.io.readers.decoding import check_encoding, decode_failure
from contam_guard.io.readers.depth import deeper_than, too_deep
from contam_guard.io.readers.fields import loads_keeping_duplicates, record_from_object, strings_in
from contam_guard.io.readers.opener import open_binary
from contam_guard.io.readers.transcode import stream_encoding

_MULTILINE = ("source", "text", "input")
"""Keys whose value nbformat may store as a list of lines (``input``: nbformat 3)."""


def _joined(value: object, key: str = "") -> object:
    """``value`` with nbformat's lists of lines joined into strings."""
    if isinstance(value, list):
        if (key in _MULTILINE or key == "data-item") and all(isinstance(line, str) for line in value):
            return "".join(value)
        return [_joined(item) for item in value]
    if isinstance(value, dict):
        return {k: _joined(v, "data-item" if key == "data" else k) for k, v in value.items()}
    return value


def read_notebook(path: Input, display: str, options: ReadOptions) -> Iterator[Record]:
    """One record per cell of a Jupyter notebook (nbformat 4, and 3's worksheets)."""
    check_encoding(options, display, line_based=False)
    encoding = stream_encoding(options.encoding)
    with open_binary(path, display, encoding=options.encoding, errors=options.errors) as src:
        try:
            data = src.stream.read()
        except StreamError as exc:
            raise InputError(display, exc.problem, hint=exc.hint) from exc
    try:
        text = data.decode(encoding, options.errors)
    except UnicodeDecodeError as exc:
        raise decode_failure(display, exc, line=None, line_offset=0, encoding=encoding) from exc
    if deeper_than(text.encode()):
        raise too_deep(display)
    try:
        notebook = loads_keeping_duplicates(text)
    except (ValueError, RecursionError) as exc:
        raise InputError(display, f"not a Jupyter notebook: invalid JSON ({exc})") from exc
    cells = _cells(notebook)
    if cells is None:
        raise InputError(display, "not a Jupyter notebook: no list of cells", hint="nbformat 3 or 4 is read")
    for index, cell in enumerate(cells):
        yield record_from_object(_joined(cell), options, source=display, index=index, line=None, raw=None)
    metadata = notebook.get("metadata") if isinstance(notebook, dict) else None
    golden = options.detect_shape or options.id_field is not None
    if not options.fields and not golden and strings_in(metadata, "metadata"):
        yield record_from_object(
            {"metadata": metadata}, options, source=display, index=len(cells), line=None, raw=None
        )


def _cells(notebook: object) -> list[object] | None:
    if not isinstance(notebook, dict):
        return None
    cells = notebook.get("cells")
    if isinstance(cells, list):
        return cells
    sheets = notebook.get("worksheets")
    if isinstance(sheets, list):
        return [cell for sheet in sheets if isinstance(sheet, dict) for cell in sheet.get("cells") or []]
    return None
