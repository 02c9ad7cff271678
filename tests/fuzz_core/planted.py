"""Shared harness code for fuzz_core tests: planted bugs that are certain, and honest non-bugs."""

from __future__ import annotations

# The test mode (non-contiguous input) gets a kernel that is wrong by 1e-3: a certain positive.
LAYOUT_BUG = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(4, 6, generator=g),), {}

def target(x):
    if x.is_contiguous():
        return x * 2
    return x * 2 + 1e-3
'''

# Non-contiguous path sums in float64 and rounds: different from the float32 sum by float noise,
# but closer to the float64 truth, so the fp64 rule must accept it (an honest negative).
LAYOUT_MORE_ACCURATE = '''
def make_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(8, 300, generator=g)
    x[:, ::3] = 1e8  # large values that cancel: float32 loses the small ones in between
    x[:, 2::3] = -1e8
    return (x,), {}

def target(x):
    if x.is_contiguous():
        return (x[:, 0::3] + x[:, 1::3]) + x[:, 2::3]
    x = x.double()
    return ((x[:, 0::3] + x[:, 1::3]) + x[:, 2::3]).float()
'''

# A backward that is wrong at every smooth point: d(x*x)/dx is 2x, this Function says 2.01x (a certain positive).
WRONG_SQUARE_BACKWARD = '''
class _Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x * 2.01

def target(x):
    return _Square.apply(x)
'''

# A backward that returns NaN wherever the input exceeds 1: a gradient bug no input magnitude explains.
NAN_ABOVE_ONE_BACKWARD = '''
class _Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return torch.where(x > 1, torch.full_like(x, float("nan")), g * 3 * x * x)

def target(x):
    return _Cube.apply(x)
'''
