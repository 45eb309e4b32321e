"""Meta's reference code (``llama_models/llama3/model.py``), ready to run on a checkpoint, for the notebooks' checks.

Meta's ``model.py`` imports ``fairscale`` for its model-parallel layers. With one process (model-parallel world
size 1) those layers are plain layers: ``ColumnParallelLinear`` and ``RowParallelLinear`` are ``nn.Linear``
without bias, and ``VocabParallelEmbedding`` is ``nn.Embedding``. :func:`meta_model_code` imports Meta's module
with a small stand-in for fairscale that holds exactly those plain layers; everything else (``RMSNorm``,
``precompute_freqs_cis``, ``apply_rotary_emb``, ``repeat_kv``, ``Attention``, ``FeedForward``,
``TransformerBlock``, ``Transformer``) is Meta's unmodified code.

Modules are built on PyTorch's ``meta`` device (no memory) and then given the checkpoint's tensors with
``load_state_dict(..., assign=True)``: their parameters *are* the memory-mapped tensors, nothing is copied.

Two places where this module adds to Meta's code, both stated where they happen:

- RoPE scaling. Meta's ``apply_scaling`` hard-codes Llama 3.1's constants (factor 8). A checkpoint whose
  :attr:`~plumbing.params.ModelParams.rope_scaling` differs (Llama 3.2 1B and 3B: factor 32, from their
  ``config.json``) gets Meta's same formula with its own constants (:func:`precompute_freqs_cis`).
- :func:`run` records what Meta's submodules return during ``Transformer.forward`` with forward hooks, so a
  notebook can compare an intermediate tensor (``layers.0.feed_forward.w1``'s output is the gate) with Meta's.

Meta's ``llama_models/llama3/generation.py`` (``Llama3.generate``, ``sample_top_p``) and ``chat_format.py``
(``ChatFormat``) are imported unmodified too (:func:`meta_generation_code`): ``generation.py`` imports the
multimodal model, which needs torchvision, only to recognise a vision model; a text-only placeholder stands in
for it while the module is imported. :func:`generate` runs ``Llama3.generate`` around :func:`transformer`, as
``Llama3.build`` would without its process group and default-device changes.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Iterable, Mapping

from .errors import Llama3Error

#: The constants Meta's ``apply_scaling`` hard-codes (``llama_models/llama3/model.py``).
META_APPLY_SCALING = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                      "original_max_position_embeddings": 8192}


def _plain_fairscale() -> dict:
    """Modules that stand in for fairscale's model-parallel layers at world size 1 (plain layers)."""
    import torch.nn as nn

    class ColumnParallelLinear(nn.Linear):
        def __init__(self, in_features, out_features, bias=True, gather_output=True, init_method=None, **_):
            super().__init__(in_features, out_features, bias=bias)

    class RowParallelLinear(nn.Linear):
        def __init__(self, in_features, out_features, bias=True, input_is_parallel=False, init_method=None, **_):
            super().__init__(in_features, out_features, bias=bias)

    class VocabParallelEmbedding(nn.Embedding):
        def __init__(self, num_embeddings, embedding_dim, init_method=None, **_):
            super().__init__(num_embeddings, embedding_dim)

    names = ("fairscale", "fairscale.nn", "fairscale.nn.model_parallel",
             "fairscale.nn.model_parallel.initialize", "fairscale.nn.model_parallel.layers")
    mods = {name: types.ModuleType(name) for name in names}
    layers, init = mods["fairscale.nn.model_parallel.layers"], mods["fairscale.nn.model_parallel.initialize"]
    layers.ColumnParallelLinear, layers.RowParallelLinear = ColumnParallelLinear, RowParallelLinear
    layers.VocabParallelEmbedding = VocabParallelEmbedding
    init.get_model_parallel_world_size = lambda: 1
    init.get_model_parallel_rank = lambda: 0
    init.model_parallel_is_initialized = lambda: True  # generation.py imports these two; Llama3.build would call them
    init.initialize_model_parallel = lambda *args, **kwargs: None
    mods["fairscale.nn.model_parallel"].initialize = init
    mods["fairscale.nn.model_parallel"].layers = layers
    mods["fairscale.nn"].model_parallel = mods["fairscale.nn.model_parallel"]
    mods["fairscale"].nn = mods["fairscale.nn"]
    return mods


