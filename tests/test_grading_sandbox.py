"""The sandbox (grader.grading.notebook.sandbox): what it lets the kernel see, and the command that
wraps each kernel in its limits and in bubblewrap. No kernel runs here."""
from conftest import ROOT
from grader.grading.notebook.sandbox import Limits, Sandbox, private_entries, readonly_paths


def test_the_sandbox_sees_the_python_and_the_kit_but_no_course_data(tmp_path, monkeypatch):
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    kit = tmp_path / "scratch" / "kit"
    kit.mkdir(parents=True)
    monkeypatch.chdir(course)
    secrets = [course, tmp_path / "submitted", tmp_path / "out", course / "gradebook.db"]
    binds, _ = readonly_paths(kit, secrets)
    for path in binds:
        for secret in [*secrets, ROOT / "grader", ROOT / "solutions"]:
            assert not (str(secret) + "/").startswith(path.rstrip("/") + "/"), (path, secret)
    assert str(kit) in binds
    # The instructor's side of the package (this checkout) is not there at all.
    assert not any(p.startswith(str(ROOT / "grader")) or p.startswith(str(ROOT / "courseware"))
                   for p in binds)
    assert str(ROOT) not in binds and "/" not in binds


def test_files_only_their_owner_may_read_are_hidden(tmp_path):
    (tmp_path / "public.conf").write_text("x")
    (tmp_path / "secret.key").write_text("x")
    (tmp_path / "secret.key").chmod(0o600)
    (tmp_path / "private").mkdir(mode=0o700)
    (tmp_path / "private" / "inner").write_text("x")
    assert sorted(private_entries([str(tmp_path)])) == [str(tmp_path / "private"), str(tmp_path / "secret.key")]


def test_the_sandbox_command_wraps_the_kernel_in_limits_and_bwrap(tmp_path):
    limits = Limits(memory_mb=512, disk_mb=64, processes=32)
    secret = tmp_path / "key"
    secret.write_text("x")
    box = Sandbox("bwrap", ("/usr", "/opt/venv"), (("usr/bin", "/bin"),), (str(secret), str(tmp_path)),
                  userns=False)
    cmd = box.command(["python", "-m", "ipykernel_launcher"], tmp_path, 0, 1 << 30, limits)
    assert str(512 * 2**20) in cmd[:8]
    bwrap = cmd[cmd.index("bwrap"):]
    for flag in ("--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session", "--cap-drop"):
        assert flag in bwrap
    assert "--unshare-user" not in bwrap and "--unshare-all" not in bwrap  # root: a real user switch
    assert bwrap[bwrap.index("--ro-bind") + 1] == "/usr"
    assert ["--perms", "0755", "--dir", "/opt"] == bwrap[bwrap.index("/opt") - 3:bwrap.index("/opt") + 1]
    assert ["--ro-bind", "/dev/null", str(secret)] == bwrap[bwrap.index("/dev/null") - 1:bwrap.index("/dev/null") + 2]
    assert ["--tmpfs", str(tmp_path)] == bwrap[bwrap.index(str(tmp_path)) - 1:bwrap.index(str(tmp_path)) + 1]
    # Nothing of the host is writable: a sized tmpfs for the kernel, its input read-only.
    assert "--bind" not in bwrap
    assert ["--size", str(64 * 2**20), "--tmpfs", "/job"] == bwrap[bwrap.index("/job") - 3:bwrap.index("/job") + 1]
    assert ["--ro-bind", str(tmp_path / "in"), "/job-in"] == \
        bwrap[bwrap.index("/job-in") - 2:bwrap.index("/job-in") + 1]
    start = bwrap[bwrap.index("-c") + 2:]
    assert start[:5] == ["/job", "/job-in", str(1 << 30), "32", "--"]
    assert bwrap[-3:] == ["python", "-m", "ipykernel_launcher"]
    user = Sandbox("bwrap", ("/usr",), userns=True).command(["python"], tmp_path, 0, -1, limits)
    assert "--unshare-all" in user and "ALL" in user
    plain = Sandbox("none", reason="no bwrap").command(["python"], tmp_path, 0, -1, limits)
    assert "bwrap" not in plain and plain[-1] == "python"
    assert str(tmp_path / "box-0") in plain
    assert "NOT isolated (no bwrap)" in Sandbox("none", reason="no bwrap").describe()
