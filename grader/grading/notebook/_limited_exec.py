"""Enter the kernel's memory cgroup, set resource limits, then exec a command.

Run as a plain script (``python -I -S _limited_exec.py DATA FSIZE CGROUP -- CMD...``) so
that starting it imports nothing of the grader. ``CGROUP`` is the ``cgroup.procs`` file of
the kernel's memory cgroup (``grader.grading.notebook.cgroup``), or empty for none: this process
writes its own id into it before anything else, so bubblewrap and every process of the
sandbox are in the cgroup from their start; if it cannot, the kernel does not start.
Limits are inherited across ``exec``, by the sandbox and by the kernel inside it:

* ``RLIMIT_DATA``: heap and anonymous memory, so a memory bomb gets ``MemoryError`` at
  the limit instead of exhausting the machine (shared libraries do not count);
* ``RLIMIT_FSIZE``: the largest file student code may write;
* ``RLIMIT_CORE`` 0: a crash leaves no core file behind.

The user the kernel runs as, and its cap on processes, are set inside the sandbox by
``_sandbox_start.py``.
"""
import resource
import os
import sys


def main(argv: list[str]) -> None:
    data, fsize = (int(x) for x in argv[:2])
    procs = argv[2]
    if argv[3] != "--":
        raise SystemExit("usage: _limited_exec.py DATA FSIZE CGROUP -- CMD...")
    cmd = argv[4:]
    if procs:
        try:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        except OSError as exc:
            raise SystemExit(f"could not enter the kernel's memory cgroup ({procs}): {exc}")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, value in ((getattr(resource, "RLIMIT_DATA", None), data), (resource.RLIMIT_FSIZE, fsize)):
        if limit is not None and value > 0:
            try:
                resource.setrlimit(limit, (value, value))
            except (ValueError, OSError):  # a platform that does not support it
                pass
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
