"""constraints.txt pins every direct dependency exactly, and environment.yml agrees."""
import re
import tomllib

from conftest import ROOT

PIN = re.compile(r"^\s*-?\s*([A-Za-z0-9_.\-]+)==([^\s#]+)\s*$")


def _pins(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        m = PIN.match(line.split("#")[0].rstrip()) if line.strip() and not line.strip().startswith("#") else None
        if m:
            pins[m.group(1).lower()] = m.group(2)
    return pins


def constraints() -> dict[str, str]:
    return _pins((ROOT / "constraints.txt").read_text().splitlines())


def environment() -> dict[str, str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    return _pins(l for l in lines if "==" in l)


def direct_dependencies() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        names += extra
    return {re.split(r"[<>=!~\[ ;]", n, maxsplit=1)[0].lower() for n in names}


def test_every_line_of_constraints_is_an_exact_pin():
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.strip().startswith("#"):
            assert PIN.match(line), f"not an exact pin: {line!r}"


def test_torch_is_pinned_to_the_cpu_build_version():
    assert constraints()["torch"] == "2.13.0"


def test_every_direct_dependency_is_pinned():
    missing = direct_dependencies() - set(constraints())
    assert not missing, f"direct dependencies without a pin in constraints.txt: {sorted(missing)}"


def test_pyproject_declares_no_versions():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for dep in project["dependencies"]:
        assert not re.search(r"[<>=~]", dep), f"put versions in constraints.txt, not pyproject: {dep}"


def test_environment_yml_has_the_same_pins():
    assert environment() == constraints()


def test_the_pin_parser_sees_a_disagreement():
    a = _pins(["torch==2.13.0", "numpy==2.4.6"])
    b = _pins(["  - torch==2.13.0", "  - numpy==2.4.5"])
    assert a != b and a["torch"] == b["torch"]
