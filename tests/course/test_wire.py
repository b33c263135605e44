"""The boundary's data format keeps in-place changes faithful (forgelab/judge/wire.py).

When one side changes an argument in place, the other side's object is brought up to date without
being replaced, and containers nested in it keep their identity, so sharing works as in one process. The few
callables that cross as data (a tokenizer that is ``len`` or a price table's lookup) arrive as the receiver's own.
"""

from __future__ import annotations

import dataclasses

from forgelab.judge import wire


def roundtrip(value: object) -> object:
    return wire.Decoder(lambda path: None).decode(wire.Encoder().encode(value))


def test_a_nested_list_shared_with_another_object_sees_the_change() -> None:
    files = ["a.ts"]
    case_payload = {"request": "inspect", "files": files}
    shallow = dict(case_payload)  # shares the nested list, as a shallow copy does
    changed = roundtrip(shallow)
    assert isinstance(changed, dict)
    changed["files"].append("b.ts")
    changed["request"] = "write everything"
    wire.apply_in_place(shallow, changed)
    assert shallow == {"request": "write everything", "files": ["a.ts", "b.ts"]}
    assert shallow["files"] is files and case_payload["files"] == ["a.ts", "b.ts"]
    assert case_payload["request"] == "inspect"  # the outer dict was a copy


def test_keys_removed_and_added_and_order_follow_the_other_side() -> None:
    original: dict[str, object] = {"a": 1, "b": [1], "c": {"x": 1}}
    inner = original["c"]
    wire.apply_in_place(original, {"c": {"x": 2}, "d": 4})
    assert list(original) == ["c", "d"] and original["c"] is inner and inner == {"x": 2}


def test_a_sort_in_place_reorders_the_callers_objects_without_rewriting_them() -> None:
    first, second = {"id": "z"}, {"id": "a"}
    items = [first, second]
    before = list(items)  # shares the elements, as a test's snapshot does
    changed = roundtrip(items)
    assert isinstance(changed, list)
    changed.sort(key=lambda item: item["id"])
    wire.apply_in_place(items, changed)
    assert items == [second, first] and items[0] is second and items[1] is first
    assert items != before and first == {"id": "z"}


def test_a_changed_element_is_updated_where_it_stands_and_new_ones_are_added() -> None:
    first = [1]
    original = [first, [2]]
    wire.apply_in_place(original, [[1, 1], [2], [3]])
    assert original == [[1, 1], [2], [3]] and original[0] is first and first == [1, 1]
    moved = [[1], [2]]
    inner = moved[1]
    wire.apply_in_place(moved, [[2], [9]])
    assert moved == [[2], [9]] and moved[0] is inner and inner == [2]  # moved, not rewritten


def test_sets_bytearrays_and_dataclasses_change_in_place() -> None:
    @dataclasses.dataclass
    class Box:
        items: list[int]

    items = [1]
    box = Box(items)
    wire.apply_in_place(box, Box([1, 2]))
    assert box.items is items and items == [1, 2]
    tags = {"a"}
    wire.apply_in_place(tags, {"b"})
    assert tags == {"b"}
    raw = bytearray(b"ab")
    wire.apply_in_place(raw, bytearray(b"xyz"))
    assert raw == bytearray(b"xyz")


def test_a_value_of_another_kind_is_left_alone() -> None:
    original = [1, 2]
    wire.apply_in_place(original, {"not": "a list"})
    assert original == [1, 2]


def test_a_snapshot_tells_whether_an_argument_changed() -> None:
    value = {"files": ["a.ts"]}
    before = wire.snapshot(value)
    assert before is not None and wire.snapshot({"files": ["a.ts"]}) == before
    value["files"].append("b.ts")
    assert wire.snapshot(value) != before
    assert wire.snapshot(object()) is None and not wire.mutable_argument(3) and wire.mutable_argument([])


