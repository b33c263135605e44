"""The boundary's data format: values cross between the judge and the learner's process as JSON.

Both sides use this file: the trusted side imports it as ``forgelab.judge.wire``; the sandbox gets a
copy next to its host script (it must stay standard-library only, and import nothing of forgelab).

What may cross, and how it is written:

==========================  ===============================================================
``None``, bool, int, str    as JSON
float                       as JSON; ``nan``/``inf`` as ``{"$f": "nan"}``
fractions.Fraction          ``{"$q": [numerator, denominator]}`` (exact, as both sides hold it)
list                        a JSON array
tuple / set / frozenset     ``{"$t": [...]}`` / ``{"$s": [...]}`` / ``{"$fs": [...]}``
dict                        ``{"$d": [[key, value], ...]}`` (any encodable key, order kept)
bytes / bytearray           ``{"$b": "<base64>"}`` / ``{"$ba": "<base64>"}``
a dataclass or Pydantic     ``{"$o": "module:QualName", "f": [[name, value], ...]}`` — only for
model of a ``forge`` module classes defined in ``forge`` or ``forge.*``; a Pydantic model also
                            carries ``"fs"``, the names of the fields that were set
a list of two or more       ``{"$rows": "module:QualName", "n": [name, ...], "r": [[value, ...], ...]}``:
dataclasses of one class    the field names once, one row of values per object (a receiver gets a
(not Pydantic) of ``forge``  list of objects, as from ``$o`` each); a stage's large inputs (30,000
                            candidates) cross in about a third of the bytes and the time
an Enum member              ``{"$e": "module:QualName", "n": "NAME"}`` (``forge`` modules only)
anything else (a callable,  ``{"$h": n}``: a *handle*, a number that names the object in the
an object of a test class)  sender's handle table; the receiver gets a stub whose calls travel
                            back across the boundary as data
a handle, sent back         ``{"$r": n}``: an object the *receiver* handed out as handle n, passed
                            back to it (the receiver uses its own object, no round trip)
an iterator or generator    ``{"$it": [...]}``: its items; the receiver gets a one-shot iterator
an argument, returned       ``{"$arg": i}``: the same object as the i-th positional argument
==========================  ===============================================================

Nothing is ever unpickled or evaluated: a receiver builds objects only from classes that its own
``resolve`` function hands out, without running their constructors or validators (the values are
what the sender's object held). Depth and size are bounded.

Frames on a pipe are a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import io
import json
import math
import os
import pickle
import struct
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

MAX_DEPTH = 120
MAX_ITERATOR_ITEMS = 100_000
MAX_FRAME_BYTES = 64 * 1024 * 1024
MAX_MESSAGE_CHARS = 2000
MAX_TRACEBACK_CHARS = 4000


class WireError(ValueError):
    """A value that cannot cross the boundary, or a frame that is not valid; the message says which."""


class FrameTooLarge(WireError):
    """The other side sent (or we would send) a frame past :data:`MAX_FRAME_BYTES`."""


class ChannelClosed(EOFError):
    """The other side closed its end of the pipe (it exited or was stopped)."""


def is_forge_module(name: str) -> bool:
    return name == "forge" or name.startswith("forge.")


def class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _pydantic_model(value: object) -> bool:
    cls = type(value)
    return hasattr(cls, "model_fields") and hasattr(value, "__pydantic_fields_set__") and hasattr(cls, "model_construct")


_PLANS: dict[type, tuple[str, tuple[str, ...]] | None] = {}  # a class → how its instances are written (see _plan)
_KNOWN: dict[type, dict[str, dataclasses.Field[Any]]] = {}  # a dataclass → its fields by name (see build_object)
_MAX_CLASSES = 1024  # classes remembered per process (a process that makes classes on the fly makes no more)


def _plan(kind: type) -> tuple[str, tuple[str, ...]] | None:
    """For a plain dataclass of a ``forge`` module (not a Pydantic model): its path and field names, worked out
    once per class; None for any other class. Every instance of the class is then written the same way."""
    try:
        return _PLANS[kind]
    except KeyError:
        pass
    except TypeError:  # a class that cannot be a key: worked out each time
        return _make_plan(kind)
    plan = _make_plan(kind)
    if len(_PLANS) < _MAX_CLASSES:
        _PLANS[kind] = plan
    return plan


def _make_plan(kind: type) -> tuple[str, tuple[str, ...]] | None:
    if not (is_forge_module(kind.__module__) and dataclasses.is_dataclass(kind)) or (
            hasattr(kind, "model_fields") and hasattr(kind, "model_construct")):
        return None
    return class_path(kind), tuple(field.name for field in dataclasses.fields(kind))


def _known_fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    known = _KNOWN.get(cls)
    if known is None:
        known = {field.name: field for field in dataclasses.fields(cls)}
        if len(_KNOWN) < _MAX_CLASSES:
            _KNOWN[cls] = known
    return known


def _field_values(value: object) -> list[tuple[str, object]]:
    if dataclasses.is_dataclass(value):
        return [(field.name, getattr(value, field.name)) for field in dataclasses.fields(value)]
    fields: dict[str, object] = getattr(type(value), "model_fields")
    return [(name, getattr(value, name)) for name in fields]


# ---------------------------------------------------------------- encoding


# callables that cross as data, each rebuilt on the receiving side from its own interpreter: the built-in ``len``, and
# ``table.__getitem__`` of a dict of data (a made-up price per text) — a learner function given one as its tokenizer
# calls it where it runs, without an exchange per call; anything else callable crosses as a handle
_FUNCTIONS: dict[str, Callable[..., object]] = {"len": len}
_BOUND_BUILTIN: type = type({}.__getitem__)


class Encoder:
    """Turns values into JSON-ready data. ``handle`` registers an object that is not data (or raises)."""

    def __init__(self, handle: Callable[[object], int] | None = None,
                 arguments: tuple[object, ...] = (), returning: Callable[[object], int | None] | None = None) -> None:
        self._handle = handle
        self._arguments = arguments
        self._returning = returning  # "is this a stub of one of the receiver's own objects?" → its handle

    def encode(self, value: object) -> object:
        return self._encode(value, 0, top=True)

    def _encode(self, value: object, depth: int, top: bool = False) -> object:
        if depth > MAX_DEPTH:
            raise WireError(f"a value nested more than {MAX_DEPTH} levels deep cannot cross the boundary")
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and type(value) is int:
            return value
        if type(value) is float:
            if math.isnan(value):
                return {"$f": "nan"}
            if math.isinf(value):
                return {"$f": "inf" if value > 0 else "-inf"}
            return value
        if type(value) is Fraction:
            return {"$q": [value.numerator, value.denominator]}
        if top and self._arguments:
            for index, argument in enumerate(self._arguments):
                if value is argument and not isinstance(value, (int, float, str, bytes, tuple, frozenset)):
                    return {"$arg": index}
        step = depth + 1
        kind = type(value)
        if isinstance(value, list) and kind is list:
            if len(value) >= 2:
                plan = _plan(type(value[0]))
                if plan is not None and all(type(item) is type(value[0]) for item in value):
                    names, inner = plan[1], step + 1  # each object's fields one level below it, as with "$o"
                    return {"$rows": plan[0], "n": list(names),
                            "r": [[self._encode(getattr(item, name), inner) for name in names] for item in value]}
            return [self._encode(item, step) for item in value]
        if isinstance(value, tuple) and kind is tuple:
            return {"$t": [self._encode(item, step) for item in value]}
        if isinstance(value, dict) and kind is dict:
            return {"$d": [[self._encode(k, step), self._encode(v, step)] for k, v in value.items()]}
        if isinstance(value, set) and kind is set:
            return {"$s": [self._encode(item, step) for item in _stable(value)]}
        if isinstance(value, frozenset) and kind is frozenset:
            return {"$fs": [self._encode(item, step) for item in _stable(value)]}
        if isinstance(value, bytes) and kind is bytes:
            return {"$b": base64.b64encode(value).decode("ascii")}
        if isinstance(value, bytearray) and kind is bytearray:
            return {"$ba": base64.b64encode(bytes(value)).decode("ascii")}
        if isinstance(value, enum.Enum) and is_forge_module(kind.__module__):
            return {"$e": class_path(kind), "n": value.name}
        plan = None if isinstance(value, type) else _plan(kind)
        if plan is not None:  # a plain dataclass of forge (the common case, without the checks below)
            return {"$o": plan[0], "f": [[name, self._encode(getattr(value, name), step)] for name in plan[1]]}
        if is_forge_module(kind.__module__) and not isinstance(value, type) and (
                dataclasses.is_dataclass(value) or _pydantic_model(value)):
            encoded: dict[str, object] = {
                "$o": class_path(kind),
                "f": [[name, self._encode(item, step)] for name, item in _field_values(value)],
            }
            if _pydantic_model(value):
                encoded["fs"] = sorted(getattr(value, "__pydantic_fields_set__"))
            return encoded
        plain = _as_plain(value)
        if plain is not None:  # a subclass of a plain type (an IntEnum from elsewhere, a str subclass): its plain value
            return self._encode(plain, depth)
        if isinstance(value, Iterator) and not isinstance(value, (str, bytes)):
            items = []
            for item in value:  # a one-shot iterator arrives as one-shot: the receiver gets iter(items)
                items.append(self._encode(item, step))
                if len(items) > MAX_ITERATOR_ITEMS:
                    raise WireError(f"an iterator with more than {MAX_ITERATOR_ITEMS} items cannot cross the boundary")
            return {"$it": items}
        if value is len:  # a tokenizer that counts characters: the receiver calls its own len, with no exchange
            return {"$fn": "len"}
        if type(value) is _BOUND_BUILTIN and getattr(value, "__name__", "") == "__getitem__" \
                and type(getattr(value, "__self__", None)) is dict:  # a price table's lookup: the table as data
            return {"$lookup": self._encode(getattr(value, "__self__"), step)}
        if self._returning is not None and (number := self._returning(value)) is not None:
            return {"$r": number}
        if self._handle is not None:
            return {"$h": self._handle(value)}
        raise WireError(f"a {_describe(value)} cannot cross the boundary: use plain data "
                        "(str, int, float, bool, None, list, tuple, dict, set) or the course's own types")


def _as_plain(value: object) -> object | None:
    """The plain built-in value of an instance of a subclass of a built-in type, else None."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, list):
        return list(value)
    if isinstance(value, tuple):
        return tuple(value)
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, set):
        return set(value)
    if isinstance(value, frozenset):
        return frozenset(value)
    return None


