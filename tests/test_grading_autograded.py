"""The autograded folder (grader.grading.classroom.autograded): the submission secrets nbgrader
reads, and every file of a submission kept where nothing escapes the folder."""
A = "01_matmul_views"


def test_secrets_that_nbgrader_could_not_use_or_that_two_students_share_are_replaced():
    from grader.grading.classroom.autograded import exchange_secrets
    from grader.grading.classroom.submissions import Submission

    good, shared = b"f" * 128, b"0123abcd" * 16
    subs = [Submission("alice", A, {"submission_secret.txt": good}),
            Submission("bob", A, {"submission_secret.txt": shared}),
            Submission("carol", A, {"submission_secret.txt": shared + b"\n"}),
            Submission("dave", A, {"submission_secret.txt": b"\xff\xfe../../x"}),
            Submission("erin", A, {})]
    kept = exchange_secrets(subs)
    assert kept[("alice", A)] == (good, "")
    assert "the same as that of 1 other submission(s)" in kept[("bob", A)][1]
    assert kept[("bob", A)][0] != shared and "carol" not in kept[("bob", A)][1]
    assert "the same as that of 1 other submission(s)" in kept[("carol", A)][1]
    assert "not one nbgrader writes" in kept[("dave", A)][1]
    assert kept[("erin", A)][1] == "" and len(kept[("erin", A)][0]) == 128
    assert len({kept[k][0] for k in kept}) == 5


def test_the_autograded_folder_keeps_every_file_and_nothing_escapes_it(tmp_path):
    from grader.grading.classroom.autograded import write_folder

    outside = tmp_path / "outside"
    outside.mkdir()
    folder = tmp_path / "autograded" / "alice" / A
    folder.parent.mkdir(parents=True)
    folder.symlink_to(outside)  # left from elsewhere: replaced, never followed
    files = {"data/x.csv": b"1", "we ird\nname.txt": b"odd", "../up.txt": b"no", "/abs.txt": b"no",
             "draft.ipynb": b"{}", "submission_secret.txt/inner": b"no", f"{A}.ipynb/x": b"no",
             ".grading/forged.json": b"no", "clash": b"file", "clash/inner.txt": b"no",
             "timestamp.txt": b"forged", "submission_secret.txt": b"forged"}
    notes = write_folder(folder, files, {"data/x.csv": b"course"}, "2025-01-01 10:00:00 UTC",
                         b"s" * 128, {f"{A}.ipynb": b"{}"}, {A: "{}"})
    assert not folder.is_symlink() and list(outside.iterdir()) == []
    found = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert found == [".grading/01_matmul_views.json", f"{A}.ipynb", "clash", "data/x.csv",
                     "submission_secret.txt", "timestamp.txt", "we ird\nname.txt"]
    assert (folder / "data/x.csv").read_bytes() == b"course"
    assert (folder / "timestamp.txt").read_text() == "2025-01-01 10:00:00 UTC"
    assert (folder / "submission_secret.txt").read_bytes() == b"s" * 128
    assert len(notes) == 1 and "'clash/inner.txt' was not kept" in notes[0]
    assert not (tmp_path / "up.txt").exists() and not (tmp_path / "abs.txt").exists()
