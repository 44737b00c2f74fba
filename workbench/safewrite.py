"""Writing files: every file workbench writes (fixtures, outputs, exports, JUnit XML, `workbench.toml`
edits, its own state) goes through here, so none is ever left half-written or written where it
should not be.

- The bytes go to a temporary file in the same folder (`.NAME.PID.RANDOM.tmp`), are flushed to the
  disk, and only then renamed into place: a reader sees the old file or the new one, never half;
  on a full disk the old file survives.
- The temporary file is removed on any failure, on Ctrl-C, and on SIGTERM or SIGHUP (a handler
  removes this process's temporaries, then lets the signal end the process as it would have).
- A name that is a symbolic link is refused (workbench never creates links, so a link there is
  not its own), and nothing is written through one: the rename replaces a name, never follows it.
- An existing file is replaced only when the caller says so (`overwrite`: `--force` on the
  command line, a confirmation in the UI); without it, a file that appears while writing is not
  replaced either (the new name is claimed with a hard link, which fails if the name exists).

A refusal is one `UserError` line naming the file. The TOML files workbench creates (fixture
manifests, the UI's remembered state) get their text from `toml_text` (tomlkit), so every string and
key is quoted as TOML needs, whatever it holds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from workbench.errors import Advice, UserError, WorkbenchError

if TYPE_CHECKING:
    from tomlkit.items import Item


class FileExistsRefused(UserError, FileExistsError):
    """The file exists and replacing it was not asked for."""


def _read_umask() -> int:
    # Read once at import: os.umask can only be read by setting it, which is not thread-safe.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()
# This process's temporaries, removed by the signal handler.
_temps: set[str] = set()
_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_installed: dict[int, Any] = {}


def _on_signal(signum: int, frame: object) -> None:
    for tmp in list(_temps):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    previous = _installed.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
        return
    # As the signal would have without this handler: the process ends by it.
    signal.signal(signum, previous)
    os.kill(os.getpid(), signum)


def clean_up_on_signals() -> None:
    """Remove this process's temporaries on SIGTERM and SIGHUP (from the main thread; once)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _SIGNALS:
        if sig in _installed:
            continue
        previous = signal.getsignal(sig)
        if previous is signal.SIG_IGN:
            continue
        # None: a handler not installed from Python, which cannot be called from here.
        _installed[sig] = signal.SIG_DFL if previous is None else previous
        signal.signal(sig, _on_signal)


def refuse_unwritable(path: Path, overwrite: bool) -> None:
    """Refuse now (one line) what `staged` would refuse: a link, a non-file, or an existing file
    without `overwrite`; so a command can check all its files before writing any."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
    if stat.S_ISLNK(st.st_mode):
        raise UserError(
            f"{path} is a symbolic link; workbench does not write through links "
            "(remove it or give another name)"
        )
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"{path} exists and is not a regular file; give another name")
    if not overwrite:
        raise FileExistsRefused(f"{path} already exists", advice=Advice.OVERWRITE)


class Staged:
    """A file written to its temporary name, waiting to be given its own (`land`)."""

    def __init__(self, path: Path, tmp: str, overwrite: bool, mode: int) -> None:
        self.path = path
        self.tmp = tmp
        self.overwrite = overwrite
        self.mode = mode

    def land(self) -> None:
        """Rename the temporary into place (exclusively unless overwriting); one UserError line
        if the name became a link or, without overwrite, a file meanwhile."""
        refuse_unwritable(self.path, self.overwrite)
        try:
            if self.overwrite:
                os.replace(self.tmp, self.path)
            else:
                _land_exclusive(self.tmp, self.path)
        except FileExistsError:
            raise FileExistsRefused(
                f"{self.path} already exists", advice=Advice.OVERWRITE
            ) from None
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write ({exc.strerror or exc})") from None
        _sync_folder(self.path.parent)


def _land_exclusive(tmp: str, final: Path) -> None:
    """Give `tmp` the name `final` only if nothing has that name. A hard link is atomic and
    exclusive; the temporary's own name is removed afterwards (by `staged`)."""
    try:
        os.link(tmp, final)
    except FileExistsError:
        raise
    except OSError:
        # No hard links on this file system: claim the name exclusively, then replace it.
        os.close(os.open(final, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        os.replace(tmp, final)


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def staged(
    path: str | Path, write: Callable[[BinaryIO], object], *, overwrite: bool
) -> Iterator[Staged]:
    """`write(fh)` into a temporary file beside `path`, flushed to disk; the caller `land`s it.

    The temporary is removed when the block ends, however it ends. Refuses (one UserError line)
    a link, a folder, or an existing file without `overwrite`, before anything is written.
    """
    path = Path(path)
    refuse_unwritable(path, overwrite)
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        existing = os.stat(path).st_mode & 0o777 if os.path.lexists(path) else None
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
    clean_up_on_signals()
    # The process id in the name lets a later write tell a killed writer's leftovers apart.
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
    _temps.add(tmp)
    try:
        # mkstemp makes 0600 files; a new file gets the usual mode (umask applies), a replaced
        # one keeps its own.
        mode = existing if existing is not None else 0o666 & ~_UMASK
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        yield Staged(path, tmp, overwrite, mode)
    except WorkbenchError:
        raise
    except OSError as exc:
        raise UserError(f"{path}: cannot write ({exc.strerror or exc})") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _temps.discard(tmp)


def write_file(path: str | Path, write: Callable[[BinaryIO], object], *, overwrite: bool) -> Path:
    """`write(fh)` into `path` atomically (see the module's docstring); returns the path."""
    with staged(path, write, overwrite=overwrite) as s:
        s.land()
    return s.path


def write_text(path: str | Path, text: str, *, overwrite: bool) -> Path:
    """`text` (UTF-8) into `path` atomically."""
    data = text.encode("utf-8")
    return write_file(path, lambda fh: fh.write(data), overwrite=overwrite)


def toml_text(data: Mapping[str, Any], comment: str = "") -> str:
    """TOML text for nested mappings of str/int/float/bool/lists (tomllib reads it back equal),
    `comment` (one or more lines) first as `#` lines.

    Mappings become tables (plain keys first, as TOML needs), mappings inside lists inline tables;
    non-finite floats are TOML's nan/inf; numpy scalars are written as the Python value they hold.
    """
    # Imported here, not at the top: most writers write no TOML, and a `workbench list` (which
    # writes its caches as JSON) should not pay for importing tomlkit.
    import tomlkit

    doc = tomlkit.document()
    for line in comment.splitlines():
        doc.add(tomlkit.comment(line))
    for key, value in data.items():
        doc.add(key, _toml_item(value, in_list=False))
    return tomlkit.dumps(doc)


def _toml_item(value: Any, *, in_list: bool) -> Item:
    import tomlkit
    from tomlkit.items import Array, InlineTable, Table

    if isinstance(value, Mapping):
        table: Table | InlineTable = tomlkit.inline_table() if in_list else tomlkit.table()
        for key, inner in value.items():
            table.add(key, _toml_item(inner, in_list=in_list))
        return table
    if isinstance(value, list | tuple):
        array: Array = tomlkit.array()
        array.extend(_toml_item(v, in_list=True) for v in value)
        return array
    # numpy scalars (np.float32, np.int64, np.bool_) carry their Python value in `item()`.
    plain = value.item() if hasattr(value, "item") and not isinstance(value, bool) else value
    if not isinstance(plain, bool | int | float | str):
        raise TypeError(f"cannot write {type(value).__name__} as TOML")
    return tomlkit.item(plain)
