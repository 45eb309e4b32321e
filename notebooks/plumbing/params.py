"""``params.json`` (Meta's format) and a Hugging Face ``config.json``, read into one :class:`ModelParams`."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields
from pathlib import Path
from collections.abc import Mapping

from .errors import Llama3Error
from .paths import display_path

#: Meta-Llama-3-8B's ``params.json``, as published by Meta.
LLAMA3_8B_PARAMS = {
    "dim": 4096,
    "n_layers": 32,
    "n_heads": 32,
    "n_kv_heads": 8,
    "vocab_size": 128256,
    "multiple_of": 1024,
    "ffn_dim_multiplier": 1.3,
    "norm_eps": 1e-05,
    "rope_theta": 500000.0,
}


#: The ``params.json`` of every Llama 3 text model this series runs on, as Meta publishes them (the ``arch_args`` of
#: ``llama_models/sku_list.py``; base and Instruct share them). Llama 3.2 1B and 3B tie the output projection to the
#: embedding table (``tie_word_embeddings`` in their ``config.json``).
MODELS = {
    "Meta-Llama-3-8B": LLAMA3_8B_PARAMS,
    "Llama-3.1-8B": {**LLAMA3_8B_PARAMS, "use_scaled_rope": True},
    "Llama-3.2-1B": {
        "dim": 2048,
        "n_layers": 16,
        "n_heads": 32,
        "n_kv_heads": 8,
        "vocab_size": 128256,
        "ffn_dim_multiplier": 1.5,
        "multiple_of": 256,
        "norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "use_scaled_rope": True,
    },
    "Llama-3.2-3B": {
        "dim": 3072,
        "n_layers": 28,
        "n_heads": 24,
        "n_kv_heads": 8,
        "vocab_size": 128256,
        "ffn_dim_multiplier": 1.0,
        "multiple_of": 256,
        "norm_eps": 1e-05,
        "rope_theta": 500000.0,
        "use_scaled_rope": True,
    },
}
#: SmolLM2-135M-Instruct's ``params.json`` as ``python -m plumbing build-smollm2`` writes it from its GGUF's metadata:
#: a real trained model with the Llama architecture, not Llama 3 (:mod:`plumbing.smollm2`).
SMOLLM2_PARAMS = {
    "dim": 576,
    "n_layers": 30,
    "n_heads": 9,
    "n_kv_heads": 3,
    "vocab_size": 49152,
    "multiple_of": 256,
    "norm_eps": 1e-05,
    "rope_theta": 100000.0,
    "use_scaled_rope": False,
}
#: Every model whose shapes :attr:`ModelParams.model_shape` recognises: :data:`MODELS` and SmolLM2.
KNOWN_SHAPES = {**MODELS, "SmolLM2-135M-Instruct": SMOLLM2_PARAMS}
#: Models whose ``output.weight`` is ``tok_embeddings.weight`` (one table, counted once).
TIED_EMBEDDINGS = ("Llama-3.2-1B", "Llama-3.2-3B", "SmolLM2-135M-Instruct")
#: RoPE scaling factors that differ from the 8 Meta's reference ``apply_scaling`` hard-codes (Llama 3.1's): Llama 3.2
#: 1B's and 3B's 32, from their ``config.json`` (confirmed by Meta's maintainers in meta-llama/llama-models issues 166
#: and 241). A Meta folder's ``params.json`` does not store the factor.
ROPE_SCALING_FACTORS = {"Llama-3.2-1B": 32.0, "Llama-3.2-3B": 32.0}


@dataclass(frozen=True)
class ModelParams:
    """``params.json`` of a Llama 3 checkpoint, with the values derived from it.

    Field names and meanings follow Meta's ``ModelArgs`` (``llama/model.py``).
    Unknown keys in the file are kept in :attr:`extra` and otherwise ignored.
    """

    dim: int
    n_layers: int
    n_heads: int
    vocab_size: int
    n_kv_heads: int | None = None  # None in the file means n_heads (Meta's default); resolved in __post_init__
    multiple_of: int = 256
    ffn_dim_multiplier: float | None = None
    norm_eps: float = 1e-5
    rope_theta: float = 500000.0
    use_scaled_rope: bool = False
    intermediate_size: int | None = None  # only from a Hugging Face config.json; Meta derives it
    extra: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if self.n_kv_heads is None:  # Meta's ModelArgs: n_kv_heads = n_heads when params.json leaves it out
            object.__setattr__(self, "n_kv_heads", self.n_heads)

    @classmethod
    def from_dict(cls, raw: Mapping, source: str = "params.json") -> ModelParams:
        """Build from a parsed ``params.json``; raise :class:`Llama3Error` on missing or bad keys."""
        if not isinstance(raw, Mapping):
            raise Llama3Error(f"{source} must hold a JSON object, found {type(raw).__name__}.")
        known = {f.name for f in fields(cls)} - {"extra"}
        missing = [k for k in ("dim", "n_layers", "n_heads", "vocab_size") if k not in raw]
        if missing:
            raise Llama3Error(f"{source} lacks the key(s) {', '.join(missing)}; is it a Llama params.json?")
        kwargs = {k: raw[k] for k in known if k in raw}
        extra = {k: v for k, v in raw.items() if k not in known}
        try:
            params = cls(**kwargs, extra=extra)
        except TypeError as e:  # pragma: no cover - dataclass arguments are all named
            raise Llama3Error(f"{source}: {e}") from None
        params._validate(source)
        return params

    @classmethod
    def from_json(cls, path: Path) -> ModelParams:
        """Read and validate ``params.json`` at ``path``."""
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise Llama3Error(f"No params.json in {display_path(Path(path).parent)}.") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise Llama3Error(f"params.json is not valid JSON ({e}); download it again.") from None
        return cls.from_dict(raw)

    def _validate(self, source: str) -> None:
        for name in ("dim", "n_layers", "n_heads", "vocab_size", "n_kv_heads", "multiple_of"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise Llama3Error(f"{source}: {name} must be a positive integer, found {value!r}.")
        assert self.n_kv_heads is not None  # a positive integer, checked above
        if self.dim % self.n_heads:
            raise Llama3Error(f"{source}: dim {self.dim} is not divisible by n_heads {self.n_heads}.")
        if self.n_heads % self.n_kv_heads:
            raise Llama3Error(f"{source}: n_heads {self.n_heads} is not divisible by n_kv_heads {self.n_kv_heads}.")
        if self.head_dim % 2:
            raise Llama3Error(f"{source}: head_dim {self.head_dim} must be even for rotary embeddings.")
        for name in ("norm_eps", "rope_theta"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise Llama3Error(f"{source}: {name} must be a positive number, found {value!r}.")

    # Derived values, by Meta's formulas (llama/model.py: Attention and FeedForward).
    @property
    def head_dim(self) -> int:
        """``dim // n_heads``: 128 for Llama 3 8B."""
        return self.dim // self.n_heads

    @property
    def n_rep(self) -> int:
        """Query heads per key/value head (grouped-query attention): 4 for Llama 3 8B."""
        assert self.n_kv_heads is not None  # __post_init__ resolves None to n_heads
        return self.n_heads // self.n_kv_heads

    @property
    def ffn_hidden_dim(self) -> int:
        """SwiGLU hidden size, Meta's ``FeedForward.__init__`` formula: 14336 for Llama 3 8B."""
        if self.intermediate_size is not None:
            return self.intermediate_size
        hidden = int(2 * (4 * self.dim) / 3)
        if self.ffn_dim_multiplier is not None:
            hidden = int(self.ffn_dim_multiplier * hidden)
        return self.multiple_of * ((hidden + self.multiple_of - 1) // self.multiple_of)

    @property
    def model_shape(self) -> str | None:
        """The name in :data:`KNOWN_SHAPES` whose shapes these are (every size but ``n_layers``), or ``None``.

        Llama 3 8B and 3.1 8B share their shapes; they differ in ``use_scaled_rope``, which decides between them.
        """

        def sizes(p):
            return p.dim, p.n_heads, p.n_kv_heads, p.vocab_size, p.ffn_hidden_dim

        same = [name for name, raw in KNOWN_SHAPES.items() if sizes(ModelParams.from_dict(raw)) == sizes(self)]
        scaled: list[str | None] = [name for name in same if KNOWN_SHAPES[name].get("use_scaled_rope", False) == self.use_scaled_rope]
        return (scaled or same or [None])[0]

    @property
    def rope_scaling(self) -> dict:
        """The constants of Llama 3.1's RoPE frequency scaling, used when :attr:`use_scaled_rope` is true.

        In order: the ``rope_scaling`` of a Hugging Face ``config.json``, as transformers reads it; for a Meta
        folder with Llama 3.2 1B's or 3B's shapes (whatever its ``n_layers``), factor 32
        (:data:`ROPE_SCALING_FACTORS`); otherwise the constants Meta's ``apply_scaling``
        (``llama_models/llama3/model.py``) hard-codes: factor 8, low_freq_factor 1, high_freq_factor 4 and an
        original context of 8192 tokens. ``source`` says which, for printing.
        """
        hf = self.extra.get("rope_scaling") or {}
        if hf.get("rope_type", hf.get("type")) == "llama3":
            return {
                "factor": float(hf.get("factor", 8.0)),
                "low_freq_factor": float(hf.get("low_freq_factor", 1.0)),
                "high_freq_factor": float(hf.get("high_freq_factor", 4.0)),
                "original_max_position_embeddings": int(hf.get("original_max_position_embeddings", 8192)),
                "source": "config.json's rope_scaling",
            }
        meta = {
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
            "source": "Meta's apply_scaling (hard-coded)",
        }
        shape = self.model_shape
        if shape in ROPE_SCALING_FACTORS:
            meta.update(
                factor=ROPE_SCALING_FACTORS[shape],
                source=f"{shape.replace('-', ' ')}'s config.json (Meta's apply_scaling hard-codes 8, Llama 3.1's)",
            )
        return meta

    def rope_scaling_line(self) -> str:
        """One line for printing: whether RoPE is scaled, the factor and where it came from."""
        if not self.use_scaled_rope:
            return "RoPE scaling: none (use_scaled_rope is false" + (
                ")" if self.model_shape == "SmolLM2-135M-Instruct" else ", as in Llama 3)"
            )
        c = self.rope_scaling
        return f"RoPE scaling: factor {c['factor']:g}, from {c['source']}"

    @property
    def context_length(self) -> int:
        """Trained context in tokens: 8192 for Llama 3, 131072 for Llama 3.1/3.2 (``use_scaled_rope``).

        From Meta's model cards; ``params.json`` itself does not store it. (SmolLM2-135M: 8192 too, its GGUF says.)
        """
        return 131072 if self.use_scaled_rope else 8192

    def expected_shapes(self) -> dict[str, tuple[int, ...]]:
        """Meta key name -> shape, for every tensor of the full model."""
        d, hd, hidden = self.dim, self.head_dim, self.ffn_hidden_dim
        assert self.n_kv_heads is not None  # __post_init__ resolves None to n_heads
        shapes = {"tok_embeddings.weight": (self.vocab_size, d), "norm.weight": (d,), "output.weight": (self.vocab_size, d)}
        for i in range(self.n_layers):
            p = f"layers.{i}."
            shapes.update(
                {
                    p + "attention_norm.weight": (d,),
                    p + "attention.wq.weight": (self.n_heads * hd, d),
                    p + "attention.wk.weight": (self.n_kv_heads * hd, d),
                    p + "attention.wv.weight": (self.n_kv_heads * hd, d),
                    p + "attention.wo.weight": (d, self.n_heads * hd),
                    p + "ffn_norm.weight": (d,),
                    p + "feed_forward.w1.weight": (hidden, d),
                    p + "feed_forward.w2.weight": (d, hidden),
                    p + "feed_forward.w3.weight": (hidden, d),
                }
            )
        return shapes

    @property
    def tied_embeddings(self) -> bool:
        """True when the output projection is the embedding table: ``tie_word_embeddings`` in a Hugging Face
        ``config.json``, or a Meta folder with Llama 3.2 1B's or 3B's shapes (:data:`TIED_EMBEDDINGS`)."""
        if "tie_word_embeddings" in self.extra:
            return bool(self.extra["tie_word_embeddings"])
        return self.model_shape in TIED_EMBEDDINGS

    def parameter_count(self) -> int:
        """Number of parameters of the full model, a tied embedding table counted once (8,030,261,248 for Llama 3 8B,
        1,235,814,400 for Llama 3.2 1B)."""
        shapes = self.expected_shapes()
        if self.tied_embeddings:
            del shapes["output.weight"]
        return sum(math.prod(s) for s in shapes.values())


def params_from_hf_config(raw: Mapping) -> ModelParams:
    """Map a Hugging Face Llama ``config.json`` to :class:`ModelParams` (Meta's names).

    Hugging Face stores the FFN hidden size itself (``intermediate_size``) instead of Meta's
    ``multiple_of`` and ``ffn_dim_multiplier``; it is kept as :attr:`ModelParams.intermediate_size`.
    """
    try:
        rope = raw.get("rope_scaling") or raw.get("rope_parameters") or {}
        theta = raw.get("rope_theta", rope.get("rope_theta", 500000.0))
        meta = {
            "dim": raw["hidden_size"],
            "n_layers": raw["num_hidden_layers"],
            "n_heads": raw["num_attention_heads"],
            "n_kv_heads": raw.get("num_key_value_heads", raw["num_attention_heads"]),
            "vocab_size": raw["vocab_size"],
            "norm_eps": raw.get("rms_norm_eps", 1e-5),
            "rope_theta": float(theta),
            "use_scaled_rope": rope.get("rope_type", rope.get("type")) == "llama3",
        }
        if "tie_word_embeddings" in raw:
            meta["tie_word_embeddings"] = bool(raw["tie_word_embeddings"])  # kept in ModelParams.extra
        if rope:
            meta["rope_scaling"] = dict(rope)  # kept in ModelParams.extra (e.g. the factor, 8 or 32)
        if raw.get("intermediate_size") is not None:
            meta["intermediate_size"] = int(raw["intermediate_size"])
    except (KeyError, AttributeError, TypeError) as e:
        raise Llama3Error(f"config.json is not a Llama config (missing or bad {e}).") from None
    params = ModelParams.from_dict(meta, source="config.json")
    return params
