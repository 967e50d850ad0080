"""Plain value classes for what runs at start-up, where importing ``dataclasses`` (it imports
``inspect``) would cost ~8 ms of a ~70 ms cached ``dshctl lint`` (docs/performance.md)."""
from __future__ import annotations


class Record:
    """A value class: its fields are its ``__slots__``; equal, hashed and shown by them, as a
    dataclass would be. A subclass writes its own ``__init__``; treat instances as immutable unless
    the subclass says otherwise (and then sets ``__hash__ = None``)."""

    __slots__ = ()

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.__slots__)
        return f"{type(self).__name__}({shown})"


# ---- @record: a dataclass without the dataclasses module -------------------------------------
# ``import dataclasses`` (it imports ``inspect``) costs ~7 ms of CPU and each ``@dataclass`` another
# ~0.4 ms (it execs five or six functions and asks inspect for a signature): 19 ms of a cold
# ``plugin add``'s 210 (issue 30). ``@record`` reads the same class body (annotations, defaults,
# ``field(default_factory=…)``) and execs one ``__init__``; equality, hash and repr are shared
# functions. What the bundles use of dataclasses, no more: ``frozen``, ``eq``, ``compare=False``,
# ``repr=False``, ``as_dict``, ClassVar annotations skipped; no InitVar, ordering, slots or kw_only
# (``tests/test_records.py`` holds it to dataclasses on generated classes).

_MISSING = object()


class Field:
    __slots__ = ("default", "default_factory", "compare", "repr")

    def __init__(self, default=_MISSING, default_factory=None, compare: bool = True, repr: bool = True):
        if default is not _MISSING and default_factory is not None:
            raise ValueError("cannot specify both default and default_factory")
        self.default, self.default_factory, self.compare, self.repr = default, default_factory, compare, repr


def field(*, default=_MISSING, default_factory=None, compare: bool = True, repr: bool = True):
    """As ``dataclasses.field``: a default made per instance, a field left out of ``==`` or out of
    the repr (a token)."""
    return Field(default, default_factory, compare, repr)


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen record (as ``dataclasses.FrozenInstanceError``)."""


def record(cls=None, /, *, frozen: bool = False, eq: bool = True):
    """``@record`` / ``@record(frozen=True, eq=False)``, read as ``@dataclass`` would read it."""
    def wrap(cls):
        return _make(cls, frozen, eq)
    return wrap if cls is None else wrap(cls)


def _make(cls, frozen: bool, eq: bool):
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        fields.update(getattr(base, "__record_fields__", {}))
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue   # a class attribute, not a field (as dataclasses read it)
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, Field) else Field(default=value)
        if spec.default.__class__ in (list, dict, set):
            raise ValueError(f"mutable default {type(spec.default)} for field {name} is not allowed: "
                             "use default_factory")
        if isinstance(value, Field):
            if spec.default is _MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, spec.default)
        fields[name] = spec
    cls.__record_fields__ = fields
    cls.__record_compared__ = tuple(n for n, f in fields.items() if f.compare)
    cls.__record_shown__ = tuple(n for n, f in fields.items() if f.repr)
    cls.__match_args__ = tuple(fields)
    cls.__init__ = _init_for(cls, fields, frozen)
    own = cls.__dict__
    if "__repr__" not in own:
        cls.__repr__ = _repr
    if eq and "__eq__" not in own:
        cls.__eq__ = _eq
    if "__hash__" not in own or own["__hash__"] is None:
        if eq and frozen:
            cls.__hash__ = _hash
        elif eq:
            cls.__hash__ = None   # mutable and compared by value: unhashable, as a dataclass
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen_setattr, _frozen_delattr
    return cls


def _init_for(cls, fields: dict[str, Field], frozen: bool):
    """One ``__init__`` with the fields as parameters, defaults bound by name (as dataclasses do)."""
    params, body, names = [], [], {"_MISSING": _MISSING, "_set": object.__setattr__}
    seen_default = False
    for name, spec in fields.items():
        if spec.default is not _MISSING:
            names[f"_d_{name}"] = spec.default
            params.append(f"{name}=_d_{name}")
            value = name
        elif spec.default_factory is not None:
            names[f"_f_{name}"] = spec.default_factory
            params.append(f"{name}=_MISSING")
            value = f"_f_{name}() if {name} is _MISSING else {name}"
        else:
            if seen_default:
                raise TypeError(f"non-default argument {name!r} follows default argument")
            params.append(name)
            value = name
        seen_default = seen_default or spec.default is not _MISSING or spec.default_factory is not None
        body.append(f"  _set(self, {name!r}, {value})" if frozen else f"  self.{name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "  pass") + "\n"
    exec(source, names)   # noqa: S102 - our own text, built from the class's field names
    init = names["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


_REPRING: set = set()   # (id, thread) of the records being shown: a cycle shows as "..."


def _repr(self) -> str:
    import _thread

    key = (id(self), _thread.get_ident())
    if key in _REPRING:
        return "..."
    _REPRING.add(key)
    try:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__record_shown__)
    finally:
        _REPRING.discard(key)
    return f"{self.__class__.__qualname__}({shown})"


def _values(self) -> tuple:
    return tuple(getattr(self, n) for n in self.__record_compared__)


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _values(self) == _values(other)


def _hash(self) -> int:
    return hash(_values(self))


def _frozen_setattr(self, name, value):
    if type(self).__dict__.get("__setattr__") is _frozen_setattr or name in self.__record_fields__:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self, name):
    if type(self).__dict__.get("__delattr__") is _frozen_delattr or name in self.__record_fields__:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)


def as_dict(value):
    """As ``dataclasses.asdict``: records become dicts of all their fields, recursively through
    lists, tuples and dicts. Other values are shared, not deep-copied (records hold plain data)."""
    if hasattr(value.__class__, "__record_fields__"):
        return {n: as_dict(getattr(value, n)) for n in value.__record_fields__}
    if isinstance(value, (list, tuple)):
        return type(value)(as_dict(v) for v in value)
    if isinstance(value, dict):
        return {as_dict(k): as_dict(v) for k, v in value.items()}
    return value
