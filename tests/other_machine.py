"""Another machine, simulated on this one: environment variables that make NumPy's and
torch's kernels round floats as a different CPU's would (DESIGN.md, gate 10).

The recordings beside the released notebooks are computed by the live reference with this
machine's kernels; a learner's machine uses others. Each variable below moves one library
to another code path, and each changed the recordings of some lesson before they were
compared by meaning (``grader.recording_compare``):

* ``NPY_DISABLE_CPU_FEATURES``: NumPy's own loops (``exp``, sums, ``max``) without the
  SIMD extensions dispatched at run time (here AVX2 and AVX-512): a CPU without them. It
  changed lessons 02, 04 and 07, and with them the sealed stand-ins of 02 and 04.
* ``OPENBLAS_CORETYPE=Nehalem``: NumPy's OpenBLAS with its SSE4.2 kernels, which every
  CPU has that runs NumPy 2 at all (its baseline is x86-64-v2). ``Sandybridge`` (AVX)
  changes the same values, but a CPU without AVX would stop on it. It changed every
  lesson whose NumPy code multiplies matrices: 01, 02, 04 and 07.
* ``ATEN_CPU_CAPABILITY=default``: torch's own kernels without AVX2 or AVX-512 (lessons
  05 and 06).
* ``MKL_CBWR=COMPATIBLE``: the MKL inside torch (its matrix products) on its most
  compatible code path (lessons 05 and 06), and ``ONEDNN_MAX_CPU_ISA=SSE41`` the same for
  oneDNN (lesson 06's training runs).
* ``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` = 1: one-thread BLAS
  and torch (a one-core machine; it changed nothing on the course's small arrays).

The x86-64 names are set only on an x86-64 machine.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
X86_64 = {"OPENBLAS_CORETYPE": "Nehalem", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41"}


def numpy_dispatched_here() -> list[str]:
    """The SIMD extensions NumPy dispatches to at run time that this CPU has."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]


def environment() -> dict[str, str]:
    """The variables that simulate another machine here (see the module's docstring)."""
    env = {"ATEN_CPU_CAPABILITY": "default", **ONE_THREAD}
    dispatched = numpy_dispatched_here()
    if dispatched:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(dispatched)
    if platform.machine().lower() in ("x86_64", "amd64"):
        env.update(X86_64)
    return env


# Run in the simulated machine's Python: which kernels the libraries chose, as JSON.
PROBE = r"""
import json, ctypes
import numpy as np
from numpy._core._multiarray_umath import __cpu_features__
import torch

def openblas_core():
    try:
        maps = open("/proc/self/maps").read().split("\n")
    except OSError:
        return None
    for path in sorted({l.split()[-1] for l in maps if "openblas" in l.lower() and "/" in l}):
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
                     "openblas_get_corename64_", "openblas_get_corename"):
            if hasattr(lib, name):
                f = getattr(lib, name)
                f.restype = ctypes.c_char_p
                return f().decode()
    return None

print(json.dumps({"numpy_enabled": sorted(k for k, v in __cpu_features__.items() if v),
                  "openblas_core": openblas_core(),
                  "torch_capability": torch.backends.cpu.get_cpu_capability(),
                  "torch_threads": torch.get_num_threads()}))
"""


def kernels(env: dict) -> dict:
    """What :data:`PROBE` reports under ``env`` (added to this process's environment)."""
    done = subprocess.run([sys.executable, "-c", PROBE], env=dict(os.environ, **env),
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"the kernel probe failed under {env}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def not_simulated(env: dict, report: dict) -> list[str]:
    """What of ``env`` the libraries did not take up, by :func:`kernels`'s ``report``."""
    problems = []
    disabled = env.get("NPY_DISABLE_CPU_FEATURES", "").split()
    still = [name for name in disabled if name in report["numpy_enabled"]]
    if still:
        problems.append(f"NumPy still dispatches to {still}")
    wanted = env.get("OPENBLAS_CORETYPE")
    core = report.get("openblas_core")
    if wanted and core is not None and core.lower() != wanted.lower():
        problems.append(f"OpenBLAS runs its {core} kernels, not {wanted}")
    aten = env.get("ATEN_CPU_CAPABILITY")
    if aten and report["torch_capability"].lower() != aten:
        problems.append(f"torch runs its {report['torch_capability']} kernels, not {aten}")
    if env.get("OMP_NUM_THREADS") == "1" and report["torch_threads"] != 1:
        problems.append(f"torch runs {report['torch_threads']} threads, not 1")
    return problems
