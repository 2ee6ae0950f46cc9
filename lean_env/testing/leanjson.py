"""Lean's `Json.pretty` layout (width 80), so the double prints what the real REPL prints.

Lean renders objects as `bracket "{" (joinSep (group (k ":" line v)) ("," line)) "}"` where
`bracket l f r = group (nest |l| (l f r))`; objects keep keys in descending order.
Layout is Wadler's: a group is flat if it fits in the rest of the line.
"""
from __future__ import annotations

import json
from typing import Any

WIDTH = 80


def _doc(value: Any) -> Any:
    """Document tree: str (text), ("line",), ("nest", k, doc), ("group", doc), ("cat", [docs])."""
    if isinstance(value, dict):
        items = [("group", ("cat", [json.dumps(k, ensure_ascii=False) + ":", ("line",), _doc(value[k])]))
                 for k in sorted(value, reverse=True)]
        return _bracket("{", items, "}")
    if isinstance(value, list):
        return _bracket("[", [_doc(v) for v in value], "]")
    return json.dumps(value, ensure_ascii=False)


def _bracket(left: str, items: list, right: str) -> Any:
    body: list = [left]
    for i, item in enumerate(items):
        if i:
            body += [",", ("line",)]
        body.append(item)
    body.append(right)
    return ("group", ("nest", len(left), ("cat", body)))


def _fits(width: int, stack: list) -> bool:
    """Does the text up to the next line break in break mode fit in `width` columns?"""
    stack = list(stack)
    while width >= 0:
        if not stack:
            return True
        indent, flat, d = stack.pop()
        if isinstance(d, str):
            width -= len(d)
        elif d[0] == "line":
            if flat:
                width -= 1
            else:
                return True
        elif d[0] == "nest":
            stack.append((indent + d[1], flat, d[2]))
        elif d[0] == "group":
            stack.append((indent, flat, d[1]))
        else:
            stack.extend((indent, flat, x) for x in reversed(d[1]))
    return False


def pretty(value: Any) -> str:
    """Render like Lean's `Json.pretty`."""
    out: list[str] = []
    col = 0
    stack = [(0, False, _doc(value))]
    while stack:
        indent, flat, d = stack.pop()
        if isinstance(d, str):
            out.append(d)
            col += len(d)
        elif d[0] == "line":
            if flat:
                out.append(" ")
                col += 1
            else:
                out.append("\n" + " " * indent)
                col = indent
        elif d[0] == "nest":
            stack.append((indent + d[1], flat, d[2]))
        elif d[0] == "group":
            stack.append((indent, flat or _fits(WIDTH - col, stack + [(indent, True, d[1])]), d[1]))
        else:
            stack.extend((indent, flat, x) for x in reversed(d[1]))
    return "".join(out)
