"""Per-op argument rules: literal recipes for APIs whose arguments have meaning a type cannot say.

An unpool needs the indices its max pool returned, CTC needs lengths that fit the sequences, a
quantized op needs a quantized tensor, an RNN internal needs hx and weights of matching sizes, a
sparse constructor needs row pointers and column indices that describe its size. Each rule below
is data (fuzz_core.inputs.arg_recipes): sizes are chosen so every value lies in the API's documented
domain (indices in range, lengths within the sequence, positive variances, probabilities >= 0).
A rule's call is kept only when eager accepts it (Note [Inputs that run] in schema.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from fuzz_core.inputs import Sample
from fuzz_core.inputs.arg_recipes import (Derived, Exact, Ints, Nested, Quant, Rand,
                                          RecipeBuilder, Seq, SparseCoo)
from fuzz_core.custom_functions import CUSTOM_FUNCTION_API, FUNCTIONS
from fuzz_core.target import Target


@dataclass(frozen=True)
class Call:
    """One call of an API as recipes: positional args, keyword args, and module constructor kwargs."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    ctor: dict[str, Any] | None = None


def _pooled(shape: tuple[int, ...]) -> tuple[Derived, Derived]:
    """(values, indices) of a kernel-2 max pool of a seeded input: what max_unpool inverts."""
    return Derived("max_pool", shape, 0), Derived("max_pool", shape, 1)


def _rnn(gates: int) -> Call:
    """rnn_tanh/rnn_relu/gru(input (T,B,4), hx (1,B,5), flat weights, has_biases, layers, dropout, train, bidir,
    batch_first)."""
    weights = Seq((Rand((gates * 5, 4)), Rand((gates * 5, 5)), Rand((gates * 5,)), Rand((gates * 5,))))
    return Call((Rand((3, 2, 4)), Rand((1, 2, 5)), weights, True, 1, 0.0, False, False, False))


_PER_TENSOR = Call((Quant((3, 4)),))
_PER_CHANNEL = Call((Quant((3, 4), torch.qint8, axis=0),))
_BATCH_NORM_STATS = (Rand((3,)), Rand((3,)), Rand((3,)), Rand((3,), "positive"))  # weight, bias, mean, var > 0
_CONV_TBC = Call((Rand((5, 2, 3)), Rand((2, 3, 4)), Rand((4,)), 0))  # (time, batch, in), (kernel, in, out), bias
_SPARSE_TIMES_DENSE = Call((SparseCoo((3, 4)), Rand((4, 2))))
_CTC = (Rand((6, 2, 5), "log_probs"), Ints((2, 2), 1, 5))  # (T, N, C) log-probs; targets avoid blank 0
_CLAMP = Call((Rand((3, 4)), -0.5, 0.5))
_SPLIT = Call((Rand((4, 3)), [2, 2]))
_SPARSE_RESIZE = Call((SparseCoo((3, 4)), [4, 5], 2, 0))  # growing only: shrinking a non-empty one is refused
_RESIZE_AS_SPARSE = Call((SparseCoo((3, 4)), SparseCoo((4, 5))))
_BSR = Call((Exact((0, 1, 2)), Exact((0, 1)), Rand((2, 2, 2)), (4, 4)))  # 2x2 blocks on the diagonal of a 4x4

