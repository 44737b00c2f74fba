"""Running a corpus's own reference code (`refs.py`) in a child process, so it cannot take the tool down.

A user's reference may call `sys.exit`, loop forever, print, change NumPy's error state or return
anything at all. None of that may reach the tool: each corpus gets one warm worker process
(started on first use, kept for the next call) that imports the corpus's reference modules and
calls their functions. Its stdout and stderr go to /dev/null, so nothing it prints reaches
`--json` output; every failure (an exception, an exit, a crash, a result that is not a dict of
arrays of the declared shapes, no answer within the time limit) is one `ReferenceCodeError` line
naming the file and the function. A waiting call is interruptible: Ctrl-C, `cancel_all()` (the
UI's cancel) and the end of the main thread (the UI's quit) stop the worker at once, and the
worker ends itself when the tool's process is gone, so it never outlives the tool.

The protocol: a request or reply is a 4-byte length, a JSON header, then the raw bytes of the
arrays the header lists (dtype and shape in the header, C order); no pickles either way. The
shipped kernels' references are trusted code and run in-process (workbench/specs/refs).

This module is also the worker's program (`python -m workbench.specs.refworker`); that side
imports nothing of workbench but `errors`, so it starts in a fraction of a second.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import inspect
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from workbench.errors import UserError
from workbench.interrupts import raise_if_pressed

# How long a reference (or importing its module) may take before the worker is stopped.
TIMEOUT_ENV = "WORKBENCH_REFERENCE_TIMEOUT"
DEFAULT_TIMEOUT_S = 300.0
# How often a waiting call looks at cancel, the main thread and the worker's health.
_POLL_S = 0.05
_CHUNK = 1 << 20
# At most this many workers keep running: past it the least recently used idle one is stopped (it
# starts again, importing afresh, on its next call), so a session over many corpora holds a few.
MAX_WARM = 4
_MAX_HEADER = 1 << 20
_DTYPES = ("float16", "float32", "float64", "int32", "uint32", "int64", "uint8")


class ReferenceCodeError(UserError):
    """A corpus's reference code failed; the message is one line naming the file and function."""


def timeout_s() -> float:
    """The time limit of one reference call or import, in seconds ($WORKBENCH_REFERENCE_TIMEOUT)."""
    text = os.environ.get(TIMEOUT_ENV, "")
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1e7:
        raise ReferenceCodeError(f"{TIMEOUT_ENV}={text!r}: give a number of seconds above 0")
    return value


