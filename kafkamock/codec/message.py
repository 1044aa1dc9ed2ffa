"""The decoded-message type: a plain dict with attribute access.

A ``dict`` subclass keeps decoding cheap (one dict per struct), compares equal to plain dicts in tests, and
serialises to JSON as is; attribute access (``msg.group_id``) keeps handler code readable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import methodcaller
from typing import TYPE_CHECKING, Any, ClassVar, NoReturn


class Message(dict[str, Any]):
    """A decoded Kafka struct: keys are the snake_case field names (``GroupId`` -> ``group_id``)."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:  # a decoded value: its type is the schema's, known only at run time
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"message has no field {name!r}") from None

    def __setattr__(self, name: str, value: object) -> None:
        self[name] = value

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return f"Message({dict.__repr__(self)})"

    def __dir__(self) -> list[str]:
        return list(self.keys())

    def __reduce__(self) -> tuple[type[Message], tuple[dict[str, Any]]]:
        return (type(self), (dict(self),))      # a copy or a pickle keeps its generated class


class DefaultMessage(Message):
    """The shared, read-only default of a struct field that was absent from the wire.

    FetchResponse carries three tagged structs per partition that are almost always absent; building three
    fresh dicts per partition for them was a fifth of the decode time. Their defaults hold only immutable values,
    so one instance is shared. To change one, assign a new dict to the field instead. ``shared_default`` makes it
    an instance of the struct's typed class too, as a decoded struct is; a copy is a writable one of that class.
    """

    __slots__ = ()
    _writable: ClassVar[type[Message]] = Message

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("this is the shared default of an absent struct field; assign a new dict to the field instead")

    __setitem__ = __delitem__ = __setattr__ = __delattr__ = _read_only
    clear = pop = popitem = setdefault = update = __ior__ = _read_only

    def __repr__(self) -> str:
        return f"DefaultMessage({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[type[Message], tuple[dict[str, Any]]]:
        return (Message, (dict(self),))

    def __copy__(self) -> Message:
        return self._writable(self)

    def __deepcopy__(self, memo: dict[int, object]) -> Message:
        return self._writable(self)


_READ_ONLY: dict[type, type[DefaultMessage]] = {}


def shared_default(cls: type | None, fields: Mapping[str, object]) -> DefaultMessage:
    """The shared default of an absent struct field holding ``fields``: an instance of ``cls`` (the struct's typed
    class, a ``Message`` subclass; None for plain ``Message``) as well as of ``DefaultMessage``, whose read-only
    methods come first. Built when a codec is compiled, never per decode."""
    if cls is None or cls is Message:
        return DefaultMessage(fields)
    read_only = _READ_ONLY.get(cls)
    if read_only is None:
        read_only = _READ_ONLY[cls] = type(f"Default{cls.__name__}", (DefaultMessage, cls),
                                           {"__slots__": (), "_writable": cls, "__module__": __name__})
    return read_only(fields)


RecordsValue = bytes | bytearray | memoryview | Sequence[bytes | bytearray | memoryview]
"""A records field: a batch buffer as decoded (a slice, or a memoryview when decoding zero-copy), or, to encode, a
sequence of stored batches (any buffers) written back to back."""

if TYPE_CHECKING:
    class Struct(dict[str, Any]):
        """What mypy sees of a generated message class: a dict whose attributes are only its declared fields (no
        catch-all ``__getattr__``, so a misspelt field is a type error)."""

        __slots__ = ()
else:
    Struct = Message


def fields(cls: type[Struct], **defaults: object) -> None:
    """Give a generated class an attribute per field: reading it is one C-level ``dict.get`` (a class attribute,
    so Python never falls back to ``__getattr__``, whose failed lookup costs ten times as much), and a field the
    value does not hold reads as its default, as in Kafka's generated classes. Defaults are immutable (an absent
    array reads as ``()``, an absent struct as its shared read-only default), so reading never builds anything."""
    for key, default in defaults.items():
        setattr(cls, key, property(methodcaller("get", key, default), doc=f"the {key} field"))


def struct_default(cls: type[Struct], **defaults: object) -> DefaultMessage:
    """The read-only default a generated class's struct field reads as when the value does not hold it."""
    return shared_default(cls, defaults)
