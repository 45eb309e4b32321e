"""Write the figures of images/ into the notebooks (both editions) as cell attachments, so a notebook travels alone.

    python -m tools.attachments    # (re)write the attachments of every notebooks/NN_*.ipynb and notebooks/zh/NN_*.ipynb

A notebook opened alone (Google Colab, a download) has no ``../images/`` beside it. images/ (images/zh/ for the
Chinese edition) stays the one source: each run writes the attachments afresh from it.

Raises (one line, exit status 1): ``AttachmentError``: a cell shows an image that images/ does not have.
"""

from __future__ import annotations

import base64
import copy
import re
import sys
from pathlib import Path

import nbformat

from tools import i18n
import plumbing

ROOT = plumbing.REPO_ROOT
IMAGES = ROOT / "images"
#: how the markdown of notebooks/ and notebooks/zh/ reaches images/ (notebooks/images links to ../images)
FILES = "../images/"
ATTACHMENT = "attachment:"
MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}
#: the address of an image: in ``![alt](address "title")`` and in ``<img src="address">``
IMAGE = re.compile(r"(?P<head>!\[[^\]]*\]\(\s*<?|<img\b[^>]*?\bsrc\s*=\s*[\"'])(?P<src>[^)\s>\"']+)", re.I)
NOT_A_FILE = re.compile(r"[a-z][a-z0-9+.-]*:|//", re.I)  # attachment:, data: (embedded) and remote images


class AttachmentError(Exception):
    """A cell shows an image that images/ does not have."""


def sources(markdown: str) -> list[str]:
    """The addresses of the images in ``markdown``."""
    return [m["src"] for m in IMAGE.finditer(markdown)]


def attached(markdown: str) -> list[str]:
    """The attachment names that ``markdown`` shows (``attachment:NAME``), in order, each once."""
    return list(dict.fromkeys(src[len(ATTACHMENT) :] for src in sources(markdown) if src.startswith(ATTACHMENT)))


def replace_sources(markdown: str, change) -> str:
    """``markdown`` with each image address ``src`` replaced by ``change(src)``."""
    return IMAGE.sub(lambda m: m["head"] + change(m["src"]), markdown)


def to_attachment(src: str) -> str:
    """``../images/NAME`` -> ``attachment:NAME``; any other address as it is."""
    name = src[len(FILES) :]
    return ATTACHMENT + name if src.startswith(FILES) and name and "/" not in name else src


def to_file(src: str, files: str = FILES) -> str:
    """``attachment:NAME`` -> ``../images/NAME`` (the inverse of :func:`to_attachment`), or below ``files``."""
    return files + src[len(ATTACHMENT) :] if src.startswith(ATTACHMENT) else src


def edition_images(lang: str | None) -> Path:
    """The folder of an edition's figures: images/ for English (``None``), images/zh/ for the Chinese edition."""
    return IMAGES if lang is None else IMAGES / i18n.EDITIONS[lang]


def images_of(path: Path) -> Path:
    """The folder of the figures of the notebook at ``path`` (images/zh/ for one of notebooks/zh/)."""
    langs = [lang for lang, folder in i18n.EDITIONS.items() if path.parent.name == folder]
    return edition_images(langs[0] if langs else None)


def bundle(name: str, images: Path = IMAGES) -> dict[str, str]:
    """The attachment of images/``name``: ``{mime type: base64}``.

    Raises:
        AttachmentError: images/``name`` is missing or is no PNG, JPEG or GIF file.
    """
    path = images / name
    mime = MIME.get(path.suffix.lower())
    if mime is None or not path.is_file():
        raise AttachmentError(f"{name}, which is not in images/ (as a PNG, JPEG or GIF file)")
    return {mime: base64.b64encode(path.read_bytes()).decode("ascii")}


def update_cells(nb, images: Path = IMAGES, name: str = "notebook") -> bool:
    """Turn ``nb``'s image files into attachments and write them from ``images``, in place; True when it changed.

    Raises:
        AttachmentError: a cell shows an image that ``images`` does not have.
    """
    changed = False
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        source = replace_sources(cell.source, to_attachment)
        try:
            want = {n: bundle(n, images) for n in attached(source)}
        except AttachmentError as e:
            raise AttachmentError(f"{name}: cell {cell.get('id')} shows {e}") from None
        if source != cell.source or want != cell.get("attachments", {}):
            changed = True
            cell.source = source
            if want:
                cell["attachments"] = want
            else:
                cell.pop("attachments", None)
    return changed


def update(path: Path, images: Path = IMAGES) -> bool:
    """:func:`update_cells` on the notebook at ``path``, written back when it changed; True when it did."""
    nb = nbformat.read(path, as_version=4)
    if not update_cells(nb, images, path.name):
        return False
    text = nbformat.writes(nb) + "\n"
    plumbing.paths.atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return True


def problems(nb, images: Path = IMAGES) -> list[str]:
    """How ``nb``'s figures fail to travel inside it as the files of ``images`` (empty: they do)."""
    out = []
    for cell in nb.cells:
        carried = cell.get("attachments", {})
        where = f"cell {cell.get('id')}"
        if cell.cell_type != "markdown":
            out += [f"{where}: a {cell.cell_type} cell carries attachments {sorted(carried)}"] if carried else []
            continue
        out += [f"{where}: the image {src} is a file path, not an attachment" for src in sources(cell.source) if not NOT_A_FILE.match(src)]
        shown = attached(cell.source)
        for name in shown:
            try:
                expected = bundle(name, images)
            except AttachmentError as e:
                out.append(f"{where}: shows attachment:{e}")
                continue
            if name not in carried:
                out.append(f"{where}: shows attachment:{name} but does not carry it")
            elif carried[name] != expected:
                out.append(f"{where}: its attachment {name} differs from images/{name}")
        out += [f"{where}: carries the attachment {name}, which it does not show" for name in carried if name not in shown]
    return out


def edition_files(lang: str | None, name: str) -> str:
    """How a notebook of edition ``lang`` reaches the figure ``name``: ``../images/zh/`` when images/zh/ has it."""
    return FILES + i18n.EDITIONS[lang] + "/" if lang and (edition_images(lang) / name).is_file() else FILES


def edition_attachments(nb, lang: str) -> None:
    """In place: each attachment of ``nb`` that the edition ``lang`` has its own copy of (images/zh/) is that copy."""
    for cell in nb.cells:
        for name in cell.get("attachments", {}):
            if (edition_images(lang) / name).is_file():
                cell["attachments"][name] = bundle(name, edition_images(lang))


def file_references(nb, lang: str | None = None):
    """A copy of ``nb`` whose markdown shows the files again (``../images/NAME``, or ``../images/zh/NAME`` for the
    Chinese edition ``lang`` where images/zh/ has it) and carries no attachments, for the site: MyST-NB does not show them."""
    out = copy.deepcopy(nb)
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = replace_sources(cell.source, lambda src: to_file(src, edition_files(lang, src[len(ATTACHMENT) :])))
            cell.pop("attachments", None)
    return out


def notebooks() -> list[Path]:
    """The series, then each edition's copies of it that exist (notebooks/zh/NN_*.ipynb)."""
    series = plumbing.series_notebooks()
    editions = [i18n.edition_path(nb, lang) for lang in i18n.EDITIONS for nb in series]
    return series + [path for path in editions if path.is_file()]


def main() -> int:
    try:
        for path in notebooks():
            if update(path, images_of(path)):
                print(f"updated {path.relative_to(ROOT)}")
    except AttachmentError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
