"""The grading of one notebook: the job and its steps (``job``), the sandboxed kernel that
runs it (``sandbox``, ``kernel``, ``cgroup``, ``measure``, ``held``, ``cpu``), the trusted
checker and its bridge into the kernel (``trusted``, ``bridge``), what is read of the
submission (``choice``, ``repair``, ``structure``, ``integrity``, ``inert``), the scoring
(``scoring``, ``results``) and every status (``status``)."""
