"""Context-free API semantics from torch introspection and the OpInfo index."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agent.extract.semantics import UnknownApiError, semantics_for
from tests.agent.extract.opinfo_cache import use_session_opinfo_cache


@pytest.fixture(scope="session")
def opinfo_cache(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return use_session_opinfo_cache(tmp_path_factory.mktemp("opinfo"))


def test_builtin_with_opinfo_domain_and_variants(opinfo_cache) -> None:  # type: ignore[no-untyped-def]
    s = semantics_for("torch.erfinv")
    assert s.category == "elementwise_unary"
    assert s.input_domain == "[-1, 1]"
    assert s.has_out and s.has_inplace and s.has_method
    assert {"float32", "float16", "bfloat16"} <= set(s.dtypes)
    assert [p.name for p in s.parameters][:1] == ["input"]


def test_python_function_parameters_get_roles(opinfo_cache) -> None:  # type: ignore[no-untyped-def]
    s = semantics_for("torch.nn.functional.avg_pool2d")
    roles = {p.name: p.role for p in s.parameters}
    assert roles["kernel_size"] == "kernel_size" and roles["padding"] == "padding" and roles["stride"] == "stride"
    assert roles["count_include_pad"] == "mode_flag"
    assert s.category == "pooling"
    assert "average" in s.summary.lower()


def test_module_class_and_tensor_method(opinfo_cache) -> None:  # type: ignore[no-untyped-def]
    pool = semantics_for("torch.nn.MaxPool2d")
    assert pool.category == "pooling" and {"kernel_size", "padding", "ceil_mode"} <= {p.name for p in pool.parameters}
    scatter = semantics_for("torch.Tensor.scatter_add_")
    assert scatter.category == "indexing" and {"dim", "index", "src"} <= {p.name for p in scatter.parameters}


def test_unknown_api() -> None:
    with pytest.raises(UnknownApiError):
        semantics_for("torch.no_such_op", use_opinfo=False)
    with pytest.raises(UnknownApiError):
        semantics_for("numpy.add", use_opinfo=False)


def test_opinfo_database_is_never_imported_in_the_calling_process(opinfo_cache, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a fresh interpreter: the OpInfo import would disable torch's global backend flags
    code = (
        "import sys\nfrom agent.extract import semantics_for\n"
        "semantics_for('torch.logit')\n"
        "assert 'torch.testing._internal.common_methods_invocations' not in sys.modules\n"
        "import torch\ntorch.backends.cudnn.allow_tf32 = False  # raises if global flags were disabled\n"
        "print('ok')"
    )
    import os

    env = {**os.environ, "TRANSFUZZ_CACHE_DIR": str(opinfo_cache)}
    semantics_for("torch.logit")  # make sure the index exists before the child looks
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_without_an_opinfo_index_semantics_fall_back_to_introspection(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from agent.extract import opinfo_index as oi

    blocker = tmp_path / "a-file"
    blocker.write_text("the cache directory cannot be created below a file")
    monkeypatch.setenv("TRANSFUZZ_CACHE_DIR", str(blocker / "cache"))
    oi.opinfo_index.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="introspection only"):
            s = semantics_for.__wrapped__("torch.logit")
        assert s.input_domain is None and s.dtypes == []
        assert s.has_inplace and s.has_method  # still known from torch itself
    finally:
        oi.opinfo_index.cache_clear()
