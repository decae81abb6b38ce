"""Where student code runs, and with which limits.

With bubblewrap (``bwrap``), each kernel gets its own namespaces: no network, its own
process tree, and a file system that holds only the system, the Python installation and
the student kit (all read-only), the job's input folder (read-only) and a size-limited
tmpfs of its own for everything it writes (``/job``, and ``/tmp``). The kit is exactly what
a student holds (``grader.kit``): no reference, no catalogued mistake, no hidden case.
The course directory, the instructor's side of the package, the gradebook, the outputs
and the other submissions are simply not there, and nothing the kernel writes lands on
the grader's disk.

Whoever runs ``grade``, the kernel runs as an unprivileged user: when the grader is root,
bubblewrap runs without a user namespace and the sandbox's first program
(``_sandbox_start.py``) becomes a user of the kernel's own, with no capability left; when
it is not root, bubblewrap maps the grader's own user into a user namespace.

Grading refuses to run without a working bubblewrap unless ``--sandbox none`` is given.
Then the kernel still runs in a private directory outside the course, with a scrubbed
environment and resource limits, and as a user of its own when the grader runs as root;
but it can read what that user can read and reach the network, and ``Sandbox.describe``
says so.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from . import cgroup

LIMITED_EXEC = Path(__file__).with_name("_limited_exec.py")
START = Path(__file__).with_name("_sandbox_start.py")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Inside bubblewrap, a grader that runs as root is root-owned files' owner: hide what in
# these trees only their owner may read (/etc/shadow, private keys).
PRIVATE_SCAN = ("/etc",)
BOX = "/job"  # the sandbox's writable tmpfs
INBOX = "/job-in"  # the job's input folder, read-only
# Kernels of a root grader run as users of their own: BASE_UID + pid * 16 + a counter,
# unique among the kernels alive on this machine, and no account's.
BASE_UID = 1 << 30


@dataclass(frozen=True)
class Limits:
    """Per-notebook limits. ``timeout`` is per cell; ``wall`` caps the whole notebook."""

    timeout: float = 30.0
    memory_mb: int = 2048
    wall: float = 600.0
    max_restarts: int = 3
    file_mb: int = 1024
    disk_mb: int = 512  # what a kernel may write, in its working folders and in /tmp each
    processes: int = 256  # processes and threads a kernel may run at once
    output_chars: int = 100_000  # kept per cell; the rest is cut with a note
    reply_chars: int = 32 * 1024 * 1024  # the most a learner's kernel may send back per request
    startup: float = 60.0  # seconds for a kernel to start

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * 1024 * 1024


_uids = 0


def kernel_uid() -> int:
    """A user id for one kernel of a root grader (-1 when the grader is not root)."""
    global _uids
    if not hasattr(os, "getuid") or os.getuid() != 0:
        return -1
    _uids += 1
    return BASE_UID + (os.getpid() % (1 << 22)) * 16 + _uids % 16


class SandboxKind(StrEnum):
    BWRAP = "bwrap"  # bubblewrap: namespaces of its own
    NONE = "none"  # a private directory and limits only (--sandbox none)


@dataclass(frozen=True)
class Sandbox:
    kind: SandboxKind  # given as its value ("bwrap", "none") too
    readonly: tuple[str, ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()  # (target, link) pairs, e.g. usr-merged /bin
    masked: tuple[str, ...] = ()  # files and folders hidden inside the read-only ones
    reason: str = ""  # why there is no bubblewrap
    bwrap: str = "bwrap"
    userns: bool = True  # bubblewrap maps the user into a namespace (a grader that is not root)
    sized_tmp: bool = True  # bubblewrap >= 0.6 can cap the size of a tmpfs
    drop: bool = True  # a root grader runs each kernel as a user of its own (see kernel_uid)
    cgroups: bool = False  # each kernel gets a memory cgroup (grader.grading.notebook.cgroup)
    no_cgroup: str = ""  # why not
    warm: bool = True  # kernels are forked from a zygote (grader.grading.notebook.zygote); else cold

    def __post_init__(self):
        object.__setattr__(self, "kind", SandboxKind(self.kind))  # a ValueError names a wrong one

    @property
    def bubblewrap(self) -> bool:
        return self.kind is SandboxKind.BWRAP

    def kernel_uid(self) -> int:
        """The user the next kernel runs as (-1: the grader's own)."""
        return kernel_uid() if self.drop else -1

    def describe(self) -> str:
        if self.bubblewrap:
            sized = "" if self.sized_tmp else " (this bubblewrap cannot cap what a kernel writes)"
            return ("bubblewrap: each notebook runs as an unprivileged user with no network, its "
                    "own processes, a read-only system and a private tmpfs" + sized + "; it sees "
                    "neither the course, the gradebook, the outputs nor other submissions; "
                    + self.describe_memory() + self.describe_start())
        who = "as a user of its own, " if self.drop and os.getuid() == 0 else \
            "AS THE GRADER'S USER, " if os.getuid() == 0 else ""
        return (f"NOT isolated ({self.reason}): each notebook runs {who}in a private directory "
                "outside the course, with memory, time and file-size limits, but it can reach "
                "the network and any file this user may read or write; " + self.describe_memory()
                + self.describe_start()
                + ". Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) to isolate "
                "submissions")

    def describe_start(self) -> str:
        return ("; kernels start warm, each forked from a zygote into its own sandbox" if self.warm
                else "; kernels start cold, each from nothing (--kernels cold)")

    def describe_memory(self) -> str:
        if self.cgroups:
            return ("memory is measured by a cgroup per notebook: everything it holds (resident "
                    "pages, page cache, its tmpfs folders, memfds, /dev/shm, pipe and socket "
                    "buffers) counts, and within --memory")
        return (f"memory is measured WITHOUT a cgroup ({self.no_cgroup or 'none was tried'}): as "
                "the sum, read from outside, of resident pages, the sandbox's tmpfs folders, "
                "memfds and deleted files held open, and pipe and socket buffers; only "
                "resident pages count within --memory")

    def box(self, job_dir: Path, n: int) -> str:
        """The folder kernel ``n`` of the job in ``job_dir`` writes in, as the kernel sees it."""
        return BOX if self.bubblewrap else str(job_dir / f"box-{n}")

    def inbox(self, job_dir: Path) -> str:
        return INBOX if self.bubblewrap else str(job_dir / "in")

    def command(self, cmd: list[str], job_dir: Path, n: int, uid: int, limits: Limits,
                cgroup: str = "") -> list[str]:
        """``cmd`` wrapped in the resource limits, the sandbox, and the start program,
        for kernel ``n`` of the job in ``job_dir`` (its ``in/`` folder is read-only
        input), run as ``uid`` (-1: the current user), in the memory cgroup whose
        ``cgroup.procs`` is ``cgroup`` (empty: none)."""
        limited = [sys.executable, "-I", "-S", str(LIMITED_EXEC), str(limits.memory_bytes),
                   str(limits.file_mb * 1024 * 1024), cgroup, "--"]
        start = [sys.executable, "-I", "-S", "-c", START.read_text(), self.box(job_dir, n),
                 self.inbox(job_dir), str(uid), str(limits.processes if self.bubblewrap or uid >= 0
                                                   else 0), "--"]
        if not self.bubblewrap:
            return limited + start + cmd
        return limited + self.bwrap_args(job_dir, limits) + start + cmd

    def bwrap_args(self, job_dir: Path, limits: Limits) -> list[str]:
        args = [self.bwrap, "--die-with-parent", "--new-session"]
        if self.userns:
            args += ["--unshare-all", "--cap-drop", "ALL"]
        else:  # root: no user namespace; the start program drops to the kernel's user
            args += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                     "--unshare-cgroup-try", "--cap-drop", "ALL"]
            args += [a for cap in ("CAP_CHOWN", "CAP_SETUID", "CAP_SETGID") for a in ("--cap-add", cap)]
        args += ["--unsetenv", "JPY_PARENT_PID"]
        for target, link in self.symlinks:
            args += ["--symlink", target, link]
        # The private /tmp comes first: a course or venv that lives under /tmp (a fresh
        # clone in CI, say) is then bound on top of it instead of being hidden by it.
        size = ["--size", str(limits.disk_mb * 1024 * 1024)] if self.sized_tmp else []
        args += [*size, "--perms", "1777", "--tmpfs", "/tmp"]
        made = {"/", "/tmp"}
        for path in self.readonly:
            # bubblewrap makes a bound path's missing parents readable by root only.
            for parent in reversed(Path(path).parents):
                if str(parent) not in made and not _covered(str(parent), list(self.readonly)):
                    args += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
            args += ["--ro-bind", path, path]
        for path in self.masked:
            args += ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
        args += ["--proc", "/proc", "--remount-ro", "/proc", "--dev", "/dev",
                 *size, "--tmpfs", BOX, "--ro-bind", str(job_dir / "in"), INBOX, "--chdir", "/", "--"]
        return args


