"""Reading files a user gives the tool (WGSL, TOML, `.npy`, `.npz`): only regular files, never more
than a stated size, and any failure as the caller's own one-line error naming the file.

Every reader of user files goes through here, so a named pipe cannot hang a command (it is refused
by name before anything blocks on it), and no library exception (a `RecursionError` from deeply
nested TOML, an `EOFError` from an empty `.npy`, a `MemoryError`) escapes as a traceback. `error` is
the exception class the caller raises (`CorpusError`, `FixtureError`, `UserError`, ...).
"""

from __future__ import annotations

import math
import os
import stat
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO

import numpy as np

from workbench.errors import WorkbenchError

ErrorType = Callable[[str], WorkbenchError]

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def files_under(root: Path, suffix: str) -> list[Path]:
    """Every entry below folder `root` whose name ends in `suffix` and is not a folder, sorted,
    as `root.rglob("*" + suffix)` finds them (symlinked folders are not entered, unreadable ones
    skipped) but walked with a list instead of recursion, so a tree 1,000 folders deep is read
    like any other instead of raising RecursionError."""
    found, todo = [], [root]
    while todo:
        folder = todo.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(Path(entry.path))
                    elif entry.name.endswith(suffix) and not entry.is_dir():
                        found.append(Path(entry.path))
        except OSError:
            continue
    return sorted(found)


def one_line(text: str) -> str:
    """`text` with its line breaks folded, so quoted file content cannot break a message."""
    return " ".join(str(text).split())


def describe(exc: BaseException) -> str:
    """A library exception in a few words: its own text, or its kind when it has none."""
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if isinstance(exc, MemoryError):
        return "too large to hold in memory"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = one_line(str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextmanager
def guarded(where: str | Path, error: ErrorType, doing: str = "cannot read") -> Iterator[None]:
    """Any exception raised inside becomes `error("WHERE: DOING (why)")`; the tool's own pass."""
    try:
        yield
    except WorkbenchError:
        raise
    except Exception as exc:
        raise error(f"{where}: {doing} ({describe(exc)})") from None


def open_regular(path: str | Path, error: ErrorType) -> BinaryIO:
    """`path` opened for binary reading, refused unless it is a regular file.

    Opening is non-blocking, so a named pipe without a writer is refused instead of waited on.
    """
    where = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise error(f"{where}: no such file") from None
    except OSError as exc:
        raise error(f"{where}: cannot read ({describe(exc)})") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "a special file")
            raise error(f"{where}: cannot read {kind}; only regular files are read")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | Path, error: ErrorType, limit: int) -> bytes:
    """The whole file, refused if it is not a regular file or is larger than `limit` bytes."""
    with open_regular(path, error) as fh, guarded(path, error):
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise error(f"{path}: {size:,} bytes is more than such a file may be ({limit:,})")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise error(f"{path}: grew past {limit:,} bytes while being read")
    return data


def read_text(path: str | Path, error: ErrorType, limit: int) -> str:
    """The file as UTF-8 text (see `read_bytes`)."""
    data = read_bytes(path, error, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: is not UTF-8 text (byte {exc.start})") from None


def parse_toml(text: str, where: str | Path, error: ErrorType) -> dict[str, Any]:
    """TOML text as a dict; any failure (syntax, absurd nesting) is one `error` line."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{where}: not valid TOML ({one_line(str(exc))})") from None
    except Exception as exc:
        raise error(f"{where}: not usable TOML ({describe(exc)})") from None


def read_toml(path: str | Path, error: ErrorType, limit: int = 1 << 20) -> dict[str, Any]:
    """A TOML file as a dict: regular file, at most `limit` bytes, UTF-8, valid TOML."""
    return parse_toml(read_text(path, error, limit), path, error)


_PICKLE = "holds Python objects (a pickle); only plain numeric arrays are read"


def read_npy_header(
    fh: IO[bytes], where: str | Path, error: ErrorType, pickle: str = _PICKLE
) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran_order, dtype) from an `.npy` stream, nothing of the data read yet.

    The one reader of `.npy` headers (inputs, fixture archives): numpy.lib.format parses the
    header; a header of object dtype is refused with `WHERE PICKLE` before anything else is read.
    """
    fmt = np.lib.format
    with guarded(where, error, "not a readable .npy file"):
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh)
        else:
            raise error(f"{where}: .npy format {version} is not 1.0 or 2.0")
    if dtype.hasobject:
        raise error(f"{where} {pickle}")
    if any(int(n) < 0 for n in shape):
        raise error(f"{where}: not a readable .npy file (its header gives the shape {shape})")
    return tuple(int(n) for n in shape), bool(fortran), dtype


def read_npy_data(
    fh: IO[bytes],
    shape: tuple[int, ...],
    fortran: bool,
    dtype: np.dtype,
    where: str | Path,
    error: ErrorType,
) -> np.ndarray:
    """The data after `read_npy_header`: exactly as many bytes as the header says, or an error."""
    nbytes = math.prod(shape) * dtype.itemsize
    with guarded(where, error):
        data = fh.read(nbytes + 1)
    if len(data) != nbytes:
        state = "truncated" if len(data) < nbytes else "longer than its header says"
        raise error(f"{where}: {state} ({len(data):,} bytes of data, the header says {nbytes:,})")
    with guarded(where, error, "not a readable .npy file"):
        arr = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
        # A writable C-ordered copy (np.ascontiguousarray would make a 0-d array 1-d).
        return np.array(arr, order="C")
