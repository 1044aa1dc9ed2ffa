"""Kafka's JSON message-schema language: load, validate and model it.

``load_schemas(directory)`` reads kafkamock's own ``schemas/`` or any directory of upstream Kafka schema files.
"""

from kafkamock.schema.loader import SchemaError, load_schema_file, load_schema_text, load_schemas, strip_comments
from kafkamock.schema.model import (
    COORDINATOR_TYPES,
    DEFAULT_STRUCT,
    ZERO_UUID,
    ArrayType,
    FieldSpec,
    MessageSpec,
    Primitive,
    SchemaSet,
    StructLayout,
    StructRef,
    StructSpec,
    snake_case,
)
from kafkamock.schema.versions import Versions

__all__ = [
    "COORDINATOR_TYPES", "DEFAULT_STRUCT", "ZERO_UUID", "ArrayType", "FieldSpec", "MessageSpec", "Primitive",
    "SchemaError", "SchemaSet", "StructLayout", "StructRef", "StructSpec", "Versions", "load_schema_file",
    "load_schema_text", "load_schemas", "snake_case", "strip_comments",
]