def meta_model_code():
    """Meta's ``llama_models.llama3.model`` module, fairscale's layers replaced by the plain layers they are.

    Raises:
        Llama3Error: the ``llama-models`` package is not installed.
    """
    name = "llama_models.llama3.model"
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec("llama_models") is None:
        raise Llama3Error("Meta's reference code is missing: install the pinned requirements "
                          "(`make setup`, or `pip install llama-models==0.3.0`).")
    stubs = _plain_fairscale() if importlib.util.find_spec("fairscale") is None else {}
    sys.modules.update(stubs)
    try:
        return importlib.import_module(name)
    finally:
        for mod in stubs:
            sys.modules.pop(mod, None)


def meta_generation_code():
    """Meta's ``llama_models.llama3.generation`` module (``Llama3``, ``sample_top_p``), text only.

    ``generation.py`` imports ``CrossAttentionTransformer`` from the multimodal model (which needs torchvision) to
    build and recognise vision models; while it is imported, a placeholder class takes its place. Everything used
    for text, ``Llama3.generate``, ``sample_top_p``, ``ChatFormat`` and ``Tokenizer``, is Meta's unmodified code.

    Raises:
        Llama3Error: the ``llama-models`` package is not installed.
    """
    name = "llama_models.llama3.generation"
    if name in sys.modules:
        return sys.modules[name]
    meta_model_code()
    vision = types.ModuleType("llama_models.llama3.multimodal.model")

    class CrossAttentionTransformer:  # never built: the series runs text models only
        def __init__(self, *args, **kwargs):
            raise Llama3Error("Meta's vision models are not part of this series (text only).")

    vision.CrossAttentionTransformer = CrossAttentionTransformer
    stubs = _plain_fairscale() if importlib.util.find_spec("fairscale") is None else {}
    stubs[vision.__name__] = vision
    saved = {mod: sys.modules.get(mod) for mod in stubs}
    sys.modules.update(stubs)
    try:
        return importlib.import_module(name)
    finally:
        for mod, old in saved.items():
            if old is None:
                sys.modules.pop(mod, None)
            else:
                sys.modules[mod] = old


def generate(checkpoint, tokens, *, temperature: float, top_p: float = 0.9, max_gen_len: int, seed: int | None = None,
             model=None, logits: list | None = None) -> list[int]:
    """The token ids Meta's ``Llama3.generate`` yields after the prompt ``tokens`` (``llama3/generation.py``).

    ``Llama3`` is constructed around :func:`transformer` (plain layers, the checkpoint's tensors) and Meta's own
    ``Tokenizer`` (its ``stop_tokens``: ``<|end_of_text|>``, ``<|eom_id|>``, ``<|eot_id|>``), not through
    ``Llama3.build``. Generation stops after a stop token (which is included) or after ``max_gen_len`` ids. For a
    checkpoint whose tokenizer is not Llama 3's (SmolLM2's, :func:`plumbing.tokenizer.tokenizer_rules`), ``Llama3``
    gets what ``generate`` reads of a tokenizer from that model's own: its stop tokens, decoding, and a pad id that
    no token has.

    Args:
        checkpoint: an opened :class:`~plumbing.checkpoint.Checkpoint` (or a mapping of Meta's names with ``params``).
        tokens: the prompt's token ids (a list of int), ``<|begin_of_text|>`` first as Meta encodes it.
        temperature: 0 for greedy decoding (argmax); otherwise the logits are divided by it before the softmax and
            ``sample_top_p`` draws the token.
        top_p: the nucleus of ``sample_top_p`` (used when ``temperature > 0``).
        max_gen_len: at most this many new ids.
        seed: when given, ``torch.manual_seed(seed)`` is called first (Meta's ``build`` calls it with 1).
        model: a model from :func:`transformer` to reuse, whose ``max_seq_len`` holds the prompt and the new ids.
        logits: a list to which each step's last-position logits ([vocab_size] float32, what the step chose from)
            are appended, as ``Transformer.forward`` returns them.

    Returns:
        The new ids, in order (int).

    Raises:
        Llama3Error: the prompt and ``max_gen_len`` do not fit in ``model``'s ``max_seq_len``.
    """
    import torch

    G = meta_generation_code()
    from llama_models.llama3.chat_format import LLMInput

    tokens = [int(t) for t in tokens]
    if model is None:
        model = transformer(checkpoint, max_seq_len=len(tokens) + max_gen_len)
    if len(tokens) + max_gen_len > model.params.max_seq_len:
        raise Llama3Error(f"{len(tokens)} prompt tokens and max_gen_len {max_gen_len} do not fit in "
                          f"max_seq_len {model.params.max_seq_len}: build the model with a larger max_seq_len")
    llama3 = G.Llama3(model, _generation_tokenizer(checkpoint), model.params)
    if seed is not None:
        torch.manual_seed(seed)
    out = []
    hook = None
    if logits is not None:  # Transformer.forward ends with `self.output(h).float()`: record that, per step
        hook = model.output.register_forward_hook(lambda _module, _inputs, output: logits.append(output[0, -1].float()))
    try:
        for results in llama3.generate([LLMInput(tokens=tokens)], temperature=temperature, top_p=top_p,
                                       max_gen_len=max_gen_len):
            out.append(results[0].token)
    finally:
        if hook is not None:
            hook.remove()
    return out