def test_a_fraction_crosses_exactly_and_a_malformed_one_is_refused() -> None:
    import json
    from fractions import Fraction

    import pytest

    for value in (Fraction(1, 3), Fraction(-22500, 7), Fraction(0), Fraction(10**40 + 1, 3)):
        back = roundtrip(value)
        assert type(back) is Fraction and back == value
    assert roundtrip((Fraction(2, 5), [Fraction(3, 10)])) == (Fraction(2, 5), [Fraction(3, 10)])
    # the frame is plain JSON: two ints, never a float that would lose the exact value
    assert json.loads(json.dumps(wire.Encoder().encode(Fraction(1, 3)))) == {"$q": [1, 3]}
    decoder = wire.Decoder(lambda path: None)
    for bad in ({"$q": [1, 0]}, {"$q": [1, -3]}, {"$q": [1.5, 2]}, {"$q": [True, 2]}, {"$q": [1]}, {"$q": "1/3"}):
        with pytest.raises(wire.WireError):
            decoder.decode(bad)


@dataclasses.dataclass
class Candidate:
    id: str
    tokens: int
    score: float
    tags: list[str]


class Mode(__import__("enum").Enum):
    FAST = 1
    SLOW = 2


@dataclasses.dataclass
class Lying:
    """A forge dataclass whose own pickling says the same whatever it holds."""
    value: int

    def __reduce__(self) -> tuple[object, ...]:
        return (Lying, (0,))


for _kind in (Candidate, Mode, Lying):
    _kind.__module__ = "forge.fake"  # a class of the learner's forge, as the format sees it


def test_the_state_token_of_an_argument_is_the_same_until_something_in_it_changes() -> None:
    """wire.state_of, taken before and after a call in the learner's process, tells whether the call changed an
    argument. Every change a call can make in place is seen, down to a field of a dataclass in a list, a float's
    sign, an enum member, a set's element and a byte."""
    from fractions import Fraction

    def made() -> list[object]:
        return [Candidate("a", 3, 0.5, ["x"]), {"mode": Mode.FAST, "seen": {1, 2}}, bytearray(b"ab"),
                Fraction(1, 3), (0.0, None, True), Lying(1)]

    value = made()
    before = wire.state_of(value)
    assert isinstance(before, bytes), "plain data and forge dataclasses are pickled, not written as the format's text"
    assert wire.state_of(value) == before and wire.state_of(made()) == before

    changes = [
        lambda v: setattr(v[0], "tokens", 4),
        lambda v: v[0].tags.append("y"),
        lambda v: setattr(v[0], "score", 0.5000001),
        lambda v: v[1].__setitem__("mode", Mode.SLOW),
        lambda v: v[1]["seen"].add(3),
        lambda v: v[2].__setitem__(0, ord("b")),
        lambda v: v.__setitem__(3, Fraction(2, 3)),
        lambda v: v.__setitem__(4, (-0.0, None, True)),
        lambda v: setattr(v[5], "value", 2),  # its own __reduce__ would hide this: the fields are read instead
        lambda v: v.append(None),
        lambda v: v.reverse(),
    ]
    for number, change in enumerate(changes):
        value = made()
        change(value)
        assert wire.state_of(value) != before, f"change {number} not seen"


def test_a_forge_pydantic_model_has_a_pickled_state_token_that_sees_every_change() -> None:
    """Stage 08's scenario pack is a Pydantic model handed to the learner's extractor in every call; its token is
    pickled from the fields and the fields set that the format writes (not the format's text, ten times slower)."""
    from pydantic import BaseModel, ConfigDict

    class Item(BaseModel):
        model_config = ConfigDict(validate_assignment=False)
        name: str
        tags: list[str] = []

    class Pack(BaseModel):
        title: str
        items: list[Item]
        budget: int = 10

    for kind in (Item, Pack):
        kind.__module__ = "forge.fake"

    def made() -> Pack:
        return Pack(title="t", items=[Item(name="a", tags=["x"])])

    before = wire.state_of(made())
    assert isinstance(before, bytes) and wire.state_of(made()) == before
    for number, change in enumerate([lambda p: p.items[0].tags.append("y"), lambda p: setattr(p, "budget", 11),
                                     lambda p: p.items.append(Item(name="b")), lambda p: setattr(p, "title", "u")]):
        value = made()
        change(value)
        assert wire.state_of(value) != before, f"change {number} not seen"
    assert wire.state_of(Pack(title="t", items=[Item(name="a", tags=["x"])], budget=10)) != before  # budget now set


