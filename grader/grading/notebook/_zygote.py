"""The zygote: a Python that has imported what every kernel of one notebook imports, and
forks one kernel per request, each inside a sandbox already made for it.

Run as ``python -S -P -c <this file's text> FD PRELOAD``, with the kernels' own clean
environment, so that it imports nothing of the grader's: only the libraries in
``PRELOAD`` (a JSON list) and ipykernel, from the same path a kernel started from nothing
uses. ``FD`` is its end of a ``SOCK_SEQPACKET`` socket pair with the grading process. It
never runs a line of a submission: only the children it forks do, after they have left it.

It answers ``ready`` once its imports are done (or ``no: WHY``), then reads requests. A
request is one JSON message with two descriptors: where the kernel's stdout and stderr go,
and the status pipe. For each, it forks a child (the *entrant*) that:

1. enters the kernel's memory cgroup and takes its resource limits (what
   ``_limited_exec.py`` gives a kernel started from nothing);
2. joins every namespace of the request's *hold* process that differs from its own: the
   hold is the first process of a sandbox made for this kernel alone, by the same command
   as for a kernel started from nothing (bubblewrap: no network, its own processes, a
   read-only system, tmpfs of its own); then takes the hold's root as its own;
3. forks the kernel, which is then inside the sandbox's process namespace; writes
   ``pid N`` (its number outside) to the status pipe, waits for it, and writes
   ``exit CODE``.

The kernel then does what ``_sandbox_start.py`` does before a kernel started from nothing
runs: a session of its own, no new privileges, a cap on processes, its folders (made by the
hold, which stays root so that the kernel cannot end its own sandbox) and the kernel's own
user (no capability left, which is checked), its working folder; it closes every descriptor
but its output, takes the kernel's environment, and starts ipykernel. The zygote's state
(modules, memory) is copied, never shared: nothing a kernel does reaches the zygote or
the next kernel.
"""
import ctypes
import gc
import json
import os
import resource
import signal
import socket
import sys
import traceback

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
# The order nsenter joins them in: the user namespace first (it grants the rights to join
# the others), the mount namespace last (after it, /proc/HOLD is not where it was).
NAMESPACES = ("user", "cgroup", "ipc", "uts", "net", "pid", "mnt")
LIBC = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def capabilities() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _drop_bounding_set() -> None:
    """No capability can be gained again, not even by a program run later."""
    cap = 0
    while LIBC.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:
        cap += 1


def drop_capabilities() -> None:
    """No capability held (a process that joined a user namespace holds them all there,
    and no ``exec`` will clear them)."""
    data = (_CapData * 2)()
    _check(LIBC.capset(ctypes.byref(_CapHeader(0x20080522, 0)), data), "capset")


def _limits(req: dict) -> None:
    if req["cgroup"]:
        with open(req["cgroup"], "w") as f:
            f.write(str(os.getpid()))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for limit, value in ((getattr(resource, "RLIMIT_DATA", None), req["data"]),
                         (resource.RLIMIT_FSIZE, req["fsize"])):
        if limit is not None and value > 0:
            try:
                resource.setrlimit(limit, (value, value))
            except (ValueError, OSError):
                pass


def _enter(hold: int) -> None:
    """Join the hold's namespaces (those that differ from ours) and take its root."""
    joins = []
    for name in NAMESPACES:
        theirs = f"/proc/{hold}/ns/{name}"
        if not os.path.exists(theirs):
            continue
        if os.stat(theirs).st_ino != os.stat(f"/proc/self/ns/{name}").st_ino:
            joins.append((name, os.open(theirs, os.O_RDONLY)))
    root = os.open(f"/proc/{hold}/root", os.O_RDONLY | os.O_DIRECTORY)
    for name, fd in joins:
        _check(LIBC.setns(fd, 0), f"joining the sandbox's {name} namespace")
        os.close(fd)
    os.fchdir(root)
    os.chroot(".")
    os.close(root)


def _hand_over(box: str, uid: int) -> None:
    """Give the kernel's user its folders. The hold made them (as root, so that the kernel
    cannot end it), and nothing else has written there yet: nothing in them to follow."""
    for root, dirs, files in os.walk(box, topdown=False):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)
        if root == box or os.path.dirname(root) == box:
            os.chmod(root, 0o700)
    os.chown(box, uid, uid, follow_symlinks=False)


