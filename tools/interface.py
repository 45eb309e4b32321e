"""The tools' own words in each language: English in the code, the translations in ``interface.po``.

A place's words are a :class:`Words`; :func:`messages` lists every (msgctxt, English) the code looks up. The grader
reads nothing here, as it ships without ``locale/`` (GitHub Classroom's template): the tools that write the Chinese
student edition look up a step's task (:func:`task`).

Raises: ``plumbing.Llama3Error``: a lookup (:func:`text`) finds no usable entry (missing, empty or fuzzy).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from babel.messages.catalog import Catalog, Message

from tools import i18n
import plumbing

#: the catalogue's name in each language's folder of locale/
NAME = "interface.po"
#: an edition's language as the tools name it -> its catalogue's language (the student edition's folder is "zh")
LANGUAGES = {"zh_CN": "zh_CN", "zh": "zh_CN"}
_catalogues: dict[tuple[Path, int], Catalog] = {}


def path(lang: str = "zh_CN") -> Path:
    return i18n.LOCALE_DIR / LANGUAGES[lang] / "LC_MESSAGES" / NAME


def catalogue(lang: str = "zh_CN") -> Catalog:
    """``interface.po`` of ``lang``, read once (again when the file changes); empty when there is none."""
    file = path(lang)
    key = (file, file.stat().st_mtime_ns if file.exists() else 0)
    if key not in _catalogues:
        _catalogues[key] = i18n.read_catalogue(file, LANGUAGES[lang])
    return _catalogues[key]


def problem(entry: Message | None) -> str:
    """What makes ``entry`` unusable ("" when it is usable)."""
    if entry is None:
        return "has no entry for this English (new or changed: run `python -m tools.i18n extract`)"
    if not entry.string:
        return "is not translated"
    return "is fuzzy: its English changed since it was translated" if entry.fuzzy else ""


def text(context: str, english: str, lang: str = "zh_CN") -> str:
    """``english``, a string of the tools' interface, in ``lang``: its ``msgstr`` under ``context`` (itself in English).

    Raises:
        plumbing.Llama3Error: ``interface.po`` has no usable entry (missing, empty or fuzzy) for ``context``.
    """
    if lang == "en":
        return english
    entry = catalogue(lang).get(english, context=context)
    wrong = problem(entry)
    if wrong:
        raise plumbing.Llama3Error(f"{plumbing.display_path(path(lang))}: msgctxt {context!r} {wrong} ({english[:60]!r})")
    return entry.string


class Words(Mapping):
    """One place's words in each language: ``words["en"]`` the English dictionary given, ``words["zh_CN"]`` the
    same keys, each value looked up with :func:`text` under ``place.key`` (``place.key[i]`` for a tuple's i-th)."""

    def __init__(self, place: str, english: dict[str, str | tuple[str, ...]], languages: tuple[str, ...] = ("en", "zh_CN")):
        self.place, self.english, self.languages = place, english, languages

    def __getitem__(self, lang: str) -> dict:
        if lang not in self.languages:
            raise KeyError(lang)
        found = (text(context, english, lang) for context, english in self.messages())  # in the order of the keys
        return {key: next(found) if isinstance(value, str) else tuple(next(found) for _ in value) for key, value in self.english.items()}

    def __iter__(self) -> Iterator[str]:
        return iter(self.languages)

    def __len__(self) -> int:
        return len(self.languages)

    def messages(self) -> list[tuple[str, str]]:
        """Its (msgctxt, msgid) pairs, in order."""
        out = []
        for key, value in self.english.items():
            context = f"{self.place}.{key}"
            out += [(context, value)] if isinstance(value, str) else [(f"{context}[{i}]", v) for i, v in enumerate(value)]
        return out


def task(step, lang: str) -> str:
    """What the learner writes for the graded step ``step`` (``grader.grading.Step``), in ``lang``.

    Raises:
        plumbing.Llama3Error: see :func:`text` (context ``task <grade_id>``).
    """
    return text(f"task {step.grade_id}", step.task, lang)


def messages() -> list[tuple[str, str]]:
    """Every (msgctxt, msgid) that the code looks up: the :class:`Words` of the tools that have them, the
    editions' names and copyright lines (tools/site_stage.py), and every graded step's task."""
    from tools import classroom_template
    from tools import pdf_stage
    from tools import site_stage
    from tools import student
    from grader.steps import STEPS

    from tools.book import editions, weights_banner

    modules = [editions, weights_banner, pdf_stage, student, classroom_template]
    out = [m for module in modules for words in vars(module).values() if isinstance(words, Words) for m in words.messages()]
    for e in (e for e in site_stage.EDITIONS.values() if e.language != "en"):  # Edition.label, Edition.sphinx_settings
        out += [("edition.name", e.name)] + ([("edition.copyright", e.copyright)] if e.copyright else [])
    return out + [(f"task {s.grade_id}", s.task) for steps in STEPS.values() for s in steps]


def problems(lang: str = "zh_CN") -> list[str]:
    """What ``interface.po`` lacks: an entry of :func:`messages` missing, empty or fuzzy; an entry nothing asks for."""
    asked = messages()
    name = plumbing.display_path(path(lang))
    found = catalogue(lang)
    out = [f"{name}: msgctxt {c!r} {problem(found.get(e, context=c))}" for c, e in asked if problem(found.get(e, context=c))]
    unused = [m.context for m in found if m.id and (m.context, m.id) not in set(asked)]
    return out + [f"{name}: msgctxt {c!r} is asked for by no code (run `python -m tools.i18n extract`)" for c in unused]


def extract(lang: str = "zh_CN") -> Catalog:
    """``interface.po`` with what the code asks for now, and the translations already known (see ``i18n.updated``)."""
    return i18n.updated(catalogue(lang), messages(), LANGUAGES[lang])
