"""Read a file a sandboxed worker wrote, without following anything the worker could have planted.

A worker's folder is writable from inside the sandbox, so by the time the parent reads a saved input or
output, the worker may have replaced it with a symlink to a host file (`inputs_1.safetensors -> /etc/shadow`),
a FIFO that blocks the reader, a device, or a file of many gigabytes. The stored path itself comes from the
worker's answer. So a file leaves a worker's folder only when: its path lies lexically inside the expected
folder (no `..`), every directory on the way is opened with O_NOFOLLOW (a planted directory link is refused),
the file itself is opened with O_NOFOLLOW|O_NONBLOCK, fstat says it is a regular file, and it is no larger
than a cap. The checks run on the open descriptor, so swapping the file after the check changes nothing.
See docs/trust_boundary.md.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, Iterator

MAX_ARTIFACT_BYTES = 256 * 1024 * 1024  # a saved input or output; honest ones are a few MiB at most
_WORKER_HOME = re.compile(r"^tf_worker\d+_[^/]+$")  # fuzz_core/workers.py: <pool>/tf_workerN_XXXX/home


class UnsafeFile(ValueError):
    """The file is not a regular file inside its expected folder, or it is too large; the message says which."""


def worker_folder(path: str | os.PathLike[str]) -> Path | None:
    """The `<pool>/tf_workerN_*/home` folder that holds ``path`` (lexically), or None when it is in none."""
    parts = Path(os.path.abspath(path)).parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "home" and _WORKER_HOME.match(parts[i - 1]):
            return Path(*parts[: i + 1])
    return None


def expected_folder(path: str | os.PathLike[str]) -> Path:
    """Where a stored artifact must lie: its worker's folder, or (a file saved outside any pool, e.g. by an
    in-process campaign) the folder that names it."""
    return worker_folder(path) or Path(os.path.abspath(path)).parent


def _relative_parts(path: Path, root: Path) -> list[str]:
    if not path.is_absolute() or not root.is_absolute():
        raise UnsafeFile(f"{path} is not an absolute path")
    if ".." in path.parts:
        raise UnsafeFile(f"{path} contains '..'")
    try:
        parts = list(path.relative_to(root).parts)
    except ValueError:
        raise UnsafeFile(f"{path} is outside the folder it must be in ({root})") from None
    if not parts:
        raise UnsafeFile(f"{path} is the folder itself, not a file in it")
    return parts


def open_regular(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None, *,
                 max_bytes: int = MAX_ARTIFACT_BYTES) -> int:
    """A read-only descriptor of ``path``, a regular file inside ``root`` (default: expected_folder); else UnsafeFile.

    The caller closes it. `root` itself is trusted (a folder the parent made); everything below it is not.
    """
    # abspath would fold `home/../../etc/passwd` into `/etc/passwd`: a `..` is refused before anything else.
    target = Path(path) if ".." in Path(path).parts else Path(os.path.abspath(path))
    base = Path(os.path.abspath(root)) if root is not None else expected_folder(target)
    parts = _relative_parts(target, base)
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise UnsafeFile(f"{path}: its folder {base} cannot be opened ({exc.strerror})") from None
    try:
        for name in parts[:-1]:
            try:
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as exc:
                raise UnsafeFile(f"{path}: {name!r} on the way is not a plain folder ({exc.strerror}); "
                                 f"links are never followed out of a worker's folder") from None
            os.close(fd)
            fd = child
        try:
            file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY,
                              dir_fd=fd)
        except OSError as exc:
            if os.path.islink(target):
                raise UnsafeFile(f"{path} is a symbolic link; links are never followed out of a worker's "
                                 f"folder") from None
            raise UnsafeFile(f"{path} cannot be opened ({exc.strerror})") from None
    finally:
        os.close(fd)
    try:
        info = os.fstat(file_fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFile(f"{path} is not a regular file ({_kind(info.st_mode)}); only regular files leave a "
                             f"worker's folder")
        if info.st_size > max_bytes:
            raise UnsafeFile(f"{path} is {info.st_size} bytes, more than the {max_bytes} a saved file may have")
        os.set_blocking(file_fd, True)
    except BaseException:
        os.close(file_fd)
        raise
    return file_fd


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None, *,
                 max_bytes: int = MAX_ARTIFACT_BYTES) -> bytes:
    """The bytes of a regular file inside ``root`` (see open_regular); never more than ``max_bytes``."""
    fd = open_regular(path, root, max_bytes=max_bytes)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew after the check
        raise UnsafeFile(f"{path} grew past the {max_bytes} bytes a saved file may have while it was read")
    return data


def copy_regular(path: str | os.PathLike[str], target: str | os.PathLike[str], root: str | os.PathLike[str] | None = None,
                 *, max_bytes: int = MAX_ARTIFACT_BYTES) -> None:
    """Copy a regular file from a worker's folder to ``target`` (written to a temporary name, then renamed)."""
    data = read_regular(path, root, max_bytes=max_bytes)
    target = Path(target)
    temporary = target.with_name(f".{target.name}.tmp")
    temporary.unlink(missing_ok=True)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(temporary, target)


def _path_fields(evidence: dict[str, Any], prefix: str = "") -> Iterator[tuple[dict[str, Any], str, str]]:
    for key, value in list(evidence.items()):
        if isinstance(value, dict):
            yield from _path_fields(value, f"{prefix}{key}.")
        elif isinstance(value, str) and key.endswith("_path"):
            yield evidence, key, prefix + key


def confine_evidence_paths(evidence: dict[str, Any], root: str | os.PathLike[str]) -> list[str]:
    """Drop every ``*_path`` in a worker's evidence that does not name a file lexically inside ``root``.

    A worker writes its own answer, so a hostile one could name any host file as its saved input. What was
    dropped is listed in ``evidence["refused_paths"]`` (and returned), so the finding says why it has no file.
    """
    base = Path(os.path.abspath(root))
    refused = []
    for holder, key, name in _path_fields(evidence):
        try:
            _relative_parts(Path(holder[key]), base)
        except UnsafeFile as exc:
            refused.append(f"{name}: {exc}")
            holder[key] = None
    if refused:
        evidence["refused_paths"] = refused
    return refused
