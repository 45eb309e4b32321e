"""Draw the diagrams used by the notebooks and write them as PNG files (by default next to this script).

Run from the repository root (or `make diagrams`):

    .venv/bin/python images/make_diagrams.py [--out FOLDER] [--notebooks N ...]

Writes
- path_overview.png: the whole path from the prompt to the next token, one coloured band per notebook;
- you_are_here_NN.png for every notebook in the data table: the series as a strip of steps with notebook NN
  marked and the others grey, and below it NN's own part of the path in detail, starting from the tensors
  the notebook starts from (white boxes);
- rope_pairs.png and rmsnorm_axes.png;
- the same images in Chinese in zh/ below the folder (their texts in locale/zh_CN/LC_MESSAGES/diagrams.po).

The drawing code is the package images/diagrams/ (its __init__.py lists its files). The notebooks of the series
come from plumbing.series_notebooks() (the notebooks/NN_*.ipynb glob); the script stops with an error, and draws
nothing, if one of them has no entry in NOTEBOOKS in images/diagrams/data.py, so a new notebook is noticed here.
The output is deterministic: running the script twice gives byte-identical files (no date or version is stored).
Shapes are those of Meta-Llama-3-8B for the 17-token prompt
"the answer to the ultimate question of life, the universe, and everything is ".
"""

import argparse
import re
import sys
from pathlib import Path

import plumbing
from diagrams import FOLDERS, LanguageError, MissingEntry, write_all  # beside this script, importable when it runs


def series_numbers():
    """The numbers of the notebooks of the series: 1 for notebooks/01_tokenization.ipynb, ..."""
    return [int(re.match(r"(\d\d)_", path.name).group(1)) for path in plumbing.series_notebooks()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="the folder to write into (default: images/, the committed images)",
    )
    parser.add_argument(
        "--notebooks",
        type=int,
        nargs="+",
        metavar="N",
        help="the notebook numbers that must have an entry (default: those of notebooks/NN_*.ipynb)",
    )
    args = parser.parse_args(argv)
    try:
        for lang, folder in FOLDERS.items():
            write_all(args.out / folder, series_numbers() if args.notebooks is None else args.notebooks, lang)
    except (MissingEntry, LanguageError) as error:
        sys.exit(f"images/make_diagrams.py: {error}")


if __name__ == "__main__":
    main()