def _become_kernel(req: dict, out: int, entrant: int) -> None:
    """In the forked kernel: what _sandbox_start.py does, then ipykernel."""
    os.setsid()
    _check(LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    if os.getppid() not in (0, entrant):  # the entrant is already gone
        os._exit(1)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    _check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "forbidding new privileges")
    if req["nproc"] > 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (req["nproc"], req["nproc"]))
    _drop_bounding_set()  # as bubblewrap's --cap-drop ALL leaves a kernel started from nothing
    uid = req["uid"]
    if uid >= 0 and os.getuid() == 0:
        _hand_over(req["box"], uid)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise SystemExit("the sandbox could not drop root")
    if capabilities():
        drop_capabilities()
    if capabilities():
        raise SystemExit("the kernel could not drop its capabilities")
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    _forget_the_zygote()
    sys.argv = list(req["argv"])
    from ipykernel import kernelapp
    kernelapp.launch_new_instance()


def _forget_the_zygote() -> None:
    """What the imports cached of the zygote's own process: its folders and its random
    state. A kernel started from nothing has its own; so does this one."""
    import tempfile

    tempfile.tempdir = None
    mpl = sys.modules.get("matplotlib")
    if mpl is not None:  # get_configdir and get_cachedir remember their first answer
        for name in ("get_configdir", "get_cachedir"):
            cached = getattr(mpl, name, None)
            names = getattr(getattr(cached, "__code__", None), "co_freevars", ())
            if "called" in names:
                cached.__closure__[names.index("called")].cell_contents = False
        style = sys.modules.get("matplotlib.style.core")
        if style is not None and hasattr(style, "USER_LIBRARY_PATHS"):
            style.USER_LIBRARY_PATHS = [os.path.join(mpl.get_configdir(), "stylelib")]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _entrant(req: dict, out: int, status: int) -> None:
    """The forked child: limits, the sandbox, then the kernel; report its number and end."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _check(LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    _limits(req)
    _enter(req["hold"])
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(status)
            _become_kernel(req, out, me)
            code = 0
        except SystemExit as exc:
            os.write(out, f"the kernel did not start: {exc}\n".encode())
        except BaseException:  # noqa: BLE001 (told through its output)
            os.write(out, traceback.format_exc().encode(errors="replace"))
        finally:
            os._exit(code)
    os.close(out)
    os.write(status, f"pid {pid}\n".encode())
    _, wait_status = os.waitpid(pid, 0)
    os.write(status, f"exit {os.waitstatus_to_exitcode(wait_status)}\n".encode())


def _serve(sock: socket.socket) -> None:
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 1 << 20, 2)
        except OSError:
            return
        if not msg:
            return
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        out, status = fds
        req = json.loads(msg)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(sock.detach())
                _entrant(req, out, status)
            except BaseException:  # noqa: BLE001 (told through the kernel's output)
                code = 2
                try:
                    os.write(out, traceback.format_exc().encode(errors="replace"))
                except OSError:
                    pass
            finally:
                os._exit(code)
        os.close(out)
        os.close(status)


def main(argv: list[str]) -> None:
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    sock = socket.socket(fileno=int(argv[0]))
    for name in json.loads(argv[1]):
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 (the notebook will say so in its own cell)
            pass
    from ipykernel import kernelapp  # noqa: F401 (imported here once for every kernel)

    tasks = len(os.listdir("/proc/self/task"))
    if tasks > 1:  # a fork copies one thread: the others' locks would stay held
        sock.send(f"no: the zygote runs {tasks} threads after its imports".encode())
        return
    gc.collect()
    gc.freeze()  # the imports' objects are never touched again by a collection: no copies
    # Entrants are reaped as they end, and waited for (not ignored), so that the CPU their
    # kernels used is counted in this process's children, and so up to the grader's.
    signal.signal(signal.SIGCHLD, _reap)
    sock.send(b"ready")
    _serve(sock)
    # Closed: the kernels forked from it may still run (an entrant dies with the zygote,
    # and its kernel with it), so it ends after the last of them.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    try:
        while True:
            os.waitpid(-1, 0)
    except ChildProcessError:
        pass


def _reap(*_) -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


if __name__ == "__main__":
    main(sys.argv[1:])
