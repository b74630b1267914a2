"""Numbered query parameters for queries that write only the filters asked for."""

from __future__ import annotations


class Params:
    """Collects values and answers their `$n` placeholders, in order."""

    def __init__(self) -> None:
        self.values: list = []

    def __call__(self, value) -> str:
        self.values.append(value)
        return f"${len(self.values)}"

    def equal(self, filters: dict[str, object]) -> list[str]:
        """`column = $n` for each filter that has a value."""
        return [f"{column} = {self(value)}" for column, value in filters.items() if value is not None]

    def before(self, position, columns: str = "created_at, id") -> list[str]:
        """The keyset condition of newest-first pages: rows strictly older than `position`."""
        if position is None:
            return []
        return [f"({columns}) < ({self(position[0])}, {self(position[1])})"]
