"""Set resource limits, optionally drop root, then exec a command.

Run as a plain script (``python -I -S _limited_exec.py DATA FSIZE UID -- CMD...``) so that
starting it imports nothing of the grader. Limits are inherited across ``exec``, by the
sandbox and by the kernel inside it:

* ``RLIMIT_DATA``: heap and anonymous memory, so a memory bomb gets ``MemoryError`` at
  the limit instead of exhausting the machine (shared libraries do not count);
* ``RLIMIT_FSIZE``: the largest file student code may write;
* ``RLIMIT_CORE`` 0: a crash leaves no core file behind.

``UID`` is -1 to keep the current user; otherwise (only when started as root, in the
fallback without bubblewrap) the command runs as that user and group.
"""
import os
import resource
import sys


def main(argv: list[str]) -> None:
    data, fsize, uid = (int(x) for x in argv[:3])
    if argv[3] != "--":
        raise SystemExit("usage: _limited_exec.py DATA FSIZE UID -- CMD...")
    cmd = argv[4:]
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, value in ((getattr(resource, "RLIMIT_DATA", None), data), (resource.RLIMIT_FSIZE, fsize)):
        if limit is not None and value > 0:
            try:
                resource.setrlimit(limit, (value, value))
            except (ValueError, OSError):  # a platform that does not support it
                pass
    if uid >= 0 and os.getuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
