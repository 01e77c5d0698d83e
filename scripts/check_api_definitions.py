#!/usr/bin/env python3
"""Writes a C++ program that takes the address of every function the
installed et_ops headers export (declared with ET_OPS_API or
ET_OPS_KERNELS_API), so linking it against the shipped libraries proves
each one has a definition.

Usage: check_api_definitions.py INCLUDE_DIR OUTPUT.cpp
"""
import pathlib
import re
import sys

EXPORT = r"ET_OPS(?:_KERNELS)?_API"
NAMESPACE = re.compile(r"^namespace ([\w:]+) \{")
NAMESPACE_END = re.compile(r"^\}\s*// namespace")
CLASS = re.compile(r"^class " + EXPORT + r" (\w+)")
FREE_FUNCTION = re.compile(r"^(?:\[\[nodiscard\]\] )?" + EXPORT + r" [^(]*?(\w+)\(")
MEMBER = re.compile(r"^\s+(?:static )?[\w:<>,*& ]+?[ *&](\w+)\([^)]*\)?[^{]*$")


def exported_names(header):
    names, namespaces, current_class = [], [], None
    for line in header.read_text().splitlines():
        if m := NAMESPACE.match(line):
            namespaces.append(m.group(1))
        elif NAMESPACE_END.match(line) and namespaces:
            namespaces.pop()
        elif m := CLASS.match(line):
            current_class = m.group(1)
        elif current_class and line.startswith("};"):
            current_class = None
        elif m := FREE_FUNCTION.match(line.strip() if not current_class else line):
            if current_class is None:
                names.append("::".join(namespaces + [m.group(1)]))
        elif current_class and (m := MEMBER.match(line)):
            name = m.group(1)
            if name not in (current_class, "operator") and "=" not in line.split("(")[0]:
                names.append("::".join(namespaces + [current_class, name]))
    return names


def main():
    include_dir, output = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    headers = sorted(include_dir.rglob("*.h"))
    names = sorted({n for h in headers for n in exported_names(h)})
    lines = [f"#include <{h.relative_to(include_dir)}>" for h in headers]
    lines.append("int main() {")
    lines += [f"  (void)&{n};" for n in names]
    lines.append("  return 0;\n}")
    output.write_text("\n".join(lines) + "\n")
    print(f"{len(names)} exported functions from {len(headers)} headers")


if __name__ == "__main__":
    main()