def test_a_value_the_state_token_does_not_pickle_falls_back_to_the_formats_own_text() -> None:
    class Word(str):
        pass

    value = [Word("x")]
    before = wire.state_of(value)
    assert before == wire.snapshot(value) and isinstance(before, str)
    value.append("y")
    assert wire.state_of(value) != before
    assert wire.state_of([object()]) is None


def _resolve_fake(path: str) -> object:
    classes = {"forge.fake:Candidate": Candidate, "forge.fake:Mode": Mode, "forge.fake:Lying": Lying}
    if path not in classes:
        raise wire.WireError(f"no class {path}")
    return classes[path]


def test_a_list_of_one_dataclass_crosses_as_rows_and_comes_back_the_same() -> None:
    """A list of two or more objects of one forge dataclass is written as one table: the field names once, a row of
    values per object (stage 02's 30,000 candidates crossed as 4.2 MB of JSON, one object and one pair per field
    each). What arrives is what the objects held, as with one object at a time."""
    import json

    items = [Candidate(f"doc-{n}", n, n / 4, [f"t{n}"] if n % 2 else []) for n in range(5)]
    encoded = wire.Encoder().encode(items)
    assert isinstance(encoded, dict) and encoded["$rows"] == "forge.fake:Candidate"
    assert encoded["n"] == ["id", "tokens", "score", "tags"] and len(encoded["r"]) == 5
    one_at_a_time = [wire.Encoder().encode(item) for item in items]
    assert len(json.dumps(encoded)) < len(json.dumps(one_at_a_time)) / 2
    back = wire.Decoder(_resolve_fake).decode(json.loads(json.dumps(encoded)))
    assert back == items and all(type(item) is Candidate for item in back)  # type: ignore[union-attr]
    # not a table: one object, objects of two kinds, an object beside plain data
    for plain in ([items[0]], [items[0], Lying(1)], [items[0], 3], []):
        encoded_plain = wire.Encoder().encode(plain)
        assert isinstance(encoded_plain, list)
        assert wire.Decoder(_resolve_fake).decode(encoded_plain) == plain
    nested = {"k": (items[:2], [items[2:4]])}
    assert wire.Decoder(_resolve_fake).decode(wire.Encoder().encode(nested)) == nested


def test_a_malformed_table_is_refused_and_names_what_is_wrong() -> None:
    import pytest

    decoder = wire.Decoder(_resolve_fake)
    good = {"$rows": "forge.fake:Candidate", "n": ["id", "tokens", "score", "tags"], "r": [["a", 1, 0.5, []]]}
    assert decoder.decode(good) == [Candidate("a", 1, 0.5, [])]
    for bad, words in (({**good, "$rows": "forge.fake:Other"}, "no class"),
                       ({**good, "n": ["id", "id", "score", "tags"]}, "given twice"),
                       ({**good, "r": [["a", 1, 0.5]]}, "a row of 3 values for 4 field names"),
                       ({**good, "n": ["id", "tokens", "score", "secret"]}, r"has no field\(s\) secret"),
                       ({**good, "r": "rows"}, "expected a list, got str"), ({**good, "n": [1, 2, 3, 4]}, "expected a string"),
                       ({**good, "$rows": "forge.fake:Mode"}, "neither a dataclass")):
        with pytest.raises(wire.WireError, match=words):
            decoder.decode(bad)
    with pytest.raises(wire.WireError):  # a table only data may cross (the judge's relay): no class at all
        wire.Decoder(lambda path: (_ for _ in ()).throw(wire.WireError("no classes"))).decode(good)
    deep: object = [Candidate("a", 1, 0.5, []), Candidate("b", 2, 0.5, [])]
    for _ in range(wire.MAX_DEPTH):  # the depth limit counts a table's values as it counts an object's
        deep = [deep]
    with pytest.raises(wire.WireError, match="nested"):
        wire.Encoder().encode(deep)
    sent: object = {**good, "r": [["a", 1, 0.5, "plain values only"]]}  # a receiver refuses a table nested deeper
    assert decoder.decode(sent) == [Candidate("a", 1, 0.5, "plain values only")]  # type: ignore[arg-type]
    for _ in range(wire.MAX_DEPTH - 1):  # than any sender may write one
        sent = [sent]
    with pytest.raises(wire.WireError, match="nested"):
        decoder.decode(sent)


