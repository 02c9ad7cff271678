"""Walk the AST of an issue's code (never run it) and collect the facts extraction needs.

Names are resolved through the snippet's imports (``import torch.nn.functional as F``,
``from torch import nn``), with the usual aliases assumed when a snippet omits its imports.
Method calls on values that are not modules are read as tensor methods; calls of module
instances (``self.pool(x)``, ``m(x)``) count as uses of the module class they were built from.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from agent.extract.public_ops import INTERNAL_PREFIXES, is_backward_spelling, public_op
from agent.extract.vocab import (
    DTYPE_METHODS,
    DTYPE_NAMES,
    EXPANDING_METHODS,
    LAYOUT_METHODS,
    MODULE_METHODS,
    RANDOM_OPS,
    tensor_method_names,
    torch_function_exists,
)

DEFAULT_ALIASES = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "np": "numpy", "numpy": "numpy"}
_CONSTANTS = {"inf", "nan", "pi", "e", "newaxis"}
_NAN_NAMES = {"torch.nan", "math.nan", "numpy.nan", "numpy.NaN", "numpy.NAN"}
_INF_NAMES = {"torch.inf", "math.inf", "numpy.inf", "numpy.Inf", "numpy.PINF"}
# Devices whose results a report compares with the CPU's; ``CodeFacts.cuda`` means "ran on one of them"
# (the pattern needs an accelerator; an MPS report is checked where CUDA is, the nearest we run).
ACCELERATORS = ("cuda", "mps", "xpu")
# Function transforms that differentiate what they wrap (torch.func and torch.autograd.functional)
GRAD_TRANSFORMS = frozenset(
    f"{module}.{name}" for module in ("torch.func", "functorch", "torch.autograd.functional")
    for name in ("grad", "grad_and_value", "jacrev", "jacfwd", "jacobian", "hessian", "vjp", "jvp", "hvp", "vhp",
                 "linearize")
)
EXPORT_CALLS = frozenset({"torch.export.export", "torch.export.export_for_training", "torch.export"})
# dynamo's own export: the captured graph of torch calls, run as Python (the eager backend's path)
DYNAMO_EXPORT = "torch._dynamo.export"
# Calls that compile, trace or script the callable they are given (or decorate).
COMPILING_CALLS = frozenset({"torch.compile", "torch.jit.trace", "torch.jit.trace_module", "torch.jit.script",
                             DYNAMO_EXPORT, *EXPORT_CALLS})
SEEDING_CALLS = frozenset({"torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed",
                           "torch.cuda.manual_seed_all"})

# Note [Draws outside the compiled code]
# A random op in the code a mode compiles or traces draws from another RNG stream than eager does, so a mismatch
# there says nothing (triage's random_ops false alarm). A draw outside that code is an input: both modes read the
# same numbers when it is drawn once for both, or drawn afresh after a seed. So, per code block, the scanner
# works out which defs and classes the compiling calls reach (what is compiled or decorated, and the user defs
# and classes those call, transitively) and marks a draw `shared_draw` when it sits in none of them and its def
# either seeds the generator before it or itself makes the compiling call (the input is drawn where both sides
# are run). Where a compiled callable is not a def, class or instance of the snippet (a lambda, an nn module, an
# expression), the compiled region is unknown and no draw is marked.


# Note [Inductor drawing eager's numbers]
# inductor's ``fallback_random`` makes compiled random ops call eager's generator, so after the same seed a compiled
# ``torch.randn`` draws the numbers eager drew: PyTorch's own tests of inductor against eager set it, and so do the
# reports written from them (``config.fallback_random = True``, ``@config.patch(fallback_random=True)``). A snippet
# that sets it and seeds before its runs compares like with like, so a draw inside the compiled code is not the
# random_ops false alarm (triage.py) for a compile pair; a traced or scripted pair still draws from its own stream.

# The legacy typed constructors old reports build inputs with: the dtype (and the device) they name
_LEGACY_TYPED = re.compile(r"torch\.(cuda\.)?(Byte|Char|Short|Int|Long|Half|BFloat16|Float|Double|Bool)Tensor")
_LEGACY_DTYPES = {"Byte": "uint8", "Char": "int8", "Short": "int16", "Int": "int32", "Long": "int64",
                  "Half": "float16", "BFloat16": "bfloat16", "Float": "float32", "Double": "float64", "Bool": "bool"}


@dataclass
class CallSite:
    api: str  # qualified: torch.nn.functional.relu6, torch.Tensor.scatter_add_, torch.nn.MaxPool2d
    kind: str  # function | method | module | operator | write (Note [Slice writes as a last resort])
    kwargs: dict[str, Any]
    args: list[Any]
    line: int
    in_user_code: bool  # inside a def/class of the snippet (the code under test)
    in_print: bool  # an argument of print(): reporting, not computing
    receiver: str | None = None
    feeds_backward: bool = False  # ``x.sum().backward()``: the reduction that makes a loss, not the op under test
    values_only: bool = False  # ``x.max(1)[0]``, ``.values``, a full reduction: the indices are never read
    in_constructor: bool = False  # inside a class's ``__init__``: runs once when the model is built, before any mode
    measures_difference: bool = False  # ``(a - b).abs().mean()``: sizes up the gap between two results (a comparison)
    scope: tuple[str, ...] = ()  # the defs and classes the call sits in, outermost first
    augmented: bool = False  # an operator written as an augmented assignment (``a /= b``): the in-place form
    shared_draw: bool = False  # Note [Draws outside the compiled code]: both modes read the same numbers


@dataclass
class CodeFacts:
    calls: list[CallSite] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    special_values: list[str] = field(default_factory=list)
    numbers: list[float] = field(default_factory=list)
    modes: dict[str, dict[str, Any]] = field(default_factory=dict)  # mode name -> options
    layout_calls: list[str] = field(default_factory=list)
    contiguous_calls: int = 0
    memory_format_channels_last: bool = False
    cuda: bool = False
    devices: list[str] = field(default_factory=list)  # accelerators the code runs on: cuda, mps, xpu
    on_cpu: bool = False  # a tensor is put on the CPU by name (.cpu(), .to("cpu"), device="cpu")
    eval_called: bool = False
    # a backward kernel called by its ATen name (aten.cumprod_backward): the code computes a gradient
    backward_kernel: bool = False
    out_kwarg: bool = False
    inplace_methods: list[str] = field(default_factory=list)
    inplace_on_expanded: bool = False  # an in-place method or out= writes into an expanded (stride-0) view
    out_strided: bool = False  # out= is a strided view (x[::2], x.t(), a permutation): Note [Writes into repeating views]
    # Note [Inductor drawing eager's numbers]: the snippet sets inductor's fallback_random (an assignment, or
    # config.patch(fallback_random=True)), so compiled random ops draw as eager does after the same seed
    fallback_random: bool = False
    out_overlaps: bool = False  # out= shares memory with an input or another output: Note [Writes into repeating views]
    inplace_overlaps: bool = False  # an in-place write reads a view of what it writes (a -= a[:1]): the same Note
    # Note [A custom Function under test]: classes of the snippet that subclass torch.autograd.Function, whether one
    # is applied (``F.apply(x)``) outside its own body, and whether an application passes one name twice
    custom_functions: list[str] = field(default_factory=list)
    custom_function_applied: bool = False
    custom_function_tied: bool = False
    nan_checks: int = 0
    assigned_names: set[str] = field(default_factory=set)  # variables and parameters the snippet binds
    # Note [What a repro prints]: values printed at the top level (not labels), and whether one of them is a
    # difference of two results (``print(a - b)``, ``(a - b).abs().max()``, ``torch.dist(a, b)``)
    printed_values: int = 0
    prints_difference: bool = False
    # Note [Operators as a last resort]: ``a + b`` on names, as the torch op it dispatches to
    operators: list[CallSite] = field(default_factory=list)

    def add_dtype(self, name: str) -> None:
        if name not in self.dtypes:
            self.dtypes.append(name)

    def add_special(self, value: str) -> None:
        if value not in self.special_values:
            self.special_values.append(value)

    def add_device(self, value: str) -> None:
        """A device string or name the code uses; accelerators set ``cuda`` and are listed."""
        name = value.split(":", 1)[0].strip().lower()
        self.on_cpu |= name == "cpu"
        if name in ACCELERATORS:
            self.cuda = True
            if name not in self.devices:
                self.devices.append(name)

    def add_mode(self, name: str, **options: Any) -> None:
        known = self.modes.setdefault(name, {})
        known.update({k: v for k, v in options.items() if v is not None})

    def merge(self, other: CodeFacts) -> None:
        self.calls += other.calls
        for d in other.dtypes:
            self.add_dtype(d)
        for s in other.special_values:
            self.add_special(s)
        self.numbers += other.numbers
        for name, opts in other.modes.items():
            self.add_mode(name, **opts)
        self.layout_calls += other.layout_calls
        self.contiguous_calls += other.contiguous_calls
        self.memory_format_channels_last |= other.memory_format_channels_last
        self.cuda |= other.cuda
        self.on_cpu |= other.on_cpu
        self.devices += [d for d in other.devices if d not in self.devices]
        self.eval_called |= other.eval_called
        self.backward_kernel |= other.backward_kernel
        self.out_kwarg |= other.out_kwarg
        self.inplace_methods += other.inplace_methods
        self.inplace_on_expanded |= other.inplace_on_expanded
        self.out_strided |= other.out_strided
        self.out_overlaps |= other.out_overlaps
        self.fallback_random |= other.fallback_random
        self.inplace_overlaps |= other.inplace_overlaps
        self.custom_functions += [c for c in other.custom_functions if c not in self.custom_functions]
        self.custom_function_applied |= other.custom_function_applied
        self.custom_function_tied |= other.custom_function_tied
        self.nan_checks += other.nan_checks
        self.assigned_names |= other.assigned_names
        self.printed_values += other.printed_values
        self.prints_difference |= other.prints_difference
        self.operators += other.operators


# Note [A custom Function under test]
# A report whose snippet defines a torch.autograd.Function subclass and applies it, compared through compiled,
# traced or transformed code, is about how that code runs the user's backward rule: the API under test is the
# construct (fuzz_core/custom_functions.py, Note [Custom autograd Functions]), not the op inside its forward nor
# the reduction after it. The scanner notes the classes, their applications and an application that passes one
# tensor twice (whose gradients must add up); agent/extract/analyzer.py names the construct.
_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement, nested blocks included; imports are statements, so expressions are skipped."""
    out: list[ast.stmt] = []
    stack = list(reversed(body))
    while stack:
        stmt = stack.pop()
        out.append(stmt)
        for name in ("body", "orelse", "finalbody", "handlers"):
            children = getattr(stmt, name, None)
            if isinstance(children, list):
                stack.extend(reversed([c for c in children if isinstance(c, ast.stmt | ast.excepthandler)]))
    return out


