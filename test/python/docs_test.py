"""Every code example of docs/python.md and docs/exporting.md runs.

The pages mark their fenced blocks as docs/*.md must (see
scripts/check_docs.py): `<!-- run: python -->` blocks are run with this
interpreter and `<!-- run: sh -->` blocks with bash, all in document order,
in one scratch directory per page where `build` is this build tree and
`examples` is the repository's examples/ directory, with
PYTHONPATH=build/src/python as the pages tell their reader to set, so the
commands run exactly as written. `<!-- output -->` blocks show what a
block prints. Any other block fails the test: a code example that nothing
runs could rot unnoticed. docs/exporting.md's table of supported
operations must also be the one the lowering's table generates.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import harness

DOCS = ("python.md", "exporting.md")
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*(\w+):?\s*(.*?)\s*-->\s*$")


def fenced_blocks(path):
    """(line, marker kind, marker argument, code) of every fenced block."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    blocks, marker, i = [], (None, None), 0
    while i < len(lines):
        if m := MARKER.match(lines[i]):
            marker = (m.group(1), m.group(2))
        elif FENCE.match(lines[i]):
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append((start, marker[0], marker[1], "\n".join(body) + "\n"))
            marker = (None, None)
        elif lines[i].strip():
            marker = (None, None)
        i += 1
    return blocks


class PythonDocTest(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="et_ops_docs_test_")
        self.addCleanup(shutil.rmtree, self.scratch)
        os.symlink(os.environ["ET_OPS_BUILD_ROOT"], os.path.join(self.scratch, "build"))
        os.symlink(harness.source_path("examples"), os.path.join(self.scratch, "examples"))

    def run_block(self, language, code):
        command = [sys.executable, "-c", code] if language == "python" else ["bash", "-euo", "pipefail", "-c", code]
        # What the page tells its reader to set, with `build` in the scratch directory.
        env = dict(os.environ, PYTHONPATH=os.path.join(self.scratch, "build", "src", "python"))
        return subprocess.run(command, cwd=self.scratch, env=env, capture_output=True, text=True, timeout=300)

    def run_page(self, page):
        blocks = fenced_blocks(harness.source_path("docs", page))
        languages = [argument for _, kind, argument, _ in blocks if kind == "run"]
        self.assertIn("python", languages)
        self.assertIn("sh", languages)
        for line, kind, argument, code in blocks:
            where = f"docs/{page}:{line}"
            if kind == "output":
                continue
            self.assertEqual(kind, "run", f"{where}: a code block that no test runs")
            self.assertIn(argument, ("python", "sh"), where)
            result = self.run_block(argument, code)
            print(f"{where} ({argument}): exit {result.returncode}")
            print(result.stdout, end="")
            self.assertEqual(result.returncode, 0, f"{where} failed:\n{code}\n{result.stderr}")

    def test_every_code_block_of_python_md_runs(self):
        self.run_page("python.md")

    def test_every_code_block_of_exporting_md_runs(self):
        self.run_page("exporting.md")

    def test_exporting_md_shows_the_lowerings_table(self):
        from et_ops.lowering import markdown_table
        with open(harness.source_path("docs", "exporting.md"), encoding="utf-8") as f:
            page = f.read()
        begin, end = "<!-- supported-operations:begin -->\n", "<!-- supported-operations:end -->"
        shown = page[page.index(begin) + len(begin):page.index(end)]
        self.assertEqual(shown, markdown_table(), "docs/exporting.md's table is stale (see 'Adding a lowering')")


if __name__ == "__main__":
    harness.main("python_docs")
