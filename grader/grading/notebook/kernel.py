"""Run a notebook's code cells in a sandboxed kernel, one cell at a time.

Nothing a cell does stops the run:

* a cell that runs past the per-cell timeout is interrupted; if the kernel does not come
  back, it is killed like a dead one;
* a kernel that dies (``os._exit``, a crash) or outgrows the memory limit (its memory
  cgroup's, ``grader.grading.notebook.cgroup``, where the grader can make one) is replaced by a
  fresh one; the cells that ran before are run again, silently, so that later cells
  find what they need, and the run goes on with the next cell;
* the whole notebook has a wall-clock cap; cells after it are not run.

Each cell gets a :class:`CellRun` that says what happened, and an error output that
explains it in the learner's terms.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from queue import Empty

from jupyter_client import KernelManager
from jupyter_client.utils import run_sync

from . import cgroup as cgroups, nbjson, zygote as zygotes
from .measure import SAMPLE, MemoryWindow, children as _children
from .sandbox import BOX, Limits, Sandbox, box_env
from .jupyter_types import OUTPUTS, Msg, Output
from .status import FATAL, FINISHED, RunStatus
from .structure import depth
from ..classroom.submissions import MAX_DEPTH

GRACE = 3.0  # seconds a kernel gets to answer an interrupt
POLL = 0.1
MEMORY_POLL = 0.25


@dataclass
class CellRun:
    index: int
    status: RunStatus
    ename: str = ""
    evalue: str = ""
    seconds: float = 0.0
    detail: str = ""  # what happened, in the learner's terms (for incidents)

    @property
    def fatal(self) -> bool:
        """The kernel is gone or unusable after this cell."""
        return self.status in FATAL

    def __post_init__(self):
        self.status = RunStatus(self.status)  # a misspelt status is an error, here


# What a figure's output holds, as ipykernel's options: drawn as a PNG, as in JupyterLab;
# or its text alone ("<Figure size 640x480 with 1 Axes>"), never drawn, which spares
# most of the CPU time of a notebook whose cells draw.
FIGURES = {"png": [], "text": ["--InlineBackend.figure_formats=set()"]}


class KernelStartError(RuntimeError):
    pass


class _Manager(KernelManager):
    """A kernel manager that starts the kernel through our sandbox command and never
    touches the kernel's sockets by their path (:class:`Kernel` connects to them)."""

    also_alive = None  # a warm kernel: whether the process the zygote forked still runs

    def format_kernel_cmd(self, extra_arguments=None):  # noqa: ARG002 (jupyter_client's signature)
        return list(self.sandboxed_command)

    async def _async_is_alive(self) -> bool:
        alive = await super()._async_is_alive()
        return alive and (self.also_alive is None or self.also_alive())

    is_alive = run_sync(_async_is_alive)

    def write_connection_file(self, **kwargs):
        super().write_connection_file(**kwargs)
        # In the job's in/ folder, which the kernel can read and not write; it runs as
        # another user when the grader is root.
        os.chmod(self.connection_file, 0o644)

    def _connect_control_socket(self) -> None:
        """Not by path: the socket files are in a folder the kernel can write."""

    def cleanup_ipc_files(self) -> None:
        """The sockets live and die with the sandbox's own folder."""


def launcher(preload: tuple[str, ...]) -> str:
    """The kernel's program: import ``preload`` (the libraries the notebook's first cell
    will import anyway; a kernel launched ahead of its job does this while the previous
    notebook runs), then start ipykernel. A module that fails to import is left to the
    notebook, which will say so in its own cell."""
    modules = [m for m in preload if all(part.isidentifier() for part in m.split("."))]
    return (f"for _m in {modules!r}:\n"
            f"    try:\n"
            f"        __import__(_m)\n"
            f"    except Exception:\n"
            f"        pass\n"
            f"_m = None\n"
            f"del _m\n"
            f"from ipykernel import kernelapp\n"
            f"kernelapp.launch_new_instance()\n")


def _limit_iopub(kc, max_bytes: int) -> None:
    """Make ``kc`` refuse any IOPub message over ``max_bytes`` (ZeroMQ drops it and
    reconnects), so a kernel that prints or returns gigabytes cannot fill the grader's
    memory."""
    import zmq

    def connect_iopub(identity=None):
        sock = kc.context.socket(zmq.SUB)
        sock.linger = 1000
        sock.setsockopt(zmq.MAXMSGSIZE, max_bytes)
        if identity:
            sock.identity = identity
        sock.connect(kc._make_url("iopub"))
        sock.setsockopt(zmq.SUBSCRIBE, b"")
        return sock

    kc.connect_iopub = connect_iopub


