"""Domain refusals: an answer to the caller, never a failure of the worker."""

from __future__ import annotations

from actors.messages import DomainFailure


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str, param: str | None = None):
        super().__init__(message)
        self.failure = DomainFailure(status, code, message, param)


def not_found(what: str = "order") -> Refused:
    return Refused(404, f"{what}_not_found", f"No such {what}.", f"{what}_id")


def conflict(code: str, message: str, param: str | None = None) -> Refused:
    return Refused(409, code, message, param)
