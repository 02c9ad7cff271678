"""Files leave a worker's folder only as regular files created there (fuzz_core/safe_files.py), on real files:
a planted symlink, a link on the way, a FIFO, a device, an oversize file and a `..` path are refused with a
message that names the path; a regular file is read. Issue 22, item 1."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from fuzz_core.safe_files import (UnsafeFile, confine_evidence_paths, copy_regular, expected_folder, read_regular,
                                  worker_folder)
from fuzz_core.saved_inputs import load_inputs_file


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A worker's folder as the pool lays it out: <pool>/tf_workerN_XXXX/home/task_*/."""
    folder = tmp_path / "pool" / "tf_worker0_abcd" / "home"
    (folder / "task_1_x").mkdir(parents=True)
    return folder


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    secret = tmp_path / "host" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("HOST-SECRET")
    return secret


def test_a_regular_file_in_the_workers_folder_is_read_and_copied(home: Path, tmp_path: Path) -> None:
    saved = home / "task_1_x" / "inputs_1.safetensors"
    saved.write_bytes(b"payload")
    assert worker_folder(saved) == home and expected_folder(saved) == home
    assert read_regular(saved) == b"payload"
    copy_regular(saved, tmp_path / "copy.safetensors")
    assert (tmp_path / "copy.safetensors").read_bytes() == b"payload"


def test_a_planted_symlink_to_a_host_file_is_refused_and_named(home: Path, host_file: Path, tmp_path: Path) -> None:
    planted = home / "task_1_x" / "inputs_1.safetensors"
    planted.symlink_to(host_file)
    target = tmp_path / "export" / "inputs_1.safetensors"
    target.parent.mkdir()
    for read in (lambda: read_regular(planted), lambda: copy_regular(planted, target)):
        with pytest.raises(UnsafeFile, match="symbolic link") as refused:
            read()
        assert str(planted) in str(refused.value)
    assert not target.exists() and host_file.read_text() == "HOST-SECRET"


def test_a_link_on_the_way_is_refused(home: Path, host_file: Path) -> None:
    (home / "task_2_y").symlink_to(host_file.parent, target_is_directory=True)
    path = home / "task_2_y" / "secret.txt"
    with pytest.raises(UnsafeFile, match="not a plain folder") as refused:
        read_regular(path)
    assert str(path) in str(refused.value)


def test_dot_dot_and_paths_outside_the_folder_are_refused(home: Path, host_file: Path) -> None:
    escape = f"{home}/task_1_x/../../../host/secret.txt"
    with pytest.raises(UnsafeFile, match=r"contains '\.\.'"):
        read_regular(escape)
    with pytest.raises(UnsafeFile, match="outside the folder"):
        read_regular(host_file, home)


def test_a_fifo_is_refused_without_blocking(home: Path) -> None:
    fifo = home / "task_1_x" / "inputs_1.safetensors"
    os.mkfifo(fifo)
    outcome: list[BaseException | bytes] = []
    reader = threading.Thread(target=lambda: outcome.append(_catch(lambda: read_regular(fifo))), daemon=True)
    reader.start()
    reader.join(60)  # a blocking open would wait for a writer forever
    if reader.is_alive():  # unblock the reader so the thread ends, then fail
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading a FIFO blocked")
    [error] = outcome
    assert isinstance(error, UnsafeFile) and "a FIFO" in str(error) and str(fifo) in str(error)


def _catch(action):  # type: ignore[no-untyped-def]
    try:
        return action()
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        return exc


def test_a_device_node_is_refused(home: Path) -> None:
    device = home / "task_1_x" / "inputs_1.safetensors"
    os.mknod(device, 0o600 | 0o020000, os.makedev(1, 3))  # /dev/null's numbers; we are root in these tests
    with pytest.raises(UnsafeFile, match="character device"):
        read_regular(device)


def test_an_oversize_file_is_refused(home: Path) -> None:
    big = home / "task_1_x" / "outputs_1.safetensors"
    with open(big, "wb") as f:
        f.truncate(4096 + 1)
    with pytest.raises(UnsafeFile, match="4097 bytes, more than the 4096") as refused:
        read_regular(big, max_bytes=4096)
    assert str(big) in str(refused.value)
    assert len(read_regular(big, max_bytes=4097)) == 4097


def test_saved_inputs_loader_refuses_a_link(home: Path, host_file: Path) -> None:
    planted = home / "task_1_x" / "inputs_1.safetensors"
    planted.symlink_to(host_file)
    with pytest.raises(UnsafeFile, match="symbolic link"):
        load_inputs_file(str(planted))


def test_a_workers_answer_naming_a_host_file_loses_that_path(home: Path, host_file: Path) -> None:
    inside = str(home / "task_1_x" / "inputs_1.safetensors")
    evidence = {"inputs_path": str(host_file), "minimised": {"inputs_path": inside},
                "outputs_path": f"{home}/../../etc/passwd"}
    refused = confine_evidence_paths(evidence, home)
    assert evidence["inputs_path"] is None and evidence["outputs_path"] is None
    assert evidence["minimised"]["inputs_path"] == inside
    assert len(refused) == 2 and evidence["refused_paths"] == refused
    assert any(str(host_file) in line for line in refused)
