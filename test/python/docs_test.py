"""The Python pages of the documentation run as written, against this build,
and the supported-operations table of docs/exporting.md is the lowering's.

scripts/check_docs.py follows each page as a reader would (its `run`
command: every run block in order, in one shell per page, from a fresh
directory outside the repository with a scratch HOME). Here it runs against
the build tree: the pages' environment blocks, which point at an installed
et_ops, are replaced by the build tree's (its et-ops on PATH, its Python
package on PYTHONPATH), so the pages are checked without installing.
scripts/test-docs.sh follows the same pages, and the others, literally
against a fresh install.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

import harness

PAGES = ["docs/python.md", "docs/exporting.md"]


class PythonDocTest(unittest.TestCase):
    def test_every_run_block_of_the_python_pages_runs(self):
        for page in PAGES:
            with self.subTest(page=page):
                result = subprocess.run(
                    [sys.executable, harness.source_path("scripts", "check_docs.py"), "run",
                     "--source", harness.source_path(), "--build", os.environ["ET_OPS_BUILD_ROOT"],
                     "--python", sys.executable, "--timeout", "600", page],
                    capture_output=True, text=True, timeout=700)
                print(result.stdout, end="")
                self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_exporting_md_shows_the_lowerings_table(self):
        from et_ops.lowering import markdown_table
        with open(harness.source_path("docs", "exporting.md"), encoding="utf-8") as f:
            page = f.read()
        begin, end = "<!-- supported-operations:begin -->\n", "<!-- supported-operations:end -->"
        shown = page[page.index(begin) + len(begin):page.index(end)]
        self.assertEqual(shown, markdown_table(), "docs/exporting.md's table is stale (see 'Adding a lowering')")



def fence(marker, language, code):
    return f"<!-- {marker} -->\n```{language}\n{textwrap.dedent(code).strip()}\n```\n\n"


class DocRunnerTest(unittest.TestCase):
    """check_docs.py run: what a reader does, in order, outside the repository."""

    def setUp(self):
        self.source = pathlib.Path(tempfile.mkdtemp(prefix="et_ops_docs_runner_"))
        self.addCleanup(shutil.rmtree, self.source)
        (self.source / "docs").mkdir()

    def follow(self, page_text, *options):
        (self.source / "docs" / "page.md").write_text(page_text, encoding="utf-8")
        return subprocess.run([sys.executable, harness.source_path("scripts", "check_docs.py"), "run",
                               "--source", str(self.source), "--python", sys.executable, *options, "docs/page.md"],
                              capture_output=True, text=True, timeout=120)

    def test_blocks_run_in_order_in_one_shell_outside_the_source_with_a_scratch_home(self):
        result = self.follow(
            "# A page\n\n"
            + fence("run: sh", "sh", 'export GREETING=hello; mkdir step; cd step; echo "$HOME" > home.txt')
            + fence("output", "", "not run")
            + fence("run: python", "python", """
                import os, pathlib
                assert os.environ["GREETING"] == "hello", "exports carry to the next block"
                assert pathlib.Path.cwd().name == "step", "so does cd"
                home = pathlib.Path(open("home.txt").read().strip())
                assert pathlib.Path.cwd().parent == home / "page", "each page starts in $HOME/<page>"
                assert not str(home).startswith(os.environ["ET_OPS_SOURCE"]), "outside the source"
                assert home != pathlib.Path(os.path.expanduser("~" + os.environ["USER"])), "a scratch HOME"
                print("python block ran")
            """)
            + fence("run: sh", "sh", "test -f ../step/home.txt && echo last block ran"))
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("ok: docs/page.md: 3 block(s) ran", result.stdout)

    def test_a_failing_command_fails_the_page_and_shows_its_block(self):
        result = self.follow(fence("run: sh", "sh", "echo first") +
                             fence("run: sh", "sh", "echo second; false; echo never") +
                             fence("run: sh", "sh", "echo third"))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("FAILED: docs/page.md: exit status 1", result.stdout)
        self.assertIn("==> docs/page.md:7 (sh)\nsecond\n", result.stdout)
        self.assertNotIn("never", result.stdout)
        self.assertNotIn("third", result.stdout)

    def test_a_failing_pipeline_and_a_python_error_fail_too(self):
        for block in (fence("run: sh", "sh", "false | cat"), fence("run: python", "python", "raise SystemExit(3)")):
            result = self.follow(block)
            self.assertEqual(result.returncode, 1, block + result.stdout)

    def test_environment_blocks_give_way_to_a_build_tree(self):
        page = fence("run: sh environment", "sh", "export PATH=/nonexistent") + fence("run: sh", "sh", "ls / >/dev/null")
        self.assertEqual(self.follow(page).returncode, 1)
        result = self.follow(page, "--build", str(self.source))
        self.assertEqual(result.returncode, 0, result.stdout)

    def test_snapshot_leaves_the_source_alone(self):
        subprocess.run(["git", "init", "-q", str(self.source)], check=True)
        result = self.follow(fence("run: sh", "sh", 'touch "$ET_OPS_SOURCE/made_by_the_page"'), "--snapshot")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertFalse((self.source / "made_by_the_page").exists())

if __name__ == "__main__":
    harness.main("python_docs")