def _collect_aliases(tree: ast.Module) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _bare_module_classes(tree: ast.Module, aliases: dict[str, str]) -> dict[str, str]:
    """Note [Modules called without their import]
    Snippets often call ``CrossEntropyLoss(...)`` or ``Conv2d(...)`` with the ``from torch.nn import ...`` line
    left out. A capitalised name that is called, never bound in the snippet (no import, def, class or
    assignment) and names a module class of torch.nn on the allow-list is that class.
    """
    bound: set[str] = set(aliases)
    called: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id[:1].isupper():
            called.add(node.func.id)
    from fuzz_core.api_names import rejection_reason

    return {name: f"torch.nn.{name}" for name in sorted(called - bound)
            if rejection_reason(f"torch.nn.{name}") is None}


class _Scanner(ast.NodeVisitor):
    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.facts = CodeFacts()
        self.depth = 0  # > 0 inside a def or class of the snippet
        self.constructor_depth = 0  # > 0 inside an ``__init__``
        self.print_depth = 0
        self.instances: dict[str, str] = {}  # variable or self attribute -> module class api
        self.int_names: set[str] = set()  # names bound to plain ints (loop counters, len(...), literals)
        self.numpy_names: set[str] = set()  # names bound to values computed with numpy
        self.expanded_names: set[str] = set()  # names bound to x.expand(...) and other repeating views
        self.strided_names: set[str] = set()  # names bound to a strided view (x[::2], x.t(), x.permute(...))
        self.device_names: dict[str, str] = {}  # names bound to an accelerator's string ("cuda", "mps:0")
        self.user_classes: set[str] = set()
        self.loss_nodes: set[int] = set()  # id() of calls whose result is .backward()-ed
        self.measured_differences: set[int] = set()  # id() of ``a - b`` whose gap a method chain measures
        self.value_nodes: set[int] = set()  # id() of calls whose result is read as [0] or .values
        # Note [Draws outside the compiled code]
        self.scope: list[str] = []
        self.compiled: set[str] | None = set()  # defs/classes compiled or traced; None when one is not resolvable
        self.compile_scopes: set[tuple[str, ...]] = set()
        self.seeds: list[tuple[tuple[str, ...], int]] = []
        self.callees: dict[tuple[str, ...], set[str]] = {}
        self.defined: set[str] = {"<lambda>"}
        self.decorating = False
        self.checks: set[int] = set()  # id() of comparisons that check results (Note [Comparisons as operators])
        self.op_aliases: set[str] = set()  # names bound to a torch op (``op = torch.mean``): _bind_op_alias

    # --------------------------------------------------------------- resolution

    def qualify(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def literal(self, node: ast.AST) -> Any:
        qualified = self.qualify(node)
        if qualified:
            return qualified
        if isinstance(node, ast.Name) and node.id in self.device_names:
            # ``device = "cuda"`` then ``.to(device=device)``: the device a repro names once and passes on
            return self.device_names[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" and node.args:
            inner = node.args[0]
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                return inner.value.strip().lower()
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self.literal(node.operand)
            if isinstance(value, str) and value in ("inf", "nan"):
                return "-" + value
        try:
            return ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None

    def _instance_key(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return "self." + node.attr
        return None

    # --------------------------------------------------------------- visitors

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:  # noqa: N802
        for deco in node.decorator_list:
            self._decorator(deco, node.name)
        constructor = node.name == "__init__"
        self.depth += 1
        self.constructor_depth += constructor
        self.scope.append(node.name)
        self.defined.add(node.name)
        self.facts.assigned_names.update(arg.arg for arg in ast.walk(node.args) if isinstance(arg, ast.arg))
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()
        self.depth -= 1
        self.constructor_depth -= constructor

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:  # noqa: N802
        self.user_classes.add(node.name)
        if any(self.qualify(base) in _FUNCTION_BASES for base in node.bases):
            self.facts.custom_functions.append(node.name)
        self.depth += 1
        self.scope.append(node.name)
        for stmt in node.body:
            self.visit(stmt)
        self.scope.pop()
        self.depth -= 1

    def visit_Lambda(self, node: ast.Lambda) -> None:  # noqa: N802
        self.depth += 1
        self.scope.append("<lambda>")
        self.visit(node.body)
        self.scope.pop()
        self.depth -= 1

    def _compiled_target(self, node: ast.AST | None) -> None:
        """What a compiling call is given (Note [Draws outside the compiled code])."""
        if self.compiled is None:
            return
        self.compile_scopes.add(tuple(self.scope))
        instance = self._instance_key(node) if node is not None else None
        if instance and self.instances.get(instance, "").startswith("user:"):
            self.compiled.add(self.instances[instance][5:])
        elif isinstance(node, ast.Name) and instance not in self.instances and self.qualify(node) is None:
            self.compiled.add(node.id)  # a def or class of the snippet (checked against the scopes at the end)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.user_classes:
            self.compiled.add(node.func.id)  # torch.compile(Model())
        elif isinstance(node, ast.Lambda):
            self.compiled.add("<lambda>")
        else:
            self.compiled = None

    def _called_user_code(self, func: ast.AST) -> None:
        """The defs, classes and methods a scope calls by name, for the compiled region's closure."""
        names = self.callees.setdefault(tuple(self.scope), set())
        instance = self._instance_key(func)
        if instance and self.instances.get(instance, "").startswith("user:"):
            names.add(self.instances[instance][5:])
        elif isinstance(func, ast.Name):
            names.add(func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            names.add(func.attr)

    def mark_shared_draws(self) -> None:
        """Note [Draws outside the compiled code]: called once the block is scanned."""
        if not self.compiled or not self.compiled <= self.defined | self.user_classes:
            return
        region = set(self.compiled)
        grown = True
        while grown:
            grown = False
            for scope, names in self.callees.items():
                if any(part in region for part in scope) and not names <= region:
                    region |= names
                    grown = True
        for call in self.facts.calls:
            if call.api not in RANDOM_OPS or not call.scope or any(part in region for part in call.scope):
                continue
            seeded = any(scope == call.scope and line <= call.line for scope, line in self.seeds)
            call.shared_draw = seeded or call.scope in self.compile_scopes

    def _decorator(self, deco: ast.AST, decorated: str | None = None) -> None:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(deco, ast.Call):
            self._note_fallback_random(deco)
        name = self.qualify(target)
        if name in COMPILING_CALLS and decorated is not None:
            if self.compiled is not None:
                self.compiled.add(decorated)
        if name in ("torch.compile", "torch.jit.script", "torch.jit.trace"):
            if isinstance(deco, ast.Call):
                self.decorating = True  # the decorated def is the target, not the call's arguments
                self.visit(deco)
                self.decorating = False
            else:
                self._mode_call(name, {}, [])

    def _note_custom_function(self, call: ast.Call) -> None:
        """``F.apply(...)`` of a custom Function class of the snippet, outside that class (Note [A custom Function
        under test])."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "apply" and isinstance(func.value, ast.Name)
                and func.value.id in self.facts.custom_functions and func.value.id not in self.scope):
            return
        self.facts.custom_function_applied = True
        names = [a.id for a in call.args if isinstance(a, ast.Name)]
        self.facts.custom_function_tied |= len(names) != len(set(names))

    def _note_fallback_random(self, call: ast.Call) -> None:
        """``config.patch(fallback_random=True)``, as a call, a context or a decorator (Note [Inductor drawing
        eager's numbers])."""
        if isinstance(call.func, ast.Attribute) and call.func.attr == "patch" and any(
                kw.arg == "fallback_random" and isinstance(kw.value, ast.Constant) and kw.value.value is True
                for kw in call.keywords):
            self.facts.fallback_random = True

    def visit_Assign(self, node: ast.Assign) -> None:  # noqa: N802
        self.visit(node.value)
        if any(isinstance(t, ast.Attribute) and t.attr == "fallback_random" for t in node.targets) and (
                isinstance(node.value, ast.Constant) and node.value.value is True):
            self.facts.fallback_random = True
        for target in node.targets:
            for leaf in ast.walk(target):
                if isinstance(leaf, ast.Name):
                    self.facts.assigned_names.add(leaf.id)
            key = self._instance_key(target)
            built = node.value
            while (isinstance(built, ast.Call) and isinstance(built.func, ast.Attribute)
                   and built.func.attr in MODULE_METHODS and isinstance(built.func.value, ast.Call)):
                built = built.func.value  # Model().cuda().eval() is still a Model
            if key and isinstance(built, ast.Call):
                api = self.qualify(built.func)
                if api and api.startswith("torch.nn.") and api.rsplit(".", 1)[-1][:1].isupper():
                    self.instances[key] = api
                elif isinstance(built.func, ast.Name) and built.func.id in self.user_classes:
                    self.instances[key] = "user:" + built.func.id
            if isinstance(target, ast.Subscript):
                if not self._indexed_write(target):
                    self._slice_write(target, node.value)
                self.visit(target)  # x[::2] = ...: a strided target is a layout fact
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        self._bind_op_alias(names, node.value)
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, int) or (
                isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) and node.value.func.id == "len"):
            self.int_names.update(names)
        else:  # a = 7 then a = torch.as_tensor(a): the name holds a tensor from here on
            self.int_names.difference_update(names)
        if self._torch_result(node.value):  # torch.tensor(np.random.randn()): numpy made the value, torch holds it
            self.numpy_names.difference_update(names)
        elif self._uses_numpy(node.value):
            self.numpy_names.update(names)
        value = node.value.value if isinstance(node.value, ast.Constant) else None
        for name in names:
            if isinstance(value, str) and value.strip().lower().startswith(ACCELERATORS):
                self.device_names[name] = value.strip().lower()
            else:  # rebound to anything else (``device = "cpu"``, a computed choice): no longer known
                self.device_names.pop(name, None)
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) and (
                node.value.func.attr in EXPANDING_METHODS):
            self.expanded_names.update(names)
        if _strided_view(node.value, self.int_names):
            self.strided_names.update(names)
        else:
            self.strided_names.difference_update(names)

    def _bind_op_alias(self, names: list[str], value: ast.AST) -> None:
        """``op = torch.mean`` then ``op(t)`` and ``torch.compile(op)``: the name calls the op it is bound to.

        Only a torch function or class spelled out (not a dtype or a constant such as torch.float16 or torch.inf);
        a name bound this way and rebound to anything else is forgotten.
        """
        qualified = self.qualify(value) if isinstance(value, ast.Attribute) else None
        leaf = qualified.rsplit(".", 1)[-1] if qualified else ""
        for name in names:
            if qualified and qualified.startswith("torch.") and leaf not in DTYPE_NAMES and leaf not in _CONSTANTS:
                self.aliases[name] = qualified
                self.op_aliases.add(name)
            elif name in self.op_aliases:
                del self.aliases[name]
                self.op_aliases.discard(name)

    def _uses_numpy(self, value: ast.AST) -> bool:
        for leaf in ast.walk(value):
            if isinstance(leaf, ast.Name) and (leaf.id in self.numpy_names or (self.aliases.get(leaf.id) or "").startswith("numpy")):
                return True
        return False

    def visit_AugAssign(self, node: ast.AugAssign) -> None:  # noqa: N802
        # ``s += x`` computes as ``s + x`` does; ``s = 0; s += x`` leaves a tensor in s
        as_binop = ast.BinOp(left=node.target, op=node.op, right=node.value)
        if isinstance(node.op, ast.MatMult):
            self._record("torch.matmul", "operator", node, {}, [])
        elif type(node.op) in _AUGMENTED and self._tensor_operands(as_binop):
            self.facts.operators.append(CallSite(_AUGMENTED[type(node.op)], "operator", {}, [],
                                                 node.lineno, self.depth > 0, self.print_depth > 0,
                                                 scope=tuple(self.scope), augmented=True))
            if isinstance(node.target, ast.Name) and node.target.id in self.int_names:
                self.int_names.discard(node.target.id)  # s = 0; s += x: s holds a tensor from here on
            elif isinstance(node.target, ast.Name) and node.target.id not in self.numpy_names:
                # a tensor updated in place: ``a -= a[:, :1]`` is ``a.sub_(a[:, :1])`` (``x[i] += v`` is an
                # indexed write, read by _indexed_write)
                self.facts.inplace_methods.append(_AUGMENTED[type(node.op)].rsplit(".", 1)[1] + "_")
                if node.target.id in self.expanded_names:
                    self.facts.inplace_on_expanded = True
                if _reads_a_view_of(node.target, [node.value]):
                    self.facts.inplace_overlaps = True
            elif (isinstance(node.target, ast.Subscript) and isinstance(node.target.value, ast.Name)
                  and not self._uses_numpy(node.target.value) and _sliced(node.target) and _sliced(node.value)
                  and _reads_a_view_of(node.target, [node.value])):
                # ``x[1:] -= x[:-1]`` is ``x[1:].sub_(x[:-1])``: an in-place write into a view that reads another
                # view of the same memory (Note [Writes into repeating views] in modes.py)
                self.facts.inplace_methods.append(_AUGMENTED[type(node.op)].rsplit(".", 1)[1] + "_")
                self.facts.inplace_overlaps = True
        self.visit(node.value)
        if isinstance(node.target, ast.Subscript):
            self._indexed_write(node.target)
        self.visit(node.target)

    def _visit_comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        """``[i + j for i in range(3) for j in range(10)]`` builds a list of ints: its targets over range() are
        ints while it runs (and only then: a comprehension's names do not outlive it)."""
        added = {leaf.id for gen in node.generators if isinstance(gen.iter, ast.Call)
                 and isinstance(gen.iter.func, ast.Name) and gen.iter.func.id == "range"
                 for leaf in ast.walk(gen.target) if isinstance(leaf, ast.Name)} - self.int_names
        self.int_names |= added
        self.generic_visit(node)
        self.int_names -= added

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _visit_comprehension  # noqa: N815

    def visit_For(self, node: ast.For) -> None:  # noqa: N802
        # ``for i in range(n)``: i is an int, so ``out[i] = ...`` is a plain element write, not advanced indexing
        if isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) and node.iter.func.id in (
                "range", "enumerate", "zip"):
            self.int_names.update(leaf.id for leaf in ast.walk(node.target) if isinstance(leaf, ast.Name))
        self.generic_visit(node)

    def _indexed_write(self, target: ast.Subscript) -> bool:
        """``x[idx] = v`` / ``x[idx] += v`` with a tensor index or a mask is an index_put_ (advanced indexing);
        whether it was one."""
        index = target.slice
        if self._uses_numpy(target.value) or self._uses_numpy(index):  # a numpy array, not a tensor
            return False
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        for part in parts:
            if isinstance(part, ast.Name) and part.id not in self.int_names or isinstance(part, ast.Compare | ast.List) or (
                    isinstance(part, ast.Call) and (self.qualify(part.func) or "").startswith("torch.")):
                self._record("torch.Tensor.index_put_", "operator", target, {}, [])
                return True
        return False

    def _slice_write(self, target: ast.Subscript, value: ast.expr) -> None:
        """Note [Slice writes as a last resort]"""
        if self._uses_numpy(target.value) or self._uses_numpy(value) or not isinstance(target.value, ast.Name):
            return
        if self._scalar_value(value):
            return
        self.facts.operators.append(CallSite("torch.Tensor.copy_", "write", {}, [], target.lineno, self.depth > 0,
                                             self.print_depth > 0, scope=tuple(self.scope)))

    def _scalar_value(self, node: ast.expr) -> bool:
        """A number, not a tensor: a literal, a known int, ``float("nan")``, ``torch.inf``, ``-math.pi``, a list."""
        if isinstance(node, ast.Constant | ast.List | ast.Tuple):
            return True
        if isinstance(node, ast.UnaryOp):
            return self._scalar_value(node.operand)
        if isinstance(node, ast.Name):
            return node.id in self.int_names
        if isinstance(node, ast.Attribute):
            return (self.qualify(node) or "").rsplit(".", 1)[-1] in _CONSTANTS
        if isinstance(node, ast.BinOp):
            return self._scalar_value(node.left) and self._scalar_value(node.right)
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
            "float", "int", "bool", "complex", "len")

    def visit_Constant(self, node: ast.Constant) -> None:  # noqa: N802
        if isinstance(node.value, float | int) and not isinstance(node.value, bool):
            self.facts.numbers.append(float(node.value))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:  # noqa: N802
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            value = node.operand.value
            if isinstance(value, float | int) and not isinstance(value, bool):
                self.facts.numbers.append(-float(value))
                if value == 0 and isinstance(value, float):
                    self.facts.add_special("-0.0")
                return
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802
        name = self.qualify(node)
        if name:
            if name.startswith("torch.") and name.split(".")[-1] in DTYPE_NAMES and name.count(".") == 1:
                self.facts.add_dtype(DTYPE_NAMES[name.split(".")[-1]])
            elif _LEGACY_TYPED.fullmatch(name) is not None:
                self._legacy_typed(name)
            elif name in _NAN_NAMES:
                self.facts.add_special("nan")
            elif name in _INF_NAMES:
                self.facts.add_special("inf")
            elif name == "torch.channels_last":
                self.facts.memory_format_channels_last = True
        if node.attr in ("T", "mT", "mH", "H"):
            self.facts.layout_calls.append(node.attr)
        if node.attr == "values" and isinstance(node.value, ast.Call):
            self.value_nodes.add(id(node.value))
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:  # noqa: N802
        if isinstance(node.op, ast.MatMult):
            self._record("torch.matmul", "operator", node, {}, [])
        elif type(node.op) in _ARITHMETIC and self._tensor_operands(node):
            self.facts.operators.append(CallSite(_ARITHMETIC[type(node.op)], "operator", {}, [],
                                                 node.lineno, self.depth > 0, self.print_depth > 0,
                                                 measures_difference=id(node) in self.measured_differences))
        elif type(node.op) in _BITWISE and any(self._torch_call(side) for side in (node.left, node.right)):
            self.facts.operators.append(CallSite(_BITWISE[type(node.op)], "operator", {}, [],
                                                 node.lineno, self.depth > 0, self.print_depth > 0))
        self.generic_visit(node)

    # Note [Comparisons as operators]
    # A repro whose only computation is a comparison (``t[2:] <= t[:2]`` on a device, ``print(b > c)``) reports
    # that comparison, so ``a OP b`` on operands that may be tensors joins the operators (read only as a last
    # resort, Note [Operators as a last resort]). Where a comparison is how the repro checks its results (an
    # ``assert``, an ``if``/``while`` test, ``(a == b).all()``, a comparison with a reduction such as
    # ``(a - b).abs().max() < 1e-5``) it is a check and is not read.
    def visit_Compare(self, node: ast.Compare) -> None:  # noqa: N802
        if (id(node) not in self.checks and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS
                and self._tensor_operands(ast.BinOp(left=node.left, op=ast.Add(), right=node.comparators[0]))
                and not any(_reduces(side) for side in (node.left, node.comparators[0]))):
            self.facts.operators.append(CallSite(_COMPARISONS[type(node.ops[0])], "operator", {}, [],
                                                 node.lineno, self.depth > 0, self.print_depth > 0,
                                                 scope=tuple(self.scope)))
        self.generic_visit(node)

    def _mark_checks(self, test: ast.AST) -> None:
        self.checks.update(id(leaf) for leaf in ast.walk(test) if isinstance(leaf, ast.Compare))

    def visit_Assert(self, node: ast.Assert) -> None:  # noqa: N802
        self._mark_checks(node.test)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:  # noqa: N802
        self._mark_checks(node.test)
        self.generic_visit(node)

    visit_While = visit_If  # noqa: N815

    def _torch_call(self, side: ast.expr) -> bool:
        """``torch.arange(10)``, ``torch.tensor(x, device=d)``: an operand that is a torch function's result."""
        return isinstance(side, ast.Call) and (self.qualify(side.func) or "").startswith("torch.")

    def _torch_result(self, value: ast.expr) -> bool:
        """A torch function's result, or a method chain on one (``torch.from_numpy(a).float()``): a tensor, whatever
        numpy computed its argument with."""
        node = value
        while isinstance(node, ast.Call):
            if self._torch_call(node):
                return True
            if not isinstance(node.func, ast.Attribute):
                return False
            node = node.func.value
        return False

    def _tensor_operands(self, node: ast.BinOp) -> bool:
        """An operand that may be a tensor: not a literal, a known int, a string or a len()/range() value."""
        def plain(side: ast.expr) -> bool:
            if isinstance(side, ast.Constant):
                return True
            if isinstance(side, ast.Name):
                return side.id in self.int_names or side.id in self.numpy_names
            if isinstance(side, ast.BinOp):
                return plain(side.left) and plain(side.right)
            if isinstance(side, ast.Call) and (self.qualify(side.func) or "").startswith(("numpy.", "math.")):
                return True  # np.random.rand() + 1.0 is numpy's (or Python's) arithmetic
            return isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and side.func.id in (
                "len", "range", "int", "float", "str")
        return not (plain(node.left) and plain(node.right))

    def visit_Subscript(self, node: ast.Subscript) -> None:  # noqa: N802
        if isinstance(node.value, ast.Call) and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
            self.value_nodes.add(id(node.value))
        # x[..., ::2] views are non-contiguous
        for part in ast.walk(node.slice):
            if isinstance(part, ast.Slice) and part.step is not None:
                self.facts.layout_calls.append("slice_step")
                break
        if _inner_index(node.slice):  # x[:, 2]: a column, its elements a row apart
            self.facts.layout_calls.append("inner_index")
        self.generic_visit(node)

    def _legacy_typed(self, name: str) -> None:
        """``torch.cuda.ByteTensor(...)``, ``.type(torch.HalfTensor)``: the dtype, and the device, the name says."""
        legacy = _LEGACY_TYPED.fullmatch(name)
        if legacy is not None:
            self.facts.add_dtype(_LEGACY_DTYPES[legacy.group(2)])
            if legacy.group(1):
                self.facts.add_device("cuda")

    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802
        func = node.func
        kwargs = {kw.arg: self.literal(kw.value) for kw in node.keywords if kw.arg}
        args = [self.literal(a) for a in node.args]
        qualified = self.qualify(func)
        if qualified is not None and qualified.endswith("Tensor"):
            self._legacy_typed(qualified)
        is_print = isinstance(func, ast.Name) and func.id == "print"
        if isinstance(func, ast.Attribute) and func.attr in _CHECKING_METHODS and isinstance(func.value, ast.Compare):
            self.checks.add(id(func.value))
        self._value_hints(node, kwargs, args)
        self._note_fallback_random(node)
        self._note_custom_function(node)
        if qualified in COMPILING_CALLS and not self.decorating:
            self._compiled_target(node.args[0] if node.args else None)
        elif qualified in SEEDING_CALLS:
            self.seeds.append((tuple(self.scope), getattr(node, "lineno", 0)))
        elif qualified is None:
            self._called_user_code(func)
        instance = self._instance_key(func)
        if instance and instance in self.instances:
            self._instance_call(self.instances[instance], node)
        elif qualified:
            self._qualified_call(qualified, node, kwargs, args)
        elif isinstance(func, ast.Attribute):
            self._attribute_call(func, node, kwargs, args)
        elif isinstance(func, ast.Call):
            self.visit(func)
        if is_print:
            self.print_depth += 1
            self._printed(node)
        for child in [*node.args, *(kw.value for kw in node.keywords)]:
            self.visit(child)
        if isinstance(func, ast.Attribute) and not qualified:
            self.visit(func.value)
        if is_print:
            self.print_depth -= 1

    def _printed(self, node: ast.Call) -> None:
        """Note [What a repro prints]: count the values a print shows; note a printed difference of two results."""
        values: list[ast.expr] = []
        for arg in node.args:
            if isinstance(arg, ast.JoinedStr):  # f"eager: {a}" shows the values in its braces
                values += [v.value for v in arg.values if isinstance(v, ast.FormattedValue)]
            elif not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                values.append(arg)
        self.facts.printed_values += len(values)
        if any(_is_difference(self, leaf) for value in values for leaf in ast.walk(value)):
            self.facts.prints_difference = True

    # --------------------------------------------------------------- call kinds

    def _value_hints(self, node: ast.Call, kwargs: dict[str, Any], args: list[Any]) -> None:
        for value in [*kwargs.values(), *args]:
            if value in ("nan", "-nan"):
                self.facts.add_special("nan")
            elif value == "inf":
                self.facts.add_special("inf")
            elif value == "-inf":
                self.facts.add_special("-inf")
        device = kwargs.get("device")
        if isinstance(device, str) and device.startswith((*ACCELERATORS, "cpu")):
            self.facts.add_device(device)
        dtype = kwargs.get("dtype")
        if isinstance(dtype, str) and dtype.startswith("torch."):
            name = DTYPE_NAMES.get(dtype.split(".")[-1])
            if name:
                self.facts.add_dtype(name)
        if kwargs.get("memory_format") == "torch.channels_last":
            self.facts.memory_format_channels_last = True
        if "out" in kwargs:
            self.facts.out_kwarg = True
            out_values = [kw.value for kw in node.keywords if kw.arg == "out"]
            parts = [e for v in out_values for e in (v.elts if isinstance(v, ast.Tuple | ast.List) else [v])]
            if any(_strided_view(e, self.int_names) or isinstance(e, ast.Name) and e.id in self.strided_names
                   for e in parts):
                self.facts.out_strided = True
            if _out_overlaps(parts, node.args):
                self.facts.out_overlaps = True
            if any(kw.arg == "out" and isinstance(kw.value, ast.Name) and kw.value.id in self.expanded_names
                   for kw in node.keywords):
                self.facts.inplace_on_expanded = True

    def _record(self, api: str, kind: str, node: ast.AST, kwargs: dict[str, Any], args: list[Any], receiver: str | None = None) -> None:
        # a full reduction (x.max(), torch.max(x)) returns the value alone
        full = not kwargs and len(args) <= (0 if kind == "method" else 1)
        self.facts.calls.append(
            CallSite(api, kind, kwargs, args, getattr(node, "lineno", 0), self.depth > 0, self.print_depth > 0, receiver,
                     values_only=id(node) in self.value_nodes or (isinstance(node, ast.Call) and full),
                     in_constructor=self.constructor_depth > 0, scope=tuple(self.scope))
        )

    def _mode_call(self, api: str, kwargs: dict[str, Any], args: list[Any]) -> None:
        if api == "torch.compile":
            backend = kwargs.get("backend") or "inductor"
            backend = backend if backend in ("eager", "aot_eager", "inductor") else "inductor"
            options = {k: kwargs[k] for k in ("dynamic", "mode", "fullgraph") if isinstance(kwargs.get(k), bool | str)}
            self.facts.add_mode(f"compile:{backend}", **options)
        elif api == "torch.jit.trace" or api == "torch.jit.trace_module":
            self.facts.add_mode("jit.trace")
        elif api == "torch.jit.script":
            self.facts.add_mode("jit.script")
        elif api in ("torch.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast", "torch.amp.autocast"):
            dtype = kwargs.get("dtype")
            device = kwargs.get("device_type") or (args[0] if args and isinstance(args[0], str) else None)
            name = DTYPE_NAMES.get(str(dtype).split(".")[-1]) if dtype else None
            if name is None:
                name = "bfloat16" if device == "cpu" or api == "torch.cpu.amp.autocast" else "float16"
            self.facts.add_mode(f"autocast:{name}")
        elif api in ("torch.vmap", "torch.func.vmap", "functorch.vmap"):
            self.facts.add_mode("vmap")
        elif api in ("torch.autograd.grad", "torch.autograd.gradcheck", "torch.autograd.gradgradcheck") or (
                api in GRAD_TRANSFORMS):
            self.facts.add_mode("grad")
        elif api in EXPORT_CALLS:
            # an exported program runs the ATen graph dynamo and AOTAutograd captured: aot_eager's path
            self.facts.add_mode("compile:aot_eager", export=True)
        elif api == DYNAMO_EXPORT:
            self.facts.add_mode("compile:eager", export=True)
        elif api.endswith("quantize_dynamic"):
            self.facts.add_mode("quant:dynamic")

    def _qualified_call(self, api: str, node: ast.Call, kwargs: dict[str, Any], args: list[Any]) -> None:
        if not api.startswith("torch"):
            if api.startswith("numpy") or api.startswith("functorch"):
                self._mode_call(api, kwargs, args)
                self._record(api, "function", node, kwargs, args)
            return
        if api.startswith(("torch.ops.", *INTERNAL_PREFIXES)):
            # Note [Public op behind internal spellings] (public_ops.py): the dispatcher's name of a public op
            mapped = public_op(api) if api.startswith(INTERNAL_PREFIXES) else None
            if mapped is not None:
                if is_backward_spelling(api):  # Note [ATen names that are not the public name]
                    self.facts.add_mode("grad")
                    self.facts.backward_kernel = True
                self._record(mapped, "function", node, kwargs, args)
            return
        if api == "torch.device" and args and isinstance(args[0], str):
            self.facts.add_device(args[0])
        self._mode_call(api, kwargs, args)
        if api in ("torch.isnan", "torch.isinf", "torch.isfinite"):
            self.facts.nan_checks += 1
        if api == "torch.full" and len(args) > 1 and args[1] in ("nan", "inf", "-inf"):
            self.facts.add_special(args[1])
        short = api.rsplit(".", 1)[-1]
        kind = "module" if api.startswith("torch.nn.") and short[:1].isupper() else "function"
        self._record(api, kind, node, kwargs, args)

    def _attribute_call(self, func: ast.Attribute, node: ast.Call, kwargs: dict[str, Any], args: list[Any]) -> None:
        method = func.attr
        key = self._instance_key(func.value)
        if key and key in self.instances:
            if method in ("eval",):
                self.facts.eval_called = True
            elif method in ("half", "bfloat16"):
                self.facts.add_dtype(DTYPE_METHODS[method])
            elif method in ACCELERATORS:
                self.facts.add_device(method)
            elif method == "to":
                self._to_call(kwargs, args)
            return
        if method == "eval" and not node.args:
            self.facts.eval_called = True
            return
        if method == "backward":
            self.facts.add_mode("grad")
            if isinstance(func.value, ast.Call):
                self.loss_nodes.add(id(func.value))
        if method in DTYPE_METHODS and not node.args and not node.keywords:
            self.facts.add_dtype(DTYPE_METHODS[method])
        elif method == "to":
            self._to_call(kwargs, args)
        elif method in (*ACCELERATORS, "cpu"):
            self.facts.add_device(method)
        elif method == "contiguous" or method == "clone" and isinstance(func.value, ast.Subscript) and (
                _inner_index(func.value.slice)):
            # ``x[:, 2].clone()`` packs a column's elements as ``.contiguous()`` does (a clone of a dense view
            # keeps its strides, one with gaps does not)
            self.facts.contiguous_calls += 1
        elif method in LAYOUT_METHODS:
            self.facts.layout_calls.append(method)
        elif method in ("isnan", "isinf", "isfinite"):
            self.facts.nan_checks += 1
        if method not in tensor_method_names():
            return
        if method.endswith("_") and not method.endswith("__") and method not in ("requires_grad_", "fill_", "zero_", "copy_", "uniform_", "normal_"):
            self.facts.inplace_methods.append(method)
            if isinstance(func.value, ast.Name) and func.value.id in self.expanded_names:
                self.facts.inplace_on_expanded = True
            if _reads_a_view_of(func.value, list(node.args)):
                self.facts.inplace_overlaps = True
        api = f"torch.{method}" if torch_function_exists(method) and not method.endswith("_") else f"torch.Tensor.{method}"
        receiver = func.value.id if isinstance(func.value, ast.Name) else None
        self._record(api, "method", node, kwargs, args, receiver)
        if id(node) in self.loss_nodes:
            self.facts.calls[-1].feeds_backward = True
        difference = _on_difference(self, func.value)
        if difference is not None:
            self.facts.calls[-1].measures_difference = True
            self.measured_differences.add(id(difference))

    def _to_call(self, kwargs: dict[str, Any], args: list[Any]) -> None:
        for value in [*args, kwargs.get("dtype"), kwargs.get("device"), kwargs.get("memory_format")]:
            if not isinstance(value, str):
                continue
            if value.startswith((*ACCELERATORS, "cpu")):
                self.facts.add_device(value)
            elif value == "torch.channels_last":
                self.facts.memory_format_channels_last = True
            elif value.startswith("torch.") and value.split(".")[-1] in DTYPE_NAMES:
                self.facts.add_dtype(DTYPE_NAMES[value.split(".")[-1]])

    def _instance_call(self, api: str, node: ast.Call) -> None:
        if not api.startswith("user:"):
            self._record(api, "module", node, {}, [])


# A mode line the reporter commented out to show the difference ("#@torch.jit.script", "# f = torch.compile(f)")
_COMMENTED_MODE = re.compile(r"^[^\S\n]*#[^\S\n]*@?[^\n#]*?\btorch\.(jit\.script|jit\.trace|compile)\b", re.M)
_COMMENTED_NAMES = {"jit.script": "jit.script", "jit.trace": "jit.trace", "compile": "compile:inductor"}


# Note [What a repro prints]
# A repro that prints the difference of two results, or two results side by side, shows its evidence even
# when its prose says nothing ("I get the outputs below"). Only what is printed counts: a difference
# computed and never shown is arithmetic, not a comparison. A difference is a subtraction of two
# non-literal operands, ``.sub``/``torch.sub`` of them, a distance call (``torch.dist``), or an element-wise
# equality of two results (``print(a == b)``).
_DIFFERENCE_CALLS = frozenset({"sub", "subtract", "dist"})


# Note [Slice writes as a last resort]
# ``dst[:] = src[1]`` and ``y[:, 1] = z`` write through a view: ``Tensor.__setitem__`` with a basic index takes
# the view and runs ``copy_`` into it, so the public op is torch.Tensor.copy_ (an index with a tensor or a mask
# is index_put_, read apart). Most repros also write set-up values this way (``x[0] = float("nan")``,
# ``w[:, 0] = 1``): a write of a number, a known int or a constant is a fill and is not read. A write of
# anything else joins the operators as kind "write", read after them and only when no named call is left.

# Note [Operators as a last resort]
# ``v1 + v2`` and ``scores - mask * 1e6`` run torch.add / torch.sub / torch.mul when their operands are tensors,
# and some reports are about nothing else. The AST cannot tell a tensor from a number, so an arithmetic operator
# with an operand that is not a literal or a known int is kept apart (``CodeFacts.operators``), never among the
# calls: the API chooser reads it only when no named call is left (select.py), and nothing else counts it as a
# torch call (a snippet of plain arithmetic is not a repro).
_ARITHMETIC: dict[type, str] = {
    ast.Add: "torch.add", ast.Sub: "torch.sub", ast.Mult: "torch.mul", ast.Div: "torch.div",
    ast.Pow: "torch.pow", ast.FloorDiv: "torch.floor_divide", ast.Mod: "torch.remainder",
}
# A comparison of tensors runs the comparison op (``t[2:] <= t[:2]`` is torch.le); Note [Comparisons as operators].
_COMPARISONS: dict[type, str] = {
    ast.Lt: "torch.lt", ast.LtE: "torch.le", ast.Gt: "torch.gt", ast.GtE: "torch.ge", ast.Eq: "torch.eq",
    ast.NotEq: "torch.ne",
}
# Methods that turn a comparison into a check (``(a == b).all()``), not a computation under test.
_CHECKING_METHODS = frozenset({"all", "any", "item", "sum", "nonzero", "count_nonzero", "float", "mean", "tolist"})
# A bare bitwise operator (``1 << torch.arange(10)``, ``torch.tensor(bits) & 3``) runs the bitwise op when an
# operand is a torch function's result; on any other operands it is as often a set or an int (``1 << n``).
_BITWISE: dict[type, str] = {
    ast.BitOr: "torch.bitwise_or", ast.BitAnd: "torch.bitwise_and", ast.BitXor: "torch.bitwise_xor",
    ast.LShift: "torch.bitwise_left_shift", ast.RShift: "torch.bitwise_right_shift",
}
# An augmented bitwise update (``mask[i] |= hit``, ``bits ^= 5``) runs the bitwise op on its target; a bare
# ``a | b`` is as often a set, a dict merge or a type annotation, so it is not read.
_AUGMENTED: dict[type, str] = {
    **_ARITHMETIC, **_BITWISE}


def _reduces(node: ast.AST) -> bool:
    """A side of a comparison computed by a reduction or a comparator (``.max()``, ``.item()``, ``torch.dist``)."""
    return any(isinstance(leaf, ast.Call) and (
        isinstance(leaf.func, ast.Attribute) and leaf.func.attr in {*_CHECKING_METHODS, "max", "min", "abs", "norm",
                                                                    "dist", "allclose", "equal", "isclose"}
        or isinstance(leaf.func, ast.Name) and leaf.func.id in ("abs", "max", "min", "len"))
        for leaf in ast.walk(node))


def _on_difference(scanner: _Scanner, receiver: ast.AST) -> ast.BinOp | None:
    """The difference of two results at the root of a method chain, ``(a - b).abs().max()``, or None."""
    while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute):
        receiver = receiver.func.value
    return receiver if isinstance(receiver, ast.BinOp) and _is_difference(scanner, receiver) else None


