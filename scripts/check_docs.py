#!/usr/bin/env python3
"""The documentation's code blocks: checked, compiled and run as written.

Every fenced code block in README.md and docs/*.md is preceded by a marker
that says what it is and how it is tested:

  <!-- file: PATH -->         the block is exactly the repository file PATH
                              (which the tests build or run);
  <!-- snippet: main -->      C++ statements: compiled inside main() with
                              every public header included;
  <!-- snippet: toplevel -->  C++ declarations: compiled at namespace scope;
  <!-- output -->             what a command prints (not code);
  <!-- run: sh -->            shell steps, run by `run` below;
  <!-- run: python -->        a Python script, run by `run` below;
  <!-- run: sh environment --> shell steps that set up the page's
                              environment (the exports of an installed
                              et_ops): run as written, or replaced by a build
                              tree's environment with --build;
  <!-- run: ci -->            the CI command itself (.ci/run runs it), so
                              `run` does not.

`check ROOT CXX [CXXFLAGS...]` checks every page: each block has a known
marker, file blocks equal their files, snippets compile, the ci block names
what .ci/run runs, every environment block is the quick start's, and every
page of FOLLOWED (the pages CI must follow) has run blocks.

`run --source DIR [PAGE...]` follows pages as a reader would (by default
every page with run blocks, but those FOLLOWED_ELSEWHERE: README.md,
docs/quickstart.md, then the others in name order): each page's run blocks, in order, in one bash session per
page (set -e -o pipefail; exports and `cd` carry from one block to the
next; a python block runs with --python in that shell's directory and
environment), starting in a fresh directory $HOME/<page> outside the
repository, with a clean environment: a scratch HOME shared by the pages of
one run (so a later page finds what an earlier one installed under $HOME),
the system PATH, and ET_OPS_SOURCE, the et_ops checkout the pages build
from; the caller's compiler cache (CCACHE_DIR, CCACHE_IGNOREOPTIONS), when
it names one, read-only, so a page's build reuses the objects of an
identical compile and changes nothing for later runs. --snapshot copies
the source's working tree into a git repository in the scratch directory
first, so pages that build in the checkout (or
`meson dist` it) leave the real one alone. With --build BUILD the
environment blocks are replaced by the build tree's environment (its
et-ops on PATH, its Python package on PYTHONPATH, its uninstalled
pkg-config files), so pages that need only those run against a build
without installing it. A page fails at its first failing command; the
runner prints the log from the failing block.
"""
import argparse
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*(file|snippet|output|run):?\s*(.*?)\s*-->\s*$")
RUN_KINDS = {"sh", "python", "sh environment", "ci"}
PAGE_END = "==> end of page"


def blocks(markdown):
    """Yields (line number, marker, language, code); marker is (kind, argument) or None."""
    lines = pathlib.Path(markdown).read_text(encoding="utf-8").splitlines()
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


# The pages CI must follow: each must keep at least one run block.
FOLLOWED = ["README.md", "docs/quickstart.md", "docs/consuming.md", "docs/python.md", "docs/embedding-python.md",
            "docs/missing-operators.md", "docs/program-format.md", "docs/writing-kernels.md", "docs/exporting.md",
            "docs/language-models.md"]
# Pages another CI script follows with this runner, and checks further:
# the default run leaves them to it.
FOLLOWED_ELSEWHERE = {"docs/wheel.md": "scripts/test-wheel.sh"}
# The page whose environment block every other page repeats.
ENVIRONMENT_PAGE = "docs/quickstart.md"


def pages(root):
    return [root / "README.md"] + sorted((root / "docs").glob("*.md"))


def run_blocks(page):
    return [(line, marker[1], code) for line, marker, _, code in blocks(page)
            if marker is not None and marker[0] == "run" and marker[1] != "ci"]


def followed_pages(root):
    """Every page with run blocks, in reading order: README, the quick start (which installs), the rest
    (but those FOLLOWED_ELSEWHERE)."""
    first = [root / "README.md", root / ENVIRONMENT_PAGE]
    rest = [page for page in pages(root) if page not in first]
    names = [str(page.relative_to(root)) for page in first + rest if run_blocks(page)]
    return [name for name in names if name not in FOLLOWED_ELSEWHERE]


# ---- check ---------------------------------------------------------------

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


def ci_command(root):
    """The script .ci/run runs, relative to the repository root."""
    for line in (root / ".ci" / "run").read_text().splitlines():
        if re.match(r"^\s*scripts/\S+\s*$", line):
            return line.strip()
    return None


