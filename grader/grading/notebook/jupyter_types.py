"""The Jupyter protocol's own type names, as they arrive from outside (a kernel's IOPub
message's ``msg_type``, a notebook output's ``output_type``): strings the grader does not
choose, named once here so that no comparison spells them again."""
from __future__ import annotations

from enum import StrEnum


class Output(StrEnum):
    """A notebook output's ``output_type`` (and the IOPub message that makes it)."""

    STREAM = "stream"
    DISPLAY_DATA = "display_data"
    EXECUTE_RESULT = "execute_result"
    ERROR = "error"


class Msg(StrEnum):
    """The other IOPub messages the grader reads."""

    EXECUTE_INPUT = "execute_input"
    CLEAR_OUTPUT = "clear_output"
    STATUS = "status"


OUTPUTS = frozenset(Output)
RICH = frozenset({Output.DISPLAY_DATA, Output.EXECUTE_RESULT})  # outputs that carry data by MIME type
