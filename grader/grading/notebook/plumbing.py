"""What in a submission reaches for the grading side, read from its source (never run).

Nothing here changes a score: the grading process follows no link the kernel makes,
measures memory from outside, reads changes to inputs from the source, and runs the
kernel as a user of its own in a sandbox (``grader.grading.notebook.kernel``, ``sandbox``). These
are integrity notes, so that a person sees that a submission tried:

* to make links (``os.symlink``, ``Path.symlink_to``, ``os.link``, ...);
* to stop or replace its own Python (``os._exit``, ``os.kill``, ``os.abort``), or to start
  others (``os.fork``, ``subprocess``, ``multiprocessing``, ``os.system``, ``os.exec*``);
* to change how memory is measured or limited (``tracemalloc``, ``resource``, ``ctypes``);
* to reach the sandbox's plumbing by name (its folders, ``/proc``, kernel configuration);
* to change the course's own modules (``agent.peak_bytes = ...``, ``setattr(agent, ...)``).
"""
from __future__ import annotations

import ast

LINKS = {"symlink", "link", "symlink_to", "hardlink_to", "link_to"}
OWN_PROCESS = {("os", "_exit"), ("os", "abort"), ("os", "kill"), ("os", "killpg"),
               ("signal", "pthread_kill"), ("os", "fork"), ("os", "forkpty"), ("os", "system"),
               ("os", "popen"), ("os", "posix_spawn"), ("os", "posix_spawnp"), ("pty", "fork"),
               ("os", "setsid"), ("os", "setrlimit")}
MODULES = {"subprocess": "starts other programs", "multiprocessing": "starts other processes",
           "tracemalloc": "uses tracemalloc, which the kernel's own memory measure uses",
           "resource": "changes its resource limits", "ctypes": "calls C functions directly",
           "cffi": "calls C functions directly"}
PLUMBING = ("/job", "/job-in", "/proc", "clear_refs", "ns_last_pid", "ipython_kernel_config",
            "jupyter_config", "kernel-")


def _module_names(tree: ast.AST) -> dict[str, str]:
    """Names bound to imported modules: local name -> module."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname \
                    else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def attempts(tree: ast.AST) -> list[str]:
    """What in ``tree`` (one cell) reaches for the grading side, in words."""
    modules = _module_names(tree)
    found: list[str] = []
    named: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            base = modules.get(func.value.id, func.value.id) if isinstance(func, ast.Attribute) \
                and isinstance(func.value, ast.Name) else ""
            full = modules.get(name, "") if isinstance(func, ast.Name) else f"{base}.{name}"
            if name in LINKS:
                found.append(f"makes links ({ast.unparse(func)})")
            if (base, name) in OWN_PROCESS or tuple(full.split(".")[-2:]) in OWN_PROCESS or \
                    (base == "os" and name.startswith("exec")):
                found.append(f"stops or starts processes ({ast.unparse(func)})")
            if name == "setattr" and node.args and isinstance(node.args[0], ast.Name) and \
                    modules.get(node.args[0].id, "").startswith("grader"):
                found.append(f"changes the course's module {modules[node.args[0].id]} (setattr)")
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) and \
                isinstance(node.value, ast.Name) and modules.get(node.value.id, "").startswith("grader"):
            found.append(f"changes the course's module {modules[node.value.id]} ({ast.unparse(node)})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                any(p in node.value for p in PLUMBING) and len(node.value) < 200:
            named.append(repr(node.value))
    if named:
        more = f" and {len(named) - 3} more" if len(named) > 3 else ""
        found.append(f"names the sandbox's plumbing ({', '.join(named[:3])}{more})")
    for module in modules.values():
        top = module.split(".")[0]
        if top in MODULES:
            found.append(MODULES[top])
    return list(dict.fromkeys(found))
