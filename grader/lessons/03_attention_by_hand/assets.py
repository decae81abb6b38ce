"""The worksheet's printable answer keys, drawn from the reference.

``python -m grader.lessons.03_attention_by_hand.assets`` writes the published
worksheet's answer key into ``assets/`` (``worksheet_key.png`` and ``.pdf``); ``--seed N``
writes the key of ``new_worksheet(N)`` instead. The blank templates are the learner's
side's: ``python -m courseware.worksheet``.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from courseware.worksheet import ASSETS, Worksheet, draw_worksheet, new_worksheet, save_pages

from . import reference as ref


def write_key(out: Path = ASSETS, ws: Worksheet | None = None,
              stem: str = "worksheet") -> list[Path]:
    """Write ``{stem}_key`` (``ws``'s answer key, the published worksheet's if None) as PNG
    and PDF into ``out``; return the paths."""
    return save_pages(draw_worksheet(ws, ref.answer_key(ws)), out, f"{stem}_key")


def main(argv: list[str] | None = None) -> int:
    import matplotlib

    parser = argparse.ArgumentParser(
        prog="python -m grader.lessons.03_attention_by_hand.assets",
        description="Write the by-hand worksheet's answer key as PNG and PDF.",
    )
    parser.add_argument("--out", type=Path, default=ASSETS,
                        help="folder to write into (default: assets/)")
    parser.add_argument("--seed", type=int, default=None,
                        help="the key of new_worksheet(SEED) instead of the published worksheet's")
    args = parser.parse_args(argv)
    matplotlib.use("Agg")
    if args.seed is None:
        paths = write_key(args.out)
    else:
        paths = write_key(args.out, new_worksheet(args.seed), stem=f"worksheet_seed{args.seed}")
    for path in paths:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
