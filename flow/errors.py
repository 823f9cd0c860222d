"""Errors a user can act on: the CLI prints their message as one line."""

from __future__ import annotations


class MdchunksError(Exception):
    """A problem with the input, the database or the environment, explained.

    `exit_code` follows the CLI's table (1 is kept for "the run finished but
    some documents failed"): 2 bad usage, option or path, 3 database
    unreachable or not usable, 4 another run holds the source, 5 anything else.
    """

    exit_code: int = 5


class UsageError(MdchunksError):
    exit_code = 2


class DatabaseUnavailable(MdchunksError):
    exit_code = 3


class SourceBusy(MdchunksError):
    exit_code = 4
