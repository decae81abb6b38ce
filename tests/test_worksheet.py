"""The printable worksheet: the generator writes non-blank PNG and PDF pages, the
committed assets are up to date, and new_worksheet(seed) stays hand-friendly."""
import subprocess
import sys
from fractions import Fraction

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pytest
from conftest import ROOT

from courseware import worksheet as sheet
from grader.reference.by_hand import (
    HAND_LIMITS,
    STEPS,
    attention_by_hand,
    new_worksheet,
    published_worksheet,
)

NAMES = [f"worksheet_{kind}.{ext}" for kind in ("blank", "key") for ext in ("png", "pdf")]


def ink(png, below: float = 0.9) -> float:
    """The share of pixels darker than ``below`` (0.9: anything not nearly white; 0.4:
    text and lines, not the pale fills of the boxes)."""
    image = mpimg.imread(png)[..., :3]
    return float((image.min(axis=-1) < below).mean())


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("assets")
    paths = sheet.write_assets(out)
    return out, paths


def test_the_generator_writes_blank_and_key_as_png_and_pdf(written):
    out, paths = written
    assert sorted(p.name for p in paths) == sorted(NAMES)
    for path in paths:
        assert path.exists() and path.stat().st_size > 10_000, path


def test_the_pages_are_not_blank_and_the_key_has_more_ink(written):
    out, _ = written
    assert ink(out / "worksheet_blank.png") > 0.05, "the template looks empty"
    blank, key = ink(out / "worksheet_blank.png", 0.4), ink(out / "worksheet_key.png", 0.4)
    assert key > 1.1 * blank, "the answer key shows hardly more than the template"
    height, width = mpimg.imread(out / "worksheet_key.png").shape[:2]
    assert width > height  # landscape


def test_the_pdfs_are_pdf_pages_with_drawing(written):
    out, _ = written
    for kind in ("blank", "key"):
        data = (out / f"worksheet_{kind}.pdf").read_bytes()
        assert data.startswith(b"%PDF") and data.rstrip().endswith(b"%%EOF")
        assert b"/Type /Page" in data and b"/Font" in data
    assert (out / "worksheet_blank.pdf").read_bytes() != (out / "worksheet_key.pdf").read_bytes()


def test_the_committed_assets_match_a_fresh_run(written):
    """A stale asset (say, after the published matrices changed) fails here: run
    `python -m courseware.worksheet`."""
    out, _ = written
    for kind in ("blank", "key"):
        committed = ROOT / "assets" / f"worksheet_{kind}.png"
        assert committed.exists(), f"{committed} is missing: run python -m courseware.worksheet"
        fresh = mpimg.imread(out / f"worksheet_{kind}.png")
        old = mpimg.imread(committed)
        assert fresh.shape == old.shape
        assert np.abs(fresh - old).mean() < 0.01, f"{committed.name} is stale"
        assert (ROOT / "assets" / f"worksheet_{kind}.pdf").exists()


def test_the_command_line_writes_a_practice_worksheet(tmp_path):
    result = subprocess.run([sys.executable, "-m", "courseware.worksheet", "--out", str(tmp_path),
                             "--seed", "7"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(n.replace("worksheet_", "worksheet_seed7_") for n in NAMES)
    assert ink(tmp_path / "worksheet_seed7_key.png") > 0.05


def test_the_comparison_figures_draw(tmp_path):
    ws = published_worksheet()
    fig = sheet.compare_attention(ws.key["A"], sheet.exact_attention(ws.key["scores"]))
    fig.savefig(tmp_path / "compare.png")
    plt.close(fig)
    fig = sheet.weight_ratio_figure()
    fig.savefig(tmp_path / "ratio.png")
    plt.close(fig)
    assert ink(tmp_path / "compare.png") > 0.05 and ink(tmp_path / "ratio.png") > 0.01


def test_exact_attention_columns_are_softmax_of_scores_over_root_3():
    S = np.array([[0.0, 2.0], [3.0, -1.0]])
    A = sheet.exact_attention(S)
    np.testing.assert_allclose(A.sum(axis=0), 1.0)
    assert np.isclose(A[1, 0] / A[0, 0], np.exp(3 / np.sqrt(3)))


def test_review_answers_counts_the_right_steps(capsys):
    ws = new_worksheet(3)
    answers = sheet.blank_answers()
    answers["Q"] = ws.key["Q"].tolist()
    answers["K"] = "1 2 3"
    assert sheet.review_answers(answers, ws) == 1
    out = capsys.readouterr().out
    assert "✓ Q" in out and "✗ K" in out and "· V: not filled in yet" in out


# ----------------------------------------------------------------- new_worksheet(seed)

SEEDS = range(300)


@pytest.fixture(scope="module")
def practice():
    return [new_worksheet(seed) for seed in SEEDS]


def test_new_worksheets_have_the_published_shapes(practice):
    for ws in practice:
        assert ws.X.shape == (6, 4)
        assert ws.W_Q.shape == ws.W_K.shape == ws.W_V.shape == (3, 6)


def test_new_worksheets_use_small_integers(practice):
    for ws in practice:
        assert set(np.unique(ws.X)) <= {0, 1}
        for W in (ws.W_Q, ws.W_K, ws.W_V):
            assert W.dtype.kind == "i" and set(np.unique(W)) <= {-1, 0, 1}
        lo, hi = HAND_LIMITS["QKV"]
        for step in ("Q", "K", "V"):
            assert all(lo <= v <= hi and v.denominator == 1 for v in ws.key[step].flat), (ws.seed, step)


def test_new_worksheets_keep_the_powers_of_3_bounded(practice):
    for ws in practice:
        key = ws.key
        scores = np.array(key["scores"].tolist(), dtype=float)
        lo, hi = HAND_LIMITS["scores"]
        assert lo <= scores.min() and scores.max() <= hi
        assert (scores < 0).sum() <= HAND_LIMITS["negative_scores"]
        powers = [Fraction(3) ** int(s) for s in key["scaled"].flat]
        assert Fraction(1, 3) <= min(powers) and max(powers) <= 81, ws.seed
        for j in range(4):
            column = [Fraction(3) ** int(s) for s in key["scaled"][:, j]]
            assert sum(column) <= HAND_LIMITS["column_sum"]
            assert len(set(column)) >= 2  # never uniform: something to see in every column
        assert all(v.denominator <= 3 * 120 for v in key["A"].flat)


def test_new_worksheets_are_answer_keys_of_their_matrices(practice):
    for ws in practice[:40]:
        fresh = attention_by_hand(ws.X, ws.W_Q, ws.W_K, ws.W_V)
        assert all((fresh[s] == ws.key[s]).all() for s in STEPS)


def test_new_worksheets_are_reproducible_and_varied(practice):
    again = new_worksheet(17)
    assert (again.X == practice[17].X).all() and (again.W_V == practice[17].W_V).all()
    distinct = {(ws.X.tobytes(), ws.W_Q.tobytes(), ws.W_K.tobytes(), ws.W_V.tobytes()) for ws in practice}
    assert len(distinct) == len(practice)
    assert any((ws.key["scores"] < 0).any() for ws in practice)  # negatives do come up


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_new_worksheet_rejects_bad_seeds(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative whole number"):
        new_worksheet(seed)
