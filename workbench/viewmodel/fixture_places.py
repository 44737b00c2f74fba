"""Where the terminal UI saves fixtures, and which folders its Fixtures screen lists.

Fixtures saved from the UI are the user's: they go to a folder the user owns, never into the
installed package (site-packages on a normal install). In order of precedence:

1. `workbench ui --fixtures DIR`;
2. `fixtures = "DIR"` in the user configuration (`workbench.config`);
3. `<corpus>/fixtures` for a corpus of the user's own;
4. for the shipped kernels, `user_fixtures_default()` (`~/.local/share/workbench/fixtures`).

A folder inside the package is never used: it is replaced by the next choice, with a one-line
notice saying why. The shipped fixtures are listed beside the user's for the shipped corpus, and
marked read-only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import workbench
from workbench.fixtures import SHIPPED_FIXTURES
from workbench.wgsl.corpus import SHIPPED

PACKAGE = Path(workbench.__file__).resolve().parent


def user_fixtures_default() -> Path:
    """The user-owned folder for fixtures of the shipped kernels: `fixtures` beside
    `$WORKBENCH_CONFIG` when that is set, else `$XDG_DATA_HOME/workbench/fixtures`."""
    env = os.environ.get("WORKBENCH_CONFIG")
    if env:
        return Path(env).with_name("fixtures")
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "workbench" / "fixtures"


def inside_package(path: Path) -> bool:
    """`path` is the installed package's folder or under it."""
    return path.expanduser().resolve().is_relative_to(PACKAGE)


def origin(path: Path) -> str:
    """`shipped` for a fixture of the package (read-only), `yours` for any other."""
    return "shipped" if path.resolve().is_relative_to(SHIPPED_FIXTURES) else "yours"


@dataclass(frozen=True)
class FixturePlaces:
    """Where `f` saves (`save_to`, and why there) and what the Fixtures screen lists."""

    save_to: Path
    why: str  # "--fixtures", "configuration", "the corpus's folder", "default for shipped kernels"
    shipped: Path | None  # the package's own fixtures (read-only), listed for the shipped corpus
    problems: tuple[str, ...] = ()  # a folder refused on the way, one line each

    @property
    def listed(self) -> list[Path]:
        """The folders the Fixtures screen lists: the shipped ones first, then the user's."""
        return [self.shipped, self.save_to] if self.shipped is not None else [self.save_to]


def fixture_places(
    corpus_root: Path, option: Path | None = None, configured: str = ""
) -> FixturePlaces:
    """The places for a session on `corpus_root`; `option` is `--fixtures DIR`, `configured` the
    configuration's `fixtures` value ("" when unset)."""
    is_shipped = corpus_root.resolve() == SHIPPED.resolve()
    candidates: list[tuple[Path, str]] = []
    if option is not None:
        candidates.append((option, "--fixtures"))
    if configured:
        candidates.append((Path(configured), "configuration"))
    if not is_shipped:
        candidates.append((corpus_root / "fixtures", "the corpus's folder"))
    shipped = SHIPPED_FIXTURES if is_shipped else None
    problems: list[str] = []
    for folder, why in candidates:
        if not inside_package(folder):
            return FixturePlaces(folder.expanduser(), why, shipped, tuple(problems))
        problems.append(
            f"fixtures folder {folder} ({why}) is inside the installed package; "
            "saving fixtures elsewhere"
        )
    return FixturePlaces(
        user_fixtures_default(), "default for shipped kernels", shipped, tuple(problems)
    )
