"""Rewrite only the kernel identity (`source_sha256`) of existing fixtures, nothing else.

    python scripts/rehash_fixtures.py [--corpus DIR] FIXTURE_DIR_OR_FILE...

Each manifest's kernel is found in the corpus (default: the shipped kernels) and its
`source_sha256` line is replaced by the kernel's identity as `record` writes it today
(`workbench.fixtures.manifest.kernel_sha256`: its module's tokens, so comments and whitespace do
not count). The expected arrays, the npz and every other line are left byte for byte; the
manifest is replaced through workbench's one writer (workbench.safewrite). Prints one line per fixture it changed.
"""

from __future__ import annotations

import argparse
import re
import sys

from workbench.fixtures.manifest import find_fixtures, kernel_sha256, load_fixture
from workbench.safewrite import write_text
from workbench.wgsl.corpus import load_corpus

_LINE = re.compile(r'^source_sha256 = "[0-9a-f]{64}"$', re.MULTILINE)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="+", help="fixture manifests or folders of them")
    p.add_argument("--corpus", help="the kernels' corpus (default: the shipped kernels)")
    args = p.parse_args(argv)
    corpus = load_corpus(args.corpus)
    for path in find_fixtures(args.paths):
        fx = load_fixture(path)
        kernels = [k for k in corpus.kernels if k.name == fx.kernel and k.file == fx.source]
        if len(kernels) != 1:
            print(f"{path}: no kernel {fx.kernel} in {fx.source}; left as it is", file=sys.stderr)
            continue
        identity = kernel_sha256(kernels[0].text)
        text = path.read_text(encoding="utf-8")
        new, n = _LINE.subn(f'source_sha256 = "{identity}"', text)
        if n != 1:
            print(f"{path}: no single source_sha256 line; left as it is", file=sys.stderr)
            continue
        if new == text:
            continue
        write_text(path, new, overwrite=True)
        print(f"{path}: source_sha256 {fx.source_sha256[:12]}… → {identity[:12]}…")
    return 0


if __name__ == "__main__":
    sys.exit(main())
