"""grader.authoring writes the nbgrader metadata that lesson authors rely on; nbgrader's
own metadata check and release accept a notebook built from it, and reject a broken one."""
import pytest
from nbgrader.nbgraderformat import ValidationError
from nbgrader.preprocessors import CheckCellMetadata, ClearSolutions

from grader import authoring as a


def small_notebook():
    return a.notebook([
        a.markdown("# Title", "intro"),
        a.readonly("import numpy as np", "setup"),
        a.solution("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION", "f"),
        a.tests("assert f() == 1", "test_f", 2),
        a.free_text("Model answer.", "why", 1),
        a.code("print(f())", "demo"),
    ])


def test_nbgrader_accepts_the_metadata_and_clears_the_solutions():
    nb = small_notebook()
    nb, _ = CheckCellMetadata().preprocess(nb, {})
    nb, _ = ClearSolutions().preprocess(nb, {"language": "python"})
    by_id = {c.id: c for c in nb.cells}
    assert "return 1" not in by_id["f"].source and "NotImplementedError" in by_id["f"].source
    assert "Model answer" not in by_id["why"].source
    assert by_id["test_f"].metadata.nbgrader["points"] == 2


def test_a_graded_cell_without_points_is_rejected():
    nb = small_notebook()
    del nb.cells[3].metadata.nbgrader["points"]
    with pytest.raises(ValidationError):
        CheckCellMetadata().preprocess(nb, {})