def _stable(items: set[Any] | frozenset[Any]) -> list[object]:
    try:
        return sorted(items)
    except TypeError:
        return sorted(items, key=repr)


def _describe(value: object) -> str:
    kind = type(value)
    module = kind.__module__
    name = kind.__qualname__ if module in ("builtins", "__main__") else f"{module}.{kind.__qualname__}"
    return f"{name} object"


# ---------------------------------------------------------------- decoding


Resolver = Callable[[str], Any]
"""``"module:QualName"`` → a class (or raises :class:`WireError`)."""


class Decoder:
    """Builds values from data; classes come only from ``resolve``, handles become ``stub(n)``."""

    def __init__(self, resolve: Resolver, stub: Callable[[int], object] | None = None,
                 arguments: tuple[object, ...] = (), own: Callable[[int], object] | None = None) -> None:
        self._resolve = resolve
        self._stub = stub
        self._arguments = arguments
        self._own = own  # handle number → the object this side handed out

    def decode(self, data: object) -> object:
        return self._decode(data, 0)

    def _decode(self, data: object, depth: int) -> object:
        if depth > MAX_DEPTH:
            raise WireError(f"data nested more than {MAX_DEPTH} levels deep")
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        step = depth + 1
        if isinstance(data, list):
            return [self._decode(item, step) for item in data]
        if not isinstance(data, dict) or len(data) < 1:
            raise WireError(f"unexpected data of type {type(data).__name__}")
        if "$t" in data:
            return tuple(self._decode(item, step) for item in _list(data["$t"]))
        if "$d" in data:
            result = {}
            for pair in _list(data["$d"]):
                key, value = _pair(pair)
                result[_hashable(self._decode(key, step))] = self._decode(value, step)
            return result
        if "$s" in data:
            return {_hashable(self._decode(item, step)) for item in _list(data["$s"])}
        if "$fs" in data:
            return frozenset(_hashable(self._decode(item, step)) for item in _list(data["$fs"]))
        if "$f" in data:
            return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[_text(data["$f"], ("nan", "inf", "-inf"))]
        if "$q" in data:
            numerator, denominator = _pair(data["$q"])
            if type(numerator) is not int or type(denominator) is not int or denominator < 1:
                raise WireError("a fraction needs an int numerator and a positive int denominator")
            return Fraction(numerator, denominator)
        if "$b" in data:
            return base64.b64decode(_text(data["$b"]), validate=True)
        if "$ba" in data:
            return bytearray(base64.b64decode(_text(data["$ba"]), validate=True))
        if "$e" in data:
            cls = self._resolve(_text(data["$e"]))
            if not (isinstance(cls, type) and issubclass(cls, enum.Enum)):
                raise WireError(f"{data['$e']} is not an Enum")
            try:
                return cls[_text(data.get("n"))]
            except KeyError:
                raise WireError(f"{data['$e']} has no member {data.get('n')!r}") from None
        if "$o" in data:
            return self._object(data, step)
        if "$rows" in data:
            return self._rows(data, step)
        if "$h" in data:
            if self._stub is None:
                raise WireError("a handle arrived where only data is allowed")
            return self._stub(_int(data["$h"]))
        if "$it" in data:
            return iter([self._decode(item, step) for item in _list(data["$it"])])
        if "$r" in data:
            if self._own is None:
                raise WireError("a returned handle arrived where only data is allowed")
            return self._own(_int(data["$r"]))
        if "$fn" in data:
            return _FUNCTIONS[_text(data["$fn"], tuple(_FUNCTIONS))]
        if "$lookup" in data:
            table = self._decode(data["$lookup"], step)
            if type(table) is not dict:
                raise WireError("a lookup's table must be a dict")
            return table.__getitem__
        if "$arg" in data:
            index = _int(data["$arg"])
            if not 0 <= index < len(self._arguments):
                raise WireError(f"the value refers to argument {index}, which does not exist")
            return self._arguments[index]
        raise WireError(f"unknown data tag {sorted(data)[0]!r}")

    def _rows(self, data: dict[str, object], step: int) -> list[object]:
        """The objects of a ``$rows`` value: each row's values under the names, built as ``$o`` builds one."""
        path = _text(data["$rows"])
        cls = self._resolve(path)
        names = [_text(name) for name in _list(data.get("n", []))]
        if len(set(names)) != len(names):
            raise WireError(f"{path}: a field name is given twice")
        rows = _list(data.get("r", []))
        decode, inner = self._decode, step + 1
        if inner > MAX_DEPTH:  # checked once here: a row's plain values are taken as they are below
            raise WireError(f"data nested more than {MAX_DEPTH} levels deep")
        build = _row_builder(cls, path, names)
        made = []
        for row in rows:
            values = _list(row)
            if len(values) != len(names):
                raise WireError(f"{path}: a row of {len(values)} values for {len(names)} field names")
            made.append(build([value if type(value) in _PLAIN_JSON else decode(value, inner) for value in values]))
        return made

    def _object(self, data: dict[str, object], step: int) -> object:
        path = _text(data["$o"])
        cls = self._resolve(path)
        values = {}
        decode = self._decode
        for pair in _list(data.get("f", [])):
            if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str):  # the usual case, checked inline
                values[pair[0]] = decode(pair[1], step)
                continue
            name, value = _pair(pair)  # raises the error that says what is wrong
            values[_text(name)] = decode(value, step)
        return build_object(cls, path, values, data.get("fs"))