def box_env(env: dict, box: str) -> dict:
    """``env`` with the kernel's own folders, all in ``box``."""
    home = f"{box}/home"
    return {**env, "HOME": home, "TMPDIR": f"{box}/tmp", "MPLCONFIGDIR": f"{home}/.matplotlib",
            "IPYTHONDIR": f"{home}/.ipython", "JUPYTER_RUNTIME_DIR": f"{home}/.jupyter-runtime"}


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
    checkout = Path(__file__).resolve().parents[3]
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
    """Empty string if ``sandbox`` can start a Python here, as the user a kernel runs as,
    and let it write in its working folder; else why not."""
    job = Path(tempfile.mkdtemp(prefix="probe-", dir=scratch))
    os.chmod(job, 0o711)
    (job / "in").mkdir(mode=0o755)
    cmd = sandbox.command([sys.executable, "-c", "import os; open('ok', 'w').write('ok'); "
                           "print(os.getcwd(), os.getuid())"], job, 0, sandbox.kernel_uid(), limits)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=job)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    finally:
        shutil.rmtree(job, ignore_errors=True)
    if done.returncode != 0 or not done.stdout.strip():
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


def detect(mode: str, kit: Path, hidden: list[Path], scratch: Path, limits: Limits,
           warm: bool = True) -> Sandbox:
    """The sandbox to use. ``mode`` is "bwrap" (required: raises
    :class:`SandboxUnavailable` if it does not work here) or "none". ``warm``: kernels
    are forked from a zygote (``grader.grading.notebook.zygote``); else each starts from nothing."""
    memory = {"cgroups": False, "no_cgroup": "cgroups need Linux", "warm": warm}
    if sys.platform.startswith("linux"):
        why_not = cgroup.unavailable()
        memory = {"cgroups": not why_not, "no_cgroup": why_not}
    if mode == "none":
        reason = "--sandbox none was given"
        box = Sandbox("none", reason=reason, **memory)
        if os.getuid() == 0 and _probe(box, scratch, limits):  # the Python is root's alone
            box = Sandbox("none", reason=reason, drop=False, **memory)
        return box
    binary = shutil.which("bwrap")
    if binary is None:
        reason = "bubblewrap (bwrap) is not installed"
    elif not sys.platform.startswith("linux"):
        reason = "bubblewrap needs Linux"
    else:
        binds, links = readonly_paths(kit, hidden)
        userns = os.getuid() != 0
        # A warm kernel of a grader that is not root would join a user namespace from
        # outside: not tried yet, so such kernels start cold.
        memory["warm"] = warm and not userns
        for sized in (True, False):
            box = Sandbox("bwrap", tuple(binds), tuple(links), tuple(private_entries()), bwrap=binary,
                          userns=userns, sized_tmp=sized, **memory)
            problem = _probe(box, scratch, limits)
            if not problem:
                return box
        reason = f"bwrap could not start a sandbox here: {problem}"
    raise SandboxUnavailable(reason)
