"""inductor's vector-ISA check, found once per machine (Note [The vector ISA check once per machine])."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import pytest

from fuzz_core.inductor_isa import ENV_VAR, check_vec_isa, machine_key
from fuzz_core.sandbox import worker_environment

x86_linux = pytest.mark.skipif(sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"),
                               reason="inductor's vector-ISA check is read on x86-64 Linux only")


def _record(cache: Path) -> Path:
    return cache / f"vec_isa_{machine_key()}.json"


@x86_linux
def test_the_check_runs_once_and_keeps_what_inductor_found(tmp_path: Path) -> None:
    answer = check_vec_isa(tmp_path)
    found = json.loads(_record(tmp_path).read_text())
    assert found["listed"], "an x86-64 CPU lists at least one vector ISA inductor knows"
    assert answer == (found["listed"] == found["valid"])


@x86_linux
def test_a_kept_answer_is_read_instead_of_checking_again(tmp_path: Path) -> None:
    # A machine whose AVX512 test library would not build: the kept answer says so, and it is what counts.
    _record(tmp_path).write_text(json.dumps({"listed": ["avx512", "avx2"], "valid": ["avx2"]}))
    assert check_vec_isa(tmp_path) is False
    _record(tmp_path).write_text(json.dumps({"listed": ["avx2"], "valid": ["avx2"]}))
    assert check_vec_isa(tmp_path) is True


@x86_linux
def test_a_damaged_record_is_checked_again_and_replaced(tmp_path: Path) -> None:
    _record(tmp_path).write_text('{"listed": ["avx2"')
    answer = check_vec_isa(tmp_path)
    found = json.loads(_record(tmp_path).read_text())
    assert answer == (bool(found["listed"]) and found["listed"] == found["valid"])


def test_workers_skip_the_check_only_where_the_machine_passed_it() -> None:
    common = dict(temp_dir=Path("/tmp/w"), package_root=Path("/r"), threads=1, inductor_cache=Path("/c"))
    assert worker_environment({"PATH": "/bin"}, vec_isa_ok=True, **common)[ENV_VAR] == "1"  # type: ignore[arg-type]
    assert ENV_VAR not in worker_environment({"PATH": "/bin"}, **common)  # type: ignore[arg-type]
    # the parent's own setting never leaks in: the environment is an allow-list
    assert ENV_VAR not in worker_environment({"PATH": "/bin", ENV_VAR: "1"}, **common)  # type: ignore[arg-type]
