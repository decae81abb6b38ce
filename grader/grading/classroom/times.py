"""When a submission was handed in: what it claims, and what is believed.

A submission's time is the student's word: nbgrader's ``submit`` writes it, on the
student's side, into ``timestamp.txt`` and into the name of the exchange folder, and a
student can write any time there. Neither is believed on its word alone:

* in the exchange (``serve``), the file system bounds it: the latest change time
  (``st_ctime``, which no user can set) of the inbound folder and of every file and folder
  read from it, as the descriptors read from say. That is when the submission last
  changed, so the moment it was handed in as it stands. A claim more than
  :data:`BACKDATED` before it (a time set back) or more than :data:`SKEW` after it (a
  time in the future) is replaced by it, with a note and a flag (:func:`judge`);
* from an LMS (``grade``) there is no such time, but a claim later than the moment of
  grading is certainly false: it is not believed, with a note and a flag
  (:func:`doubt_the_future`).
"""
from __future__ import annotations

import datetime as dt

from .submissions import read_timestamp

# nbgrader's submit takes its time before it copies the files, so an honest claim comes a
# little before the files' own times: the copy, on a slow shared disk, may take minutes.
BACKDATED = 600.0
# An honest claim is never after the files' times, but the student's server and the
# exchange's file server may keep clocks that differ a little (NTP keeps them within a
# second); a minute tolerates a clock that is badly kept and lets a claim gain no more.
SKEW = 60.0
CLAIM_NOTE = "It claims to have been submitted at"
BACKDATED_FLAG = "time set back"  # flags of a submission: a person should look
FUTURE_FLAG = "time in the future"


def parse_time(text: str) -> float | None:
    """nbgrader's timestamp (``2025-03-01 12:00:00.000000 UTC``) as unix seconds, or None."""
    value, problem = read_timestamp(text.encode("utf-8", "replace"))
    if value is None or problem:
        return None
    from nbgrader.utils import parse_utc

    try:
        when = parse_utc(value)
    except (ValueError, OverflowError, TypeError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return when.timestamp()


def utc(seconds: float) -> str:
    return f"{dt.datetime.fromtimestamp(seconds, dt.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"


def stamp(seconds: float) -> str:
    """``seconds`` as nbgrader writes a ``timestamp.txt``."""
    return f"{dt.datetime.fromtimestamp(seconds, dt.timezone.utc):%Y-%m-%d %H:%M:%S.%f} UTC"


def judge(claimed: float, actual: float) -> tuple[float, str, str]:
    """The time that counts for a submission that claims ``claimed`` and last changed in the
    exchange at ``actual`` (both unix seconds), with a note and a flag when the claim is
    not believed ("" and "" when it is)."""
    if claimed < actual - BACKDATED:
        return actual, (f"{CLAIM_NOTE} {utc(claimed)}, but it reached the exchange at "
                        f"{utc(actual)}; the later time counts."), BACKDATED_FLAG
    if claimed > actual + SKEW:
        return actual, (f"{CLAIM_NOTE} {utc(claimed)}, later than it reached the exchange "
                        f"({utc(actual)}); the time it reached the exchange counts."), FUTURE_FLAG
    return claimed, "", ""


def doubt_the_future(subs, now: float) -> None:
    """``grade``: a submission whose ``timestamp.txt`` is later than ``now``, the moment of
    grading (:data:`SKEW` allowed), keeps no time at all, with a note and a flag. No other
    time is known: the moment of grading would make it late when it may not have been (a
    zone mistaken in an LMS's export), and the claim cannot be true."""
    for sub in subs:
        claimed = parse_time(sub.timestamp) if sub.timestamp else None
        if claimed is not None and claimed > now + SKEW:
            sub.notes.append(f"{CLAIM_NOTE} {utc(claimed)} (its timestamp.txt), later than it was "
                             f"graded ({utc(now)}): no time counts, so it is not late; correct its "
                             "timestamp.txt and grade it again.")
            sub.flags.append(FUTURE_FLAG)
            sub.timestamp = None
