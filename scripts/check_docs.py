#!/usr/bin/env python3
"""Every code example in docs/ is compiled, run, or is a file the tests build.

A fenced code block in docs/*.md must be preceded by one of these markers:
  <!-- file: PATH -->        the block is exactly the repository file PATH
                             (which the tests build or run);
  <!-- snippet: main -->     C++ statements: compiled inside main() with every
                             public header included;
  <!-- snippet: toplevel --> C++ declarations: compiled at namespace scope;
  <!-- output -->            what a program prints (not code);
  <!-- run: python -->       handled by the Python documentation test.
Blocks without a marker fail the check.

Usage: check_docs.py REPO_ROOT CXX [CXXFLAGS...]
"""
import pathlib
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(file|snippet|output|run):?\s*(.*?)\s*-->\s*$")


def blocks(markdown):
    """Yields (line number, marker kind, marker argument, language, code)."""
    lines = markdown.read_text().splitlines()
    marker, i = None, 0
    while i < len(lines):
        if m := MARKER.match(lines[i]):
            marker = (m.group(1), m.group(2))
        elif m := FENCE.match(lines[i]):
            indent, language = len(m.group(1)), m.group(2)
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i][indent:])
                i += 1
            yield start, marker, language, "\n".join(body) + "\n"
            marker = None
        elif lines[i].strip():
            marker = None
        i += 1


def compile_snippet(root, compiler, code, wrap_in_main):
    headers = sorted(p.relative_to(root / "include") for p in (root / "include").rglob("*.h"))
    source = "".join(f"#include <{h}>\n" for h in headers)
    source += "#include <cstdio>\n#include <iostream>\n"
    source += f"int main() {{\n{code}\nreturn 0;\n}}\n" if wrap_in_main else code
    with tempfile.NamedTemporaryFile("w", suffix=".cpp") as f:
        f.write(source)
        f.flush()
        result = subprocess.run(compiler + ["-fsyntax-only", f.name], capture_output=True, text=True)
    return result.returncode == 0, result.stderr


def check(root, compiler):
    failures, checked = [], 0
    for markdown in sorted((root / "docs").glob("*.md")):
        for line, marker, language, code in blocks(markdown):
            where = f"{markdown.relative_to(root)}:{line}"
            checked += 1
            if marker is None:
                failures.append(f"{where}: code block without a marker (file/snippet/output/run)")
            elif marker[0] == "file":
                path = root / marker[1]
                if not path.is_file():
                    failures.append(f"{where}: {marker[1]} does not exist")
                elif path.read_text() != code:
                    failures.append(f"{where}: the block differs from {marker[1]}")
            elif marker[0] == "snippet":
                ok, errors = compile_snippet(root, compiler, code, marker[1] == "main")
                if not ok:
                    failures.append(f"{where}: the snippet does not compile:\n{errors}")
    return checked, failures


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    compiler = sys.argv[2:] + ["-I", str(root / "include")]
    checked, failures = check(root, compiler)
    for f in failures:
        print(f"FAILED {f}")
    print(f"docs: {checked - len(failures)} passed, {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
