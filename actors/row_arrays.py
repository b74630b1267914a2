"""Rows written by unnest() over one array per column, each column named once: in its row type.

A row type is a NamedTuple whose fields are annotated `Annotated[<python type>, "<PostgreSQL type>"]`. `Arrays`
numbers a statement's parameters while its SQL is built, and `values` lays out the arguments in that same order,
so a column's SQL and its value cannot be paired wrongly.
"""

from __future__ import annotations

from typing import NamedTuple, get_type_hints


class Arrays:
    """The parameters of one statement: each row type's columns as arrays, numbered in the order added."""

    def __init__(self) -> None:
        self._params: dict[type[NamedTuple], dict[str, str]] = {}
        self._count = 0

    def add(self, row: type[NamedTuple]) -> dict[str, str]:
        """The row type's columns as `$n::type[]`, by column name."""
        if row not in self._params:
            hints = get_type_hints(row, include_extras=True)
            self._params[row] = {name: f"${self._count + i + 1}::{hints[name].__metadata__[0]}[]"
                                 for i, name in enumerate(row._fields)}
            self._count += len(row._fields)
        return self._params[row]

    def unnest(self, row: type[NamedTuple], alias: str = "r") -> str:
        """`unnest(...) AS alias(col, ...)`: the row type's columns as a relation."""
        arrays = self.add(row)
        return f"unnest({', '.join(arrays.values())}) AS {alias}({', '.join(row._fields)})"

    def values(self, batches: dict[type[NamedTuple], list]) -> list[list]:
        """The statement's arguments: for each row type in order, one list per column."""
        out: list[list] = []
        for row in self._params:
            given = batches[row]
            out += [list(column) for column in zip(*given)] if given else [[] for _ in row._fields]
        return out


def names(row: type[NamedTuple]) -> str:
    return ", ".join(row._fields)