def check_block(root, compiler, marker, code):
    """An error message, or None when the block is fine."""
    if marker is None:
        return "code block without a marker (file/snippet/output/run)"
    kind, argument = marker
    if kind == "file":
        path = root / argument
        if not path.is_file():
            return f"{argument} does not exist"
        if path.read_text() != code:
            return f"the block differs from {argument}"
    elif kind == "snippet":
        if argument not in ("main", "toplevel"):
            return f"unknown snippet kind '{argument}' (main, toplevel)"
        ok, errors = compile_snippet(root, compiler, code, argument == "main")
        if not ok:
            return f"the snippet does not compile:\n{errors}"
    elif kind == "run":
        if argument not in RUN_KINDS:
            return f"unknown run kind '{argument}' ({', '.join(sorted(RUN_KINDS))})"
        if argument == "ci":
            command = ci_command(root)
            if command is None or not code.replace('"', "").strip().endswith("/" + command):
                return f"the ci block must run what .ci/run runs ({command})"
    return None


def environment_block(root):
    return next((code for _, kind, code in run_blocks(root / ENVIRONMENT_PAGE) if kind == "sh environment"), None)


def check(root, compiler):
    failures, checked = [], 0
    environment = environment_block(root)
    if environment is None:
        failures.append(f"{ENVIRONMENT_PAGE}: no 'run: sh environment' block (the one every page repeats)")
    for markdown in pages(root):
        for line, marker, _, code in blocks(markdown):
            checked += 1
            if error := check_block(root, compiler, marker, code):
                failures.append(f"{markdown.relative_to(root)}:{line}: {error}")
            elif marker == ("run", "sh environment") and environment is not None and code != environment:
                failures.append(f"{markdown.relative_to(root)}:{line}: the environment block differs from the one "
                                f"of {ENVIRONMENT_PAGE}")
    for page in FOLLOWED + list(FOLLOWED_ELSEWHERE):
        if not (root / page).is_file() or not run_blocks(root / page):
            failures.append(f"{page}: CI follows this page, but it has no run block")
    return checked, failures


# ---- run -----------------------------------------------------------------

