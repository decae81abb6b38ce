"""The engine's interface for a lesson (grader.learner.plugins): kinds registered by name,
drivers and comparisons as dataclasses read back strictly, and every lesson's own kinds
found in its folder's learner.py."""
import dataclasses

import pytest

from conftest import ROOT
from grader import lessons
from grader.learner import plugins
from grader.learner.cases import ExerciseInfo
from grader.learner.comparisons import Comparison, ModuleOutcome
from grader.learner.drivers import Call, Driver, Module, Object
from grader.learner.plugins import lesson_part


def test_every_kind_an_exercise_uses_is_registered_and_round_trips_as_data():
    seen = set()
    for ex in lessons.load_all().values():
        for family, value in (("driver", ex.driver), ("comparison", ex.compare)):
            assert plugins.find(family, value.kind) is type(value)
            data = value.to_data()
            back = plugins.from_data(family, data, "")
            assert back == value and back.to_data() == data
            seen.add((family, value.kind))
    assert {("driver", "value"), ("comparison", "kpm"), ("comparison", "ablation")} <= seen


def test_an_exercise_info_round_trips_with_typed_kinds():
    observed = lesson_part("07_long_attention").Observed
    info = ExerciseInfo("f", ("x",), observed(threads=1, arg=0, name="c", attrs=["k"]),
                        ModuleOutcome(items=[[1, "the weights: "]]))
    back = ExerciseInfo.from_data(info.to_data())
    assert back.driver == info.driver and back.compare == info.compare
    assert isinstance(back.driver, observed) and isinstance(back.compare, ModuleOutcome)
    assert ExerciseInfo("g").to_data()["driver"] == {"kind": "call"}


@pytest.mark.parametrize("family, data, words", [
    ("driver", {"kind": "cal"}, "unknown driver kind 'cal'"),
    ("driver", {"kind": "call", "thread": 1}, "has no field 'thread'"),
    ("comparison", {"kind": "module", "item": []}, "has no field 'item'"),
    ("comparison", {"kind": "steps", "order": [], "parent": {}}, "has no field 'parent'"),
    ("comparison", ["kind", "default"], "a dict with a 'kind'"),
])
def test_a_misspelt_kind_or_field_is_an_error_that_names_it(family, data, words):
    with pytest.raises(ValueError, match=words):
        plugins.from_data(family, data, "call")


def test_an_exercise_described_by_a_dict_is_refused():
    ex = lessons.get("softmax")
    with pytest.raises(TypeError, match="driver is a dict, not a Driver"):
        dataclasses.replace(ex, driver={"kind": "call"})
    with pytest.raises(TypeError, match="compare is a dict, not a Comparison"):
        dataclasses.replace(ex, compare={"kind": "default"})


def test_two_kinds_of_one_name_are_refused():
    @dataclasses.dataclass(frozen=True)
    class Impostor(Driver):
        kind = "call"

    with pytest.raises(ValueError, match="two driver kinds are named 'call'"):
        plugins.register_driver(Impostor)
    assert plugins.find("driver", "call") is Call


def test_a_fixture_that_needs_the_answers_namespace_is_given_it():
    from grader.learner.codec import Fixture
    from grader.learner.fixtures import build

    class Box:
        def __init__(self, n):
            self.n = n

    made = build(Fixture("learner_object", {"cls": "Box", "args": [3], "calls": []}, ""), {"Box": Box})
    assert made.n == 3
    with pytest.raises(ValueError, match="unknown fixture kind 'boxes'"):
        build(Fixture("boxes", {}, ""))


def test_each_lesson_is_found_by_its_folder_and_only_there(tmp_path):
    folders = sorted(p.name for p in ROOT.glob("grader/lessons/[0-9][0-9]_*") if p.is_dir())
    assert [lesson.folder for lesson in plugins.LESSONS.lessons()] == folders and len(folders) >= 8
    with_part = sorted(p.parent.name for p in ROOT.glob("grader/lessons/*/learner.py"))
    assert [l.folder for l in plugins.LESSONS.lessons() if l.has("learner")] == with_part
    with pytest.raises(ValueError, match="not a lesson folder"):
        plugins.lesson_part("../grading")
    with pytest.raises(ValueError, match="no lesson folder '99_none'"):
        plugins.LESSONS.lesson("99_none")
    with pytest.raises(ValueError, match="not a module of a lesson folder"):
        plugins.LESSONS.of("grader.learner.engine")
    (tmp_path / "01_one").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "02_two.py").write_text("")
    assert [l.folder for l in plugins.LessonManager(tmp_path, "x").lessons()] == ["01_one"]


