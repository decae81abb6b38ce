"""Attacks on the grader's own hands, for the grading corpus (tests/test_grading_corpus.py):
links planted where the grading process used to open files, restarts forced by the
submission, a patched kernel agent that hides a memory overrun or a change to an input.
Each sample is a real notebook built from the lesson's release; each must get exactly
the points its honest work earns, and nothing outside its sandbox may change."""
from __future__ import annotations

from pathlib import Path

import json

from grading_corpus import Expect, Lesson, Sample, meta


def answer_of(lesson: Lesson, target: str) -> str:
    return next(a for a, t in lesson.target.items() if t == target)


LINKS = '''
import glob as _glob, os as _os
import grader as _grader
_kit = _os.path.dirname(_os.path.dirname(_os.path.abspath(_grader.__file__)))
_aims = {aims!r} + [_os.path.join(_kit, "grader", "learner", "agent.py")]


def _plant():
    """Links, named as every file the grading process ever opened beside a kernel, aimed
    at the course, the kit, the gradebook and a classmate's notebook; the kernel's live
    sockets replaced by links too; and a kernel config that keeps the banner quiet."""
    names = ["k", "ctl", "in", "sock"] + [f"{{what}}-{{n}}{{ext}}" for n in range(6)
             for what, ext in (("kernel", ".log"), ("kernel", ".json"), ("box", ""), ("k", ""))]
    for folder in (".", "..", "/job", "/job/home", "/job/tmp", "/tmp"):
        for i, name in enumerate(names):
            path = _os.path.join(folder, name)
            try:
                if _os.path.lexists(path) and not _os.path.isdir(path):
                    _os.remove(path)
                _os.symlink(_aims[i % len(_aims)], path)
            except OSError:
                pass
    for sock in _glob.glob("/job/sock/*"):
        try:
            _os.remove(sock)
            _os.symlink(_aims[0], sock)
        except OSError:
            pass
    with open("ipython_kernel_config.py", "w") as f:
        f.write("c.IPKernelApp.no_stdout = True\\nc.IPKernelApp.no_stderr = True\\n")


_plant()
'''


def link_attack_sample(lesson: Lesson, aims: list[Path]) -> Sample:
    """Links planted in every folder the kernel can write, aimed at ``aims``, then a
    restart forced when the first exercise is checked (its body plants them again and
    exits): a grading process that followed them would write into the course, the kit
    or a classmate's work. Only the exercise that exits loses its points."""
    first = list(lesson.answers)[0]
    code = LINKS.format(aims=[str(a) for a in aims]) + "\n" + lesson.with_body(
        first, ["_plant()", "_os._exit(3)"])
    nb = lesson.notebook({**lesson.answers, first: code})
    return Sample("attacker_links", lesson.name, lesson.files(nb),
                  lesson.expect({first: Expect(0.0, "error", "stopped while this cell ran (exit status 3)")}),
                  incidents=["stopped while this cell ran"])


HOLD_SCORES = ["try:", "    _all = np.exp(np.asarray(K, dtype=float) @ np.asarray(q, dtype=float))",
               "    _weights = _all / _all.sum()", "except Exception:", "    pass"]
HOLD_PAIRS_IN_TORCH = [
    "try:",
    "    _S = _torch.as_tensor(np.asarray(Q, dtype=float)) @ _torch.as_tensor(np.asarray(K, dtype=float)).mT",
    "    _P = (_S - _S.amax(dim=-1, keepdim=True)).exp()",
    "except Exception:",
    "    pass"]
HOLD_IN_A_CHILD = ["import os as _os", "_pid = _os.fork()", "if _pid == 0:",
                   "    _pairs = np.ones((2048, 2048))", "    _os._exit(0)", "_os.waitpid(_pid, 0)"]
PATCH_PEAK = ("import grader.learner.agent as _agent\n"
              "_agent.peak_bytes = lambda fn, *args, **kwargs: (fn(*args, **kwargs), 0)\n")


def memory_attack_samples(lesson: Lesson) -> list[Sample]:
    """Streamed answers that hold every score, hidden from the kernel's own measure:
    tracemalloc stopped, the scores held by torch, the kernel agent's ``peak_bytes``
    patched, the memory held by a child process that ends before the call does. The
    memory is measured from outside the sandbox, so each loses the points of the memory
    budget, and only those."""
    one, tiles = answer_of(lesson, "attention_one_pass"), answer_of(lesson, "tiled_attention")
    over = Expect(0.0, "failed", "memory")
    hidden = lesson.notebook({
        **lesson.answers,
        one: lesson.with_body(one, ["import tracemalloc", "tracemalloc.stop()", *HOLD_SCORES]),
        tiles: "import torch as _torch\n" + lesson.with_body(tiles, HOLD_PAIRS_IN_TORCH)})
    patched = lesson.notebook({
        **lesson.answers,
        one: PATCH_PEAK + lesson.with_body(one, HOLD_SCORES),
        tiles: lesson.with_body(tiles, HOLD_IN_A_CHILD)})
    return [Sample("forge_memory_hidden", lesson.name, lesson.files(hidden),
                   lesson.expect({one: over, tiles: over})),
            Sample("forge_memory_patched", lesson.name, lesson.files(patched),
                   lesson.expect({one: over, tiles: over}))]


PATCH_MUTATED = "import grader.learner.agent as _agent\n_agent._mutated = lambda *args: ''\n"


def mutation_attack_sample(lesson: Lesson) -> Sample:
    """A masked softmax that writes -inf into the scores it was given, beside a patched
    kernel agent that reports no change: the source shows the change, so the answer
    loses its points, and only its own."""
    answer = answer_of(lesson, "masked_softmax")
    honest = lesson.answers[answer]
    line = "filled = np.where(mask, scores, -np.inf)"
    assert line in honest, "the honest masked_softmax no longer has the line this attack edits"
    changing = PATCH_MUTATED + honest.replace(line, "scores[~mask] = -np.inf\n    filled = scores")
    nb = lesson.notebook({**lesson.answers, answer: changing})
    return Sample("forge_mutation_hidden", lesson.name, lesson.files(nb),
                  lesson.expect({answer: Expect(0.0, "failed", "changed its input `scores` in place")}))


def merged(student: str, lesson: Lesson, first: Sample, second: Sample) -> Sample:
    """One submission holding two attacks on different answers: ``first``'s notebook with
    the answer cells that ``second`` changes (none of ``first``'s), and both expectations.
    Grading both in one notebook costs one kernel instead of two."""
    changed = {lesson.tests[t][1] for t, e in second.tests.items() if (e.points, e.status) !=
               (lesson.tests[t][0], "passed")}
    nb_first = json.loads(first.files[lesson.filename])
    nb_second = json.loads(second.files[lesson.filename])
    theirs = {meta(c).get("grade_id"): c for c in nb_second["cells"]}
    assert not changed & {lesson.tests[t][1] for t, e in first.tests.items()
                          if (e.points, e.status) != (lesson.tests[t][0], "passed")}
    for i, cell in enumerate(nb_first["cells"]):
        if meta(cell).get("grade_id") in changed:
            nb_first["cells"][i] = theirs[meta(cell).get("grade_id")]
    tests = {t: (second.tests[t] if lesson.tests[t][1] in changed else first.tests[t]) for t in first.tests}
    return Sample(student, lesson.name, lesson.files(nb_first), tests,
                  repairs=first.repairs + second.repairs, incidents=first.incidents + second.incidents,
                  notes=first.notes + second.notes, integrity=first.integrity + second.integrity,
                  why=f"{first.why or first.student} + {second.why or second.student}")