def _tree_rss(root: int) -> int:
    """Resident memory of ``root`` and all its descendants, in bytes (Linux; else 0)."""
    if not sys.platform.startswith("linux"):
        return 0
    children, rss = defaultdict(list), {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        pid = int(entry.name)
        children[int(fields[1])].append(pid)
        rss[pid] = int(fields[21])
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += children.get(pid, [])
    return total * os.sysconf("SC_PAGE_SIZE")


IMAGE_CAP = 16 * 2**20  # characters of figures (base64 PNG and the like) one cell may show
IMAGES = ("image/", "application/pdf")
FIGURE_LABEL = 10_000  # characters of text beside a figure (its text/plain repr) not counted as text


def _sizes(kind: str, content: dict, out) -> tuple[int, int]:
    """An output's size as text and as figures: a figure is counted apart from the text
    cap, so that a cell that draws a plot keeps it in the feedback."""
    if kind == Output.STREAM:
        return len(out.text), 0
    data = content.get("data") if isinstance(content, dict) else None
    if kind == Output.ERROR or not isinstance(data, dict):
        return len(str(content)), 0
    images = sum(len(str(v)) for k, v in data.items() if str(k).startswith(IMAGES))
    return len(str(content)) - images, images


class _Outputs:
    """Collects a cell's outputs from kernel messages, up to a size cap for text and
    another for figures."""

    def __init__(self, cap: int, image_cap: int = IMAGE_CAP):
        self.cap, self.size, self.cut = cap, 0, False
        self.image_cap, self.image_size, self.images_cut = image_cap, 0, False
        self.outputs: list = []
        self.clear_pending = False
        self.execution_count = None
        self.error: tuple[str, str] | None = None  # the last error output's name and value
        self.too_deep = False  # an output was left out: nested deeper than a notebook may be

    def add(self, msg: dict) -> None:
        kind = msg["msg_type"]
        content = msg["content"]
        if kind == Msg.EXECUTE_INPUT:
            self.execution_count = content.get("execution_count")
            return
        if kind == Msg.CLEAR_OUTPUT:
            if content.get("wait"):
                self.clear_pending = True
            else:
                self.outputs, self.size, self.image_size = [], 0, 0
            return
        if kind not in OUTPUTS:
            return
        if self.clear_pending:
            self.outputs, self.size, self.image_size, self.clear_pending = [], 0, 0, False
        if depth(content) > MAX_DEPTH:  # the grader's own work on it must not recurse that deep
            self.too_deep = True
            return
        out = nbjson.output_from_msg(msg)
        size, image = _sizes(kind, content, out)
        if image and self.image_size + image > self.image_cap:
            self.images_cut = True
            return
        self.image_size += image
        if image and size <= FIGURE_LABEL:  # a figure and its label: the figures' cap holds it
            size = 0
        if kind != Output.ERROR and self.size + size > self.cap:
            self.cut = True
            room = self.cap - self.size
            if kind != Output.STREAM or room <= 0:
                return
            out.text, size = out.text[:room], room
        self.size += size
        last = self.outputs[-1] if self.outputs else None
        if kind == Output.STREAM and last is not None and last.output_type == Output.STREAM and \
                last.name == out.name:
            last.text += out.text
        else:
            self.outputs.append(out)

    def finish(self) -> list:
        if self.cut:
            note = f"\n[output cut: this cell printed more than {self.cap:,} characters]\n"
            self.outputs.append(nbjson.new_output("stream", name="stderr", text=note))
        if self.images_cut:
            note = (f"\n[figure left out: this cell's figures came to more than "
                    f"{self.image_cap // 2**20} MB]\n")
            self.outputs.append(nbjson.new_output("stream", name="stderr", text=note))
        if self.too_deep:
            note = (f"\n[output left out: its data was nested more than {MAX_DEPTH} levels deep, "
                    f"deeper than a notebook may be]\n")
            self.outputs.append(nbjson.new_output("stream", name="stderr", text=note))
        return self.outputs


class _Reply:
    """Keeps the last output of one MIME type (the agent's reply) and the error, if any."""

    def __init__(self, mime: str, cap: int):
        self.mime, self.cap = mime, cap
        self.reply: str | None = None
        self.error: tuple[str, str] | None = None
        self.too_big = False

    def add(self, msg: dict) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == Output.ERROR:
            self.error = (str(content.get("ename", ""))[:200], str(content.get("evalue", ""))[:2000])
        elif kind == Output.DISPLAY_DATA:
            data = content.get("data", {})
            text = data.get(self.mime) if isinstance(data, dict) else None
            if isinstance(text, str):
                if len(text) > self.cap:
                    self.too_big, self.reply = True, None
                else:
                    self.reply = text


def _readable(msg) -> bool:
    """Whether ``msg`` has the shape of a Jupyter message. The kernel runs student code,
    which can write anything to its sockets, and a kernel out of memory can leave a message
    half sent (the next one then fails its signature check): such a message is skipped,
    never trusted and never allowed to stop grading."""
    return (isinstance(msg, dict) and isinstance(msg.get("parent_header"), dict)
            and isinstance(msg.get("content"), dict) and isinstance(msg.get("msg_type"), str))


def error_output(ename: str, evalue: str):
    return nbjson.new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


CHANNELS = ("shell", "iopub", "stdin", "control", "hb")
LOG_TAIL = 8192  # bytes of the kernel's own stdout and stderr kept, for a start that fails


class _Tail(threading.Thread):
    """Drains a pipe, keeping only its last bytes: what a kernel prints outside its cells
    (a start that fails) is read from memory, never from a file it could replace."""

    def __init__(self, fd: int):
        super().__init__(daemon=True)
        self.fd, self.data = fd, b""

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                self.data = (self.data + chunk)[-LOG_TAIL:]
        except OSError:
            pass
        finally:
            os.close(self.fd)

    def lines(self, n: int = 5) -> list[str]:
        return self.data.decode("utf-8", "replace").strip().splitlines()[-n:]


def _open_beneath(fd: int, parts, last_kind=None) -> int:
    """An ``O_PATH`` descriptor for ``parts`` beneath the folder ``fd``, following no
    symbolic link on the way; with ``last_kind``, the last part must be of that kind
    (a ``stat.S_IS*`` test). Raises ``OSError``."""
    current = fd
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_PATH | os.O_NOFOLLOW | (0 if last and last_kind else os.O_DIRECTORY)
            found = os.open(part, flags, dir_fd=current)
            if current != fd:
                os.close(current)
            current = found
        if last_kind is not None and not last_kind(os.fstat(current).st_mode):
            raise OSError(f"{'/'.join(parts)} is not what the kernel should have made")
        return current
    except BaseException:
        if current != fd:
            os.close(current)
        raise


def _direct_children(pid: int) -> list[int]:
    """The children of ``pid``, a process of the grader's (bubblewrap, the hold), read
    from its own ``/proc`` entry: cheap enough to ask every few milliseconds, unlike a
    walk of all of ``/proc``."""
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return _children(pid)
    return found


def _kill_tree(pid: int) -> None:
    """Kill a warm kernel started without bubblewrap, and its session's processes."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, 9)
        except OSError:
            pass


_told_cold: set[str] = set()


def _say_cold(why: str) -> None:
    """Say once per process why kernels start cold that could have started warm."""
    if why not in _told_cold:
        _told_cold.add(why)
        print(f"note: a kernel starts cold (from nothing), not from the zygote: {why}", file=sys.stderr)


def _kill_user(uid: int) -> None:
    """Kill every process of ``uid`` (a kernel's own user), from a child that becomes it."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, 9)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


class Kernel:
    """One sandboxed kernel process.

    The grading process opens nothing the kernel can write. The kernel's connection file
    is in the job's ``in/`` folder (read-only to the kernel); its own output goes to a
    pipe; its sockets, which it makes itself, are opened once by descriptor, beneath a
    folder the grader holds (``/proc/PID/root`` of the sandbox, or the job folder without
    bubblewrap), following no link, and must be sockets; the grader then connects to
    ``/proc/self/fd/N``, so that the kernel cannot point it anywhere else later.
    """

    def __init__(self, job_dir: Path, sandbox: Sandbox, limits: Limits, env: dict, n: int,
                 preload: tuple[str, ...] = (), figures: str = "png"):
        if figures not in FIGURES:
            raise ValueError(f"figures={figures!r}: expected one of {', '.join(FIGURES)}")
        self.job_dir, self.sandbox, self.limits = job_dir, sandbox, limits
        self.env, self.n, self.preload, self.figures = env, n, preload, figures
        self.km = self.kc = None
        self.unreadable = 0  # IOPub messages skipped because they were not readable
        self.uid = sandbox.kernel_uid()
        self.box = sandbox.box(job_dir, n)
        self.fds: dict[str, int] = {}
        self.tail: _Tail | None = None
        self.setup_problem = ""  # why the submission's files could not be put in place
        self.cgroup: cgroups.MemoryCgroup | None = None  # the sandbox's memory cgroup
        self.cgroup_problem = ""  # why it has none, though the sandbox should
        self.window: MemoryWindow | None = None  # a memory window that samples, while open
        self.zygote: zygotes.Zygote | None = None  # where it is forked from (None: cold)
        self.warm: zygotes.WarmChild | None = None  # the forked kernel, once asked for
        self.cold_because = ""  # why a kernel that could start warm started cold
        self._out = -1  # the write end of its output pipe, until the warm kernel has it
        self._early = ""  # why forking it in launch() failed

    def start(self) -> None:
        self.launch()
        self.connect()

    def _kernel_argv(self) -> list[str]:
        return ["-f", f"{self.sandbox.inbox(self.job_dir)}/kernel-{self.n}.json", "--HistoryManager.enabled=False",
                *FIGURES[self.figures]]

    def launch(self) -> None:
        """Start the kernel and return without waiting for it; :meth:`connect` waits.
        Warm (``grader.grading.notebook.zygote``), the sandbox holds itself open until the
        zygote's child joins it: here, once the zygote is ready (a few milliseconds), else
        in :meth:`connect`. Cold, the sandbox runs the kernel from nothing."""
        if not self.sandbox.bubblewrap:
            os.mkdir(self.box, 0o700)  # fresh: the start program hands it to the kernel
        if self.sandbox.warm and not self.cold_because and self.zygote is None:
            self.zygote = zygotes.for_kernels(self.preload, self.env, self._font_cache(),
                                              str(self.job_dir.parent))
        km = _Manager(kernel_name="python3", transport="ipc", ip=f"{self.box}/sock/k",
                      connection_file=str(self.job_dir / "in" / f"kernel-{self.n}.json"))
        self._make_cgroup()
        program = list(zygotes.HOLD) if self.zygote is not None else \
            [sys.executable, "-S", "-P", "-c", launcher(self.preload), *self._kernel_argv()]
        # A warm kernel's hold stays root, so that the kernel cannot end its own sandbox; the
        # kernel takes its folders and its user when it joins.
        km.sandboxed_command = self.sandbox.command(
            program, self.job_dir, self.n, -1 if self.zygote is not None else self.uid, self.limits,
            self.cgroup.procs if self.cgroup else "")
        self.km = km
        read, write = os.pipe()
        self.tail = _Tail(read)
        self.tail.start()
        try:
            km.start_kernel(env=box_env(self.env, self.box), cwd=str(self.job_dir), stdout=write,
                            stderr=write)
        except Exception as exc:  # jupyter_client raises several kinds here
            os.close(write)
            self._failed(exc)
        if self.zygote is None:
            os.close(write)
            return
        self._out = write  # the forked kernel writes to it too
        if self.zygote.problem == "":
            # The zygote is ready: fork now (its sandbox takes a few milliseconds), so that
            # ipykernel starts while the caller goes on, as a cold kernel launched ahead does.
            try:
                self._fork_warm(time.monotonic() + self.limits.startup)
            except zygotes.WarmUnavailable as exc:
                self._early = str(exc)  # connect() starts it cold

    def _font_cache(self) -> str:
        found = sorted((self.job_dir / "in" / "home" / ".matplotlib").glob("fontlist-v*.json"))
        return str(found[-1]) if found else ""

    def _hold(self, deadline: float) -> int:
        """The sandbox's first process, once it holds the sandbox open (its folders made,
        its user taken): the process the zygote's child joins."""
        while time.monotonic() < deadline and self.km.provisioner.process.poll() is None:
            found = _direct_children(self.pid() or -1)
            if self.sandbox.bubblewrap:
                found = [c for init in found for c in _direct_children(init)]
            else:
                found = [self.pid()]
            for pid in found:
                try:
                    with open(f"/proc/{pid}/comm") as f:
                        if f.read().strip() == zygotes.HOLD[0]:
                            return pid
                except OSError:
                    pass
            time.sleep(0.005)
        raise zygotes.WarmUnavailable("its sandbox did not start: " + " ".join(self.tail.lines(2)))

    def _fork_warm(self, deadline: float) -> None:
        """Have the zygote fork the kernel into the sandbox that :meth:`launch` made."""
        problem = self.zygote.ready(deadline)
        if problem:
            raise zygotes.WarmUnavailable(f"the zygote cannot serve: {problem}")
        hold = self._hold(deadline)
        limits = self.limits
        request = {
            "hold": hold, "uid": self.uid, "box": self.box, "cwd": f"{self.box}/work",
            "env": box_env(self.env, self.box),
            "nproc": limits.processes if self.sandbox.bubblewrap or self.uid >= 0 else 0,
            "data": limits.memory_bytes, "fsize": limits.file_mb * 1024 * 1024,
            "cgroup": self.cgroup.procs if self.cgroup else "", "argv": ["ipykernel", *self._kernel_argv()],
        }
        read, write = os.pipe()
        self.warm = zygotes.WarmChild(read)
        try:
            self.zygote.fork(request, self._out, write)
        finally:
            os.close(write)
            os.close(self._out)
            self._out = -1
        self.km.also_alive = self.warm.alive
        if not self.warm.started(deadline):
            raise zygotes.WarmUnavailable("the zygote's child could not enter the sandbox: "
                                          + " ".join(self.tail.lines(2)))

    def _make_cgroup(self) -> None:
        """A memory cgroup for this kernel, limited to ``--memory``, where the sandbox has
        them; without one its memory is measured by adding up (``SummedGauge``)."""
        if not self.sandbox.cgroups:
            return
        found = cgroups.groups()
        if found is None:
            self.cgroup_problem = cgroups.unavailable()
            return
        try:
            self.cgroup = found.make(self.limits.memory_bytes)
        except OSError as exc:
            self.cgroup_problem = f"its memory cgroup could not be made ({exc})"

    def _box_root(self) -> tuple[int, list[str]]:
        """A descriptor of a folder the grader holds, and the path beneath it to the
        kernel's sockets."""
        if not self.sandbox.bubblewrap:
            return os.open(self.job_dir, os.O_PATH | os.O_DIRECTORY), [f"box-{self.n}", "sock"]
        init = _children(self.pid() or -1)  # bubblewrap's process inside the sandbox
        if not init:
            raise FileNotFoundError("the sandbox has not started yet")
        return os.open(f"/proc/{init[0]}/root", os.O_PATH | os.O_DIRECTORY), \
            [BOX.strip("/"), "sock"]

    def _open_sockets(self, deadline: float) -> None:
        ports = {ch: getattr(self.km, f"{ch}_port") for ch in CHANNELS}
        problem = None
        while time.monotonic() < deadline and self.alive():
            try:
                root, path = self._box_root()
                try:
                    folder = _open_beneath(root, path)
                finally:
                    os.close(root)
                try:
                    for ch, port in ports.items():
                        if ch not in self.fds:
                            self.fds[ch] = _open_beneath(folder, [f"k-{port}"], stat.S_ISSOCK)
                finally:
                    os.close(folder)
                return
            except FileNotFoundError as exc:
                problem = exc
                time.sleep(0.02)
        raise KernelStartError(f"its sockets did not appear ({problem or 'it stopped'})")

    def connect(self) -> None:
        """Wait until the launched kernel answers (or raise :class:`KernelStartError`),
        then put the submission's files in its working folder."""
        if self.zygote is not None and (self.warm is None or self._early):
            try:
                if self._early:
                    raise zygotes.WarmUnavailable(self._early)
                self._fork_warm(time.monotonic() + self.limits.startup)
            except zygotes.WarmUnavailable as exc:
                self.stop()
                self.cold_because, self.zygote, self.warm, self._early = str(exc), None, None, ""
                _say_cold(self.cold_because)
                self.launch()
        try:
            self._open_sockets(time.monotonic() + self.limits.startup)
            self.kc = self.km.client()
            self.kc._make_url = lambda channel: f"ipc:///proc/self/fd/{self.fds[channel]}"
            _limit_iopub(self.kc, 2 * max(self.limits.reply_chars, self.limits.output_chars) + (1 << 20))
            self.kc.start_channels()
            self.kc.wait_for_ready(timeout=self.limits.startup)
        except Exception as exc:  # noqa: BLE001
            self._failed(exc)
        # The connection file holds this session's key, which student code may read: it
        # can only talk to its own kernel with it.
        self._put_files()

    def _put_files(self) -> None:
        """Copy the job's files (read-only ``in/work``) into the kernel's working folder,
        by the kernel itself, before any of the submission's code runs."""
        source = f"{self.sandbox.inbox(self.job_dir)}/work"
        code = f"__import__('shutil').copytree({source!r}, '.', dirs_exist_ok=True)"
        run, _ = self.request(code, -1, time.monotonic() + self.limits.startup, "none")
        if run.status != RunStatus.OK:
            self.setup_problem = (f"the submission's files could not all be put in its working "
                                  f"folder: {run.ename}: {run.evalue[:300]}")

    def _failed(self, exc: Exception):
        tail = self.tail.lines() if self.tail is not None else []
        self.stop()
        raise KernelStartError(f"the kernel did not start: {exc}\n" + "\n".join(tail)) from exc

    def alive(self) -> bool:
        return self.km is not None and self.km.is_alive()

    def sandbox_pids(self) -> list[int]:
        """The processes that run the submission: the kernel and whatever it started
        (with bubblewrap, everything beneath bubblewrap's own process)."""
        pid = self.pid()
        if pid is None:
            return []
        tree, todo = [], _children(pid)
        if self.sandbox.bubblewrap:
            todo = [c for init in todo for c in _children(init)]
        else:
            tree.append(pid)
        if self.warm is not None and self.warm.pid is not None:
            todo.append(self.warm.pid)  # in the sandbox, though forked from outside it
        while todo:
            current = todo.pop()
            tree.append(current)
            todo += _children(current)
        return tree

    def sandbox_init(self) -> int | None:
        """Bubblewrap's first process inside the sandbox (None without bubblewrap)."""
        init = _children(self.pid() or -1) if self.sandbox.bubblewrap else []
        return init[0] if init else None

    def last_pid(self) -> int | None:
        """The last process number taken in the sandbox's own namespace (None where it
        cannot be read: no bubblewrap, or a grader that is not root)."""
        nsenter, cat = shutil.which("nsenter"), shutil.which("cat")
        init = _children(self.pid() or -1) if self.sandbox.bubblewrap else []
        if not (nsenter and cat and init) or os.getuid() != 0:
            return None
        try:
            done = subprocess.run([nsenter, "-t", str(init[0]), "-p", "--", cat,
                                   "/proc/sys/kernel/ns_last_pid"], capture_output=True, timeout=10)
            return int(done.stdout) if done.returncode == 0 else None
        except (OSError, ValueError, subprocess.TimeoutExpired):
            return None

    def memory_window(self) -> MemoryWindow:
        return MemoryWindow(self).open()

    def pid(self) -> int | None:
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        return getattr(proc, "pid", None)

    def memory(self) -> int:
        """What the kernel holds, as its limit counts it: everything in its memory cgroup,
        or else the resident size of its processes."""
        if self.cgroup is not None:
            try:
                return self.cgroup.usage()
            except (OSError, ValueError):
                pass
        pid = self.pid()
        warm = self.warm.pid if self.warm is not None else None
        return (_tree_rss(pid) if pid else 0) + (_tree_rss(warm) if warm else 0)

    def limit_kills(self) -> int:
        """How many of the kernel's processes its memory cgroup's limit has killed."""
        return self.cgroup.kills() if self.cgroup is not None else 0

    def exit_code(self):
        if self.warm is not None:
            self.warm.alive()
            return self.warm.code
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        return proc.poll() if proc is not None else None

    def interrupt(self) -> None:
        msg = self.kc.session.msg("interrupt_request", {})
        self.kc.control_channel.send(msg)

    def stop(self) -> None:
        if self.kc is not None:
            try:
                self.kc.stop_channels()
            except Exception:  # noqa: BLE001 (best effort on a dying kernel)
                pass
        if self.km is not None:
            try:
                self.km.shutdown_kernel(now=True)
            except Exception:  # noqa: BLE001
                pass
            try:
                self.km.cleanup_resources()
            except Exception:  # noqa: BLE001
                pass
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()
        if self._out >= 0:
            os.close(self._out)
            self._out = -1
        if self.warm is not None:
            if self.warm.pid is not None and self.warm.alive():
                _kill_tree(self.warm.pid)  # with bubblewrap, gone with its sandbox already
            self.warm.close()
        if not self.sandbox.bubblewrap and self.uid >= 0:
            _kill_user(self.uid)  # no process namespace: whatever the kernel left running
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        self.kc = self.km = None

    def _wait(self, msg_id: str, index: int, start: float, deadline: float, sink) -> tuple[CellRun, tuple | None]:
        """Wait until the execution ``msg_id`` ends, handing each of its IOPub messages to
        ``sink.add``; stop it at the time limit or when it outgrows the memory limit."""
        limits = self.limits
        cell_deadline = min(start + limits.timeout, deadline)
        interrupted = None  # (when, status) once the cell has been interrupted
        next_memory = start + MEMORY_POLL
        kills = self.limit_kills()
        while True:
            if self.window is not None:
                self.window.sample()
            now = time.monotonic()
            if interrupted is None and now >= cell_deadline:
                why = RunStatus.WALL if deadline <= start + limits.timeout else RunStatus.TIMEOUT
                self.interrupt()
                interrupted = (now, why)
            elif interrupted is not None and now >= interrupted[0] + GRACE:
                return CellRun(index, RunStatus.STUCK), interrupted
            if now >= next_memory:
                next_memory = now + MEMORY_POLL
                if self.memory() > limits.memory_bytes:
                    return CellRun(index, RunStatus.MEMORY), interrupted
            try:
                msg = self.kc.get_iopub_msg(timeout=SAMPLE if self.window is not None else POLL)
            except Empty:
                if not self.alive():  # killed by its cgroup's limit, or gone on its own
                    died = RunStatus.MEMORY if self.limit_kills() > kills else RunStatus.DIED
                    return CellRun(index, died), interrupted
                continue
            except Exception:  # noqa: BLE001 (a message that is not one: see _readable)
                self.unreadable += 1
                continue
            if not _readable(msg):
                self.unreadable += 1
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == Msg.STATUS and msg["content"].get("execution_state") == "idle":
                return CellRun(index, RunStatus.OK), interrupted
            sink.add(msg)

    def run(self, cell, index: int, deadline: float, silent: bool = False) -> CellRun:
        """Execute ``cell`` (its outputs are replaced unless ``silent``)."""
        start = time.monotonic()
        msg_id = self.kc.execute(cell.source, store_history=not silent, allow_stdin=False,
                                 stop_on_error=False)
        sink = _Outputs(self.limits.output_chars)
        run, interrupted = self._wait(msg_id, index, start, deadline, sink)
        run.seconds = time.monotonic() - start
        outputs = sink.finish()
        if run.status == RunStatus.OK and sink.error:
            run.status = RunStatus.ERROR
            run.ename, run.evalue = sink.error
        if interrupted is not None and run.status in FINISHED | {RunStatus.STUCK}:
            if run.status != RunStatus.STUCK:
                run.status = interrupted[1]
            # The KeyboardInterrupt we caused is ours, not the learner's: drop it.
            outputs = [o for o in outputs if not (o.output_type == "error" and o.ename == "KeyboardInterrupt")]
        if run.status == RunStatus.ERROR and run.ename == "MemoryError":
            run.status = RunStatus.MEMORY_ERROR
        self._explain(run, outputs, interrupted)
        if not silent:
            cell.outputs = outputs
            cell.execution_count = sink.execution_count
        return run

    def request(self, code: str, index: int, deadline: float, mime: str) -> tuple[CellRun, str | None]:
        """Execute ``code`` (a request of the grading bridge) and return how it ended and
        the last ``mime`` output it published (the agent's reply), if any. Everything
        else the code prints is dropped; a reply over ``limits.reply_chars`` is refused."""
        start = time.monotonic()
        msg_id = self.kc.execute(code, store_history=False, allow_stdin=False, stop_on_error=False)
        sink = _Reply(mime, self.limits.reply_chars)
        run, interrupted = self._wait(msg_id, index, start, deadline, sink)
        run.seconds = time.monotonic() - start
        if run.status == RunStatus.OK and sink.error:
            run.status = RunStatus.ERROR
            run.ename, run.evalue = sink.error
        if interrupted is not None and run.status in FINISHED:
            run.status = interrupted[1]
        if run.status == RunStatus.ERROR and run.ename == "MemoryError":
            run.status = RunStatus.MEMORY_ERROR
        if sink.too_big:
            run.status, run.ename = RunStatus.ERROR, "ReplyTooLarge"
            run.evalue = (f"the answer sent back more than {self.limits.reply_chars:,} characters "
                          "of data")
        self._explain(run, [], interrupted)
        return run, sink.reply

    def _explain(self, run: CellRun, outputs: list, interrupted) -> None:
        limits = self.limits
        match run.status:
            case RunStatus.TIMEOUT:
                run.detail = (f"This cell was stopped after {limits.timeout:g} s, the time limit for "
                              "one cell. Look for a loop that never ends, or work that is far too big.")
            case RunStatus.WALL:
                run.detail = (f"This cell was stopped because the notebook reached its time limit "
                              f"({limits.wall:g} s in all).")
            case RunStatus.STUCK:
                run.detail = (f"This cell was stopped after {limits.timeout:g} s and did not respond to "
                              "an interrupt, so its Python process was restarted.")
            case RunStatus.MEMORY:
                files = (" (files written into its folders and /tmp count: they are kept in memory)"
                         if self.cgroup is not None else "")
                run.detail = (f"This cell used more than {limits.memory_mb} MB of memory{files}, so "
                              "its Python process was stopped and restarted.")
            case RunStatus.MEMORY_ERROR:
                run.detail = (f"This cell ran out of memory (the limit is {limits.memory_mb} MB). "
                              "Look for a list or array that keeps growing.")
                return  # its own MemoryError is already among the outputs
            case RunStatus.DIED:
                code = self.exit_code()
                how = f" (exit status {code})" if code not in (None, 0) else ""
                run.detail = ("The Python process running this notebook stopped while this cell "
                              f"ran{how}, for example through os._exit, exit() or a crash. "
                              "Grading went on in a fresh process.")
        if run.detail:
            name = STOPPED_AS.get(run.status, "TimeoutError")
            outputs.append(error_output(name, run.detail))
            run.ename, run.evalue = name, run.detail


# The error a stopped cell shows, by how it was stopped (any other: a TimeoutError).
STOPPED_AS = {RunStatus.DIED: "KernelDied", RunStatus.MEMORY: "MemoryError"}


def run_notebook(nb, make_kernel, limits: Limits, replayable, first: Kernel | None = None,
                 on_test=None) -> list[CellRun | None]:
    """Run every code cell of ``nb`` in place; return one :class:`CellRun` per cell (None
    for cells that are not code or are empty).

    ``make_kernel(n)`` gives the n-th (unstarted) :class:`Kernel`; ``first``, if given, is
    a kernel already launched for this notebook. ``replayable(i)`` says whether cell i
    should run again in a fresh kernel after a death (test cells need not). For a test
    cell, ``on_test(i, kernel, deadline)`` checks it from outside the kernel
    (``grader.grading.notebook.trusted``) and returns how it went, and the cell is not executed;
    for any other cell it returns None.
    Raises :class:`KernelStartError` only if the very first kernel cannot start.
    """
    runs: list[CellRun | None] = [None] * len(nb.cells)
    deadline = time.monotonic() + limits.wall
    kernel = first
    try:
        if kernel is None:
            raise KernelStartError("no kernel launched yet")
        kernel.connect()
    except KernelStartError:
        kernel = make_kernel(0)
        kernel.start()
    restarts, broken = 0, ""
    try:
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            if broken or time.monotonic() >= deadline:
                why = broken or (f"It was not run: the notebook reached its time limit "
                                 f"({limits.wall:g} s in all).")
                runs[i] = CellRun(i, RunStatus.NOT_RUN if broken else RunStatus.WALL, "NotRun", why, detail=why)
                cell.outputs = [error_output("NotRun", why)]
                cell.execution_count = None
                continue
            run = on_test(i, kernel, deadline) if on_test is not None else None
            if run is None:
                run = kernel.run(cell, i, deadline)
            runs[i] = run
            needs_restart = run.fatal or (
                run.status == RunStatus.MEMORY_ERROR and kernel.memory() > limits.memory_bytes // 2)
            if not needs_restart:
                continue
            kernel.stop()
            if restarts >= limits.max_restarts:
                broken = (f"It was not run: the notebook's Python process had to be restarted "
                          f"{restarts + 1} times, the most grading allows.")
                continue
            restarts += 1
            kernel = make_kernel(restarts)
            try:
                kernel.start()
            except KernelStartError as exc:
                broken = f"It was not run: a fresh Python process could not start ({exc})."
                continue
            # Bring the fresh kernel to where the old one was, without the cell that broke it.
            for j in range(i):
                earlier = runs[j]
                if earlier is None or earlier.status not in FINISHED or not replayable(j):
                    continue
                again = kernel.run(nb.cells[j], j, deadline, silent=True)
                if again.fatal:
                    kernel.stop()
                    broken = ("It was not run: the notebook's Python process could not be brought "
                              "back after a restart.")
                    break
    finally:
        kernel.stop()
    return runs
