"""Scan progress: bytes done, the total and the time left for files of known size (a pulse of
characters otherwise), on stderr, transient, only on a terminal; and the byte meter behind it."""

from __future__ import annotations

import gzip
import io
import json
import os
import pty
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from contam_guard.io.readers import ReadOptions, meter, read_records, totals
from contam_guard.report.console import progress

ERASE_LINE = "\r\x1b[2K"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=100, color_system=None), buffer


def frames(output: str) -> list[str]:
    """The lines a live display drew, in order (each redraw erases the line first)."""
    return [part.split("\n")[0].strip() for part in output.split(ERASE_LINE)[1:] if part.strip()]


def test_known_total_shows_bytes_done_total_speed_and_time_left() -> None:
    console, buffer = terminal()
    clock = Clock()
    read = [7_000]  # bytes read before this scan (another command's files) are not counted

    def done() -> int:
        return read[0]

    with progress(4_000_000, done, console=console, clock=clock) as advance:
        for second in (1, 2):
            clock.now = float(second)
            read[0] += 1_000_000
            advance(123)  # characters hashed: the bar follows bytes read, not this
    drawn = frames(buffer.getvalue())
    assert drawn[0].endswith("0.0/4.0 MB ? -:--:--")  # nothing read yet, no speed yet
    assert drawn[-1].endswith("2.0/4.0 MB 1.0 MB/s 0:00:02")  # 2 MB left at 1 MB/s
    assert "━" in drawn[-1]  # the bar itself
    assert buffer.getvalue().endswith("\x1b[1A" + "\x1b[2K")  # transient: erased at the end


def test_reading_past_the_total_stops_at_the_total() -> None:
    # A Git LFS pointer's object, or a file that grew after it was measured: never over 100%.
    console, buffer = terminal()
    clock = Clock()
    read = [0]
    with progress(1_000, lambda: read[0], console=console, clock=clock) as advance:
        clock.now = 1.0
        read[0] = 5_000
        advance(1)
    assert " 1.0/1.0 kB " in frames(buffer.getvalue())[-1]


@pytest.mark.parametrize(("total", "done"), [(0, meter.bytes_read), (4_000, None)])
def test_without_a_known_total_a_pulse_counts_characters(total: int, done: Callable[[], int] | None) -> None:
    console, buffer = terminal()
    with progress(total, done, console=console, clock=Clock()) as advance:
        advance(1_234_000)
        advance(567)
    last = frames(buffer.getvalue())[-1]
    assert last.endswith("1,234,567 characters") and "B" not in last


def test_off_a_terminal_nothing_is_drawn() -> None:
    buffer = io.StringIO()
    plain = Console(file=buffer, force_terminal=False)
    with progress(100, lambda: 50, console=plain, clock=Clock()) as advance:
        advance(10)
    assert buffer.getvalue() == ""


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.gz", "t.csv", "t.txt"])
def test_the_meter_counts_the_bytes_of_the_file_on_disk(tmp_path: Path, name: str) -> None:
    rows = [{"text": f"record {k} " + "word " * 40} for k in range(2_000)]
    if name.endswith(".jsonl") or name.endswith(".jsonl.gz"):
        data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    else:
        end = "\n\n" if name.endswith(".txt") else "\n"  # plain text: a paragraph per record
        data = (("text\n" if name.endswith(".csv") else "") + "".join(r["text"] + end for r in rows)).encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    before = meter.bytes_read()
    records = read_records(path, name, ReadOptions())
    next(records)
    assert meter.bytes_read() > before  # counted while the file is open
    assert sum(1 for _ in records) == (2_000 if name.endswith(".csv") else 1_999)  # a CSV's header too
    # Read to the end: exactly the file's size on disk (compressed bytes for .gz).
    assert meter.bytes_read() - before == path.stat().st_size == totals.input_bytes([path])


def test_input_bytes_leaves_out_parquet_and_files_it_does_not_read(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b"x" * 100)
    (tmp_path / "b.parquet").write_bytes(b"PAR1" * 10)
    (tmp_path / "c.png").write_bytes(b"\x89PNG" * 10)
    names = ["a.jsonl", "b.parquet", "c.png", "missing.jsonl"]
    assert totals.input_bytes(tmp_path / n for n in names) == 100


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_a_scan_on_a_terminal_shows_its_bytes_and_ends_at_the_total(tmp_path: Path) -> None:
    """The real command on a pseudo-terminal: the bar's last frame reads total/total bytes."""
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        json.dumps({"id": "g-1", "question": "a lighthouse keeper polished brass lamps"}) + "\n"
    )
    train = tmp_path / "train.jsonl"
    train.write_text(
        "".join(json.dumps({"text": f"clean record number {k} " * 8}) + "\n" for k in range(20_000))
    )
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    env.pop("CONTAM_GUARD_KEY", None)
    for args in (["init"], ["register", "g", str(golden), "--field", "question", "--id-field", "id"]):
        subprocess.run([sys.executable, "-m", "contam_guard", *args], cwd=tmp_path, env=env, check=True)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "contam_guard", "scan", str(train)],
        cwd=tmp_path,
        env=env,
        stdin=follower,
        stdout=follower,
        stderr=follower,
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other side closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=120) == 0
    output = b"".join(chunks).decode("utf-8", "replace")
    size = f"{train.stat().st_size / 1e6:.1f}"
    drawn = [frame for frame in frames(output) if frame.startswith("scanning")]
    assert drawn, output
    assert f"{size}/{size} MB" in drawn[-1]
    assert "Scanned 20000 records" in output


def test_a_handle_that_cannot_tell_its_position_is_not_counted(tmp_path: Path) -> None:
    """Progress never breaks a read: a stream without a position (or a closed one) counts 0."""
    counter = meter.ByteMeter()
    path = tmp_path / "d.bin"
    path.write_bytes(b"x" * 1000)
    with path.open("rb") as counted:
        stop = counter.track(counted)
        counted.read(300)
        assert counter.bytes_read() == 300
        stop()
    closed = path.open("rb")
    closed.close()  # tell() raises ValueError
    no_tell = io.RawIOBase()  # tell() raises OSError (unsupported)
    for handle in (closed, no_tell):
        untrack = counter.track(handle)  # type: ignore[arg-type]
        assert counter.bytes_read() == 300
        untrack()
    assert counter.bytes_read() == 300