class _ModelTokenizer:
    """What ``Llama3`` reads of its tokenizer (``stop_tokens``, ``pad_id``, ``decode``; ``ChatFormat``'s constructor
    reads ``special_tokens["<|image|>"]``), for a model whose tokenizer is not Llama 3's."""

    def __init__(self, encoding, rules):
        self.encoding, self.stop_tokens, self.pad_id = encoding, list(rules.stop_tokens), -1  # -1: no token's id
        self.special_tokens = {**rules.special_tokens, "<|image|>": -1}

    def decode(self, ids):
        return self.encoding.decode([i for i in ids if i >= 0])


def _generation_tokenizer(checkpoint):
    """Meta's ``Tokenizer`` for Llama 3's vocabulary; for a checkpoint with another tokenizer, :class:`_ModelTokenizer`."""
    from .tokenizer import load_tokenizer, tokenizer_path, tokenizer_rules

    source = getattr(checkpoint, "source", None)
    if source is not None and source.tokenizer_path is not None:
        rules = tokenizer_rules(source.tokenizer_path)
        if rules.special_tokens is not None:  # not Llama 3's 256 special tokens
            return _ModelTokenizer(load_tokenizer(tokenizer_path(source)), rules)
    return tokenizer()


def tokenizer():
    """Meta's ``Tokenizer`` of ``llama_models/llama3/tokenizer.py`` (the one ``Llama3.generate`` uses: ``stop_tokens``)."""
    meta_generation_code()
    from llama_models.llama3.tokenizer import Tokenizer

    return Tokenizer.get_instance()


def encode_dialog_prompt(messages: Iterable[Mapping]) -> list[int]:
    """Meta's ``ChatFormat.encode_dialog_prompt`` (``llama3/chat_format.py``) of ``[{"role": ..., "content": ...}]``.

    Returns the token ids: ``<|begin_of_text|>``, each message with its header and ``<|eot_id|>``, then the
    assistant's open header, which the model continues.

    Raises:
        Llama3Error: a message without a ``role`` of system, user, assistant or tool, or without ``content``.
    """
    meta_generation_code()
    from llama_models.datatypes import RawMessage
    from llama_models.llama3.chat_format import ChatFormat

    try:
        raw = [RawMessage(role=m["role"], content=m["content"]) for m in messages]
    except (KeyError, TypeError, ValueError) as e:
        raise Llama3Error(f"a message must be {{'role': 'system' | 'user' | 'assistant' | 'tool', 'content': str}} "
                          f"({str(e).splitlines()[0]})") from None
    return list(ChatFormat(tokenizer()).encode_dialog_prompt(raw).tokens)


def model_args(params, max_seq_len: int = 64, n_layers: int | None = None):
    """Meta's ``ModelArgs`` for :class:`~plumbing.params.ModelParams` ``params``, batch size 1.

    ``max_seq_len`` sizes each ``Attention``'s key/value cache (Meta's default would allocate gigabytes): it must
    be at least the number of positions run. ``n_layers`` builds only the first layers (default: all).
    """
    from llama_models.llama3.args import ModelArgs

    meta_model_code()
    multiple_of, ffn_dim_multiplier = params.multiple_of, params.ffn_dim_multiplier
    if params.intermediate_size is not None:  # a Hugging Face config.json stores the hidden size itself:
        # Meta's FeedForward rounds int(ffn_dim_multiplier * int(8 * dim / 3)) up to a multiple of multiple_of,
        # which gives exactly intermediate_size with these two values.
        multiple_of = params.intermediate_size
        ffn_dim_multiplier = params.intermediate_size / int(2 * (4 * params.dim) / 3)
    return ModelArgs(dim=params.dim, n_layers=params.n_layers if n_layers is None else n_layers,
                     n_heads=params.n_heads, n_kv_heads=params.n_kv_heads, vocab_size=params.vocab_size,
                     multiple_of=multiple_of, ffn_dim_multiplier=ffn_dim_multiplier,
                     norm_eps=params.norm_eps, rope_theta=params.rope_theta, use_scaled_rope=params.use_scaled_rope,
                     max_batch_size=1, max_seq_len=max_seq_len)


