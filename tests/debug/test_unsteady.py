"""A kernel that is not deterministic on its own (float atomics adding in any order) is not
reported as changed by the instrumentation: the trace says which outputs two plain runs give
differently too, and only the others count against it."""

from __future__ import annotations

from workbench.cli.debug import print_trace
from workbench.workgroups.debug import Trace


def _trace(differing: list[str], unsteady: list[str]) -> Trace:
    return Trace("k", (0, 0, 0), (0, 0, 0), (0, 0, 0), [], not differing, differing, unsteady)


def test_outputs_that_plain_runs_also_disagree_on_are_not_blamed_on_instrumentation(capsys):
    t = _trace(["dK", "dV"], ["dK", "dV"])
    assert t.instrumentation_changed == []
    assert t.to_json()["nondeterministic"] == ["dK", "dV"]
    print_trace(t, [])
    out = capsys.readouterr().out
    assert "dK, dV differ with instrumentation as two plain runs do" in out
    assert "OUTPUTS DIFFER" not in out


def test_an_output_only_the_instrumentation_changed_is_still_reported():
    t = _trace(["dQ", "dK"], ["dK"])
    assert t.instrumentation_changed == ["dQ"]
    assert t.to_json()["outputs_identical"] is False
