"""The first thing that runs in a submission's sandbox, before any of its code.

Run as ``python -I -S -c <this file's text> BOX IN UID NPROC -- CMD...`` so that it imports
nothing of the grader (the grader's checkout is not inside the sandbox). It:

* forbids gaining privileges (``PR_SET_NO_NEW_PRIVS``: a setuid program runs as its
  caller);
* caps the number of processes and threads (``RLIMIT_NPROC``), set here, inside the
  sandbox, so that it counts only the submission's own;
* makes the writable folders ``BOX/{work,home,tmp,sock}``: with bubblewrap, BOX is a
  size-limited tmpfs that exists only inside this sandbox;
* when started as root (a grader running as root), hands BOX to ``UID``, a user of this
  kernel's own, and becomes that user: no capability is left, which is checked;
* copies ``IN/home`` (matplotlib's font list) into ``BOX/home``, as that user;
* then runs CMD in ``BOX/work``.

``UID`` is -1 to stay the user the sandbox started as. ``NPROC`` 0 sets no process cap.
"""
import ctypes
import os
import resource
import shutil
import sys

PR_SET_NO_NEW_PRIVS = 38
FOLDERS = ("work", "home", "tmp", "sock")


def capabilities() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def main(argv: list[str]) -> None:
    box, inbox, uid, nproc = argv[0], argv[1], int(argv[2]), int(argv[3])
    if argv[4] != "--":
        raise SystemExit("usage: _sandbox_start.py BOX IN UID NPROC -- CMD...")
    cmd = argv[5:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SystemExit("the sandbox could not forbid gaining privileges")
    if nproc > 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    for name in FOLDERS:
        os.makedirs(os.path.join(box, name), mode=0o700, exist_ok=True)
    if uid >= 0 and os.getuid() == 0:
        # These folders were made just now, by this process: nothing in them to follow.
        # BOX last: once it is the kernel's, root (with no DAC_OVERRIDE) cannot enter it.
        for path in (*(os.path.join(box, n) for n in FOLDERS), box):
            os.chmod(path, 0o700)
            os.chown(path, uid, uid, follow_symlinks=False)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid or capabilities():
            raise SystemExit("the sandbox could not drop root")
    home = os.path.join(inbox, "home")
    if os.path.isdir(home):
        try:
            shutil.copytree(home, os.path.join(box, "home"), dirs_exist_ok=True, symlinks=True)
        except OSError as exc:  # a full disk: the kernel starts without the font list
            print(f"could not copy the home folder: {exc}", file=sys.stderr)
    os.chdir(os.path.join(box, "work"))
    os.execvp(cmd[0], cmd)


if __name__ == "__main__":
    main(sys.argv[1:])