def precompute_freqs_cis(params, end: int):
    """Meta's ``precompute_freqs_cis(head_dim, end, rope_theta, use_scaled_rope)``: [end, head_dim/2] complex64.

    When ``params.rope_scaling`` differs from the constants Meta's ``apply_scaling`` hard-codes
    (:data:`META_APPLY_SCALING`), Meta's formula runs with the checkpoint's constants instead.
    """
    M = meta_model_code()
    constants = {k: v for k, v in params.rope_scaling.items() if k != "source"}
    if not params.use_scaled_rope or constants == META_APPLY_SCALING:
        return M.precompute_freqs_cis(params.head_dim, end, params.rope_theta, params.use_scaled_rope)
    original = M.apply_scaling
    M.apply_scaling = lambda freqs: _apply_scaling(freqs, **constants)
    try:
        return M.precompute_freqs_cis(params.head_dim, end, params.rope_theta, True)
    finally:
        M.apply_scaling = original


def _apply_scaling(freqs, factor, low_freq_factor, high_freq_factor, original_max_position_embeddings):
    """Meta's ``apply_scaling``, line for line, with its four constants as arguments."""
    import torch

    old_context_len = original_max_position_embeddings
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * torch.pi / freqs
    new_freqs = torch.where(wavelen > low_freq_wavelen, freqs / factor, freqs)
    smooth = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    return torch.where((wavelen >= high_freq_wavelen) & (wavelen <= low_freq_wavelen),
                       (1 - smooth) * new_freqs / factor + smooth * new_freqs, new_freqs)


def _assign(module, weights: Mapping, prefix: str, names: Iterable[str]):
    """Give ``module`` (built on the meta device) the tensors ``prefix + name`` of ``weights``, without copies."""
    import torch

    M = meta_model_code()
    names = list(names)
    state = {name: weights.get(prefix + name) for name in names}
    expected_missing = set(module.state_dict()) - set(names)  # left on the meta device on purpose (never used)
    result = module.load_state_dict(state, strict=False, assign=True)
    if result.unexpected_keys or set(result.missing_keys) != expected_missing:
        raise Llama3Error(f"Meta's module does not take the tensors {sorted(result.unexpected_keys)[:5]} "
                          f"or lacks {sorted(set(result.missing_keys) - expected_missing)[:5]}")
    for m in module.modules():  # Meta's key/value caches are plain attributes, not parameters: make them real, in the
        if isinstance(m, M.Attention):  # weights' dtype (Meta's build sets the default dtype to the checkpoint's, bf16)
            m.cache_k = torch.zeros(m.cache_k.shape, dtype=m.wk.weight.dtype)
            m.cache_v = torch.zeros(m.cache_v.shape, dtype=m.wk.weight.dtype)
    return module.eval()


def _build(make, weights: Mapping, prefix: str):
    import torch

    with torch.device("meta"):
        module = make()
    return _assign(module, weights, prefix, module.state_dict().keys())


def rms_norm(checkpoint, name: str):
    """Meta's ``RMSNorm(dim, eps=norm_eps)`` with the gain ``name + ".weight"`` (e.g. ``"layers.0.attention_norm"``)."""
    M, p = meta_model_code(), checkpoint.params
    return _build(lambda: M.RMSNorm(p.dim, eps=p.norm_eps), checkpoint, name + ".")


def attention(checkpoint, layer: int = 0, max_seq_len: int = 64):
    """Meta's ``Attention`` with layer ``layer``'s ``wq wk wv wo``; its cache holds ``max_seq_len`` positions."""
    M = meta_model_code()
    return _build(lambda: M.Attention(model_args(checkpoint.params, max_seq_len)), checkpoint, f"layers.{layer}.attention.")


def feed_forward(checkpoint, layer: int = 0):
    """Meta's ``FeedForward`` with layer ``layer``'s ``w1 w2 w3`` (``hidden_dim`` from Meta's own formula)."""
    M, p = meta_model_code(), checkpoint.params
    return _build(lambda: M.FeedForward(dim=p.dim, hidden_dim=4 * p.dim, multiple_of=p.multiple_of,
                                        ffn_dim_multiplier=p.ffn_dim_multiplier), checkpoint, f"layers.{layer}.feed_forward.")


def transformer_block(checkpoint, layer: int = 0, max_seq_len: int = 64):
    """Meta's ``TransformerBlock`` of layer ``layer``, every tensor from the checkpoint."""
    M = meta_model_code()
    return _build(lambda: M.TransformerBlock(layer, model_args(checkpoint.params, max_seq_len)), checkpoint, f"layers.{layer}.")


