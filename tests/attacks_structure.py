"""Notebooks whose structure, not their bytes, would stall the grading process (issue 32):
a million empty cells in 47 MB, under the 50 MB a file may have, and a notebook nested
200,000 levels deep. Each is graded as an unreadable notebook, with a note that names the
limit and its count, and costs only itself.

They are large, so their bytes are made once per process, and only when a test writes
them (:class:`Built`): a module that lists its samples at collection pays nothing."""
from __future__ import annotations

import functools
from collections.abc import Mapping

from grader.grading.classroom import submissions
from grading_corpus import Expect, Lesson, Sample

CELLS = 1_000_000
LEVELS = 200_000


@functools.cache
def million_empty_cells() -> bytes:
    cell = b'{"cell_type":"code","metadata":{},"source":""}'
    data = b'{"cells":[' + b",".join([cell] * CELLS) + b'],"metadata":{},"nbformat":4,"nbformat_minor":5}'
    assert len(data) <= submissions.MAX_FILE, "it must pass every byte limit"
    return data


@functools.cache
def nested_deep() -> bytes:
    """A notebook with no cells whose metadata holds lists nested to make it ``LEVELS`` deep."""
    inner = LEVELS - 2  # the notebook's object and its metadata are two levels
    return (b'{"cells":[],"metadata":{"x":' + b"[" * inner + b"]" * inner
            + b'},"nbformat":4,"nbformat_minor":5}')


class Built(Mapping):
    """A submission's files, made when first read."""

    def __init__(self, make):
        self._make, self._files = make, None

    def _built(self) -> dict:
        if self._files is None:
            self._files = self._make()
        return self._files

    def __getitem__(self, name):
        return self._built()[name]

    def __iter__(self):
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


MILLION_NOTE = f"has {CELLS:,} cells; a notebook may have at most {submissions.MAX_CELLS:,}"
NESTED_NOTE = (f"nested {LEVELS:,} levels deep; a notebook may nest them at most "
               f"{submissions.MAX_DEPTH:,} deep")


def structure_samples(lesson: Lesson) -> list[Sample]:
    """The two notebooks, each expected unreadable: every test 0 with the note."""
    out = []
    for student, make, note in (("structure_million_cells", million_empty_cells, MILLION_NOTE),
                                ("structure_nested_deep", nested_deep, NESTED_NOTE)):
        files = Built(lambda make=make: lesson.files(make()))
        out.append(Sample(student, lesson.name, files, {t: Expect(0.0, "missing", note) for t in lesson.tests},
                          notes=[f"'{lesson.filename}': the file was not read as a notebook", note],
                          status="missing"))
    return out