_PLAIN_JSON = frozenset({str, int, float, bool, type(None)})  # what JSON gives that decodes to itself


def _row_builder(cls: Any, path: str, names: list[str]) -> Callable[[list[object]], object]:
    """What makes one object of a ``$rows`` table from its row of decoded values: :func:`build_object`, with the
    checks that are the same for every row made once. A plain dataclass (one with a ``__dict__`` and every field
    named) gets its values in one step."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)) or set(names) != set(_known_fields(cls)) \
            or hasattr(cls, "__slots__"):
        return lambda values: build_object(cls, path, dict(zip(names, values)))
    new = object.__new__

    def build(values: list[object]) -> object:
        instance = new(cls)
        instance.__dict__.update(zip(names, values))
        return instance

    return build


def build_object(cls: Any, path: str, values: dict[str, object], fields_set: object = None) -> object:
    """An instance of ``cls`` holding ``values`` — constructors and validators are not run."""
    if isinstance(cls, type) and dataclasses.is_dataclass(cls):
        known = _known_fields(cls)
        if not values.keys() <= known.keys():
            unknown = sorted(set(values) - set(known))
            raise WireError(f"{path} has no field(s) {', '.join(unknown)} in this definition")
        instance = object.__new__(cls)
        for name, field in known.items():
            if name in values:
                value = values[name]
            elif field.default is not dataclasses.MISSING:
                value = field.default
            elif field.default_factory is not dataclasses.MISSING:
                value = field.default_factory()
            else:
                raise WireError(f"{path} arrived without its field {name!r}")
            object.__setattr__(instance, name, value)
        return instance
    if hasattr(cls, "model_construct") and hasattr(cls, "model_fields"):
        unknown = sorted(set(values) - set(cls.model_fields))
        if unknown:
            raise WireError(f"{path} has no field(s) {', '.join(unknown)} in this definition")
        given = set(_list(fields_set)) if fields_set is not None else None
        if given is not None and not all(isinstance(name, str) for name in given):
            raise WireError(f"{path}: the set-field names must be strings")
        return cls.model_construct(_fields_set=given, **values)
    raise WireError(f"{path} is neither a dataclass nor a Pydantic model here")


def _list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise WireError(f"expected a list, got {type(value).__name__}")
    return value


def _pair(value: object) -> tuple[object, object]:
    items = _list(value)
    if len(items) != 2:
        raise WireError("expected a [key, value] pair")
    return items[0], items[1]


def _text(value: object, allowed: tuple[str, ...] = ()) -> str:
    if not isinstance(value, str) or (allowed and value not in allowed):
        raise WireError(f"expected a string{' among ' + ', '.join(allowed) if allowed else ''}, got {value!r:.60}")
    return value


def _int(value: object) -> int:
    if type(value) is not int:
        raise WireError(f"expected an integer, got {value!r:.60}")
    return value


def _hashable(value: object) -> Any:
    try:
        hash(value)
    except TypeError:
        raise WireError(f"a {type(value).__name__} cannot be a dict key or a set member") from None
    return value


# ---------------------------------------------------------------- reading untrusted messages


def items_of(message: dict[str, object], key: str) -> list[object]:
    """``message[key]`` as a list (absent: empty), or :class:`WireError`."""
    value = message.get(key, [])
    if not isinstance(value, list):
        raise WireError(f"{key!r} must be a list")
    return value


def pairs_of(message: dict[str, object], key: str) -> list[tuple[str, object]]:
    """``message[key]`` as ``[name, value]`` pairs with text names, or :class:`WireError`."""
    pairs = []
    for entry in items_of(message, key):
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)):
            raise WireError(f"{key!r} must hold [name, value] pairs")
        pairs.append((entry[0], entry[1]))
    return pairs


def number_of(message: dict[str, object], key: str) -> int:
    value = message.get(key)
    if type(value) is not int:
        raise WireError(f"{key!r} must be an integer")
    return value


# ---------------------------------------------------------------- class shapes


def class_shape(cls: type, encoder: Encoder) -> dict[str, object]:
    """What building an instance of ``cls`` depends on, as data: for a plain dataclass its fields, their
    defaults and whether it is frozen. Two classes with equal shapes build equal instances from equal
    arguments, so the judge may build such an instance itself instead of asking the learner's process."""
    if not dataclasses.is_dataclass(cls):
        return {"kind": "other"}
    own = vars(cls)
    if any(name in own for name in ("__post_init__", "__new__", "__getattribute__")):
        return {"kind": "other"}
    for name in ("__init__", "__setattr__", "__delattr__"):
        method = own.get(name)
        if method is not None and getattr(getattr(method, "__code__", None), "co_filename", "") != "<string>":
            return {"kind": "other"}  # written by hand, not generated by @dataclass
    fields = []
    for field in dataclasses.fields(cls):
        if field.default is not dataclasses.MISSING:
            try:
                default: object = encoder.encode(field.default)
            except WireError:
                return {"kind": "other"}
            fields.append([field.name, "value", default, field.init, field.kw_only is True])
        elif field.default_factory is not dataclasses.MISSING:
            try:
                produced = encoder.encode(field.default_factory())
            except Exception:  # noqa: BLE001
                return {"kind": "other"}
            fields.append([field.name, "factory", produced, field.init, field.kw_only is True])
        else:
            fields.append([field.name, "none", None, field.init, field.kw_only is True])
    params = getattr(cls, "__dataclass_params__")
    return {"kind": "dataclass", "fields": fields, "frozen": bool(params.frozen), "init": bool(params.init),
            "eq": bool(params.eq), "order": bool(params.order)}


