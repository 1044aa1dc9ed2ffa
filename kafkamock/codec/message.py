"""The decoded-message type: a plain dict with attribute access.

A ``dict`` subclass keeps decoding cheap (one dict per struct), compares equal to plain dicts in tests, and
serialises to JSON as is; attribute access (``msg.group_id``) keeps handler code readable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn


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
        return (Message, (dict(self),))


class DefaultMessage(Message):
    """The shared, read-only default of a struct field that was absent from the wire.

    FetchResponse carries three tagged structs per partition that are almost always absent; building three
    fresh dicts per partition for them was a fifth of the decode time. Their defaults hold only immutable values,
    so one instance is shared. To change one, assign a new dict to the field instead.
    """

    __slots__ = ()

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("this is the shared default of an absent struct field; assign a new dict to the field instead")

    __setitem__ = __delitem__ = __setattr__ = __delattr__ = _read_only
    clear = pop = popitem = setdefault = update = __ior__ = _read_only

    def __repr__(self) -> str:
        return f"DefaultMessage({dict.__repr__(self)})"

    def __reduce__(self) -> tuple[type[Message], tuple[dict[str, Any]]]:
        return (Message, (dict(self),))

    def __copy__(self) -> Message:
        return Message(self)

    def __deepcopy__(self, memo: dict[int, object]) -> Message:
        return Message(self)


RecordsValue = bytes | bytearray | memoryview | list[bytes]
"""A records field: a batch buffer as decoded (a slice, or a memoryview when decoding zero-copy), or, to encode, a
list of stored batches written back to back."""

if TYPE_CHECKING:
    class Struct(dict[str, Any]):
        """What mypy sees of a generated message class: a dict whose attributes are only its declared fields (no
        catch-all ``__getattr__``, so a misspelt field is a type error)."""

        __slots__ = ()
else:
    Struct = Message