RULES: dict[str, tuple[Call, ...]] = {
    # quantized tensors and their accessors
    "torch.int_repr": (_PER_TENSOR, _PER_CHANNEL), "torch.Tensor.int_repr": (_PER_TENSOR, _PER_CHANNEL),
    "torch.q_scale": (_PER_TENSOR,), "torch.Tensor.q_scale": (_PER_TENSOR,),
    "torch.q_zero_point": (_PER_TENSOR,), "torch.Tensor.q_zero_point": (_PER_TENSOR,),
    "torch.Tensor.qscheme": (_PER_TENSOR, _PER_CHANNEL),
    "torch.q_per_channel_axis": (_PER_CHANNEL,), "torch.Tensor.q_per_channel_axis": (_PER_CHANNEL,),
    "torch.q_per_channel_scales": (_PER_CHANNEL,), "torch.Tensor.q_per_channel_scales": (_PER_CHANNEL,),
    "torch.q_per_channel_zero_points": (_PER_CHANNEL,), "torch.Tensor.q_per_channel_zero_points": (_PER_CHANNEL,),
    "torch.quantize_per_tensor": (Call((Rand((3, 4)), 0.1, 10, torch.quint8)),
                                  Call((Rand((3, 4)), 0.05, 0, torch.qint8))),
    "torch.quantize_per_channel": (Call((Rand((3, 4)), Exact((0.1, 0.2, 0.3), torch.float64), Exact((0, 0, 0)), 0,
                                         torch.qint8)),),
    "torch.quantize_per_tensor_dynamic": (Call((Rand((3, 4)), torch.quint8, False)),),
    "torch.quantized_batch_norm": (Call((Quant((2, 3, 4, 4)),) + _BATCH_NORM_STATS + (1e-5, 0.1, 10)),),
    "torch.quantized_max_pool1d": (Call((Quant((2, 3, 8)), [2])),),
    "torch.quantized_max_pool2d": (Call((Quant((2, 3, 8, 8)), [2, 2])),),
    "torch.quantized_max_pool3d": (Call((Quant((1, 2, 4, 4, 4)), [2, 2, 2])),),
    # mkldnn is a CPU backend. Not here: the fbgemm linears and quantized RNN cells, whose packed weights are
    # opaque C++ objects in a tensor that no copy of the input keeps (each run clones its input), and
    # fbgemm_pack_quantized_matrix, whose output is such an object (a pointer's bytes: nothing to compare).
    "torch.mkldnn_adaptive_avg_pool2d": (Call((Rand((2, 3, 4, 4), layout="mkldnn"), [2, 2])),),
    "torch.mkldnn_max_pool2d": (Call((Rand((2, 3, 4, 4), layout="mkldnn"), [2, 2])),),
    "torch.mkldnn_max_pool3d": (Call((Rand((1, 2, 4, 4, 4), layout="mkldnn"), [2, 2, 2])),),
    "torch.mkldnn_convolution": (Call((Rand((2, 3, 5, 5)), Rand((4, 3, 2, 2)), None, [0, 0], [1, 1], [1, 1], 1)),),
    "torch.mkldnn_linear_backward_weights": (Call((Rand((2, 5), layout="mkldnn"), Rand((2, 4), layout="mkldnn"),
                                                  Rand((5, 4), layout="mkldnn"), True)),),
    # pools and their inverses
    "torch.max_pool1d": (Call((Rand((2, 3, 8)), [2])),),
    "torch.max_pool1d_with_indices": (Call((Rand((2, 3, 8)), [2])),),
    "torch.max_pool2d": (Call((Rand((2, 3, 8, 8)), [2, 2])),),
    "torch.max_pool3d": (Call((Rand((1, 2, 4, 4, 4)), [2, 2, 2])),),
    "torch.adaptive_max_pool1d": (Call((Rand((2, 3, 8)), [2])),),
    "torch.nn.MaxUnpool1d": (Call(_pooled((2, 3, 8)), ctor={"kernel_size": 2}),),
    "torch.nn.MaxUnpool2d": (Call(_pooled((2, 3, 4, 4)), ctor={"kernel_size": 2}),),
    "torch.nn.MaxUnpool3d": (Call(_pooled((1, 2, 4, 4, 4)), ctor={"kernel_size": 2}),),
    "torch.nn.functional.fractional_max_pool2d_with_indices": (
        Call((Rand((2, 3, 8, 8)), 2), {"output_size": (4, 4), "_random_samples": Rand((2, 3, 2), "unit")}),),
    "torch.nn.functional.fractional_max_pool3d_with_indices": (
        Call((Rand((1, 2, 6, 6, 6)), 2), {"output_size": (3, 3, 3), "_random_samples": Rand((1, 2, 3), "unit")}),),
    "torch.nn.FractionalMaxPool3d": (Call((Rand((1, 2, 6, 6, 6)),),
                                          ctor={"kernel_size": 2, "output_size": (3, 3, 3)}),),
    # fold: 12 = 3 channels x (2x2 kernel), 9 = 3x3 blocks of a 4x4 output
    "torch.nn.functional.fold": (Call((Rand((2, 12, 9)), (4, 4), (2, 2))),),
    "torch.nn.Fold": (Call((Rand((2, 12, 9)),), ctor={"output_size": (4, 4), "kernel_size": (2, 2)}),),
    # losses whose targets have a domain
    "torch.ctc_loss": (Call(_CTC + ([6, 6], [2, 2])),),
    "torch.nn.CTCLoss": (Call(_CTC + (Exact((6, 6)), Exact((2, 2))), ctor={}),),
    "torch.cosine_embedding_loss": (Call((Rand((3, 4)), Rand((3, 4)), Exact((1.0, -1.0, 1.0), torch.float32))),),
    "torch.nn.CosineEmbeddingLoss": (Call((Rand((3, 4)), Rand((3, 4)), Exact((1.0, -1.0, 1.0), torch.float32)),
                                          ctor={}),),
    # class indices, -1 ends each row's list of labels
    "torch.nn.MultiLabelMarginLoss": (Call((Rand((3, 4)), Exact(((3, 0, -1, 1), (0, 1, 2, 3), (1, -1, 0, 0)))),
                                           ctor={}),),
    # normalisation internals with running statistics
    "torch.batch_norm": (Call((Rand((2, 3, 4)),) + _BATCH_NORM_STATS + (False, 0.1, 1e-5, False)),),
    "torch.instance_norm": (Call((Rand((2, 3, 4)),) + _BATCH_NORM_STATS + (True, 0.1, 1e-5, False)),),
    # RNN internals: input 4 features, hidden 5, batch 2
    "torch.rnn_tanh": (_rnn(1),), "torch.rnn_relu": (_rnn(1),), "torch.gru": (_rnn(3),),
    "torch.gru_cell": (Call((Rand((2, 4)), Rand((2, 5)), Rand((15, 4)), Rand((15, 5)), Rand((15,)), Rand((15,)))),),
    "torch.lstm_cell": (Call((Rand((2, 4)), Seq((Rand((2, 5)), Rand((2, 5)))), Rand((20, 4)), Rand((20, 5)),
                              Rand((20,)), Rand((20,)))),),
    # convolutions and grids
    "torch.conv_tbc": (_CONV_TBC,), "torch.nn.functional.conv_tbc": (_CONV_TBC,),
    "torch.convolution": (Call((Rand((2, 3, 5, 5)), Rand((4, 3, 2, 2)), Rand((4,)), [1, 1], [0, 0], [1, 1], False,
                                [0, 0], 1)),),
    "torch.affine_grid_generator": (Call((Rand((2, 2, 3)), [2, 3, 4, 4], False)),),
    "torch.nn.functional.affine_grid": (Call((Rand((2, 2, 3)), [2, 3, 4, 4]), {"align_corners": False}),),
    "torch.grid_sampler": (Call((Rand((2, 3, 4, 4)), Rand((2, 3, 3, 2), "tanh"), 0, 0, False)),),
    "torch.nn.functional.grouped_mm": (Call((Rand((2, 16, 16), dtype=torch.bfloat16),
                                             Rand((2, 16, 16), dtype=torch.bfloat16))),),
    # sparse operands and constructors
    "torch.dsmm": (_SPARSE_TIMES_DENSE,), "torch.hsmm": (_SPARSE_TIMES_DENSE,), "torch.spmm": (_SPARSE_TIMES_DENSE,),
    "torch.saddmm": (Call((SparseCoo((3, 4)), SparseCoo((3, 4)), Rand((4, 4)))),),
    "torch.Tensor.sparse_mask": (Call((Rand((3, 4)), SparseCoo((3, 4)))),),
    "torch.Tensor.sparse_resize_": (_SPARSE_RESIZE,), "torch.Tensor.sparse_resize_and_clear_": (_SPARSE_RESIZE,),
    "torch.resize_as_sparse_": (_RESIZE_AS_SPARSE,), "torch.Tensor.resize_as_sparse_": (_RESIZE_AS_SPARSE,),
    "torch.sparse_bsr_tensor": (_BSR,), "torch.sparse_bsc_tensor": (_BSR,),
    "torch.sparse_compressed_tensor": (Call((Exact((0, 1, 2)), Exact((0, 1)), Rand((2,)), (2, 2)),
                                            {"layout": torch.sparse_csr}),),
    # tensor methods with a domain or a required literal
    "torch.Tensor.multinomial": (Call((Rand((3, 4), "unit"), 2)),),  # non-negative weights per row
    "torch.Tensor.bincount": (Call((Ints((6,), 0, 5),)),),  # non-negative integers
    "torch.Tensor.float_power_": (Call((Rand((3, 4), dtype=torch.float64), 2.0)),),  # in place: self must be double
    "torch.Tensor.new_tensor": (Call((Rand((2,)), [1.0, 2.0])),),
    "torch.Tensor.resize": (Call((Rand((3, 4)), 4, 3)),),
    "torch.Tensor.as_subclass": (Call((Rand((3, 4)), torch.Tensor)),),
    "torch.Tensor.to_padded_tensor": (Call((Nested(((2, 3), (3, 3))), 0.0)),),
    "torch.Tensor.unsafe_split_with_sizes": (_SPLIT,), "torch.unsafe_split_with_sizes": (_SPLIT,),
    "torch.as_strided_": (Call((Rand((3, 4)), [2, 2], [4, 1])),),  # stays inside the 12 elements
    "torch.addmv_": (Call((Rand((3,)), Rand((3, 4)), Rand((4,)))),),
    "torch.clamp_": (_CLAMP,), "torch.clip_": (_CLAMP,),
    "torch.frobenius_norm": (Call((Rand((3, 4)), [0, 1])),),
    "torch.view_as_complex_copy": (Call((Rand((3, 2)),)),),
    # factories and dtype queries
    "torch.asarray": (Call(([1.0, 2.0, 3.0],)),),
    "torch.rand": (Call(([2, 3],)),),
    "torch.can_cast": (Call((torch.float32, torch.int32)),),
    "torch.promote_types": (Call((torch.float32, torch.int32)),),
    # symbolic-shape helpers, which take plain numbers outside tracing
    "torch.sym_float": (Call((2,)),), "torch.sym_max": (Call((1, 2)),),
    "torch.sym_min": (Call((1, 2)),), "torch.sym_not": (Call((True,)),), "torch.sym_sqrt": (Call((4.0,)),),
    "torch.sym_ite": (Call((True, 1, 2)),),
    # the fuzz core's own custom Functions (Note [Custom autograd Functions]): each of them on a matrix, a vector
    # and a scalar
    CUSTOM_FUNCTION_API: tuple(Call((Rand(shape),), {"function": name}) for name in FUNCTIONS
                               for shape in ((4, 5), (6,), ())),
}


def build_sample(api: str, call: Call, dtype: torch.dtype, seed: int) -> Sample:
    """The call's recipes materialised from one seeded builder."""
    builder = RecipeBuilder(dtype, seed)
    args = tuple(builder.build(a) for a in call.args)
    kwargs = {name: builder.build(value) for name, value in call.kwargs.items()}
    return Sample(args=args, kwargs=kwargs, ctor=None if call.ctor is None else dict(call.ctor),
                  origin=f"arg-rule:{api}")


def rule_samples(target: Target, dtype: torch.dtype, seed: int, max_samples: int,
                 runs: Callable[[Target, Sample], bool]) -> list[Sample]:
    """Inputs from the target's rules that eager accepts ([] when it has no rule): the harness dtype, then float32."""
    samples: list[Sample] = []
    for call in RULES.get(target.api, ()):
        for candidate_dtype in dict.fromkeys((dtype, torch.float32)):
            sample = build_sample(target.api, call, candidate_dtype, seed)
            if runs(target, sample):
                samples.append(sample)
                break
        if len(samples) >= max_samples:
            break
    return samples