# ---------------------------------------------------------------- exceptions


def describe_exception(error: BaseException, encoder: Encoder, traceback_text: str = "") -> dict[str, object]:
    """An exception as data: its class, the names of its built-in bases, a capped message, its state."""
    cls = type(error)
    bases = [base.__name__ for base in cls.__mro__ if base.__module__ == "builtins"]
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - a learner's __str__ may itself raise
        message = f"<{cls.__name__} whose message cannot be shown>"
    described: dict[str, object] = {
        "module": str(cls.__module__)[:200], "qualname": str(cls.__qualname__)[:200], "bases": bases,
        "message": cap(message, MAX_MESSAGE_CHARS), "traceback": cap(traceback_text, MAX_TRACEBACK_CHARS),
    }
    described["args"] = [_safe(encoder, item) for item in error.args[:20]]
    if is_forge_module(cls.__module__):
        described["state"] = [[str(k), _safe(encoder, v)] for k, v in sorted(vars(error).items()) if isinstance(k, str)]
    return described


def _safe(encoder: Encoder, value: object) -> object:
    try:
        return encoder.encode(value)
    except WireError:
        return cap(repr_safe(value), 300)


# ---------------------------------------------------------------- arguments changed in place


def mutable_argument(value: object) -> bool:
    """Can a call change ``value`` in place, so the caller's side must see the change too?"""
    return isinstance(value, (list, dict, set, bytearray)) or (
        not isinstance(value, type) and (dataclasses.is_dataclass(value) or _pydantic_model(value)))


