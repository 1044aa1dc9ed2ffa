"""Kafka records to Arrow record batches in Spark's Kafka schema (the write side is ``columnar`` and ``tasks``)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from kafkamock.spark.columnar import HEADER_TYPE, Columns

READ_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
               "timestampType int")
HEADERS_DDL = ", headers array<struct<key: string, value: binary>>"


def arrow_schema(include_headers: bool) -> pa.Schema:
    fields = [pa.field("key", pa.binary()), pa.field("value", pa.binary()), pa.field("topic", pa.string()),
              pa.field("partition", pa.int32()), pa.field("offset", pa.int64()),
              pa.field("timestamp", pa.timestamp("us", tz="UTC")), pa.field("timestampType", pa.int32())]
    if include_headers:
        fields.append(pa.field("headers", HEADER_TYPE))
    return pa.schema(fields)


def columns_to_arrow(topic: str, partition: int, cols: Columns, schema: pa.Schema,
                     include_headers: bool) -> pa.RecordBatch:
    """Decoded records as an Arrow batch in Spark's Kafka schema; every column is built from arrays."""
    n = len(cols)
    name = topic.encode()
    topics = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(np.arange(n + 1, dtype=np.int32) * len(name)),
                                                    pa.py_buffer(name * n)])
    # Kafka's -1 (no timestamp, magic 0) becomes null; milliseconds to Spark's microseconds.
    missing = cols.timestamps < 0
    timestamps = pa.array(cols.timestamps * 1000, pa.timestamp("us", tz="UTC"),
                          mask=missing if missing.any() else None)
    columns = [cols.keys, cols.values, topics, pa.array(np.full(n, partition, np.int32)), pa.array(cols.offsets),
               timestamps, pa.array(cols.timestamp_types.astype(np.int32, copy=False))]
    if include_headers:
        columns.append(cols.headers)
    return pa.RecordBatch.from_arrays(columns, schema=schema)
