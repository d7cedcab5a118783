"""Errors a user can act on, and the exit codes they map to.

Every error the library raises on purpose is a ``ContamGuardError``: its ``str()`` is a
complete, user-readable sentence that names the file (and line, where there is one) and,
where we know it, the fix. The command line (``contam_guard/cli``) maps these to exit codes in
one place.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The documented exit-code contract (docs/reference/exit-codes.md)."""

    CLEAN = 0
    """Nothing found, or only warn-level / allowlisted findings, or ``--exit-zero``."""
    CONTAMINATED = 1
    """At least one finding of a rule whose action is ``fail``."""
    USAGE = 2
    """Usage, config, input or manifest error: nothing was concluded."""
    INTERNAL = 3
    """A bug in contam-guard. Never 0: a crash must not pass a build."""


class ContamGuardError(Exception):
    """Base class: a problem the user can fix. Exit code 2 unless a subclass says otherwise."""

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __reduce__(self) -> tuple[object, ...]:
        # Rebuild from the instance's attributes: the subclasses' __init__ signatures differ, so
        # the default (``cls(*args)``) cannot recreate them after crossing a process boundary.
        return (_restore, (type(self), self.args, self.__dict__))

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class ConfigError(ContamGuardError):
    """The configuration file or a command-line setting is invalid."""


class InputError(ContamGuardError):
    """A file could not be read or parsed. The message names file and line (or offset)."""

    def __init__(
        self,
        path: str,
        problem: str,
        *,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {problem}", hint=hint)
        self.path = path
        self.line = line
        self.problem = problem


class ManifestError(ContamGuardError):
    """The manifest is missing, corrupt, from another schema version, or was built differently."""


class HashKeyError(ContamGuardError):
    """Keyed hashing was asked for (or is required by the manifest) and the key is wrong or absent."""


class GitError(ContamGuardError):
    """A git range could not be resolved (shallow clone, missing base, not a repository)."""


def _restore(
    cls: type[ContamGuardError], args: tuple[object, ...], state: dict[str, object]
) -> ContamGuardError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error