def snapshot(value: object) -> str | None:
    """The state of an argument as text, to tell after a call whether it changed (None: not data)."""
    try:
        # every JSON object in an encoded value is one of this module's tags, its keys always in the same order:
        # the text is the same for the same state without sorting them (json's shared encoder, its fastest path)
        return json.dumps(Encoder().encode(value))
    except (WireError, RecursionError, TypeError, ValueError):
        return None


def state_of(value: object) -> bytes | str | None:
    """A token of an argument's state, taken before and after a call to tell whether the call changed it.

    Equal tokens mean equal states. Unequal tokens mostly mean a change; they may also come from equal states
    held differently (a set that grew and shrank, an element replaced by an equal one), and then the argument is
    sent back as changed, which changes nothing on the other side. Plain data and the ``forge`` dataclasses and
    enums this format writes are pickled, their objects by the fields :meth:`Encoder.encode` writes (never by a
    class's own ``__reduce__``, which the learner's code could make say anything): a tenth of the time of
    :func:`snapshot`, which a call with 30,000 candidates spent twice. Anything else falls back to
    :func:`snapshot`."""
    buffer = io.BytesIO()
    try:
        _StatePickler(buffer, pickle.HIGHEST_PROTOCOL).dump(value)
    except Exception:  # noqa: BLE001 - not plain data or not picklable (any reason): the format's own text
        return snapshot(value)
    return buffer.getvalue()


