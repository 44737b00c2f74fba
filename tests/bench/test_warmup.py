"""The warm-up by time before every timing (`workbench run --reps`, `Session.time_cases`, the UI's
bench): it stops at the next submission when cancelled, `run --warmup-ms` takes it, and bad values
are one-line errors. Real adapter (lavapipe); submissions and rounds are counted, never timed."""

from __future__ import annotations

import json

import pytest

from tests.engine.conftest import run_main
from workbench.gpu import roofline as roofline_module
from workbench.gpu.roofline import cached, roofline
from workbench.session import DEFAULT_WARMUP_MS, Budget, Session

SMALL = ["--dim", "seq=2", "--dim", "d_ff=64"]


def test_a_cancel_during_the_warm_up_stops_it_at_the_next_submission(session: Session) -> None:
    case = session.case("gelu_inplace", dims={"seq": 2, "d_ff": 64})
    submissions: list[float] = []
    # A minute's warm-up: ignoring the cancel would show as far more than three submissions.
    (timing,) = session.time_cases(
        [case],
        Budget(ms=50, warmup_ms=60_000),
        cancelled=lambda: len(submissions) >= 3,
        warming=submissions.append,
    )
    assert len(submissions) == 3
    assert submissions == sorted(submissions) and all(0 <= f <= 1 for f in submissions)
    # Cancelled before the measurement: nothing was timed, and that is what comes back.
    assert timing.reps == 0 and timing.samples_ms == ()


def test_run_cancelled_before_its_warm_up_times_nothing(session: Session) -> None:
    run = session.run("gelu_inplace", dims={"seq": 2, "d_ff": 64}, reps=50, cancelled=lambda: True)
    assert run.timing is not None and run.timing.warmup == 0 and run.timing.reps == 0


def test_a_cancelled_roofline_stops_and_is_not_kept(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(roofline_module, "MEASURED", {})  # as if not measured in this process
    asked: list[int] = []

    def cancelled() -> bool:  # cancel once the first probe's warm-up has asked twice
        asked.append(1)
        return len(asked) > 2

    # A minute's warm-up per probe: ignoring the cancel would ask thousands of times.
    budget = Budget(ms=10, warmup_ms=60_000)
    assert roofline(session.gpu, budget, copy_bytes=1 << 20, cancelled=cancelled) is None
    assert cached(session.gpu) is None and len(asked) < 20
    measured = roofline(session.gpu, Budget(ms=10, warmup_ms=0), copy_bytes=1 << 20)
    assert cached(session.gpu) is measured


def _run_json(*args: str) -> dict:
    proc = run_main("run", "gelu_inplace", *SMALL, "--reps", "5", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["timing"]


def test_run_warms_up_by_time() -> None:
    none = _run_json("--warmup-ms", "0")
    assert none["warmup"] == 0 and none["reps"] == 5
    some = _run_json("--warmup-ms", "30")
    assert some["warmup"] >= 1 and some["reps"] == 5  # one submission at least
    # The default (a second, as `workbench bench`): at least as many rounds as 30 ms gave.
    default = _run_json()
    assert default["warmup"] >= some["warmup"] and DEFAULT_WARMUP_MS == 1000


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--warmup-ms", "-1"],
            "--warmup-ms must be a number of milliseconds from 0 to below 1e+07, got -1",
        ),
        (
            ["--warmup-ms", "nan"],
            "--warmup-ms must be a number of milliseconds from 0 to below 1e+07, got nan",
        ),
        (
            ["--warmup-ms", "inf"],
            "--warmup-ms must be a number of milliseconds from 0 to below 1e+07, got inf",
        ),
        (["--warmup", "3"], "--warmup (a count of dispatches) is now --warmup-ms MS"),
        (["--reps", "-2"], "--reps must be >= 0"),
    ],
)
def test_run_refuses_a_bad_warm_up_in_one_line(args: list[str], needle: str) -> None:
    proc = run_main("run", "gelu_inplace", *SMALL, *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr
    assert proc.stdout == ""


def test_bench_refuses_a_nan_warm_up_in_one_line() -> None:
    proc = run_main("bench", "gelu_inplace", *SMALL, "--warmup-ms", "nan")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "workbench: --warmup-ms must be a number of milliseconds from 0 to below 1e+07, got nan"
    ]