@dataclasses.dataclass(frozen=True)
class Frozen:
    id: str
    size: int = 0


@dataclasses.dataclass(slots=True)
class Slotted:
    id: str
    size: int = 0


@dataclasses.dataclass
class Derived:
    id: str
    size: int = 0
    label: str = dataclasses.field(init=False, default="")

    def __post_init__(self) -> None:
        self.label = f"{self.id}:{self.size}"


for _kind in (Frozen, Slotted, Derived):
    _kind.__module__ = "forge.fake"


def test_a_table_builds_frozen_slotted_and_derived_objects_as_one_object_at_a_time_does() -> None:
    classes = {f"forge.fake:{kind.__qualname__}": kind for kind in (Frozen, Slotted, Derived)}
    decoder = wire.Decoder(lambda path: classes[path])
    for items in ([Frozen("a", 1), Frozen("b")], [Slotted("a", 1), Slotted("b")], [Derived("a", 1), Derived("b")]):
        alone = [decoder.decode(wire.Encoder().encode(item)) for item in items]
        together = decoder.decode(wire.Encoder().encode(items))
        assert together == alone == items and [type(item) for item in together] == [type(item) for item in items]
    # a table that leaves a field out gets the field's default, as an object written without it does
    short = {"$rows": "forge.fake:Frozen", "n": ["id"], "r": [["a"], ["b"]]}
    assert decoder.decode(short) == [Frozen("a"), Frozen("b")]
    frozen = decoder.decode({"$rows": "forge.fake:Frozen", "n": ["id", "size"], "r": [["a", 1], ["b", 2]]})
    import pytest

    with pytest.raises(dataclasses.FrozenInstanceError):  # still frozen after it was built
        frozen[0].size = 5  # type: ignore[index, misc]


def test_len_and_a_price_tables_lookup_cross_as_data_and_nothing_else_callable_does() -> None:
    """A tokenizer the test hands the learner's code is called once per text it prices: ``len`` and a dict's
    ``__getitem__`` arrive as the receiver's own (no exchange per call); any other callable is a handle."""
    handed: list[object] = []
    encoder = wire.Encoder(handle=lambda value: handed.append(value) or len(handed))
    decoder = wire.Decoder(lambda path: None, stub=lambda number: ("stub", number))
    assert encoder.encode(len) == {"$fn": "len"} and decoder.decode({"$fn": "len"}) is len
    prices = {"Use Go.": 3, "读配置。": 7}
    lookup = decoder.decode(encoder.encode(prices.__getitem__))
    assert [lookup(text) for text in prices] == [3, 7] and getattr(lookup, "__self__") is not prices
    assert handed == []
    for other in (print, [1, 2].__getitem__, {"a": 1}.get, lambda text: 1):
        assert decoder.decode(encoder.encode(other))[0] == "stub"
    assert len(handed) == 4
    for bad in ({"$fn": "eval"}, {"$fn": 3}, {"$lookup": [["a", 1]]}):
        try:
            decoder.decode(bad)
        except wire.WireError:
            continue
        raise AssertionError(f"{bad} was accepted")
