"""One source for the "story so far": a function retyped in several notebooks is the same code in each.

Each notebook recomputes what earlier notebooks built (its "story so far" cells), so a learner can open it on its
own and still sees every line. Those copies must not drift: a function of a given name has one body across the
series (compared as Python syntax, so comments and line breaks may differ, names, arguments and constants may not).
The few functions that a later notebook deliberately teaches anew under the same name are listed in ``EXTENDED``
with the reason; every other difference fails here and names the notebooks whose copies differ.
"""

from __future__ import annotations

import ast
from collections import defaultdict

import nbformat
import pytest

import plumbing

#: (notebook number, function) -> why that notebook's function differs from the other notebooks' copies.
EXTENDED: dict[tuple[str, str], str] = {}  # none: 08's cached attention and block have names of their own


def code_of(source: str) -> str:
    """A code cell's Python: IPython's magics and shell lines left out."""
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


def definitions() -> dict[str, dict[str, str]]:
    """function name -> {notebook number: its top-level definition, as ``ast.unparse`` writes it}."""
    found: dict[str, dict[str, str]] = defaultdict(dict)
    for path in plumbing.series_notebooks():
        number = path.name[:2]
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for node in ast.parse(code_of(cell.source)).body:
                if isinstance(node, ast.FunctionDef):
                    found[node.name].setdefault(number, ast.unparse(node))
    return found


def drift(found: dict[str, dict[str, str]]) -> list[str]:
    """One line per function whose copies differ outside ``EXTENDED``: its name and which notebooks agree."""
    differ = []
    for name, copies in sorted(found.items()):
        kept = {number: body for number, body in copies.items() if (number, name) not in EXTENDED}
        if len(set(kept.values())) > 1:
            groups = defaultdict(list)
            for number, body in sorted(kept.items()):
                groups[body].append(number)
            differ.append(f"{name}: " + " against ".join("/".join(numbers) for numbers in groups.values()))
    return differ


def test_every_retyped_function_is_the_same_in_every_notebook():
    differ = drift(definitions())
    assert not differ, "the story-so-far copies have drifted:\n  " + "\n  ".join(differ)


def test_the_shared_functions_take_what_they_use_as_arguments():
    """The story-so-far functions read no notebook global but torch, F and math: each copy stands alone, and the same
    function runs the stand-in and the real model (its model, layer, constants come in as arguments)."""
    allowed = {
        "torch",
        "F",
        "math",
        "apply_rotary_emb",
        "repeat_kv",
        "rms_norm",
        "attention",
        "feed_forward",
        "precompute_freqs_cis",
        "cached_attention",
        "cached_block",
        "causal_mask",
        "range",
        "len",
        "float",
    }
    found = definitions()
    for name in (
        "rms_norm",
        "precompute_freqs_cis",
        "apply_rotary_emb",
        "repeat_kv",
        "attention",
        "feed_forward",
        "transformer_block",
        "causal_mask",
    ):
        for number, body in found[name].items():
            tree = ast.parse(body)
            function = tree.body[0]
            local = {a.arg for a in function.args.args} | {
                n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
            }
            local |= {
                t.id
                for n in ast.walk(tree)
                if isinstance(n, (ast.For, ast.comprehension))
                for t in ast.walk(n.target)
                if isinstance(t, ast.Name)
            }
            local |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.Lambda) for a in n.args.args}
            free = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - local
            assert free <= allowed, f"{name} in notebook {number} reads notebook globals {sorted(free - allowed)}"


def test_the_exceptions_are_real():
    """Each listed exception names a function that exists there and really differs (else drop it from the list)."""
    found = definitions()
    for (number, name), why in EXTENDED.items():
        assert number in found.get(name, {}), f"{name} is not defined in notebook {number}: drop it from EXTENDED"
        others = {body for n, body in found[name].items() if n != number}
        assert others and found[name][number] not in others, f"{name} in {number} equals the others ({why})"


@pytest.mark.parametrize(
    ("name", "notebook", "old", "new"),
    [
        ("precompute_freqs_cis", "07", "end", "seqlen"),  # an argument renamed in one copy
        ("rms_norm", "06", "norm_eps", "inputs.params.norm_eps"),  # a constant read another way
        ("repeat_kv", "08", "n_rep", "n_kv_heads"),  # a wrong count
    ],
)
def test_a_drifted_copy_is_caught(name, notebook, old, new):
    """Mutation: change one notebook's copy the way copies drift; the check names the function."""
    found = definitions()
    assert old in found[name][notebook]
    found[name][notebook] = found[name][notebook].replace(old, new)
    assert any(line.startswith(f"{name}: ") for line in drift(found))
