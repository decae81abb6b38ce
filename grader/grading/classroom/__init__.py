"""The bookkeeping of a class: one grading session (``session``) and its runners
(``pool``, ``cluster``, ``worker``), the submissions (``submissions``, ``times``,
``exchange``, ``ledger``), each submission's result (``submission_result``) and what is
written of it (``outputs``, ``gradebook``, ``late``, ``autograded``, ``feedback``,
``nbfeedback``, ``report``, ``grades``), and the commands ``grade`` (``batch``) and
``serve``."""