def _line(text: object, limit: int = 300) -> str:
    """`text` on one line, cut to `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _exception(exc: BaseException) -> str:
    text = _line(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- the parent's side -----------------------------------------------------------------------------


class _Stopped(Exception):
    """The worker is gone or was stopped; the text says why, in the words after the label."""


class RefWorker:
    """One corpus's worker: imports its reference modules and calls their functions.

    Calls are serialised (one at a time per corpus). A worker that was stopped (timeout, cancel,
    crash) starts again, importing the same modules, on the next call.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: dict[str, Path] = {}  # file name -> path, in import order
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._cancelled = False
        self.last_used = 0.0

    # The public face: import, call, stop.
    def resolve(self, file: str, path: Path, function: str) -> str:
        """'' when `file` imports and has a callable `function`; else why not (one line)."""
        with self._lock:
            try:
                if file not in self.modules:
                    self._start()
                    reply, _ = self._ask(
                        {"op": "import", "file": file, "path": str(path)}, [], file
                    )
                    if "error" in reply:
                        return str(reply["error"])
                    self.modules[file] = path
                else:
                    self._start()
                reply, _ = self._ask({"op": "has", "file": file, "function": function}, [], file)
            except _Stopped as exc:
                return f"importing {file} {exc}"
            return "" if reply.get("ok") else f"{file} has no function {function}"

    def call(
        self,
        file: str,
        function: str,
        arrays: Mapping[str, np.ndarray],
        scalars: Mapping[str, float],
        outputs: Mapping[str, tuple[int, ...]],
        by_name: Mapping[str, float] | None = None,
    ) -> dict[str, np.ndarray]:
        """`file:function(**arrays (as float64), **scalars)`, checked to be a dict of float64
        arrays of the `outputs` shapes (a subset of them); ReferenceCodeError otherwise.

        `by_name` are values the function takes only if it names them as parameters (a uniform's
        field, `eps`): the worker reads the function's signature, so the tool never imports it."""
        label = f"{file}:{function}"
        names = list(arrays)
        sent = [np.ascontiguousarray(arrays[n]) for n in names]
        header = {
            "op": "call",
            "file": file,
            "function": function,
            "label": label,
            # dims are integers; uniform values a description maps may be floats (eps)
            "scalars": {k: _number(v) for k, v in scalars.items()},
            "by_name": {k: _number(v) for k, v in (by_name or {}).items()},
            "outputs": {k: list(v) for k, v in outputs.items()},
            "arrays": [_describe(n, a) for n, a in zip(names, sent, strict=True)],
        }
        with self._lock:
            try:
                self._start()
                reply, data = self._ask(header, sent, label, outputs)
            except _Stopped as exc:
                raise ReferenceCodeError(f"{label} {exc}") from None
        if "error" in reply:
            raise ReferenceCodeError(str(reply["error"]))
        return data

    def stop(self) -> None:
        """End the worker now (a waiting call raises); the next call starts a new one."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()

    def cancel(self) -> None:
        """Stop the worker and make the call waiting on it (if any) say it was cancelled."""
        self._cancelled = True
        self.stop()

    # The machinery.
    def _start(self) -> None:
        self.last_used = time.monotonic()
        if self._proc is not None and self._proc.poll() is None:
            return
        self._close()
        self._cancelled = False
        env = dict(os.environ)
        # The worker finds workbench where this process did; the modules it imports see this
        # process's sys.path, sent in the first request.
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
        self._proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "workbench.specs.refworker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            bufsize=0,
        )
        assert self._proc.stdin is not None
        os.set_blocking(self._proc.stdin.fileno(), False)
        _live.add(self)
        _trim(self)
        reply, _ = self._ask(
            {"op": "hello", "path": [p for p in sys.path if isinstance(p, str)]},
            [],
            "the reference worker",
        )
        if not reply.get("ok"):
            raise _Stopped("could not start the reference worker")
        for file, path in self.modules.items():
            reply, _ = self._ask({"op": "import", "file": file, "path": str(path)}, [], file)
            if "error" in reply:
                raise _Stopped(str(reply["error"]).removeprefix(f"importing {file} "))

    def _close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        _live.discard(self)

    def _ask(
        self,
        header: dict[str, Any],
        arrays: list[np.ndarray],
        label: str,
        outputs: Mapping[str, tuple[int, ...]] | None = None,
    ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """Send one request, wait for its reply; any failure on the way stops the worker."""
        deadline = time.monotonic() + timeout_s()
        try:
            body = json.dumps(header).encode()
            self._write(len(body).to_bytes(4, "little") + body, deadline)
            for a in arrays:
                self._write(_raw(a), deadline)
            size = int.from_bytes(self._read(4, deadline), "little")
            if size > _MAX_HEADER:
                raise _Stopped("sent an unreadable reply")
            reply = json.loads(self._read(size, deadline))
            data = {}
            for entry in reply.get("arrays", []):
                name, shape = entry["name"], tuple(entry["shape"])
                if outputs is None or outputs.get(name) != shape or entry["dtype"] != "float64":
                    raise _Stopped("sent an unreadable reply")
                out = np.empty(shape, dtype=np.float64)
                self._read_into(_raw(out), deadline)
                data[name] = out
            return reply, data
        except BaseException:
            self._close()
            raise

    def _wait(self, write: bool, deadline: float) -> None:
        """Until the worker's pipe is ready; raises _Stopped on timeout, cancel, a dead worker or
        the end of the main thread, so a wait never outlasts what it waits for."""
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        fd = proc.stdin.fileno() if write else proc.stdout.fileno()
        while True:
            raise_if_pressed()
            if self._cancelled:
                raise _Stopped("was cancelled")
            if not threading.main_thread().is_alive():
                raise _Stopped("was stopped: the tool is exiting")
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Stopped(
                    f"did not finish within {timeout_s():g} s and was stopped ({TIMEOUT_ENV} "
                    "sets the limit in seconds)"
                )
            ready = select.select(
                [] if write else [fd], [fd] if write else [], [], min(left, _POLL_S)
            )
            if ready[0] or ready[1]:
                return
            code = proc.poll()
            if code is not None:
                raise _Stopped(self._why_gone(code))

    def _why_gone(self, code: int) -> str:
        # A worker killed by cancel() closes its pipe too: that is the cancel, not a crash.
        return "was cancelled" if self._cancelled else _ended(code)

    def _write(self, data: bytes | memoryview, deadline: float) -> None:
        proc = self._proc
        assert proc is not None and proc.stdin is not None
        view = memoryview(data)
        while view:
            self._wait(True, deadline)
            try:
                n = os.write(proc.stdin.fileno(), view[:_CHUNK])
            except BlockingIOError:
                continue
            except BrokenPipeError:
                raise _Stopped(self._why_gone(proc.wait())) from None
            view = view[n:]

    def _read(self, n: int, deadline: float) -> bytes:
        buf = bytearray(n)
        self._read_into(memoryview(buf), deadline)
        return bytes(buf)

    def _read_into(self, view: memoryview, deadline: float) -> None:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        while view:
            self._wait(False, deadline)
            n = os.readv(proc.stdout.fileno(), [view])
            if n == 0:
                raise _Stopped(self._why_gone(proc.wait()))
            view = view[n:]


def _ended(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"ended the reference process ({name})"
    return f"ended the reference process (exit code {code})"


def _number(v: float) -> float | int:
    return v if isinstance(v, float) else int(v)


def _raw(arr: np.ndarray) -> memoryview:
    """The bytes of a C-contiguous array, without a copy (0-d and empty arrays too)."""
    return arr.reshape(-1).view(np.uint8).data


def _describe(name: str, arr: np.ndarray) -> dict[str, Any]:
    return {"name": name, "dtype": str(arr.dtype), "shape": list(arr.shape)}


_registry: dict[Path, tuple[tuple[Any, ...], RefWorker]] = {}
_registry_lock = threading.Lock()
_live: set[RefWorker] = set()


def _trim(keep: RefWorker) -> None:
    """Stop the least recently used idle workers beyond MAX_WARM (never `keep`, never a busy one)."""
    others = sorted((w for w in list(_live) if w is not keep), key=lambda w: w.last_used)
    for worker in others[: max(0, len(others) + 1 - MAX_WARM)]:
        if worker._lock.acquire(blocking=False):
            try:
                worker._close()
            finally:
                worker._lock.release()


def _fingerprint(root: Path) -> tuple[Any, ...]:
    """What identifies the corpus's Python files as they are now (a change re-imports them)."""
    out = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(root), key=lambda e: e.name):
            if entry.name.endswith(".py"):
                with contextlib.suppress(OSError):
                    st = entry.stat()
                    out.append((entry.name, st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)


def worker_for(root: Path) -> RefWorker:
    """The warm worker of the corpus at `root`, a new one when its .py files changed since."""
    key = root.resolve()
    fingerprint = _fingerprint(key)
    with _registry_lock:
        known = _registry.get(key)
        if known is not None and known[0] == fingerprint:
            return known[1]
        if known is not None and known[1]._lock.acquire(blocking=False):
            try:
                known[1]._close()  # its files changed: the next call imports them afresh
            finally:
                known[1]._lock.release()
        worker = RefWorker(key)
        _registry[key] = (fingerprint, worker)
        return worker


def cancel_all() -> None:
    """Stop every worker; the calls waiting on them raise 'was cancelled'."""
    for worker in list(_live):
        worker.cancel()


def _stop_all() -> None:
    for worker in list(_live):
        worker._close()


atexit.register(_stop_all)


# -- the worker's side -----------------------------------------------------------------------------


class _Failed(Exception):
    """A failure of the user's code, already worded as the one line the tool shows."""


def _recv_exact(fd: int, n: int) -> memoryview:
    buf = memoryview(bytearray(n))
    got = 0
    while got < n:
        k = os.readv(fd, [buf[got:]])
        if k == 0:
            raise EOFError
        got += k
    return buf


def _send(fd: int, header: dict[str, Any], arrays: list[np.ndarray]) -> None:
    body = json.dumps(header).encode()
    parts = [memoryview(len(body).to_bytes(4, "little") + body), *(_raw(a) for a in arrays)]
    for view in parts:
        while view:
            view = view[os.write(fd, view) :]


def _import(modules: dict[str, Any], file: str, path: str) -> None:
    name = f"workbench_refs_{abs(hash(path))}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise _Failed(f"{file} cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except _Failed:
        raise
    except BaseException as exc:
        sys.modules.pop(name, None)
        raise _Failed(f"importing {file} raised {_exception(exc)}") from None
    modules[file] = module


def checked_outputs(
    label: str, result: object, outputs: Mapping[str, tuple[int, ...]]
) -> dict[str, np.ndarray]:
    """A reference's result as float64 arrays of the declared shapes, or `_Failed` saying why."""
    if not isinstance(result, Mapping):
        raise _Failed(
            f"{label} must return a dict of output arrays by name, got {type(result).__name__}"
        )
    names = ", ".join(outputs) or "none"
    out = {}
    try:
        items = list(result.items())
    except Exception as exc:
        raise _Failed(f"{label} returned a dict that cannot be read ({_exception(exc)})") from None
    for key, value in items:
        if not isinstance(key, str) or key not in outputs:
            raise _Failed(
                f"{label} returned {_line(repr(key), 60)}, which is not an output ({names})"
            )
        try:
            raw = np.asarray(value)
            if raw.dtype.kind not in "biuf":
                raise TypeError(f"its elements are {raw.dtype}, not real numbers")
            arr = raw.astype(np.float64)
        except Exception as exc:
            raise _Failed(
                f"{label} returned {key} that is not an array of numbers ({_exception(exc)})"
            ) from None
        want = tuple(outputs[key])
        if arr.shape != want:
            raise _Failed(
                f"{label} returned {key} with shape {arr.shape}; workbench.toml gives {want}"
            )
        out[key] = np.ascontiguousarray(arr)
    return out


def _call(
    modules: dict[str, Any], header: dict[str, Any], fd: int
) -> tuple[dict[str, Any], list[np.ndarray]]:
    label = header["label"]
    args: dict[str, Any] = {}
    for entry in header["arrays"]:
        if entry["dtype"] not in _DTYPES:
            raise _Failed(f"{label}: cannot pass an array of {entry['dtype']}")
        dtype = np.dtype(entry["dtype"])
        shape = tuple(entry["shape"])
        raw = _recv_exact(fd, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
        args[entry["name"]] = np.frombuffer(raw, dtype=dtype).reshape(shape).astype(np.float64)
    fn = getattr(modules[header["file"]], header["function"])
    outputs = {k: tuple(v) for k, v in header["outputs"].items()}
    try:
        args |= _named(fn, header["by_name"], set(args) | set(header["scalars"]))
        # NumPy's default error handling, whatever the module set at import (np.seterr): a
        # reference meets NaN and Inf in the special-values check and must let them through.
        with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"):
            result = fn(**args, **header["scalars"])
            arrays = checked_outputs(label, result, outputs)
    except _Failed:
        raise
    except BaseException as exc:
        raise _Failed(f"{label} raised {_exception(exc)}") from None
    names = list(arrays)
    return {"ok": True, "arrays": [_describe(n, arrays[n]) for n in names]}, [
        arrays[n] for n in names
    ]


def _named(fn: Any, values: Mapping[str, Any], given: set[str]) -> dict[str, Any]:
    """The `values` whose names are parameters of `fn` (and not given otherwise); a function
    whose signature cannot be read (a builtin) names none."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {
        n: v
        for n, v in values.items()
        if n not in given and n in params and params[n].kind in kinds
    }


def _watch_parent() -> None:
    """End this process when the tool's process is gone (it is then re-parented)."""
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(0)


def _serve() -> None:
    # The protocol keeps private copies of stdin/stdout; the user's code gets /dev/null for all
    # three, so nothing it prints reaches the tool's output. Ctrl-C is the tool's to handle.
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, daemon=True).start()
    modules: dict[str, Any] = {}
    reply: dict[str, Any]
    arrays: list[np.ndarray]
    while True:
        try:
            size = int.from_bytes(_recv_exact(rfd, 4), "little")
            header = json.loads(bytes(_recv_exact(rfd, size)))
        except EOFError:
            os._exit(0)
        op = header["op"]
        try:
            if op == "hello":
                sys.path[:] = header["path"]
                reply, arrays = {"ok": True}, []
            elif op == "import":
                _import(modules, header["file"], header["path"])
                reply, arrays = {"ok": True}, []
            elif op == "has":
                fn = getattr(modules[header["file"]], header["function"], None)
                reply, arrays = {"ok": callable(fn)}, []
            else:
                reply, arrays = _call(modules, header, rfd)
        except _Failed as exc:
            reply, arrays = {"error": str(exc)}, []
        _send(wfd, reply, arrays)


if __name__ == "__main__":
    _serve()
