"""The command line: parse, call a command, map errors to exit codes in one place.

Exit codes (docs/reference/exit-codes.md): 0 clean, 1 a failing rule fired, 2 usage, config, input
or manifest error, 3 internal error (a bug; never 0).

Each command imports its module when it runs: the engine with numpy, pyarrow and matplotlib take
a good part of a second to import, which `--help`, `verify` and a hook on a code-only commit
should not pay.
"""

import contextlib
import os
import sys
from typing import NoReturn

from contam_guard import __version__
from contam_guard.cli import process  # noqa: F401  (first: sets the process's defaults)
from contam_guard.cli.app import app

# Each module registers its commands when imported; --help lists them in this order.
# isort: off
from contam_guard.cli.verbs import manifest, scan, review, jobs  # noqa: F401
# isort: on
from contam_guard.errors import ContamGuardError, ExitCode
from contam_guard.report import console

__all__ = ["app", "main", "run"]


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and turn every outcome into a documented exit code.

    typer handles usage errors (exit 2) and ``typer.Exit``; everything else lands here. Ctrl-C
    and SIGTERM become an exception (``io.atomic.Interrupted``), so that every temporary file is
    removed on the way out; they end with one line and exit 128 + the signal number (130, 143).
    """
    from contam_guard.io.atomic import Interrupted, raise_on_signals

    try:
        with raise_on_signals():
            app(args=argv)
    except Interrupted as exc:
        console.error(f"interrupted ({exc.name}): nothing was concluded; no partial file was left behind")
        sys.exit(128 + exc.signum)
    except ContamGuardError as exc:
        console.error(str(exc))
        sys.exit(int(exc.exit_code))
    except Exception as exc:  # a bug: say so, never exit 0
        console.error(
            f"internal error ({type(exc).__name__}); this is a bug in contam-guard "
            f"{__version__}, please report it with the command you ran"
        )
        if os.environ.get("CONTAM_GUARD_DEBUG"):
            raise
        sys.exit(int(ExitCode.INTERNAL))
    finally:
        _kernel_notices()


def _kernel_notices() -> None:
    """Show the kernels' notice (numpy fallback) once, if a command loaded them."""
    native = sys.modules.get("contam_guard.core.spec.native")
    if native is not None:
        for text in native.take_notices():
            console.notice(text)


def run() -> NoReturn:
    """The console script and ``python -m contam_guard``: ``main``, then a quick exit.

    Python's own shutdown frees every object of every imported module one by one: a tenth of a
    second here, a tenth of a whole scan of 100 MB. Once ``main`` has returned nothing is left to
    do (outputs are written atomically and closed, worker pools shut down), so the standard
    streams are flushed and the process ends. A run that started Spark is left to the normal
    shutdown, whose exit hook stops the JVM.
    """
    from contam_guard.cli import streams

    streams.guard()
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = _exit_status(exc.code)
    failed = streams.flush()
    if failed is not None and code in (int(ExitCode.CLEAN), int(ExitCode.CONTAMINATED)):
        with contextlib.suppress(OSError, ValueError):
            console.error(str(failed))
        code = int(ExitCode.USAGE)
    if "pyspark" in sys.modules:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, ContamGuardError):  # said above, if at all
            stream.flush()
    os._exit(code)


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` gives: None is 0, a number itself, anything else printed and 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
