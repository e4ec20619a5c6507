"""Errors of the HTTP service, named for the condition; the app maps each to a status code."""


class ApiError(Exception):
    """Base class for every error the api package raises on purpose."""


class InvalidSettings(ApiError, ValueError):
    """An API setting (environment variable) has a bad value."""


class SqlRejected(ApiError):
    """The text is not exactly one SELECT statement (400)."""


class SqlFailed(ApiError):
    """DuckDB refused or failed the query: syntax, unknown table, file access (400)."""


class SqlTimeout(ApiError):
    """The query ran longer than the configured timeout and was interrupted (408)."""


class InvalidFrameSha(ApiError, ValueError):
    """A frame key that is not 64 lowercase hex characters (400)."""


class DatasetNotFound(ApiError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "dataset not found"


class ReportNotFound(ApiError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "report not found"


class StepNotFound(ApiError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "step not found"


class EvalNotFound(ApiError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "evaluation not found"


class TooManyQueries(ApiError):
    """More SQL queries at once than PHONELOOP_SQL_MAX_CONCURRENT allows (429)."""
