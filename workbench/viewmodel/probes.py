"""The Probes tab without a toolkit: filtering probe records by tag and workgroup, and their rows.

A filter is words `tag=N` (or a list `tag=1,2`) and `wg=N` (a linear workgroup id) or `wg=x:y:z`;
an empty filter keeps everything. A malformed word is reported, never guessed around.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from workbench.workgroups.probes import ProbeRecord, ProbeRun

COLUMNS = ("order", "workgroup", "local", "tag", "kind", "value")


@dataclass(frozen=True)
class RecordFilter:
    tags: frozenset[int] | None = None
    workgroup: tuple[int, int, int] | int | None = None  # xyz, or a linear id

    def keeps(self, record: ProbeRecord, grid: tuple[int, int, int]) -> bool:
        if self.tags is not None and record.tag not in self.tags:
            return False
        if self.workgroup is None:
            return True
        if isinstance(self.workgroup, int):
            x, y, z = record.workgroup
            return x + grid[0] * (y + grid[1] * z) == self.workgroup
        return record.workgroup == self.workgroup


def parse_record_filter(text: str) -> RecordFilter:
    """`tag=3 wg=2` → a filter; raises ValueError with what was wrong."""
    tags, workgroup = None, None
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not value:
            raise ValueError(f"{word!r}: write tag=N or wg=N (or wg=x:y:z)")
        try:
            if key == "tag":
                tags = frozenset(int(v) for v in value.split(","))
            elif key == "wg":
                parts = tuple(int(v) for v in value.split(":"))
                if len(parts) not in (1, 3):
                    raise ValueError
                workgroup = parts[0] if len(parts) == 1 else (parts[0], parts[1], parts[2])
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"{word!r}: write tag=N or wg=N (or wg=x:y:z)") from None
    return RecordFilter(tags, workgroup)


def filter_records(run: ProbeRun, text: str) -> list[ProbeRecord]:
    keep = parse_record_filter(text)
    return [r for r in run.records if keep.keeps(r, run.grid)]


def record_row(record: ProbeRecord) -> tuple[str, ...]:
    value = record.value
    if isinstance(value, tuple):
        shown = "(" + ", ".join(f"{v:.7g}" for v in value) + ")"
    elif isinstance(value, float):
        shown = f"{value:.9g}"
    else:
        shown = str(value)
    return (
        str(record.order),
        ",".join(map(str, record.workgroup)),
        ",".join(map(str, record.local)),
        str(record.tag),
        record.kind,
        shown,
    )


def summary(run: ProbeRun, shown: Sequence[ProbeRecord]) -> str:
    dropped = f"{run.dropped:,} dropped" if run.dropped else "none dropped"
    return (
        f"{len(shown):,} of {len(run.records):,} records shown ({run.filter.describe()}); "
        f"{dropped} past the capacity of {run.capacity:,}"
    )
