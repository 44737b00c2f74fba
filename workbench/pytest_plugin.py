"""pytest plugin: every workbench fixture (`NAME.toml` + `NAME.npz`) as one pytest test item.

Registered through the `pytest11` entry point, so any project with workbench installed has it; it does
nothing until fixture folders are named, on the command line or in the project's own configuration:

    pytest --workbench-fixtures tests/kernel_fixtures [--workbench-adapter gpu] [--workbench-corpus wgsl/]

    [tool.pytest.ini_options]                 # or pytest.ini / tox.ini / setup.cfg
    workbench_fixtures = ["tests/kernel_fixtures"]

Each fixture is an item whose id ends in the fixture's name, so `-k`, `-x`, `--lf`, `--junitxml` and
markers work as for any test. A fixture that cannot be read is one failing item with the one-line
reason; a kernel whose source changed since recording is reported, not failed (as `workbench replay`
does). Each process opens its device once, on the first fixture it replays, which is what lets
pytest-xdist (`-n auto`) spread fixtures over processes, and its `--dist`/`--tx` options over machines.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from workbench.fixtures.replay import ReplayResult
    from workbench.session import Session

# The engine is imported on first use, not at plugin load: every pytest run of a project that merely
# has workbench installed loads this module.
_FOLDERS = pytest.StashKey[list[Path]]()
_SESSION = pytest.StashKey["Session"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("workbench", "workbench fixtures")
    group.addoption(
        "--workbench-fixtures",
        nargs="+",
        metavar="DIR",
        help="replay every workbench fixture under these folders as test items",
    )
    group.addoption(
        "--workbench-adapter",
        metavar="SEL",
        help="adapter to replay on: an index, a backend (vulkan, gl, ...), gpu/cpu or a name part",
    )
    group.addoption(
        "--workbench-corpus",
        metavar="PATH",
        help="folder of WGSL the fixtures' kernels come from (default: the shipped kernels)",
    )
    parser.addini("workbench_fixtures", "folders of workbench fixtures to replay", type="paths")
    parser.addini("workbench_adapter", "adapter to replay workbench fixtures on", default="")
    parser.addini("workbench_corpus", "folder of WGSL the fixtures' kernels come from", default="")


def pytest_configure(config: pytest.Config) -> None:
    named = config.getoption("workbench_fixtures")
    folders = (
        [Path(p) for p in named]
        if named
        else [Path(p) for p in config.getini("workbench_fixtures")]
    )
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        raise pytest.UsageError(
            f"workbench fixtures folder not found: {', '.join(missing)} "
            "(give folders holding NAME.toml + NAME.npz fixtures)"
        )
    config.stash[_FOLDERS] = [f.resolve() for f in folders]
    # Collected like any path given on the command line, so node ids, -k and --lf behave as usual.
    # Folders from the ini file join a default run, not one aimed at chosen tests (`pytest tests/ui`).
    if named or config.args_source != pytest.Config.ArgsSource.ARGS:
        config.args.extend(str(f) for f in folders if str(f) not in config.args)


# pytest walks folders with one nested collector per level, and a tree 1,000 folders deep ends in
# its RecursionError; below this many levels a fixtures folder holds its manifests directly.
FLAT_BELOW = 32


@pytest.hookimpl(tryfirst=True)
def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if path in parent.config.stash.get(_FOLDERS, []):
        return FixtureFolder.from_parent(parent, path=path)
    return None


class FixtureFolder(pytest.Directory):
    """A fixtures folder, or a folder below one that holds fixtures: its manifests and its
    subfolders, as pytest would nest them, down to FLAT_BELOW levels; deeper, every manifest
    below it directly (so a file named on the command line is still found at any sane depth)."""

    def collect(self) -> list[pytest.Collector]:
        from workbench.fixtures.manifest import find_fixtures

        found = find_fixtures(self.path)
        roots = [f for f in self.config.stash.get(_FOLDERS, []) if self.path.is_relative_to(f)]
        depth = min((len(self.path.relative_to(f).parts) for f in roots), default=0)
        if depth >= FLAT_BELOW:
            return [FixtureFile.from_parent(self, path=p) for p in found]
        out: list[pytest.Collector] = []
        folders: dict[Path, None] = {}
        for p in found:
            if p.parent == self.path:
                out.append(FixtureFile.from_parent(self, path=p))
            else:
                folders.setdefault(self.path / p.relative_to(self.path).parts[0], None)
        out += [FixtureFolder.from_parent(self, path=f) for f in folders]
        return out


class FixtureFile(pytest.File):
    """One fixture manifest: it holds exactly one item, named after the fixture."""

    def collect(self) -> list[pytest.Item]:
        return [FixtureItem.from_parent(self, name=self.path.stem)]


class FixtureFailed(Exception):
    """A fixture replayed and did not pass, or could not be used."""


class FixtureItem(pytest.Item):
    """Replays one fixture on this process's session."""

    def runtest(self) -> None:
        from workbench.fixtures.manifest import FixtureError, load_fixture
        from workbench.fixtures.replay import replay_fixture

        try:
            fixture = load_fixture(self.path)
        except FixtureError as exc:
            raise FixtureFailed(str(exc)) from None
        result = replay_fixture(_session(self.config), fixture)
        for line in result.info:
            self.add_report_section("call", "workbench", line)
        if result.status == "skip":
            pytest.skip(result.error or "the adapter lacks a feature the kernel needs")
        if result.status != "pass":
            raise FixtureFailed(_report(result))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        from workbench.errors import WorkbenchError

        if isinstance(excinfo.value, FixtureFailed | WorkbenchError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"workbench fixture {self.name}"


def _report(result: ReplayResult) -> str:
    """The same lines `workbench replay` prints for this fixture."""
    from workbench.fixtures.report import result_lines

    return "\n".join(result_lines(result))


def _session(config: pytest.Config) -> Session:
    """One session (adapter, device, corpus) per process, opened on first use."""
    if _SESSION not in config.stash:
        from workbench.session import Session

        adapter = config.getoption("workbench_adapter") or config.getini("workbench_adapter")
        corpus = config.getoption("workbench_corpus") or config.getini("workbench_corpus")
        config.stash[_SESSION] = Session.open(adapter=adapter or None, corpus=corpus or None)
    return config.stash[_SESSION]
