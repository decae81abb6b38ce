"""Attacks on the grader's own hands, for the grading corpus (tests/test_grading_corpus.py):
links planted where the grading process used to open files, restarts forced by the
submission, a patched kernel agent that hides a memory overrun or a change to an input,
memory kept outside the Python heap.
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


# Memory an answer keeps outside its Python heap, where no resident size shows it: a class
# the answer cell defines before its function, holding bytes in a memfd, a file in /tmp or
# /dev/shm, pipe buffers or socket buffers, and giving them back in order.
HELD = """
import fcntl as _fcntl, os as _os, socket as _socket
import numpy as _np


class _Held:
    \"\"\"Arrays kept as bytes in {where!r}, read back in order.\"\"\"

    def __init__(self, where):
        self.where, self.fd, self.path = where, None, None
        self.ends, self.at, self.kinds = [], 0, []  # pipes or sockets; the one read; the arrays
        if where == "memfd":
            self.fd = _os.memfd_create("blocks")
        elif where in ("tmp", "shm"):
            # a root grader's bubblewrap gives its kernel a /dev/shm it cannot write
            for folder in ("/dev/shm", "/tmp") if where == "shm" else ("/tmp",):
                try:
                    self.path = f"{{folder}}/blocks-{{_os.getpid()}}-{{id(self)}}"
                    self.fd = _os.open(self.path, _os.O_RDWR | _os.O_CREAT | _os.O_TRUNC, 0o600)
                    break
                except OSError:
                    continue

    def _end(self):
        if self.where == "pipe":
            r, w = _os.pipe()
            try:
                _fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ: a pipe of 1 MB
            except OSError:
                pass
            _os.set_blocking(r, False)
            _os.set_blocking(w, False)
            return (lambda data: _os.write(w, data), lambda n: _os.read(r, n), (r, w))
        a, b = _socket.socketpair()
        a.setblocking(False)
        b.setblocking(False)
        return (a.send, b.recv, (a, b))

    def keep(self, array):
        array = _np.ascontiguousarray(array)
        self.kinds.append((array.dtype.str, array.shape, array.nbytes))
        data = memoryview(array.tobytes())
        while data:
            if self.fd is not None:
                n = _os.write(self.fd, data)
            else:
                if not self.ends:
                    self.ends.append(self._end())
                try:
                    n = self.ends[-1][0](data)
                except BlockingIOError:
                    n = 0
                if n == 0:  # this one is full
                    self.ends.append(self._end())
            data = data[n:]

    def _get(self, size):
        out = bytearray()
        while len(out) < size:
            if self.fd is not None:
                chunk = _os.read(self.fd, size - len(out))
            else:
                try:
                    chunk = self.ends[self.at][1](size - len(out))
                except BlockingIOError:
                    chunk = b""
                if not chunk:
                    self.at += 1
            out += chunk
        return bytes(out)

    def arrays(self):
        if self.fd is not None:
            _os.lseek(self.fd, 0, 0)
        for dtype, shape, size in self.kinds:
            yield _np.frombuffer(self._get(size), dtype=dtype).reshape(shape)

    def __del__(self):
        if self.fd is not None:
            _os.close(self.fd)
        if self.path:
            _os.unlink(self.path)
        for _, _, ends in self.ends:
            for end in ends:
                end.close() if hasattr(end, "close") else _os.close(end)
"""

# online_softmax_stats in two passes: every block kept, then read back as the stream.
BLOCKS_HELD = ["_held = _Held({where!r})", "for _b in scores_blocks:",
               "    _held.keep(_np.asarray(_b))", "scores_blocks = _held.arrays()"]
# attention_one_pass: every score kept (block by block, so that no array holds them).
SCORES_HELD = ["_held = _Held({where!r})", "try:",
               "    _Kf, _qf = _np.asarray(K, dtype=float), _np.asarray(q, dtype=float)",
               "    for _j in range(0, len(_Kf), int(block)):",
               "        _held.keep(_Kf[_j:_j + int(block)] @ _qf)",
               "except Exception:", "    pass"]
# tiled_attention: every score of every tile kept, a tile at a time.
PAIRS_HELD = ["_held = _Held({where!r})", "try:",
              "    _Qf, _Kt = _np.asarray(Q, dtype=float), _np.swapaxes(_np.asarray(K, dtype=float), -1, -2)",
              "    for _i in range(0, _Qf.shape[-2], int(block_q)):",
              "        for _j in range(0, _Kt.shape[-1], int(block_k)):",
              "            _held.keep(_Qf[..., _i:_i + int(block_q), :] @ _Kt[..., _j:_j + int(block_k)])",
              "except Exception:", "    pass"]


def held_answer(lesson: Lesson, answer: str, lines: list[str], where: str) -> str:
    """``answer``'s honest code, keeping what ``lines`` keep in ``where``."""
    body = lesson.with_body(answer, [line.format(where=where) for line in lines])
    return HELD.format(where=where) + "\n" + body


def memory_attack_samples(lesson: Lesson) -> list[Sample]:
    """Streamed answers that hold every block or score, hidden from the kernel's own
    measure: tracemalloc stopped, the scores held by torch, the kernel agent's
    ``peak_bytes`` patched, the memory held by a child process that ends before the call
    does; or kept outside the Python heap, where no resident size shows it: in a memfd,
    a file in /tmp or /dev/shm, pipe buffers or socket buffers. The memory is measured
    from outside the sandbox as everything it holds, so each loses the points of the
    memory budget, and only those. Three submissions hold all nine, one to an answer."""
    stats = answer_of(lesson, "online_softmax_stats")
    one, tiles = answer_of(lesson, "attention_one_pass"), answer_of(lesson, "tiled_attention")
    over = Expect(0.0, "failed", "memory")
    hidden = lesson.notebook({
        **lesson.answers,
        stats: held_answer(lesson, stats, BLOCKS_HELD, "memfd"),
        one: lesson.with_body(one, ["import tracemalloc", "tracemalloc.stop()", *HOLD_SCORES]),
        tiles: "import torch as _torch\n" + lesson.with_body(tiles, HOLD_PAIRS_IN_TORCH)})
    patched = lesson.notebook({
        **lesson.answers,
        stats: held_answer(lesson, stats, BLOCKS_HELD, "pipe"),
        one: PATCH_PEAK + lesson.with_body(one, HOLD_SCORES),
        tiles: lesson.with_body(tiles, HOLD_IN_A_CHILD)})
    outside = lesson.notebook({
        **lesson.answers,
        stats: held_answer(lesson, stats, BLOCKS_HELD, "socket"),
        one: held_answer(lesson, one, SCORES_HELD, "tmp"),
        tiles: held_answer(lesson, tiles, PAIRS_HELD, "shm")})
    every = lesson.expect({stats: over, one: over, tiles: over})
    return [Sample(name, lesson.name, lesson.files(nb), dict(every)) for name, nb in (
        ("forge_memory_hidden", hidden), ("forge_memory_patched", patched),
        ("forge_memory_outside_the_heap", outside))]


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
