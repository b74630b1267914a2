"""Message tables of the hosted pages: one TOML file per locale, each with English's keys and placeholders."""

from __future__ import annotations

import string
import tomllib
from pathlib import Path

# docs/spec.md §4.3: the locales the SDK forwards as ?locale=.
LOCALES = ("en", "vi", "ja", "ko", "es", "pt-BR", "ru", "tr", "zh-CN", "zh-TW")
DEFAULT = "en"
_FOLDER = Path(__file__).parent
# Accept-Language tags that name one of our locales without being spelled like it.
_ALIASES = {"zh": "zh-CN", "zh-hans": "zh-CN", "zh-sg": "zh-CN", "zh-hant": "zh-TW", "zh-hk": "zh-TW",
            "zh-mo": "zh-TW", "pt": "pt-BR"}
_BY_LOWER = {locale.lower(): locale for locale in LOCALES}


class CatalogError(Exception):
    """A locale's table lacks a key, has an extra one, or changes a key's placeholders."""


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def load(folder: Path = _FOLDER) -> dict[str, dict[str, str]]:
    """Every locale's table, checked against English so a missing translation fails at start, not on a page."""
    tables = {locale: tomllib.loads((folder / f"{locale}.toml").read_text(encoding="utf-8")) for locale in LOCALES}
    reference = tables[DEFAULT]
    for locale, table in tables.items():
        if table.keys() != reference.keys():
            missing, extra = reference.keys() - table.keys(), table.keys() - reference.keys()
            raise CatalogError(f"{locale}.toml: missing {sorted(missing)}, extra {sorted(extra)}")
        for key, text in table.items():
            wanted = _fields(reference[key])
            if _fields(text) != wanted:
                raise CatalogError(f"{locale}.toml: {key} has placeholders {_fields(text)}, not {wanted}")
    return tables


TABLES = load()


class Translator:
    """`t(key, **values)` for one locale; the template escapes what it returns."""

    def __init__(self, locale: str):
        self.locale = locale
        self.table = TABLES[locale]

    def __call__(self, key: str, **values: object) -> str:
        return self.table[key].format(**values)

    def including(self, tables: dict[str, dict[str, str]]) -> Translator:
        """This locale with a page's own table (loaded from its folder) beside the checkout's."""
        merged = Translator(self.locale)
        merged.table = {**self.table, **tables[self.locale]}
        return merged

    def subset(self, keys: tuple[str, ...]) -> dict[str, str]:
        return {key: self.table[key] for key in keys}


def choose(param: str | None, accept_language: str | None) -> str:
    """The ?locale= value when it is one of ours (any letter case), else the best Accept-Language match, else en."""
    if param and param.lower() in _BY_LOWER:
        return _BY_LOWER[param.lower()]
    for tag in _ranked(accept_language or ""):
        parts = tag.split("-")
        # zh-Hant-TW -> zh-hant-tw, zh-hant, zh: the longest prefix we know wins.
        for n in range(len(parts), 0, -1):
            prefix = "-".join(parts[:n])
            found = _BY_LOWER.get(prefix) or _ALIASES.get(prefix)
            if found:
                return found
    return DEFAULT


def _ranked(header: str) -> list[str]:
    tags = []
    for position, item in enumerate(header.split(",")):
        tag, _, params = item.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if tag and tag != "*" and q > 0:
            tags.append((-q, position, tag.lower()))
    return [tag for _, _, tag in sorted(tags)]