def snapshot(source, destination):
    """Copies the working tree (tracked and untracked, not ignored files) into a git repository.

    A second run into the same destination updates it (and keeps what the
    pages built there, such as its ignored build directories).
    """
    def files(tree):
        listed = subprocess.run(["git", "-C", str(tree), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                check=True, capture_output=True).stdout.decode().split("\0")
        return {name for name in listed if name and os.path.lexists(tree / name)}

    wanted = files(source)
    if (destination / ".git").is_dir():
        for name in files(destination) - wanted:
            (destination / name).unlink()
    for name in wanted:
        origin, target = source / name, destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(target):
            target.unlink()
        if origin.is_symlink():
            os.symlink(os.readlink(origin), target)
        else:
            shutil.copy2(origin, target)
    git = ["git", "-C", str(destination), "-c", "user.name=docs", "-c", "user.email=docs@localhost",
           "-c", "commit.gpgsign=false"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--allow-empty", "--no-verify", "-m", "snapshot"]):
        subprocess.run(git + command, check=True, capture_output=True)


def build_environment(build):
    """Exports that stand in for an installed et_ops: the build tree's tool, Python package and
    uninstalled pkg-config files (whose libdir is not where the build keeps the libraries, hence
    LD_LIBRARY_PATH)."""
    libraries = ":".join(shlex.quote(str(build / d)) for d in ("src", "src/kernels"))
    return (f"export PATH={shlex.quote(str(build / 'tools'))}:\"$PATH\"\n"
            f"export PYTHONPATH={shlex.quote(str(build / 'src' / 'python'))}\n"
            f"export PKG_CONFIG_PATH={shlex.quote(str(build / 'src' / 'uninstalled'))}\n"
            f"export LD_LIBRARY_PATH={libraries}\n")


def page_script(page, label, options, block_dir):
    """The bash script that follows `page`: its run blocks in order, each announced in the log."""
    script = ["set -e -o pipefail", "__block() { printf '\\n==> %s\\n' \"$1\"; }"]
    ran = 0
    for line, kind, code in run_blocks(page):
        where = f"{label}:{line} ({kind})"
        script.append(f"__block {shlex.quote(where)}")
        if kind == "python":
            path = block_dir / f"{page.stem}_{line}.py"
            path.write_text(code, encoding="utf-8")
            script.append(f"{shlex.quote(options.python)} {shlex.quote(str(path))}")
        elif kind == "sh environment" and options.build:
            script.append(build_environment(options.build))
        else:
            script.append(code)
        ran += 1
    script.append(f"printf '\\n%s\\n' {shlex.quote(PAGE_END)}")
    return "\n".join(script) + "\n", ran


def compiler_cache():
    """The caller's ccache settings, read-only, or nothing."""
    if "CCACHE_DIR" not in os.environ:
        return {}
    kept = {name: os.environ[name] for name in ("CCACHE_DIR", "CCACHE_IGNOREOPTIONS") if name in os.environ}
    return {**kept, "CCACHE_READONLY": "1"}


def clean_environment(home, source, tmp):
    return {
        "HOME": str(home), "USER": os.environ.get("USER", "root"), "LOGNAME": os.environ.get("USER", "root"),
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "SHELL": "/bin/bash", "LANG": "C.UTF-8", "TERM": "dumb", "TMPDIR": str(tmp),
        "ET_OPS_SOURCE": str(source), **compiler_cache(),
    }


def failing_block(log):
    """The log from the last block announcement on."""
    start = log.rfind("\n==> ")
    return log[start + 1:] if start >= 0 else log


def run_page(page, label, options, work):
    home, tmp, block_dir = work / "home", work / "tmp", work / "blocks"
    for d in (home, tmp, block_dir):
        d.mkdir(parents=True, exist_ok=True)
    script, ran = page_script(page, label, options, block_dir)
    directory = home / page.stem  # the reader's own directory for this page, fresh each time
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir()
    script_path = block_dir / f"{page.stem}.sh"
    script_path.write_text(script, encoding="utf-8")
    log_path = work / "logs" / f"{page.stem}.log"
    log_path.parent.mkdir(exist_ok=True)
    started = time.monotonic()
    with open(log_path, "w", encoding="utf-8") as log:
        try:
            status = subprocess.run(["bash", str(script_path)], cwd=directory,
                                    env=clean_environment(home, options.source, tmp), stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, timeout=options.timeout).returncode
        except subprocess.TimeoutExpired:
            status = f"timeout after {options.timeout} s"
    text = log_path.read_text(encoding="utf-8", errors="replace")
    seconds = time.monotonic() - started
    if options.verbose:
        print(text, end="")
    if status == 0 and text.rstrip().endswith(PAGE_END):
        print(f"ok: {label}: {ran} block(s) ran ({seconds:.1f} s)", flush=True)
        return True
    reason = f"exit status {status}" if status != 0 else "the page's shell exited before its last block"
    print(f"FAILED: {label}: {reason} ({seconds:.1f} s); the log from the failing block on:\n"
          f"{failing_block(text)[-12000:]}", flush=True)
    return False


def run(options):
    work = pathlib.Path(options.work or tempfile.mkdtemp(prefix="et_ops_docs_")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    source = options.source = options.source.resolve()
    if options.snapshot:
        options.source = work / "et_ops"
        snapshot(source, options.source)
    if not options.pages:
        options.pages = followed_pages(source)
    print(f"docs: following {len(options.pages)} page(s) in {work} (ET_OPS_SOURCE={options.source}): "
          f"{', '.join(options.pages)}", flush=True)
    passed, failed = [], []
    for page in options.pages:
        (passed if run_page((source / page).resolve(), page, options, work) else failed).append(page)
        if failed and not options.keep_going:
            break
    if not options.keep:
        shutil.rmtree(work, ignore_errors=True)
    not_run = len(options.pages) - len(passed) - len(failed)
    print(f"docs: {len(passed)} page(s) passed, {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}"
          f"{f', {not_run} not run' if not_run else ''}")
    return not failed and not not_run


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    checking = commands.add_parser("check", help="check every page's markers, files and snippets")
    checking.add_argument("root", type=pathlib.Path)
    checking.add_argument("compiler", nargs=argparse.REMAINDER, help="the C++ compiler and its flags")
    running = commands.add_parser("run", help="follow pages: run their run blocks in order")
    running.add_argument("--source", type=pathlib.Path, required=True, help="the et_ops checkout (ET_OPS_SOURCE)")
    running.add_argument("--snapshot", action="store_true", help="run against a git snapshot of the working tree")
    running.add_argument("--build", type=pathlib.Path, help="a build tree that stands in for the installed et_ops")
    running.add_argument("--python", default="/usr/bin/python3", help="the interpreter of python blocks")
    running.add_argument("--work", help="the scratch directory (default: a new temporary one)")
    running.add_argument("--keep", action="store_true", help="keep the scratch directory")
    running.add_argument("--keep-going", action="store_true", help="run the next pages after a failure")
    running.add_argument("--timeout", type=int, default=3600, help="seconds per page")
    running.add_argument("--verbose", action="store_true", help="print every page's whole log")
    running.add_argument("pages", nargs="*", help="pages relative to the source, in the order to follow them "
                         "(default: every page with run blocks: README.md, docs/quickstart.md, then the others)")
    options = parser.parse_args()
    if options.command == "check":
        root = options.root.resolve()
        checked, failures = check(root, options.compiler + ["-I", str(root / "include")])
        for f in failures:
            print(f"FAILED {f}")
        print(f"docs: {checked - len(failures)} block(s) passed, {len(failures)} failed")
        sys.exit(1 if failures else 0)
    if options.build:
        options.build = options.build.resolve()
    sys.exit(0 if run(options) else 1)


if __name__ == "__main__":
    main()