def _is_difference(scanner: _Scanner, node: ast.AST) -> bool:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return not isinstance(node.left, ast.Constant) and not isinstance(node.right, ast.Constant)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq):
        # print(a == b): the two results compared, element by element
        return not isinstance(node.left, ast.Constant) and not isinstance(node.comparators[0], ast.Constant)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _DIFFERENCE_CALLS:
        qualified = scanner.qualify(node.func) or ""
        return (len(node.args) >= 2 if qualified.startswith("torch") else len(node.args) >= 1)
    return False


_TRANSPOSING = frozenset({"t", "transpose", "permute", "swapaxes", "movedim"})


def _inner_index(index: ast.AST, int_names: set[str] | frozenset[str] = frozenset()) -> bool:
    """An integer index on an inner dimension after a slice or ``...`` of an outer one (``x[:, 2]``, ``x[..., 0]``,
    ``x[1:, 0]``, ``x[:, i]`` with ``i`` a name bound to an int): the selected elements are not adjacent in memory."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    opened = False
    for part in parts:
        if isinstance(part, ast.Slice) or isinstance(part, ast.Constant) and part.value is Ellipsis:
            opened = True
        elif opened and (isinstance(part, ast.Constant) and type(part.value) is int or isinstance(
                part, ast.UnaryOp) and isinstance(part.op, ast.USub) and isinstance(part.operand, ast.Constant)
                or isinstance(part, ast.Name) and part.id in int_names):
            return True
    return False


def _strided_view(node: ast.AST, int_names: set[str] | frozenset[str] = frozenset()) -> bool:
    """A view whose elements are not packed: a slice with a step (``x[::4]``), a bounded slice of an inner dimension
    (``z[:, 128:384]``, ``b[0, :3, 2:]``), a column (``y[:, 0]``, ``y[:, i]``), ``x.t()``, ``x.T`` or a permutation.
    What an out= tensor like that is written through is its strides, not only its values."""
    if isinstance(node, ast.Subscript):
        index = node.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if _inner_index(index, int_names):
            return True
        return any(isinstance(part, ast.Slice) and (part.step is not None or position > 0 and (
            part.lower is not None or part.upper is not None)) for position, part in enumerate(parts))
    if isinstance(node, ast.Attribute):
        return node.attr in ("T", "mT", "mH", "H")
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _TRANSPOSING


# methods whose result shares its receiver's memory
_VIEW_METHODS = _TRANSPOSING | frozenset({"view", "view_as", "expand", "expand_as", "narrow", "select", "squeeze",
                                          "unsqueeze", "diagonal", "unfold", "as_strided", "unflatten", "detach"})


def _view_base(node: ast.AST) -> str | None:
    """The name whose memory an expression is a view of (``x``, ``x[0, :3]``, ``x.t()``, ``x.T``), else None."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Subscript) or isinstance(node, ast.Attribute) and node.attr in ("T", "mT", "mH", "H"):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEW_METHODS:
            node = node.func.value
        else:
            return None