def test_each_kind_and_exercise_is_held_by_the_lesson_that_registers_it():
    lessons.load_all()
    plugins.LESSONS.load_kinds()
    owners = {}
    for lesson in plugins.LESSONS.lessons():
        for family, found in lesson.kinds.items():
            for name, obj in found.items():
                assert obj.__module__ == f"grader.lessons.{lesson.folder}.learner", (name, lesson)
                owners[family, name] = lesson.folder
        for name in lesson.exercises:
            assert lessons.lesson_of(name) == lesson.folder
    assert owners["driver", "value"] == "03_attention_by_hand"
    assert owners["fixture", "attend"] == "04_masking"
    assert sum(len(l.exercises) for l in plugins.LESSONS.lessons()) == len(lessons.load_all())


def test_a_second_exercise_of_one_name_is_refused():
    ex = lessons.get("softmax")
    lesson = plugins.LESSONS.lesson(lessons.lesson_of("softmax"))
    with pytest.raises(ValueError, match="two exercises are registered as 'softmax'"):
        lesson.register(dataclasses.replace(ex))
    assert lessons.get("softmax") is ex


def test_the_builtin_kinds_are_the_engines_and_the_rest_are_the_lessons():
    """The engine's own kinds are registered by grader/learner/; every other one by a
    lesson's learner.py, none by the instructor's side."""
    for family in plugins.FAMILIES:
        for name, obj in plugins.kinds(family).items():
            module = obj.__module__
            assert module.startswith("grader.learner.") or \
                (module.startswith("grader.lessons.") and module.endswith(".learner")), (name, module)
    assert plugins.find("driver", "object") is Object and plugins.find("driver", "module") is Module
    assert plugins.find("comparison", "default") is Comparison


def test_an_exercise_holds_its_info_and_refuses_a_misspelt_field():
    ex = lessons.get("softmax")
    assert ex.driver is ex.info.driver and ex.hint == ex.info.hint and ex.name == "softmax"
    assert not hasattr(ex, "hnt")
    with pytest.raises(TypeError, match="no field 'hnt'"):
        lessons.Exercise(name="f", reference=len, cases=lambda rng, hidden: [], hnt="a hint")
    made = lessons.Exercise(name="f", reference=len, cases=lambda rng, hidden: [], hint="h",
                            arg_names=("x",), bad_inputs=[lessons.BadInput(lessons.Case((1,)), "why")])
    assert made.info.hint == "h" and made.info.bad_inputs[0].case.names == ("x",)


def test_a_cases_build_and_meta_are_typed_and_read_back_strictly():
    from grader.learner import codec
    from grader.learner.cases import Build, Case, Meta

    case = Case((1,), build=Build(memory_budget=4096, late=[]), meta=Meta(accept=[1.0]))
    data = codec.decode(codec.encode(case.to_data()))
    assert data["build"] == {"memory_budget": 4096, "late": []} and data["meta"] == {"accept": [1.0]}
    back = Case.from_data(data)
    assert back.build == case.build and back.meta == case.meta
    assert Case.from_data({**data, "build": None}).build == Build() and not Build()
    # The grading bridge reads a build by key: a field left unset is no key.
    assert "memory_budget" in back.build and back.build.get("late", (0,)) == []
    assert "witness" not in back.build and Build().get("late", (0,)) == (0,)
    with pytest.raises(ValueError, match="has no field 'memory_budgt'"):
        Build.from_data({"memory_budgt": 1})
    with pytest.raises(ValueError, match="has no field 'acept'"):
        Meta.from_data({"acept": []})
    with pytest.raises(TypeError, match="a Build and its meta a Meta, got dict"):
        Case((1,), build={"memory_budget": 1})
