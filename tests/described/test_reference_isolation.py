"""Issue 27, "user code that takes the tool down": a corpus's refs.py runs in a child process, so an
exit, a loop, a print, `np.seterr` or an odd result is one line naming the file and the function,
with exit code 2, and the tool (and its --json output) stays whole."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from .corpora import REFS, matmul_corpus, rownorm_corpus, write

ROOT = Path(__file__).resolve().parents[2]
MATMUL_SIG = "def matmul(A, B, *, M, N, K):\n"
# A generous bound for what must happen at once; reaching it fails the test, it times nothing.
PATIENCE_S = 120


def _refs(root: Path, text: str) -> Path:
    write(root, {"refs.py": text})
    return root


def _one_line_error(res, *parts: str) -> None:
    assert res.rc == 2, (res.rc, res.out, res.err)
    assert len(res.err.splitlines()) == 1, res.err
    for part in parts:
        assert part in res.err, res.err


def test_sys_exit_at_import_of_refs_py_is_one_line(tmp_path: Path, cli) -> None:
    root = _refs(matmul_corpus(tmp_path), "import sys\nsys.exit(0)\n" + MATMUL_SIG + "    pass\n")
    res = cli("check", "matmul", "--corpus", str(root), "--json")
    _one_line_error(res, "importing refs.py raised SystemExit")
    assert res.json()["exit"] == 2


def test_sys_exit_in_the_reference_is_one_line(tmp_path: Path, cli) -> None:
    root = _refs(matmul_corpus(tmp_path), "import sys\n" + MATMUL_SIG + "    sys.exit(0)\n")
    res = cli("check", "matmul", "--corpus", str(root), "--json")
    _one_line_error(res, "refs.py:matmul raised SystemExit")
    assert res.json() == {"error": res.err.removeprefix("workbench: "), "exit": 2}


def test_os_exit_in_the_reference_is_one_line(tmp_path: Path, cli) -> None:
    root = _refs(matmul_corpus(tmp_path), "import os\n" + MATMUL_SIG + "    os._exit(3)\n")
    res = cli("run", "matmul", "--corpus", str(root), "--reps", "0")
    _one_line_error(res, "refs.py:matmul ended the reference process (exit code 3)")


def test_print_in_refs_py_never_reaches_json_output(tmp_path: Path, cli) -> None:
    noisy = REFS.replace("def matmul(A, B, *, M, N, K):\n", MATMUL_SIG + "    print('in call')\n")
    root = _refs(matmul_corpus(tmp_path), "print('at import')\n" + noisy)
    res = cli("check", "matmul", "--corpus", str(root), "--what", "compare", "--json")
    assert res.rc == 0 and res.json()["verdict"] == "pass", res.out
    assert "at import" not in res.out + res.err and "in call" not in res.out + res.err


def test_np_seterr_raise_at_import_does_not_break_the_special_values_check(
    tmp_path: Path, cli
) -> None:
    root = rownorm_corpus(tmp_path)
    _refs(root, "import numpy as np\nnp.seterr(all='raise')\n" + REFS)
    res = cli("check", "rownorm", "--corpus", str(root), "--what", "special", "--json")
    assert res.err == "" and res.rc == 0, (res.rc, res.err)
    results = res.json()["results"]
    assert results and all(r["kind"] == "special" and r["ok"] for r in results)
    assert np.geterr()["invalid"] == "warn"  # the tool's own NumPy state is untouched


@pytest.mark.parametrize(
    ("returned", "says"),
    [
        ("{'C': 'abc'}", "refs.py:matmul returned C that is not an array of numbers"),
        ("{'C': [[1.0, 2.0], [3.0]]}", "refs.py:matmul returned C that is not an array of numbers"),
        ("'C'", "refs.py:matmul must return a dict of output arrays by name, got str"),
        ("[[1.0], [2.0, 3.0]]", "refs.py:matmul must return a dict of output arrays by name"),
        ("{'C': object()}", "refs.py:matmul returned C that is not an array of numbers"),
        ("{3: A}", "refs.py:matmul returned 3, which is not an output"),
    ],
    ids=["string", "ragged_list", "bare_string", "bare_ragged_list", "object", "int_key"],
)
def test_reference_returning_a_string_or_a_ragged_list_is_one_line(
    tmp_path: Path, cli, returned: str, says: str
) -> None:
    root = _refs(matmul_corpus(tmp_path), MATMUL_SIG + f"    return {returned}\n")
    res = cli("run", "matmul", "--corpus", str(root), "--reps", "0")
    _one_line_error(res, says)


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=PATIENCE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("workbench did not end") from None


def _workbench(*args: str, timeout: str = "2") -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), WORKBENCH_REFERENCE_TIMEOUT=timeout)
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_a_loop_in_the_reference_is_stopped_by_the_time_limit(tmp_path: Path) -> None:
    root = _refs(matmul_corpus(tmp_path), MATMUL_SIG + "    while True:\n        pass\n")
    proc = _workbench("run", "matmul", "--corpus", str(root), "--reps", "0", "--json")
    out, err = _finish(proc)
    assert proc.returncode == 2, err
    assert json.loads(out)["error"].startswith("refs.py:matmul did not finish within 2 s")


def test_a_loop_at_import_of_refs_py_is_stopped_by_the_time_limit(tmp_path: Path) -> None:
    root = _refs(matmul_corpus(tmp_path), "while True:\n    pass\n")
    proc = _workbench("run", "matmul", "--corpus", str(root), "--reps", "0")
    _, err = _finish(proc)
    assert proc.returncode == 2
    lines = [ln for ln in err.splitlines() if "no GPU found" not in ln]
    assert len(lines) == 1 and "importing refs.py did not finish within 2 s" in lines[0], err


def _looping_refs(root: Path, mark: Path) -> Path:
    """refs.py whose reference writes its process id to `mark`, then loops forever."""
    return _refs(
        matmul_corpus(root),
        "import os\n"
        + MATMUL_SIG
        + f"    open({str(mark)!r} + '.tmp', 'w').write(str(os.getpid()))\n"
        + f"    os.rename({str(mark)!r} + '.tmp', {str(mark)!r})\n"
        + "    while True:\n        pass\n",
    )


def _wait_for_file(path: Path) -> int:
    deadline = time.monotonic() + PATIENCE_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return int(path.read_text())


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return True
    return state == "Z"


def test_ctrl_c_stops_a_looping_reference_and_its_worker(tmp_path: Path) -> None:
    mark = tmp_path / "running"
    root = _looping_refs(tmp_path / "c", mark)
    proc = _workbench("run", "matmul", "--corpus", str(root), "--reps", "0", timeout="1000")
    worker = _wait_for_file(mark)
    proc.send_signal(signal.SIGINT)
    _finish(proc)
    assert proc.returncode == 130
    assert _gone(worker)  # stopped and reaped before the tool exited


def test_the_worker_ends_when_the_tool_is_killed(tmp_path: Path) -> None:
    mark = tmp_path / "running"
    root = _looping_refs(tmp_path / "c", mark)
    proc = _workbench("run", "matmul", "--corpus", str(root), "--reps", "0", timeout="1000")
    worker = _wait_for_file(mark)
    proc.kill()
    _finish(proc)
    deadline = time.monotonic() + PATIENCE_S
    while not _gone(worker):
        assert time.monotonic() < deadline, "the reference worker outlived the tool"
        time.sleep(0.05)


def test_quitting_while_a_reference_loops_ends_the_tool(tmp_path: Path) -> None:
    """The UI quits by ending its main thread while a worker thread waits on the reference."""
    mark = tmp_path / "running"
    root = _looping_refs(tmp_path / "c", mark)
    script = (
        "import threading, numpy as np\n"
        "from pathlib import Path\n"
        "from workbench.specs.refworker import worker_for\n"
        f"w = worker_for(Path({str(root)!r}))\n"
        f"assert w.resolve('refs.py', Path({str(root / 'refs.py')!r}), 'matmul') == ''\n"
        "a = np.ones((2, 2))\n"
        "def job():\n"
        "    try:\n"
        "        w.call('refs.py', 'matmul', {'A': a, 'B': a}, {'M': 2, 'N': 2, 'K': 2},"
        " {'C': (2, 2)})\n"
        "    except Exception as exc:\n"
        "        print(exc)\n"
        "threading.Thread(target=job).start()\n"
        f"while not Path({str(mark)!r}).exists():\n"
        "    pass\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), WORKBENCH_REFERENCE_TIMEOUT="1000")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=PATIENCE_S
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refs.py:matmul was stopped: the tool is exiting"


def test_cancel_stops_a_looping_reference(tmp_path: Path, monkeypatch) -> None:
    mark = tmp_path / "running"
    root = _looping_refs(tmp_path / "c", mark)
    monkeypatch.setenv("WORKBENCH_REFERENCE_TIMEOUT", "1000")
    from workbench.specs.refworker import ReferenceCodeError, cancel_all, worker_for

    worker = worker_for(root)
    assert worker.resolve("refs.py", root / "refs.py", "matmul") == ""
    a = np.ones((2, 2))
    errors: list[str] = []

    def job() -> None:
        try:
            worker.call("refs.py", "matmul", {"A": a, "B": a}, {"M": 2, "N": 2, "K": 2}, {})
        except ReferenceCodeError as exc:
            errors.append(str(exc))

    thread = threading.Thread(target=job)
    thread.start()
    _wait_for_file(mark)
    cancel_all()
    thread.join(PATIENCE_S)
    assert errors == ["refs.py:matmul was cancelled"]
    # The next call starts a new worker.
    (root / "refs.py").write_text(REFS, encoding="utf-8")
    fresh = worker_for(root)
    assert fresh.resolve("refs.py", root / "refs.py", "matmul") == ""
    out = fresh.call("refs.py", "matmul", {"A": a, "B": a}, {"M": 2, "N": 2, "K": 2}, {"C": (2, 2)})
    assert np.array_equal(out["C"], a @ a)


def test_references_run_in_one_warm_worker_per_corpus_not_in_the_tool(tmp_path: Path) -> None:
    from workbench.specs.described import load_descriptions
    from workbench.wgsl.corpus import load_corpus

    pid = (
        "import os\nimport numpy as np\n"
        + MATMUL_SIG
        + "    return {'C': np.full((M, N), os.getpid())}\n"
    )
    first = load_descriptions(load_corpus(_refs(matmul_corpus(tmp_path / "a"), pid)))["matmul"]
    other = load_descriptions(load_corpus(_refs(matmul_corpus(tmp_path / "b"), pid)))["matmul"]
    dims = {"M": 2, "N": 2, "K": 2}
    arrays = {"A": np.ones((2, 2), np.float32), "B": np.ones((2, 2), np.float32)}
    seen = [int(spec.reference(dims, arrays)["C"][0, 0]) for spec in (first, first, other)]
    assert seen[0] == seen[1] != os.getpid()  # the same warm worker, call after call
    assert seen[2] not in (seen[0], os.getpid())  # another corpus, another worker


def test_a_session_over_many_corpora_keeps_only_a_few_workers_running(tmp_path: Path) -> None:
    from workbench.specs.described import load_descriptions
    from workbench.specs.refworker import MAX_WARM
    from workbench.wgsl.corpus import load_corpus

    pid = (
        "import os\nimport numpy as np\n"
        + MATMUL_SIG
        + "    return {'C': np.full((M, N), os.getpid())}\n"
    )
    dims = {"M": 2, "N": 2, "K": 2}
    arrays = {"A": np.ones((2, 2), np.float32), "B": np.ones((2, 2), np.float32)}
    specs = [
        load_descriptions(load_corpus(_refs(matmul_corpus(tmp_path / f"c{i}"), pid)))["matmul"]
        for i in range(MAX_WARM + 3)
    ]
    pids = [int(spec.reference(dims, arrays)["C"][0, 0]) for spec in specs]
    assert len(set(pids)) == len(specs)
    assert sum(not _gone(p) for p in pids) <= MAX_WARM
    # The first corpus's worker was stopped; its next call starts another.
    again = int(specs[0].reference(dims, arrays)["C"][0, 0])
    assert _gone(pids[0]) and again not in pids
