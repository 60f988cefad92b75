"""_errors.py: the exceptions of the binding, one per ec_status of the library.

Every failure the library reports raises a subclass of epochcast.Error carrying the library's
own message (ec_ctx_errmsg: it names the key, the file and line, the nearest valid name) and
the status.  The classes also derive from the built-in exception a Python caller would catch
for that kind of failure (ValueError, LookupError, OSError, MemoryError).
"""


class Error(Exception):
    """A failure reported by libepochcast: .message (the library's text), .status (the
    ec_status number), .code (its name, "EC_EINVAL"), .key (the config key when known)."""

    status = None
    code = None

    def __init__(self, message, status=None, key=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.key = key

    def __str__(self):
        return self.message


class OutOfMemoryError(Error, MemoryError):
    """EC_ENOMEM: an allocation failed."""
    status, code = 1, "EC_ENOMEM"


class BadValueError(Error, ValueError):
    """EC_EINVAL: a value that does not parse or is out of range, an impossible combination,
    a missing required key; also a Python value that is no config value (a list, a dict)."""
    status, code = 2, "EC_EINVAL"


class DomainError(Error, ValueError):
    """EC_EDOM: a query outside what a model or a table covers."""
    status, code = 3, "EC_EDOM"


class FileError(Error, OSError):
    """EC_EIO: a file could not be opened, read, written or renamed."""
    status, code = 5, "EC_EIO"


class ParseError(FileError):
    """EC_EPARSE: a malformed input file (CSV, config.json, profile); the message has
    file:line:column."""
    status, code = 4, "EC_EPARSE"


class UnknownNameError(Error, LookupError):
    """EC_ENOTFOUND: an unknown GPU, model, task, host, network or column (the message names
    the nearest valid ones)."""
    status, code = 6, "EC_ENOTFOUND"


class UnknownKeyError(UnknownNameError):
    """EC_ENOTFOUND for a key: a config key (or plan/optimize option) that does not exist."""


class UnsupportedError(Error):
    """EC_ENOTSUP: a combination this build or model does not support."""
    status, code = 7, "EC_ENOTSUP"


class MisuseError(Error):
    """EC_EMISUSE: the API used out of order (a bug in the caller or in the binding)."""
    status, code = 8, "EC_EMISUSE"


class CanceledError(Error):
    """EC_ECANCELED: a progress callback asked a long operation to stop."""
    status, code = 9, "EC_ECANCELED"


class EpochcastWarning(UserWarning):
    """A warning of a prediction (bf16 emulated, does not fit, a key ignored, ...)."""


_BY_STATUS = {c.status: c for c in (OutOfMemoryError, BadValueError, DomainError, ParseError, FileError,
                                     UnknownNameError, UnsupportedError, MisuseError, CanceledError)}


def error_class(status):
    return _BY_STATUS.get(status, Error)
