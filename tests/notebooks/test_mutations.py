"""The notebooks' visible checks have teeth: mistakes a learner makes, injected into a notebook's own code, stop it.

Each mutation replaces one snippet of a code cell (it must occur exactly once in the notebook) by a plausible
mistake: a constant, an axis, a weight read under the wrong name, an order of operations, a missing step, a
position in the cache. The mutated notebook runs from its first cell, on the stand-in (07 and 08, which run
every layer, on the small checkpoint ``references.SMALL_PARAMS``: the same checks, in seconds), and must stop with an
``AssertionError`` raised by the check named in the list: the check a learner sees in Jupyter, not a test of
``tests/``. The mistakes of one notebook share one kernel, its namespace cleared (``%reset -f``) and its
figures closed before each run, as a learner who edits a cell and runs the notebook again from the top.
The list is the one kept by the series; add to it when a notebook gains a step.
"""

from __future__ import annotations

from contextlib import ExitStack

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

import plumbing
from conftest import NOTEBOOKS
from plumbing.paths import local_kernel_config
from tools.run_notebooks import NOTEBOOK_DIR

pytestmark = pytest.mark.notebook

#: (notebook, mistake, snippet of its code, the mistake in its place, start of the check that must stop it)
MUTATIONS = [
    (
        "01",
        "the pair of highest rank merged first",
        "rank, j = min(candidates)",
        "rank, j = max(candidates)",
        "bpe_merge vs tiktoken",
    ),
    (
        "01",
        "on a tie, the rightmost pair",
        "rank, j = min(candidates)",
        "rank, j = min(candidates, key=lambda c: (c[0], -c[1]))",
        "bpe_merge vs tiktoken",
    ),
    (
        "03",
        "epsilon outside the square root",
        "inv_rms = torch.rsqrt(mean_square + inputs.params.norm_eps)",
        "inv_rms = 1 / (torch.sqrt(mean_square) + inputs.params.norm_eps)",
        "token_embeddings vs Meta's RMSNorm",
    ),
    (
        "03",
        "mean over the tokens instead of each token's numbers",
        "mean_square = x_float.pow(2).mean(-1, keepdim=True)",
        "mean_square = x_float.pow(2).mean(0, keepdim=True)",
        "token_embeddings vs Meta's RMSNorm",
    ),
    (
        "03",
        "the gain of another layer norm",
        'inputs.checkpoint.get("layers.0.attention_norm.weight")',
        'inputs.checkpoint.get("layers.0.ffn_norm.weight")',
        "token_embeddings vs Meta's RMSNorm",
    ),
    (
        "03",
        "the gain applied in float32, one rounding instead of two",
        "token_embeddings = normed * attention_norm_weight",
        "token_embeddings = (normed_float * attention_norm_weight.float()).to(torch.bfloat16)",
        "token_embeddings vs Meta's RMSNorm",
    ),
    (
        "04",
        "Llama 2's rope_theta",
        "freqs = rope_frequencies(rope_theta, head_dim)",
        "freqs = rope_frequencies(10000.0, head_dim)",
        "freqs_cis vs Meta's precompute_freqs_cis",
    ),
    (
        "04",
        "positions counted from 1",
        "t = torch.arange(seqlen, dtype=torch.float32)",
        "t = torch.arange(1, seqlen + 1, dtype=torch.float32)",
        "freqs_cis vs Meta's precompute_freqs_cis",
    ),
    (
        "04",
        "pairs j and j + head_dim/2 (Hugging Face's layout) with Meta's weights",
        "pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))",
        "pairs = torch.view_as_complex(x.float().reshape(*x.shape[:-1], 2, -1).transpose(-1, -2).contiguous())",
        "xq_rotated vs Meta's apply_rotary_emb",
    ),
    (
        "04",
        "layer 1's wq",
        'wq = inputs.checkpoint.get("layers.0.attention.wq.weight")',
        'wq = inputs.checkpoint.get("layers.1.attention.wq.weight")',
        "xq vs Meta's wq",
    ),
    (
        "05",
        "scores divided by head_dim instead of its square root",
        "scores = torch.matmul(xq_heads, keys_heads.transpose(1, 2)) / math.sqrt(head_dim)",
        "scores = torch.matmul(xq_heads, keys_heads.transpose(1, 2)) / head_dim",
        "attention_output vs Meta's Attention.forward",
    ),
    (
        "05",
        "key/value heads tiled instead of repeated in place",
        "x[:, :, None, :].expand(slen, n_kv_heads, n_rep, head_dim)",
        "x[:, None, :, :].expand(slen, n_rep, n_kv_heads, head_dim)",
        "keys vs torch.repeat_interleave",
    ),
    (
        "05",
        "the mask also hides the diagonal",
        "mask = torch.triu(mask, diagonal=1).type_as(token_embeddings_unnormalized)",
        "mask = torch.triu(mask, diagonal=0).type_as(token_embeddings_unnormalized)",
        "attention_output vs Meta's Attention.forward",
    ),
    (
        "05",
        "the softmax over the query axis",
        "attention_weights = F.softmax(scores.float(), dim=-1).type_as(xq_heads)",
        "attention_weights = F.softmax(scores.float(), dim=-2).type_as(xq_heads)",
        "attention_output vs Meta's Attention.forward",
    ),
    (
        "05",
        "the scores scaled a second time",
        "attention_weights = F.softmax(scores.float(), dim=-1).type_as(xq_heads)",
        "attention_weights = F.softmax(scores.float() / math.sqrt(head_dim), dim=-1).type_as(xq_heads)",
        "attention_output vs Meta's Attention.forward",
    ),
    (
        "05",
        "heads concatenated without the transpose",
        "output_concatenated = output.transpose(0, 1).contiguous().view(seqlen, -1)",
        "output_concatenated = output.contiguous().view(seqlen, -1)",
        "attention_output vs Meta's Attention.forward",
    ),
    (
        "05",
        "the cached token rotated as position 0",
        "xq_new = apply_rotary_emb((x_new @ wq.T).view(1, n_heads, head_dim), freqs_cis[start_pos:])",
        "xq_new = apply_rotary_emb((x_new @ wq.T).view(1, n_heads, head_dim), freqs_cis[:1])",
        "attention output of the new token vs Meta's Attention with its cache",
    ),
    (
        "06",
        "w1 and w3 swapped where they are read",
        'w1, w3, w2 = layer0("feed_forward.w1"), layer0("feed_forward.w3"), layer0("feed_forward.w2")',
        'w1, w3, w2 = layer0("feed_forward.w3"), layer0("feed_forward.w1"), layer0("feed_forward.w2")',
        "gate vs Meta's w1",
    ),
    (
        "06",
        "attention_norm's gain read for ffn_norm",
        'ffn_norm_weight = layer0("ffn_norm")',
        'ffn_norm_weight = layer0("attention_norm")',
        "ffn_input vs Meta's ffn_norm",
    ),
    (
        "06",
        "the residual connection left out",
        "layer_output = h + ffn_output",
        "layer_output = ffn_output",
        "layer_output vs Meta's TransformerBlock",
    ),
    (
        "07",
        "scores divided by head_dim instead of its square root",
        "scores = torch.matmul(xq, keys.transpose(0, 1).transpose(1, 2)) / math.sqrt(p.head_dim)",
        "scores = torch.matmul(xq, keys.transpose(0, 1).transpose(1, 2)) / p.head_dim",
        "layer0_output vs Meta's TransformerBlock",
    ),
    (
        "07",
        "w1 and w3 swapped in the block",
        'for name in ("w1", "w2", "w3"))',
        'for name in ("w3", "w2", "w1"))',
        "layer0_output vs Meta's TransformerBlock",
    ),
    (
        "07",
        "the final norm left out",
        "h_norm = rms_norm(h, norm_weight, norm_eps)   # [seqlen, dim] bf16",
        "h_norm = h                                   # [seqlen, dim] bf16",
        "h_norm vs Meta's final norm",
    ),
    (
        "07",
        "probabilities and the token of the first row",
        "probs = torch.softmax(logits[-1], dim=-1)",
        "probs = torch.softmax(logits[0], dim=-1)",
        "probs vs softmax of Meta's last-position logits",
    ),
    (
        "07",
        "the greedy token of the first row",
        "next_token = logits[-1].argmax()",
        "next_token = logits[0].argmax()",
        "next_token vs Meta's greedy step",
    ),
    (
        "07",
        "the logit lens without the final norm",
        "return (rms_norm(rows, norm_weight, norm_eps) @ output_weight.T).float()",
        "return (rows @ output_weight.T).float()",
        "real_lens vs Meta's norm, then output",
    ),
    (
        "08",
        "the cache written one row late",
        "cache_k[layer, start_pos : start_pos + seqlen] = xk",
        "cache_k[layer, start_pos + 1 : start_pos + seqlen + 1] = xk",
        "prefill logits vs Meta's Transformer.forward",
    ),
    (
        "08",
        "each new token rotated as position 0",
        "freqs_cis = precompute_freqs_cis(model.params, start_pos + seqlen)[start_pos:]",
        "freqs_cis = precompute_freqs_cis(model.params, seqlen)",
        "step logits vs Meta's Transformer.forward",
    ),
    (
        "08",
        "a mask for the new token that hides the cached positions",
        "    if seqlen == 1:\n        return None                                      # Meta: no mask for a single token\n",
        '    mask = torch.triu(torch.full((seqlen, start_pos + seqlen), float("-inf")), diagonal=1)\n'
        "    return mask.to(torch.bfloat16)                   # -inf right of the diagonal, start_pos forgotten\n",
        "step logits vs Meta's Transformer.forward",
    ),
    (
        "08",
        "top-p that drops the token whose running sum crosses p",
        "mask = probs_sum - probs_sort > p",
        "mask = probs_sum > p",
        "1000 seeded draws vs Meta's sample_top_p",
    ),
    (
        "08",
        "the temperature multiplied instead of divided",
        "probs = torch.softmax(last_logits / temperature, dim=-1)",
        "probs = torch.softmax(last_logits * temperature, dim=-1)",
        "sampled: ids vs Meta's Llama3.generate",
    ),
    (
        "08",
        "the stop token dropped from the returned ids",
        "        tokens.append(next_token)\n",
        "        tokens.append(next_token) if next_token not in stop_tokens else None\n",
        "chat answer: ids vs Meta's Llama3.generate",
    ),
    (
        "08",
        "a stop set without SmolLM2's <|im_end|>",
        "real_stops = list(",
        "real_stops = [0] or list(",
        "chat answer: ids vs Meta's Llama3.generate",
    ),
]


