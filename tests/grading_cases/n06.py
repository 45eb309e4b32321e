"""Notebook 06 (the feed-forward network): a learner's mistakes and a shortcut."""

MISTAKES = {
    "06-ffn-norm": ('layer0("ffn_norm")', 'layer0("attention_norm")'),  # the attention sub-layer's gain again
    "06-silu": ("torch.exp(-x32)", "torch.exp(x32)"),  # the sign of the exponent: x * sigmoid(-x)
    "06-gate-up": ("gate = ffn_input @ w1.T", "gate = ffn_input @ w3.T"),  # w3 taken for the gate (names not in order)
    "06-ffn-output": ("gated @ w2.T", "gated @ w3"),  # w3 (the same shape transposed) taken for the down projection
    "06-layer-output": ("h + ffn_output", "x + ffn_output"),  # added to the block's input, not to the stream h
}

SHORTCUTS = [
    ("06-silu", "return (x32 * (1 / (1 + torch.exp(-x32)))).type_as(x)", "return F.silu(x32).type_as(x)"),
    (
        "06-silu",
        "return (x32 * (1 / (1 + torch.exp(-x32)))).type_as(x)",  # found by getattr
        "return getattr(F, 'si' + 'lu')(x32).type_as(x)",
    ),
    (
        "06-silu",
        "return (x32 * (1 / (1 + torch.exp(-x32)))).type_as(x)",  # imported under another name
        "from torch.nn.functional import silu as s; return s(x32).type_as(x)",
    ),
    (
        "06-silu",
        "return (x32 * (1 / (1 + torch.exp(-x32)))).type_as(x)",  # the layer class
        "return torch.nn.SiLU()(x32).type_as(x)",
    ),
]

VALID = [
    ("06-silu", "return (x32 * (1 / (1 + torch.exp(-x32)))).type_as(x)", "return (x32 * torch.sigmoid(x32)).type_as(x)"),
    ("06-gate-up", "gate = ffn_input @ w1.T", "gate = torch.matmul(ffn_input, w1.t())"),
]

TAMPERED = [  # the stream zeroed in the residual step's cell: the sum is then ffn_output alone
    ("06-layer-output", "layer_output = h + ffn_output", "h = h * 0; layer_output = h + ffn_output"),
]