class _TiedOutput(Mapping):
    """``weights`` with ``output.weight`` read as ``tok_embeddings.weight`` when the checkpoint has none (tied)."""

    def __init__(self, weights):
        self.weights = weights
        self.names = list(weights.keys())

    def __getitem__(self, name):
        if name == "output.weight" and name not in self.names:
            return self.weights.get("tok_embeddings.weight")
        return self.weights.get(name)

    def __iter__(self):
        return iter(self.names)

    def __len__(self):
        return len(self.names)


def transformer(checkpoint, max_seq_len: int = 64, n_layers: int | None = None):
    """Meta's ``Transformer``: every tensor from the checkpoint, ``freqs_cis`` by :func:`precompute_freqs_cis`.

    Call it as Meta's ``generate`` does: ``model(tokens[None], start_pos)`` -> logits [1, seqlen, vocab_size]
    float32; each call writes its keys and values into the layers' caches at ``start_pos``.
    ``n_layers`` builds only the first layers (the rest of the forward pass is unchanged); then ``norm`` and
    ``output`` are left unassigned when the checkpoint lacks them (a partial copy), and a forward pass that
    reaches them fails.
    """
    M = meta_model_code()
    args = model_args(checkpoint.params, max_seq_len, n_layers)
    weights = _TiedOutput(checkpoint)
    import torch

    with torch.device("meta"):
        module = M.Transformer(args)
    names = list(module.state_dict().keys())
    if n_layers is not None:  # the first layers only (plumbing.reference.run stops there): norm and output may be absent
        present = set(weights)
        names = [n for n in names if n.startswith(("layers.", "tok_embeddings.")) or n in present]
    _assign(module, weights, "", names)
    module.freqs_cis = precompute_freqs_cis(checkpoint.params, 2 * max_seq_len)
    return module


class _Done(Exception):
    """Raised by the last hook :func:`run` needs: the rest of the forward pass is not computed."""


def run(checkpoint, tokens, outputs: Iterable[str], start_pos: int = 0, model=None) -> dict:
    """Run Meta's ``Transformer.forward`` on ``tokens`` and return what the named submodules returned.

    Args:
        checkpoint: an opened :class:`~plumbing.checkpoint.Checkpoint` (or a mapping of Meta's names).
        tokens: token ids, a list or a 1-D int64 tensor (a batch of one is added).
        outputs: names of Meta's submodules, as in ``Transformer.named_modules()``: ``"layers.0.attention_norm"``,
            ``"layers.0.attention.wq"`` (the queries before RoPE), ``"layers.0.attention"``,
            ``"layers.0.feed_forward.w1"`` (the gate), ``"layers.0"`` (the block), ``"norm"``, ``"output"``.
        start_pos: the position of the first token (Meta's ``start_pos``).
        model: a model from :func:`transformer` to reuse (its caches carry over); default: one built with just the
            layers the outputs need.

    Returns:
        ``{name: tensor}``, each the submodule's output without the batch axis (bf16, as Meta computes it). The
        forward pass stops once every requested output is recorded.

    Raises:
        Llama3Error: a name that is not one of Meta's submodules.
    """
    import torch

    wanted = list(outputs)
    if model is None:
        layers = [int(n.split(".")[1]) for n in wanted if n.startswith("layers.")]
        whole = any(not n.startswith("layers.") for n in wanted)
        n_layers = None if whole or not layers else max(layers) + 1
        model = transformer(checkpoint, max_seq_len=max(64, start_pos + len(tokens)), n_layers=n_layers)
    modules = dict(model.named_modules())
    unknown = [n for n in wanted if n not in modules or not n]
    if unknown:
        raise Llama3Error(f"not a submodule of Meta's Transformer: {', '.join(map(repr, unknown))} "
                          "(names as in Transformer.named_modules(), e.g. 'layers.0.attention')")
    seen = {}

    def record(name):
        def hook(_module, _inputs, output):
            seen[name] = output[0]
            if len(seen) == len(wanted):
                raise _Done
        return hook

    handles = [modules[n].register_forward_hook(record(n)) for n in wanted]
    try:
        model(torch.as_tensor(tokens, dtype=torch.int64)[None], start_pos)
    except _Done:
        pass
    finally:
        for h in handles:
            h.remove()
    return {n: seen[n] for n in wanted}


def mask(seqlen: int, start_pos: int = 0):
    """The causal mask as Meta's ``Transformer.forward`` builds it: [seqlen, start_pos + seqlen] bf16, ``None`` for one token."""
    import torch

    if seqlen <= 1:
        return None
    m = torch.triu(torch.full((seqlen, seqlen), float("-inf")), diagonal=1)
    return torch.hstack([torch.zeros((seqlen, start_pos)), m]).to(torch.bfloat16)
