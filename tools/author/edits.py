"""Source edits ``lecture new`` makes to a module: merge names into its imports, grow a tuple of strings.

The result is what the project's lint (ruff, isort rules) would write itself:
sections (``__future__``, standard library, third party, first party) in
order, a name list sorted constants, classes, then the rest, and a line
that would run past the line length wrapped one name per line.
"""

from __future__ import annotations

import ast
import sys
import tomllib
import unicodedata
from collections.abc import Iterable
from functools import cache

from tools import settings

FIRST_PARTY = ("tools", "scenes")  # pyproject's known-first-party


@cache
def line_length() -> int:
    with open(settings.ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["tool"]["ruff"]["line-length"]


def width(line: str) -> int:
    """A line's width as the lint measures it: a Chinese character takes two columns."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def _section(module: str) -> int:
    top = module.split(".")[0]
    if top == "__future__":
        return 0
    if top in FIRST_PARTY:
        return 3
    return 1 if top in sys.stdlib_module_names else 2


def _member_order(alias: str) -> tuple:
    """isort's order by type: CONSTANTS, then Classes, then everything else, each alphabetical."""
    name = alias.split(" as ")[0]
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name.lower(), name


def _statement_order(node: ast.Import | ast.ImportFrom) -> tuple:
    module = node.module if isinstance(node, ast.ImportFrom) else node.names[0].name
    return _section(module or ""), isinstance(node, ast.ImportFrom), module.lower()


def _alias(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def _from_line(module: str, names: list[str], wrapped: bool) -> str:
    line = f"from {module} import {', '.join(names)}"
    if not wrapped and width(line) <= line_length():
        return line + "\n"
    return f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")\n"


def _leading_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    body = tree.body[1:] if tree.body and isinstance(tree.body[0], ast.Expr) else tree.body  # past the docstring
    imports = []
    for node in body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            break
        imports.append(node)
    return imports


def merge(source: str, module: str, names: Iterable[str]) -> str:
    """`source` importing `names` from `module` too: added to its ``from module import`` when there is
    one, else as a new statement where the lint would put it."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    imports = _leading_imports(tree)
    own = next((n for n in imports if isinstance(n, ast.ImportFrom) and n.module == module and not n.level), None)
    if own is not None:
        have = [_alias(a) for a in own.names]
        wanted = sorted(set(have) | set(names), key=_member_order)
        if len(wanted) == len(have):
            return source
        text = _from_line(module, wanted, wrapped=own.end_lineno > own.lineno)
        return "".join(lines[: own.lineno - 1]) + text + "".join(lines[own.end_lineno :])

    text = _from_line(module, sorted(set(names), key=_member_order), wrapped=False)
    order = (_section(module), True, module.lower())
    before = [n for n in imports if _statement_order(n) < order]
    after = [n for n in imports if _statement_order(n) > order]
    if before and _statement_order(before[-1])[0] == order[0]:
        at, text = before[-1].end_lineno, text
    elif after and _statement_order(after[0])[0] == order[0]:
        at, text = after[0].lineno - 1, text
    elif before:
        at, text = before[-1].end_lineno, "\n" + text
    elif after:
        at, text = after[0].lineno - 1, text + "\n"
    else:
        at, text = (tree.body[0].end_lineno if tree.body and isinstance(tree.body[0], ast.Expr) else 0), "\n" + text
    return "".join(lines[:at]) + text + "".join(lines[at:])


def append_to_tuple(source: str, node: ast.Tuple, value: str) -> str:
    """`source` with the string `value` added at the end of the tuple of strings `node` (parsed from it)."""
    lines = source.splitlines(keepends=True)
    items = [elt.value for elt in node.elts] + [value]
    quoted = [f'"{item}"' for item in items]
    first = lines[node.lineno - 1].encode()
    last = lines[node.end_lineno - 1].encode()
    head, tail = first[: node.col_offset].decode(), last[node.end_col_offset :].decode()
    one_line = "(" + ", ".join(quoted) + ("," if len(quoted) == 1 else "") + ")"
    if width(head + one_line + tail.rstrip("\n")) <= line_length():
        text = head + one_line + tail
    else:  # hanging: the names on their own lines, indented one step past the statement's line
        indent = " " * (len(head) - len(head.lstrip()) + 4)
        rows, row = [], ""
        for item in quoted:
            if row and width(indent + row + " " + item + ",") > line_length():
                rows.append(row)
                row = ""
            row = f"{row} {item}," if row else f"{item},"
        rows.append(row)
        text = head + "(\n" + "".join(f"{indent}{r}\n" for r in rows) + indent[:-4] + ")" + tail
    return "".join(lines[: node.lineno - 1]) + text + "".join(lines[node.end_lineno :])
