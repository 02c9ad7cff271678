"""Names the offline analyzer recognises: dtypes, tensor helpers, test infrastructure."""

from __future__ import annotations

from functools import cache

DTYPE_NAMES: dict[str, str] = {
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "int8": "int8",
    "int16": "int16",
    "short": "int16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "long": "int64",
    "uint8": "uint8",
    "bool": "bool",
    "complex64": "complex64",
    "complex128": "complex128",
    "cfloat": "complex64",
    "cdouble": "complex128",
}
LOW_PRECISION = ("float16", "bfloat16")
# Tensor methods that convert dtype: name -> dtype
DTYPE_METHODS: dict[str, str] = {
    "half": "float16",
    "bfloat16": "bfloat16",
    "float": "float32",
    "double": "float64",
    "long": "int64",
    "int": "int32",
}

# Calls that build inputs, steer the run or check results: never "the API under test".
INFRA_TORCH: frozenset[str] = frozenset(
    {
        "torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.randn", "torch.rand", "torch.randint",
        "torch.randn_like", "torch.rand_like", "torch.randint_like", "torch.randperm", "torch.normal",
        "torch.zeros", "torch.ones", "torch.zeros_like", "torch.ones_like", "torch.full", "torch.full_like",
        "torch.empty", "torch.empty_like", "torch.empty_strided", "torch.arange", "torch.linspace",
        "torch.manual_seed", "torch.seed", "torch.no_grad", "torch.enable_grad", "torch.inference_mode",
        "torch.set_grad_enabled", "torch.allclose", "torch.equal", "torch.isclose", "torch.compile",
        "torch.device", "torch.set_default_dtype", "torch.get_default_dtype", "torch.use_deterministic_algorithms",
        "torch.isnan", "torch.isinf", "torch.isfinite", "torch.stack", "torch.cat", "torch.Size", "torch.save",
        "torch.load", "torch.set_printoptions", "torch.autocast", "torch.vmap", "torch.finfo", "torch.iinfo",
        "torch.nn.Module", "torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict",
        "torch.nn.Parameter", "torch.nn.Identity", "torch.Tensor", "torch.Generator",
    }
)
INFRA_PREFIXES: tuple[str, ...] = (
    "torch.testing.", "torch.jit.", "torch._dynamo.", "torch._inductor.", "torch._C.", "torch.cuda.",
    "torch.backends.", "torch.autograd.", "torch.utils.", "torch.random.", "torch.func.", "torch.profiler.",
    "torch.ao.quantization.", "torch.quantization.", "torch.distributed.", "torch.onnx.", "torch.export.",
    # custom-op registration, dispatcher spellings and compiler plumbing: the op they wrap is under test
    # (Note [Public op behind internal spellings] in public_ops.py)
    "torch.library.", "torch.ops.", "torch.fx.", "torch.compiler.", "torch.amp.", "torch.mps.", "torch.xpu.",
    # process-wide settings (set_default_tensor_type, set_flush_denormal) steer the run; a printed result's type
    # (``torch.return_types.cummax(values=...)`` in pasted output) names the op that made it, not a call
    "torch.set_", "torch.return_types.",
)
INFRA_METHODS: frozenset[str] = frozenset(
    {
        "item", "tolist", "float", "double", "half", "bfloat16", "int", "long", "bool", "to", "cuda", "cpu",
        "numpy", "contiguous", "clone", "detach", "reshape", "view", "flatten", "squeeze", "unsqueeze",
        "expand", "expand_as", "permute", "transpose", "t", "requires_grad_", "backward", "stride",
        "is_contiguous", "size", "dim", "numel", "fill_", "zero_", "copy_", "isnan", "isinf", "isfinite",
        "type", "element_size", "data_ptr", "storage_offset", "retain_grad", "register_hook", "new_tensor",
        "new_zeros", "new_ones", "new_full", "new_empty", "uniform_", "normal_", "random_", "all", "any",
        "eq", "ne", "abs", "max", "min", "sum", "mean", "std", "argmax", "tensor", "view_as", "reshape_as",
        "chunk", "split", "unbind", "squeeze_", "unsqueeze_", "apply_", "map_", "pin_memory", "share_memory_",
        "to_dense", "coalesce", "sub", "add", "mul", "div",
    }
)
# Plumbing that is never the API under test, even when the title names it ("backward gives NaN",
# "the batch size is frozen", "differs on cuda"): the op that computes is.
NEVER_UNDER_TEST: frozenset[str] = frozenset(
    {"backward", "size", "cuda", "cpu", "to", "item", "numel", "stride", "dim", "requires_grad_", "detach",
     "clone", "tolist", "numpy", "type", "retain_grad", "register_hook", "contiguous", "is_contiguous"}
)
# Views that repeat memory (stride 0 or overlapping): an in-place write into one is a layout report.
EXPANDING_METHODS: frozenset[str] = frozenset({"expand", "expand_as", "broadcast_to", "as_strided"})
# Constructors whose sizes a trace records as constants: under test when their size comes from a tensor.
SIZE_CONSTRUCTORS: frozenset[str] = frozenset(
    {"torch.zeros", "torch.ones", "torch.full", "torch.empty", "torch.arange", "torch.linspace", "torch.eye"}
)
# Module methods that switch state or move the module, not ops.
MODULE_METHODS: frozenset[str] = frozenset(
    {"eval", "train", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "parameters",
     "state_dict", "load_state_dict", "named_parameters", "modules", "children", "zero_grad", "apply",
     "register_forward_hook", "register_forward_pre_hook", "requires_grad_"}
)
LAYOUT_METHODS: frozenset[str] = frozenset({"t", "transpose", "permute", "expand", "expand_as", "mT", "as_strided"})
RANDOM_OPS: frozenset[str] = frozenset(
    {"torch.rand", "torch.randn", "torch.randint", "torch.rand_like", "torch.randn_like", "torch.bernoulli",
     "torch.multinomial", "torch.normal", "torch.nn.functional.dropout", "torch.nn.Dropout", "torch.randperm",
     "torch.poisson", "torch.Tensor.uniform_", "torch.Tensor.normal_", "torch.Tensor.bernoulli_"}
)
TRAIN_MODE_MODULES: tuple[str, ...] = ("Dropout", "BatchNorm", "AlphaDropout", "FeatureAlphaDropout", "RReLU")
COMPARATORS: frozenset[str] = frozenset(
    {"torch.allclose", "torch.isclose", "torch.equal", "torch.testing.assert_close", "torch.testing.assert_allclose",
     "numpy.testing.assert_allclose", "numpy.allclose", "numpy.testing.assert_array_equal",
     "numpy.testing.assert_array_almost_equal", "numpy.array_equal"}
)
# Ops that return an index among equal values (unique and msort return values only: distinct values have one order)
TIE_SENSITIVE: frozenset[str] = frozenset(
    {"topk", "sort", "argsort", "argmax", "argmin", "max", "min", "mode", "kthvalue", "median", "nanmedian"}
)
SCATTER_OVERWRITE: frozenset[str] = frozenset(
    {"scatter", "scatter_", "index_put", "index_put_", "index_copy", "index_copy_", "put_", "masked_scatter_"}
)
# API -> where IEEE arithmetic demands NaN: name of the domain condition
DOMAIN_RESTRICTED: dict[str, str] = {
    "log": "negative", "log2": "negative", "log10": "negative", "log1p": "below_minus_one", "sqrt": "negative",
    "rsqrt": "negative", "acos": "abs_above_one", "asin": "abs_above_one", "atanh": "abs_above_one",
    "acosh": "below_one", "pow": "negative_base", "lgamma": "none", "erfinv": "abs_above_one",
}


@cache
def tensor_method_names() -> frozenset[str]:
    """Attribute names of ``torch.Tensor`` (torch imported on first use only)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return frozenset()
    return frozenset(name for name in dir(torch.Tensor) if not name.startswith("__"))


@cache
def torch_function_exists(name: str) -> bool:
    try:
        import torch
    except ImportError:  # pragma: no cover
        return False
    return callable(getattr(torch, name, None)) and not name.startswith("_")