def _sliced(node: ast.AST) -> bool:
    """A subscript with a range in it (``x[1:]``, ``x[:, :-1]``): views of one tensor like that can share elements;
    ``x[0]`` and ``x[1]`` cannot."""
    if not isinstance(node, ast.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(isinstance(part, ast.Slice) and (part.lower is not None or part.upper is not None) for part in parts)


def _reads_a_view_of(written: ast.AST, operands: list[ast.AST]) -> bool:
    """An operand of an in-place write into ``written`` (a name, or a view of one: ``a[1:]``) is another view of
    the same memory (``a -= a[:1]``, ``x.add_(x.t())``, ``a[1:].sub_(a[:-1])``): the kernel reads memory it is
    writing. The written tensor itself (``a -= a``, ``a[1:].mul_(a[1:])``) reads each element before it writes it."""
    base = _view_base(written)
    if base is None:
        return False
    spelled = ast.dump(written)
    return any(_view_base(op) == base and ast.dump(op) != spelled for op in operands)


def _out_overlaps(outs: list[ast.AST], args: list[ast.AST]) -> bool:
    """out= writes into memory the call also reads (``torch.add(x, y, out=x)``) or into one tensor twice
    (``out=(t, t)``): the kernel's result depends on the order it reads and writes."""
    written = [base for base in map(_view_base, outs) if base is not None]
    read = {base for base in map(_view_base, args) if base is not None}
    return len(set(written)) < len(written) or any(base in read for base in written)


def commented_modes(source: str) -> list[str]:
    """Modes named on commented-out lines of a snippet: the reporter toggles them to compare."""
    return [_COMMENTED_NAMES[m.group(1)] for m in _COMMENTED_MODE.finditer(source)]


# Note [Layers built and never run]
# Models in reports (many written by fuzzers or cut down from larger code) often build layers in ``__init__`` that
# ``forward`` never calls: ``self.conv1 = nn.Conv2d(...)`` beside a forward of ``interpolate`` and ``inverse``. Such
# a construction runs no tensor through the layer, so it is not the code under test, yet it counts as a call and,
# built three times, outranks the ops forward runs. A module class built in ``__init__`` and assigned to an
# attribute that no code of the snippet reads again (``self.conv1(x)``, ``model.conv1.weight``) is dropped from
# the calls. A class that reaches its layers by other means (getattr, children(), modules(), _modules, __dict__)
# keeps them all.
_DYNAMIC_LAYER_ACCESS = frozenset({"children", "named_children", "modules", "named_modules", "_modules",
                                   "__dict__", "parameters", "named_parameters", "state_dict", "apply"})


def _drop_unused_layers(tree: ast.Module, facts: CodeFacts) -> None:
    read: set[str] = set()
    dynamic = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            read.add(node.attr)
            dynamic |= node.attr in _DYNAMIC_LAYER_ACCESS
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "vars"):
            dynamic = True
    if dynamic:
        return
    unused: list[tuple[int, int]] = []  # line spans of the unused constructions
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        for init in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"):
            for stmt in ast.walk(init):
                if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call):
                    continue
                attrs = [t.attr for t in stmt.targets if isinstance(t, ast.Attribute)
                         and isinstance(t.value, ast.Name) and t.value.id == "self"]
                if attrs and len(attrs) == len(stmt.targets) and not any(a in read for a in attrs):
                    unused.append((stmt.value.lineno, getattr(stmt.value, "end_lineno", None) or stmt.value.lineno))
    if unused:
        facts.calls = [c for c in facts.calls if not (c.in_constructor and c.kind == "module" and any(
            first <= c.line <= last for first, last in unused))]


def scan_tree(tree: ast.Module, *, session: bool = False) -> CodeFacts:
    """Facts of one parsed snippet; ``session`` when it was typed at a prompt (``>>>``, ``In [1]:``).

    At a prompt the interpreter shows the value of every expression statement: ``a.sub(b)`` on a line of its own
    shows a value as a print would (Note [What a repro prints]), while the call in it stays a call of the code,
    not one set aside inside print().
    """
    aliases = dict(DEFAULT_ALIASES)
    aliases.update(_collect_aliases(tree))
    aliases.update(_bare_module_classes(tree, aliases))
    scanner = _Scanner(aliases)
    scanner.visit(tree)
    scanner.mark_shared_draws()
    _drop_unused_layers(tree, scanner.facts)
    if session:
        for statement in tree.body:
            value = statement.value if isinstance(statement, ast.Expr) else None
            if value is None or isinstance(value, ast.Constant) or (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "print"):
                continue
            scanner.facts.printed_values += 1
            if any(_is_difference(scanner, leaf) for leaf in ast.walk(value)):
                scanner.facts.prints_difference = True
    return scanner.facts