class _NotPlain(Exception):
    """A value :func:`state_of` does not pickle itself."""


def _object_state(path: str, fields: tuple[object, ...]) -> None:
    """Named in :func:`state_of`'s pickles of a ``forge`` dataclass; never called (they are never loaded)."""


def _member_state(path: str, name: str) -> None:
    """Named in :func:`state_of`'s pickles of a ``forge`` enum member; never called."""


def _model_state(path: str, fields: tuple[object, ...], fields_set: tuple[str, ...]) -> None:
    """Named in :func:`state_of`'s pickles of a ``forge`` Pydantic model; never called."""


_BY_NAME = (Fraction, bytearray, _object_state, _member_state, _model_state)  # named in the reductions of what state_of pickles


class _StatePickler(pickle.Pickler):
    """Pickles exact built-in data as pickle does, and a ``forge`` dataclass or enum member by what the format
    writes of it; raises :class:`_NotPlain` for anything else."""

    def reducer_override(self, obj: Any) -> Any:  # called for every object but exact int, str, list, dict, … and None
        kind = type(obj)
        if kind is Fraction or kind is bytearray or any(obj is named for named in _BY_NAME):
            return NotImplemented  # by value (the standard library's own reduction); what those name, by name
        if isinstance(obj, enum.Enum) and is_forge_module(kind.__module__):
            return _member_state, (class_path(kind), obj.name)
        plan = None if isinstance(obj, type) else _plan(kind)
        if plan is not None:
            return _object_state, (plan[0], tuple([getattr(obj, name) for name in plan[1]]))
        if is_forge_module(kind.__module__) and not isinstance(obj, type) and _pydantic_model(obj):
            # a forge Pydantic model (stage 08's scenario pack) by what the format writes of it: fields, fields set
            return _model_state, (class_path(kind), tuple(value for _name, value in _field_values(obj)),
                                  tuple(sorted(getattr(obj, "__pydantic_fields_set__"))))
        raise _NotPlain


