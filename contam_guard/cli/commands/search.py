"""``contam-guard index``, ``search`` and ``serve``: build, query and browse a search index."""

from __future__ import annotations

import json
from pathlib import Path

from contam_guard.errors import ConfigError, ExitCode
from contam_guard.io.atomic import Interrupted
from contam_guard.report import console


def run_index(root: Path, paths: list[Path], fields: list[str]) -> int:
    """Add ``paths`` to the index at ``root``; prints what was added, skipped and replaced."""
    from contam_guard.io.readers import meter, totals  # noqa: PLC0415 (imported when the command runs)

    need_extra()
    from contam_guard.io.walk import data_files  # noqa: PLC0415
    from contam_guard.search.build import build  # noqa: PLC0415

    total = totals.input_bytes(data_files(paths).files)  # the bar's total: every file to be read
    with console.progress(total, meter.bytes_read) as advance:
        summary = build(root, paths, tuple(fields), on_chars=advance)
    for notice in summary.notices:
        console.notice(notice)
    for name in summary.replaced:
        console.notice(f"{name}: changed since it was indexed; its old records are retired")
    if summary.skipped:
        console.info(f"already indexed (same path and SHA-256), skipped: {', '.join(summary.skipped)}")
    if not summary.added:
        console.info(f"{root}: nothing new to index")
        return int(ExitCode.CLEAN)
    console.info(
        f"{root}: indexed {len(summary.added)} file(s), {summary.records} records, {summary.words} words "
        f"({summary.bytes_read / 1e6:.1f} MB)"
    )
    return int(ExitCode.CLEAN)


def run_search(root: Path, query: str, *, exact: bool, limit: int, as_json: bool, redact: bool) -> int:
    """Print the hits for ``query`` (``--json``: the machine format)."""
    need_extra()
    from contam_guard.search.query import SearchIndex  # noqa: PLC0415

    result = SearchIndex(root).search(query, exact=exact, limit=limit, redact=redact)
    if as_json:
        console.raw(json.dumps(result.as_json(), ensure_ascii=False, indent=2) + "\n")
        return int(ExitCode.CLEAN)
    if exact:
        console.info(f"{result.count} occurrence(s) in {result.documents} record(s)")
    else:
        console.info(f"{len(result.hits)} record(s) ranked by BM25")
    for hit in result.hits:
        where = f"{hit.file}:{hit.line}" if hit.line is not None else hit.file
        score = "" if exact else f"  score {hit.score:g}"
        console.info(f"\n{where}  record {hit.record}  field {hit.field or '-'}  offset {hit.offset}{score}")
        console.info("  " + hit.snippet.marked_text().replace("\n", "\n  "))
    return int(ExitCode.CLEAN)


def run_serve(root: Path, host: str, port: int) -> int:
    """Serve the search page until Ctrl-C (loopback only; PII always masked)."""
    need_extra()
    from contam_guard.search.query import SearchIndex  # noqa: PLC0415
    from contam_guard.search.server import make_server  # noqa: PLC0415

    def failed(error: BaseException) -> None:
        console.notice(f"a request failed ({type(error).__name__}); the server goes on")

    server = make_server(SearchIndex(root), host, port, on_error=failed)
    shown = f"[{host}]" if ":" in host else host
    console.info(f"serving {root} on http://{shown}:{server.server_address[1]}/ (read-only; Ctrl-C stops)")
    try:
        server.serve_forever()
    except Interrupted:
        console.info("stopped")
        raise  # the signal's exit code (130, 143), as for every command
    finally:
        server.server_close()
    return int(ExitCode.CLEAN)


def need_extra() -> None:
    """A clear message (exit 2) when the ``[search]`` extra is not installed."""
    import importlib.util  # noqa: PLC0415

    missing = [name for name in ("tantivy", "pydivsufsort") if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"index, search and serve need {' and '.join(missing)}, which are not installed",
            hint="pip install 'contam-guard[search]'",
        )