def mutated(stem: str, snippet: str, mistake: str):
    """Notebook ``stem`` with ``snippet`` (in exactly one code cell, once) replaced by ``mistake``."""
    nb = nbformat.read(NOTEBOOKS[stem], as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and snippet in c.source]
    assert len(cells) == 1 and cells[0].source.count(snippet) == 1, f"{stem}: the snippet must occur once: {snippet!r}"
    cells[0].source = cells[0].source.replace(snippet, mistake)
    return nb


def test_the_list_covers_notebooks_03_to_08():
    assert len(MUTATIONS) >= 15
    assert {stem for stem, *_ in MUTATIONS} >= {"03", "04", "05", "06", "07", "08"}


#: Notebooks whose mistakes run on the small checkpoint. 03's epsilon and 05's cached position are caught by their
#: own checks only at the stand-in's magnitudes (small embeddings, as Meta's), so 03-06 stay on the stand-in.
ON_SMALL = {"07", "08"}

#: Run before each mutated notebook in its notebook's kernel: a clean namespace, no figure left open.
RESET = "%reset -f\nimport matplotlib.pyplot as _plt\n_plt.close('all')\ndel _plt"


@pytest.fixture(scope="module")
def kernel(standin_dir, small_dir):
    """``kernel(stem)``: a running kernel for notebook ``stem`` (IPC sockets, the notebooks' folder; the stand-in,
    or the small checkpoint for :data:`ON_SMALL`)."""
    stack, clients = ExitStack(), {}

    def get(stem: str) -> NotebookClient:
        if stem not in clients:
            config = stack.enter_context(local_kernel_config())
            client = NotebookClient(
                nbformat.read(NOTEBOOKS[stem], as_version=4),
                config=config,
                timeout=600,
                kernel_name="python3",
                record_timing=False,
                resources={"metadata": {"path": str(NOTEBOOK_DIR)}},
            )
            env = plumbing.clean_environ(**({"LLAMA3_DIR": str(small_dir)} if stem in ON_SMALL else {}))
            stack.enter_context(client.setup_kernel(env=env))
            clients[stem] = client
        return clients[stem]

    with stack:
        yield get


def run_from_the_top(client: NotebookClient, nb) -> None:
    """Clear the kernel's namespace, then run every code cell of ``nb`` in order; raises at the first error."""
    client.nb = nb
    client.execute_cell(nbformat.v4.new_code_cell(RESET), 0)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            client.execute_cell(cell, index)


@pytest.mark.parametrize(
    "stem, mistake, snippet, replacement, check", MUTATIONS, ids=[f"{m[0]}-{m[1].replace(' ', '_')}" for m in MUTATIONS]
)
def test_a_visible_check_stops_the_mistake(kernel, stem, mistake, snippet, replacement, check):
    with pytest.raises(CellExecutionError) as stopped:
        run_from_the_top(kernel(stem), mutated(stem, snippet, replacement))
    error = stopped.value
    assert error.ename == "AssertionError", f"{mistake}: stopped by {error.ename}: {error.evalue}"
    assert error.evalue.startswith(check), f"{mistake}: stopped by another check: {error.evalue}"
