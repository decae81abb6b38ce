"""Messages are read in a notebook's output, where JupyterLab wraps a long line wherever it
runs out of room, mid-word. So every line of prose is wrapped here, at a space."""
from __future__ import annotations

import re
import textwrap

WIDTH = 88  # characters of a line of prose in a message: JupyterLab wraps longer ones mid-word
LINES = 25  # a message stays under this many lines as shown (DESIGN.md, gate 6)
SHOWN = re.compile(r"^\s*(?:[\w'’ ]{1,40}:\s+)?(?:[\[(\-\d]|tensor\(|array\()")
CODE = re.compile(r"`[^`\n]*`")


def wrapped(text: str) -> str:
    """``text`` with each line of prose longer than :data:`WIDTH` wrapped at a space, at
    its own indent. Lines that show values (arrays, tensors, numbers, each after its label)
    are left as they are, and a span of code between backticks is never cut."""
    out = []
    for line in text.split("\n"):
        if len(line) <= WIDTH or SHOWN.match(line):
            out.append(line)
            continue
        body = line.lstrip()
        indent = line[:len(line) - len(body)]
        body = CODE.sub(lambda m: m.group(0).replace(" ", "\0"), body)
        out += [part.replace("\0", " ") for part in
                textwrap.wrap(body, WIDTH, initial_indent=indent, subsequent_indent=indent,
                              break_long_words=False, break_on_hyphens=False)]
    shown = "\n".join(out)
    # The line limit (DESIGN.md, gate 6) comes first: a message that wrapping would take
    # over it is shown as written, its long lines left to the page.
    return shown if len(out) < LINES or len(text.splitlines()) >= LINES else text