def apply_in_place(original: object, new: object) -> None:
    """Make ``original`` hold what ``new`` holds without replacing it: the other side changed an argument.

    Only states cross, not identities, so objects nested inside are matched up by what they hold: an
    element that did not change is the very same object afterwards (even if it moved — a sort in place
    reorders the caller's objects, it does not rewrite them), and a container that changed where it
    stands (a dict's key, a list's position) is updated in place. So an object that shares a nested list
    with the argument sees an ``append`` as it would in one process.
    """
    if isinstance(original, list) and isinstance(new, list):
        original[:] = _rebuilt(original, new)
    elif isinstance(original, dict) and isinstance(new, dict):
        merged = {key: _merged(original[key], value) if key in original else value for key, value in new.items()}
        original.clear()
        original.update(merged)
    elif isinstance(original, set) and isinstance(new, set):
        original.clear()
        original.update(new)
    elif isinstance(original, bytearray) and isinstance(new, bytearray):
        original[:] = new
    elif dataclasses.is_dataclass(original) and type(original) is type(new):
        for field in dataclasses.fields(original):
            object.__setattr__(original, field.name, _merged(getattr(original, field.name), getattr(new, field.name)))
    elif _pydantic_model(original) and type(original) is type(new):
        original.__dict__.update(new.__dict__)


def _rebuilt(olds: list[Any], news: list[Any]) -> list[Any]:
    """``news`` made of ``olds``' own objects where they are unchanged, else updated in place where they stand."""
    unchanged: dict[str, list[int]] = {}
    for index, old in enumerate(olds):
        state = snapshot(old)
        if state is not None:
            unchanged.setdefault(state, []).append(index)
    reused: set[int] = set()
    result: list[Any] = []
    changed: list[int] = []
    for position, item in enumerate(news):
        state = snapshot(item)
        same = unchanged.get(state) if state is not None else None
        if same:
            reused.add(same[0])
            result.append(olds[same.pop(0)])
        else:
            result.append(item)
            changed.append(position)
    for position in changed:
        if position < len(olds) and position not in reused:
            result[position] = _merged(olds[position], news[position])
    return result


def _merged(old: object, new: object) -> object:
    """``old`` brought up to ``new`` in place when both are the same kind of container, else ``new``."""
    if type(old) is type(new) and isinstance(old, (list, dict, set, bytearray)):
        apply_in_place(old, new)
        return old
    if type(old) is type(new) and dataclasses.is_dataclass(old) and not isinstance(old, type):
        apply_in_place(old, new)
        return old
    return new


def repr_safe(value: object) -> str:
    try:
        return repr(value)
    except Exception:  # noqa: BLE001
        return f"<{type(value).__name__}>"


def cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- frames


def dumps(message: dict[str, object]) -> bytes:
    body = json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")
    if len(body) > MAX_FRAME_BYTES:
        raise FrameTooLarge(f"a message of {len(body)} bytes is larger than the {MAX_FRAME_BYTES}-byte limit")
    return struct.pack(">I", len(body)) + body


def loads(body: bytes) -> dict[str, object]:
    try:
        message = json.loads(body.decode("ascii"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise WireError(f"a frame that is not valid JSON ({type(error).__name__})") from None
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise WireError("a frame without an 'op'")
    return message


def write_frame(fd: int, message: dict[str, object]) -> None:
    data = memoryview(dumps(message))
    while data:
        written = os.write(fd, data)
        data = data[written:]


def read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise ChannelClosed("the other side closed the channel")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> dict[str, object]:
    (size,) = struct.unpack(">I", read_exactly(fd, 4))
    if size > MAX_FRAME_BYTES:
        raise FrameTooLarge(f"a message of {size} bytes is larger than the {MAX_FRAME_BYTES}-byte limit")
    return loads(read_exactly(fd, size))
