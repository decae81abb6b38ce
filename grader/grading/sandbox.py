"""Where student code runs, and with which limits.

With bubblewrap (``bwrap``), each kernel gets its own namespaces: no network, its own
process tree, and a file system that holds only the system, the Python installation and
the student kit (all read-only), and its private job directory (writable). The kit is
exactly what a student holds (``grader.kit``): no reference, no catalogued mistake, no
hidden case. The course directory, the instructor's side of the package, the gradebook,
the outputs and the other submissions are simply not there.

Grading refuses to run without a working bubblewrap unless ``--sandbox none`` is given.
Then the kernel still runs in a private directory outside the course, with a scrubbed
environment and resource limits, and as ``nobody`` when the grader runs as root; but it
can read what that user can read and reach the network, and ``Sandbox.describe`` says so.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

NOBODY = 65534
LIMITED_EXEC = Path(__file__).with_name("_limited_exec.py")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Inside bubblewrap, a grader that runs as root is root-owned files' owner: hide what in
# these trees only their owner may read (/etc/shadow, private keys).
PRIVATE_SCAN = ("/etc",)


@dataclass(frozen=True)
class Limits:
    """Per-notebook limits. ``timeout`` is per cell; ``wall`` caps the whole notebook."""

    timeout: float = 30.0
    memory_mb: int = 2048
    wall: float = 600.0
    max_restarts: int = 3
    file_mb: int = 1024
    output_chars: int = 100_000  # kept per cell; the rest is cut with a note
    reply_chars: int = 32 * 1024 * 1024  # the most a learner's kernel may send back per request
    startup: float = 60.0  # seconds for a kernel to start

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * 1024 * 1024


@dataclass(frozen=True)
class Sandbox:
    kind: str  # "bwrap" or "none"
    readonly: tuple[str, ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()  # (target, link) pairs, e.g. usr-merged /bin
    masked: tuple[str, ...] = ()  # files and folders hidden inside the read-only ones
    uid: int = -1  # run as this user in the fallback (-1: keep the current one)
    reason: str = ""  # why there is no bubblewrap
    bwrap: str = "bwrap"
    extra: tuple[str, ...] = field(default=())
    sized_tmp: bool = True  # bubblewrap >= 0.6 can cap the size of the sandbox's /tmp

    def describe(self) -> str:
        if self.kind == "bwrap":
            return ("bubblewrap: each notebook runs with no network, its own processes, and a "
                    "read-only system; it sees only its own private directory, not the course, "
                    "the gradebook, the outputs or other submissions")
        who = "as user nobody, " if self.uid >= 0 else ""
        return (f"NOT isolated ({self.reason}): each notebook runs {who}in a private directory "
                "outside the course, with memory, time and file-size limits, but it can reach "
                "the network and any file this user may read or write. Install bubblewrap "
                "(Debian/Ubuntu: apt-get install bubblewrap) to isolate submissions")

    def command(self, cmd: list[str], job_dir: Path, workdir: Path, limits: Limits) -> list[str]:
        """``cmd`` wrapped in the resource limits and, with bubblewrap, the sandbox."""
        limited = [sys.executable, "-I", "-S", str(LIMITED_EXEC), str(limits.memory_bytes),
                   str(limits.file_mb * 1024 * 1024), str(self.uid), "--"]
        if self.kind != "bwrap":
            return limited + cmd
        return limited + self.bwrap_args(job_dir, workdir, limits) + cmd

    def hand_over(self, path: Path) -> None:
        """Make ``path`` (a job directory) writable for the user the kernel runs as."""
        if self.kind == "bwrap" or self.uid < 0:
            return
        for root, dirs, files in os.walk(path):
            for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                os.chown(name, self.uid, self.uid, follow_symlinks=False)

    def bwrap_args(self, job_dir: Path, workdir: Path, limits: Limits) -> list[str]:
        args = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                "--cap-drop", "ALL", "--unsetenv", "JPY_PARENT_PID", *self.extra]
        for target, link in self.symlinks:
            args += ["--symlink", target, link]
        # The private /tmp comes first: a course or venv that lives under /tmp (a fresh
        # clone in CI, say) is then bound on top of it instead of being hidden by it.
        if self.sized_tmp:
            args += ["--size", str(limits.memory_bytes)]
        args += ["--tmpfs", "/tmp"]
        for path in self.readonly:
            args += ["--ro-bind", path, path]
        for path in self.masked:
            args += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
        args += ["--proc", "/proc", "--dev", "/dev",
                 "--bind", str(job_dir), str(job_dir), "--chdir", str(workdir), "--"]
        return args


def _covered(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _contains(path: str, secret: str) -> bool:
    """Whether binding ``path`` would expose ``secret`` (it is ``secret`` or an ancestor)."""
    return secret == path or secret.startswith(path.rstrip("/") + "/")


def readonly_paths(kit: Path, hidden: list[Path]) -> tuple[list[str], list[tuple[str, str]]]:
    """What a sandboxed kernel may read: system directories, the Python installation and
    the student kit, never anything that contains one of ``hidden``."""
    # The checkout this grader runs from holds the instructor's side (references,
    # solutions, maybe a gradebook): only its virtual environment may be seen.
    checkout = Path(__file__).resolve().parents[2]
    hidden = [*hidden, checkout]
    secrets = [os.path.realpath(p) for p in hidden] + [str(p) for p in hidden]
    symlinks, binds = [], []

    def add(path: str) -> None:
        if not path or not os.path.exists(path) or path == "/":
            return
        for candidate in {path, os.path.realpath(path)}:
            if any(_contains(candidate, s) for s in secrets) or _covered(candidate, binds):
                continue
            binds.append(candidate)

    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            symlinks.append((os.readlink(d), d))
        else:
            add(d)
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(sys.executable)):
        add(p)
    # Library directories only: not the directory the grader was started from, which may
    # be the course or a home directory.
    here = {os.path.realpath(os.getcwd()), os.path.realpath(os.path.dirname(sys.argv[0] or "."))}
    for entry in sys.path:
        if entry and os.path.isabs(entry) and os.path.realpath(entry) not in here:
            add(entry)
    # The student kit: the only course code the kernel may import.
    binds.append(str(kit.resolve()))
    # Deeper paths first would be shadowed by a later parent bind; sort parents first.
    binds.sort(key=lambda p: (p.count("/"), p))
    return binds, symlinks


def private_entries(tops=PRIVATE_SCAN) -> list[str]:
    """Files and folders under ``tops`` that other users may not read."""
    found = []
    for top in tops:
        for root, dirs, files in os.walk(top):
            for name in list(dirs):
                path = os.path.join(root, name)
                mode = os.lstat(path).st_mode
                if not stat.S_ISLNK(mode) and (mode & 0o005) != 0o005:
                    found.append(path)
                    dirs.remove(name)
            for name in files:
                path = os.path.join(root, name)
                try:
                    mode = os.lstat(path).st_mode
                except OSError:
                    continue
                if stat.S_ISREG(mode) and not mode & stat.S_IROTH:
                    found.append(path)
    return found


def _probe(sandbox: Sandbox, scratch: Path, limits: Limits) -> str:
    """Empty string if ``sandbox`` can start a Python here, else why not."""
    job = Path(scratch) / "probe"
    work = job / "work"
    work.mkdir(parents=True, exist_ok=True)
    sandbox.hand_over(job)
    cmd = sandbox.command([sys.executable, "-c", "import os; open('ok', 'w').write('ok')"],
                          job, work, limits)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        ok = (work / "ok").exists()
        shutil.rmtree(job, ignore_errors=True)
    if done.returncode != 0 or not ok:
        return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return ""


NO_SANDBOX = (
    "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) so that each submission "
    "runs with no network, no view of the course or of other submissions, and only the "
    "student kit to import. To grade without it anyway, give --sandbox none: submissions then "
    "run as an ordinary (unprivileged, if the grader is root) process that can read what that "
    "user can read, including the course and its reference solutions, and reach the network."
)


class SandboxUnavailable(RuntimeError):
    pass


def detect(mode: str, kit: Path, hidden: list[Path], scratch: Path, limits: Limits) -> Sandbox:
    """The sandbox to use. ``mode`` is "bwrap" (required: raises
    :class:`SandboxUnavailable` if it does not work here) or "none"."""
    if mode == "none":
        return _fallback("--sandbox none was given", scratch, limits)
    binary = shutil.which("bwrap")
    if binary is None:
        reason = "bubblewrap (bwrap) is not installed"
    elif not sys.platform.startswith("linux"):
        reason = "bubblewrap needs Linux"
    else:
        binds, links = readonly_paths(kit, hidden)
        nobody = ("--uid", str(NOBODY), "--gid", str(NOBODY))
        for extra, sized in ((nobody, True), (nobody, False), ((), True), ((), False)):
            box = Sandbox("bwrap", tuple(binds), tuple(links), tuple(private_entries()), bwrap=binary,
                          extra=extra, sized_tmp=sized)
            problem = _probe(box, scratch, limits)
            if not problem:
                return box
        reason = f"bwrap could not start a sandbox here: {problem}"
    raise SandboxUnavailable(reason)


def _fallback(reason: str, scratch: Path, limits: Limits) -> Sandbox:
    """No namespaces: drop root to nobody if nobody can still run this Python."""
    if hasattr(os, "getuid") and os.getuid() == 0:
        box = Sandbox("none", uid=NOBODY, reason=reason)
        if not _probe(box, scratch, limits):
            return box
    return Sandbox("none", uid=-1, reason=reason)
