"""Notebook JSON (nbformat 4.5) as plain dicts with attribute access.

The grading workers build and run notebooks without importing ``nbformat``: importing it
pulls in ``jsonschema`` and its format checkers, which costs seconds per process on a busy
machine. The structures made here are what ``nbformat.v4`` makes; the tests validate them
with nbformat.
"""
from __future__ import annotations

import json

from .jupyter_types import RICH, Output


class Node(dict):
    """A dict whose keys are also attributes, like ``nbformat.NotebookNode``."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        self[key] = value


def nbgrader_meta(cell) -> dict:
    """A cell's nbgrader metadata, or {} (none, or not a dict)."""
    meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell.get("metadata"), dict) else None
    return meta if isinstance(meta, dict) else {}


def cell_text(cell) -> str:
    """A cell's source as one string (JupyterLab saves it as a list of lines)."""
    source = cell.get("source")
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return source if isinstance(source, str) else ""


def from_dict(obj):
    if isinstance(obj, dict):
        return Node({k: from_dict(v) for k, v in obj.items()})
    if isinstance(obj, (list, tuple)):
        return [from_dict(v) for v in obj]
    return obj


def new_cell(cell_type: str, source: str = "", cell_id: str = "", metadata: dict | None = None) -> Node:
    cell = Node(cell_type=cell_type, id=cell_id, metadata=from_dict(metadata or {}), source=source)
    if cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    return cell


def new_notebook(cells: list, metadata: dict | None = None) -> Node:
    return Node(cells=cells, metadata=from_dict(metadata or {}), nbformat=4, nbformat_minor=5)


def new_output(output_type: str, **fields) -> Node:
    out = Node(output_type=output_type)
    if output_type in RICH:
        out.data, out.metadata = from_dict(fields.pop("data", {})), from_dict(fields.pop("metadata", {}))
    if output_type == Output.EXECUTE_RESULT:
        out.execution_count = fields.pop("execution_count", None)
    out.update(fields)
    return out


def output_from_msg(msg: dict) -> Node:
    """The notebook output for a kernel's IOPub output message."""
    kind, content = msg["header"]["msg_type"], msg["content"]
    if kind == Output.STREAM:
        return new_output(kind, name=content["name"], text=content["text"])
    if kind == Output.ERROR:
        return new_output(kind, ename=content["ename"], evalue=content["evalue"],
                          traceback=list(content["traceback"]))
    fields = {"data": content["data"], "metadata": content.get("metadata", {})}
    if kind == Output.EXECUTE_RESULT:
        fields["execution_count"] = content.get("execution_count")
    return new_output(kind, **fields)


def dumps(nb: dict) -> str:
    """nbformat's own layout: sorted keys, one-space indent, a final newline."""
    return json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
