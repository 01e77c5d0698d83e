"""Every code example of docs/python.md runs.

docs/python.md marks its fenced blocks as docs/*.md must (see
scripts/check_docs.py): `<!-- run: python -->` blocks are run with this
interpreter and `<!-- run: sh -->` blocks with bash, all in document order,
in one scratch directory where `build` is this build tree and `examples` is
the repository's examples/ directory, with PYTHONPATH=build/src/python as
the page tells its reader to set, so the commands run exactly as written. Any other block in the page fails the test: a code example that
nothing runs could rot unnoticed.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import harness

DOC = harness.source_path("docs", "python.md")
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

    def test_every_code_block_runs(self):
        blocks = fenced_blocks(DOC)
        languages = [argument for _, kind, argument, _ in blocks if kind == "run"]
        self.assertIn("python", languages)
        self.assertIn("sh", languages)
        for line, kind, argument, code in blocks:
            where = f"docs/python.md:{line}"
            self.assertEqual(kind, "run", f"{where}: a code block that no test runs")
            self.assertIn(argument, ("python", "sh"), where)
            result = self.run_block(argument, code)
            print(f"{where} ({argument}): exit {result.returncode}")
            print(result.stdout, end="")
            self.assertEqual(result.returncode, 0, f"{where} failed:\n{code}\n{result.stderr}")


if __name__ == "__main__":
    harness.main("python_docs")
