/*
 * Test-only differential oracle: Apache Kafka's own generated message classes (kafka-clients 4.3.1) turn
 * Kafka-JsonConverter JSON into wire bytes and back, so kafkamock's Python codec can be checked byte for byte.
 *
 * One JVM per test session (started by tests/support/oracle.py). Line protocol on stdin/stdout, one JSON object per
 * line, one response line per request line, items batched:
 *
 *   {"op":"encode","items":[{"name":"ShareFetchRequest","version":2,"json":{...}}, ...]}
 *     -> {"results":[{"hex":"..."} | {"error":"..."}, ...]}
 *   {"op":"decode","items":[{"name":"ShareFetchRequest","version":2,"hex":"..."}, ...]}
 *     -> {"results":[{"json":{...}} | {"error":"..."}, ...]}
 *   {"op":"records_build","items":[{"magic":2,"compression":"zstd",...,"records":[...],"control":null}, ...]}
 *     -> {"results":[{"hex":"..."} | {"error":"..."}, ...]}
 *   {"op":"records_read","items":[{"hex":"..."}, ...]}
 *     -> {"results":[{"batches":[{...,"records":[...]}, ...]} | {"error":"..."}, ...]}
 *   {"op":"ping"}  -> {"kafka":"4.3.1","java":"17..."}
 *   {"op":"quit"}  -> {"ok":true}, then the JVM exits (it also exits at end of input)
 *
 * "name" is the message name of the schema (ShareFetchRequest, RequestHeader, ConsumerProtocolAssignment...);
 * the classes are org.apache.kafka.common.message.<name>Data and <name>DataJsonConverter (for "data" messages
 * such as ConsumerProtocolAssignment, plain <name> and <name>JsonConverter). A failure of one item
 * becomes that item's "error" (exception class and message); a malformed request line gets {"error":...}. Nothing
 * kills the JVM but end of input or "quit". System.out is re-pointed at stderr so no library print can corrupt the
 * protocol channel.
 *
 * Two repairs/extensions over the plain JsonConverter, both needed for a faithful oracle:
 *  1. records: <Name>DataJsonConverter.write() emits every non-null records field as EMPTY bytes (KIP-673 only
 *     logs sizes, and the serializeRecords=true branch writes new byte[]{}), so after write() we walk the decoded
 *     object and put the real bytes (base64, like bytes fields) back into the JSON.
 *  2. unknown tagged fields, which the JSON form cannot express: on decode each struct that carried some gets
 *     "_unknownTaggedFields": [{"tag": n, "data": base64}, ...]; on encode the same key, if present, is added to
 *     the object's unknown tagged fields before writing (Kafka requires ascending tags). Kafka's converter ignores
 *     keys it does not know, so the extension does not disturb it.
 * Encode is strict about versions (outside the message's supported range -> error); decode is strict about
 * length (bytes left after read() -> error).
 *
 * Record batches (records_build / records_read) go through Kafka's own record classes
 * (org.apache.kafka.common.record.internal.*: MemoryRecords, MemoryRecordsBuilder, DefaultRecordBatch, LegacyRecord...).
 * Bytes inside items (key, value, header values) are base64 (null = absent); whole record sets travel as hex.
 *
 *   records_build item (every key optional; defaults in brackets):
 *     {"magic": 0|1|2 [2], "compression": "none"|"gzip"|"snappy"|"lz4"|"zstd" ["none"],
 *      "compression_level": int [absent: Kafka's default, as the producer uses],
 *      "timestamp_type": "CreateTime"|"LogAppendTime"|"NoTimestampType" ["CreateTime"],
 *      "base_offset": long [0], "log_append_time": long [-1], "producer_id": long [-1], "producer_epoch": short [-1],
 *      "base_sequence": int [-1], "transactional": bool [false], "partition_leader_epoch": int [-1],
 *      "records": [{"offset": long (absolute; appendWithOffset), "timestamp": long, "key": base64|null,
 *                   "value": base64|null, "headers": [[name, base64|null], ...]}, ...] [[]],
 *      "control": null | {"type": "COMMIT"|"ABORT", "coordinator_epoch": int, "timestamp": long} [null]}
 *     -> {"hex": bytes of the MemoryRecords buffer}. Without "control": MemoryRecords.builder(buffer, magic,
 *     Compression.of(type).build(), timestampType, baseOffset, logAppendTime, producerId, producerEpoch, baseSequence,
 *     transactional, partitionLeaderEpoch), appendWithOffset per record, build(). With "control":
 *     MemoryRecords.withEndTransactionMarker(baseOffset, timestamp, partitionLeaderEpoch, producerId, producerEpoch,
 *     new EndTransactionMarker(type, coordinatorEpoch)); Kafka fixes magic 2, no compression, CreateTime and the
 *     transactional flag there, so "records" must be empty, magic 2, compression none, timestamp_type CreateTime,
 *     base_sequence and log_append_time -1 ("transactional" is ignored: Kafka always sets it).
 *   records_read item: {"hex": "..."} -> {"batches": [...]}: MemoryRecords.readableRecords(buffer).batches(), each
 *     {"base_offset", "last_offset", "magic", "compression" (lower-case name), "timestamp_type" (CreateTime,
 *      LogAppendTime, NoTimestampType), "max_timestamp", "producer_id", "producer_epoch", "base_sequence",
 *      "transactional", "control", "partition_leader_epoch", "crc_valid" (isValid()), "crc" (checksum(), unsigned),
 *      "count" (countOrNull(): the v2 header's record count, null for legacy), "size_in_bytes",
 *      "records": [{"offset", "timestamp", "key", "value", "headers", and in control batches "control_type"
 *                   (ControlRecordType id) plus, for COMMIT/ABORT, "coordinator_epoch"}]}
 *     Iterating a batch decompresses it (a legacy compressed wrapper yields its inner records). Anything Kafka throws
 *     (corrupt batch, bad compression stream...) is that item's "error".
 */

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BinaryNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.AppInfoParser;

public final class KafkaOracle {
    static final String PACKAGE = "org.apache.kafka.common.message.";
    static final String UNKNOWN_TAGGED = "_unknownTaggedFields";
    static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    // NaN/Infinity are legal float64 values; accept them unquoted as Python's json module writes them.
    static final ObjectMapper MAPPER = JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

    /** The reflective entry points of one message: built once per name. */
    static final class Codec {
        final String name;
        final MethodHandle constructor; // ()Object
        final MethodHandle read;        // (JsonNode, short)Object
        final MethodHandle write;       // (Object, short)JsonNode

        Codec(String name) throws ReflectiveOperationException {
            this.name = name;
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            // Requests, responses and headers are generated as <name>Data; "data" messages such as
            // ConsumerProtocolAssignment keep their plain name.
            String base = PACKAGE + name + "Data";
            try {
                Class.forName(base + "JsonConverter");
            } catch (ClassNotFoundException e) {
                base = PACKAGE + name;
            }
            Class<?> data = Class.forName(base);
            Class<?> converter = Class.forName(base + "JsonConverter");
            constructor = lookup.findConstructor(data, MethodType.methodType(void.class))
                .asType(MethodType.methodType(Object.class));
            read = lookup.findStatic(converter, "read", MethodType.methodType(data, JsonNode.class, short.class))
                .asType(MethodType.methodType(Object.class, JsonNode.class, short.class));
            write = lookup.findStatic(converter, "write", MethodType.methodType(JsonNode.class, data, short.class))
                .asType(MethodType.methodType(JsonNode.class, Object.class, short.class));
        }
    }

    static final Map<String, Object> CODECS = new HashMap<>(); // name -> Codec, or the Throwable that lookup threw

    static Codec codec(String name) throws Throwable {
        Object c = CODECS.get(name);
        if (c == null) {
            try {
                c = new Codec(name);
            } catch (ClassNotFoundException e) {
                c = new IllegalArgumentException("unknown message " + name + " (no class " + e.getMessage() + ")");
            } catch (Throwable t) {
                c = t;
            }
            CODECS.put(name, c);
        }
        if (c instanceof Throwable) {
            throw (Throwable) c;
        }
        return (Codec) c;
    }

    public static void main(String[] args) throws Exception {
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16);
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode response;
            boolean quit = false;
            try {
                JsonNode request = MAPPER.readTree(line);
                String op = request.path("op").asText("");
                quit = op.equals("quit");
                response = handle(op, request);
            } catch (Throwable t) {
                response = NODES.objectNode().put("error", describe(t));
            }
            out.write(MAPPER.writeValueAsBytes(response));
            out.write('\n');
            out.flush();
            if (quit) {
                break;
            }
        }
    }

    /** One item of a batched op: its result object's fields, or an exception that becomes the item's "error". */
    interface ItemOp {
        void apply(JsonNode item, ObjectNode result) throws Throwable;
    }

    static ObjectNode handle(String op, JsonNode request) throws Exception {
        switch (op) {
            case "ping":
                return NODES.objectNode().put("kafka", AppInfoParser.getVersion())
                    .put("java", System.getProperty("java.version"));
            case "quit":
                return NODES.objectNode().put("ok", true);
            case "encode":
                return batched(request, (item, result) -> result.put("hex", hex(encode(item))));
            case "decode":
                return batched(request, (item, result) -> result.set("json", decode(item)));
            case "records_build":
                return batched(request, (item, result) -> result.put("hex", hex(recordsBuild(item))));
            case "records_read":
                return batched(request, (item, result) -> result.set("batches", recordsRead(item)));
            default:
                throw new IllegalArgumentException(
                    "unknown op '" + op + "' (encode, decode, records_build, records_read, ping, quit)");
        }
    }

    static ObjectNode batched(JsonNode request, ItemOp op) {
        JsonNode items = request.get("items");
        if (items == null || !items.isArray()) {
            throw new IllegalArgumentException("'items' must be an array");
        }
        ArrayNode results = NODES.arrayNode(items.size());
        for (JsonNode item : items) {
            ObjectNode result = NODES.objectNode();
            try {
                op.apply(item, result);
            } catch (Throwable t) {
                result.removeAll();
                result.put("error", describe(t));
            }
            results.add(result);
        }
        ObjectNode response = NODES.objectNode();
        response.set("results", results);
        return response;
    }

    static short version(JsonNode item, Message data) {
        JsonNode v = item.get("version");
        if (v == null || !v.canConvertToInt() || !v.isIntegralNumber()) {
            throw new IllegalArgumentException("'version' must be an integer");
        }
        int version = v.intValue();
        if (version < data.lowestSupportedVersion() || version > data.highestSupportedVersion()) {
            throw new IllegalArgumentException("version " + version + " is outside the supported range "
                + data.lowestSupportedVersion() + "-" + data.highestSupportedVersion());
        }
        return (short) version;
    }

    static String text(JsonNode item, String key) {
        JsonNode v = item.get(key);
        if (v == null || !v.isTextual()) {
            throw new IllegalArgumentException("'" + key + "' must be a string");
        }
        return v.textValue();
    }

    static byte[] encode(JsonNode item) throws Throwable {
        Codec codec = codec(text(item, "name"));
        short version = version(item, (Message) (Object) codec.constructor.invokeExact());
        JsonNode json = item.get("json");
        if (json == null || !json.isObject()) {
            throw new IllegalArgumentException("'json' must be an object");
        }
        Message data = (Message) (Object) codec.read.invokeExact(json, version);
        if (json.findValue(UNKNOWN_TAGGED) != null) {
            addUnknownTagged(data, json);
        }
        ObjectSerializationCache cache = new ObjectSerializationCache();
        int size = data.size(cache, version);
        ByteBuffer buffer = ByteBuffer.allocate(size);
        data.write(new ByteBufferAccessor(buffer), cache, version);
        if (buffer.hasRemaining()) {
            throw new IllegalStateException("size() said " + size + " bytes but write() wrote " + buffer.position());
        }
        return buffer.array();
    }

    static JsonNode decode(JsonNode item) throws Throwable {
        Codec codec = codec(text(item, "name"));
        Message data = (Message) (Object) codec.constructor.invokeExact();
        short version = version(item, data);
        ByteBufferAccessor accessor = new ByteBufferAccessor(ByteBuffer.wrap(unhex(text(item, "hex"))));
        data.read(accessor, version);
        if (accessor.remaining() != 0) {
            throw new IllegalArgumentException(accessor.remaining() + " bytes left over after reading "
                + codec.name + " v" + version);
        }
        JsonNode json = (JsonNode) codec.write.invokeExact((Object) data, version);
        repair((ObjectNode) json, data);
        return json;
    }

    // ---- walking a message object alongside its JSON -------------------------------------------------------

    /** The instance fields of a generated class that can hold records, structs or arrays (of structs). */
    static final ClassValue<Field[]> WALKED = new ClassValue<>() {
        @Override
        protected Field[] computeValue(Class<?> type) {
            List<Field> fields = new ArrayList<>();
            for (Field f : type.getDeclaredFields()) {
                Class<?> t = f.getType();
                if (Modifier.isStatic(f.getModifiers()) || f.getName().startsWith("_")) {
                    continue;
                }
                if (BaseRecords.class.isAssignableFrom(t) || Message.class.isAssignableFrom(t)
                        || Collection.class.isAssignableFrom(t)) {
                    f.setAccessible(true);
                    fields.add(f);
                }
            }
            return fields.toArray(new Field[0]);
        }
    };

    /** Put back what JsonConverter.write() loses: records bytes and unknown tagged fields. */
    static void repair(ObjectNode json, Message data) throws IllegalAccessException {
        List<RawTaggedField> unknown = data.unknownTaggedFields();
        if (unknown != null && !unknown.isEmpty()) {
            ArrayNode tags = json.putArray(UNKNOWN_TAGGED);
            for (RawTaggedField f : unknown) {
                tags.addObject().put("tag", f.tag()).set("data", new BinaryNode(f.data()));
            }
        }
        for (Field f : WALKED.get(data.getClass())) {
            JsonNode child = json.get(f.getName());
            Object value = f.get(data);
            if (child == null || value == null) {
                continue;
            }
            if (value instanceof BaseRecords) {
                if (!(value instanceof MemoryRecords)) {
                    throw new IllegalStateException("cannot render records of type " + value.getClass());
                }
                ByteBuffer buffer = ((MemoryRecords) value).buffer();
                byte[] bytes = new byte[buffer.remaining()];
                buffer.get(bytes);
                json.set(f.getName(), new BinaryNode(bytes));
            } else if (value instanceof Message && child.isObject()) {
                repair((ObjectNode) child, (Message) value);
            } else if (value instanceof Collection && child.isArray()) {
                int i = 0;
                for (Object element : (Collection<?>) value) {
                    if (!(element instanceof Message)) {
                        break;
                    }
                    repair((ObjectNode) child.get(i++), (Message) element);
                }
            }
        }
    }

    /** The encode side of extension 2: "_unknownTaggedFields" in the JSON become the object's raw tagged fields. */
    static void addUnknownTagged(Message data, JsonNode json) throws Exception {
        JsonNode unknown = json.get(UNKNOWN_TAGGED);
        if (unknown != null) {
            if (!unknown.isArray()) {
                throw new IllegalArgumentException(UNKNOWN_TAGGED + " must be an array");
            }
            for (JsonNode f : unknown) {
                JsonNode tag = f.get("tag");
                JsonNode bytes = f.get("data");
                if (tag == null || !tag.canConvertToInt() || bytes == null) {
                    throw new IllegalArgumentException(UNKNOWN_TAGGED + " entries are {\"tag\": int, \"data\": base64}");
                }
                data.unknownTaggedFields().add(new RawTaggedField(tag.intValue(), bytes.binaryValue()));
            }
        }
        for (Field f : WALKED.get(data.getClass())) {
            JsonNode child = json.get(f.getName());
            Object value = f.get(data);
            if (child == null || value == null) {
                continue;
            }
            if (value instanceof Message && child.isObject()) {
                addUnknownTagged((Message) value, child);
            } else if (value instanceof Collection && child.isArray()) {
                Iterator<JsonNode> nodes = child.elements();
                for (Object element : (Collection<?>) value) {
                    if (!(element instanceof Message) || !nodes.hasNext()) {
                        break;
                    }
                    addUnknownTagged((Message) element, nodes.next());
                }
            }
        }
    }

    // ---- record batches: Kafka's MemoryRecordsBuilder writes, MemoryRecords reads --------------------------

    static byte[] recordsBuild(JsonNode item) throws Exception {
        if (!item.isObject()) {
            throw new IllegalArgumentException("a records_build item must be an object");
        }
        int magic = intField(item, "magic", 2);
        if (magic < 0 || magic > 2) {
            throw new IllegalArgumentException("magic must be 0, 1 or 2, not " + magic);
        }
        CompressionType type = CompressionType.forName(textField(item, "compression", "none"));
        Compression compression = compression(type, item.get("compression_level"));
        TimestampType timestampType = TimestampType.forName(textField(item, "timestamp_type", "CreateTime"));
        long baseOffset = longField(item, "base_offset", 0L);
        long logAppendTime = longField(item, "log_append_time", -1L);
        long producerId = longField(item, "producer_id", -1L);
        short producerEpoch = shortField(item, "producer_epoch", (short) -1);
        int baseSequence = intField(item, "base_sequence", -1);
        boolean transactional = boolField(item, "transactional", false);
        int partitionLeaderEpoch = intField(item, "partition_leader_epoch", -1);
        JsonNode records = item.get("records");
        if (records != null && !records.isNull() && !records.isArray()) {
            throw new IllegalArgumentException("'records' must be an array");
        }
        JsonNode control = item.get("control");
        if (control != null && !control.isNull()) {
            if (!control.isObject()) {
                throw new IllegalArgumentException("'control' must be null or an object");
            }
            if (records != null && records.size() > 0) {
                throw new IllegalArgumentException("a control batch takes no 'records' (Kafka writes the marker)");
            }
            if (magic != 2 || type != CompressionType.NONE || timestampType != TimestampType.CREATE_TIME
                    || baseSequence != -1 || logAppendTime != -1) {
                throw new IllegalArgumentException("Kafka's end-transaction-marker batch is always magic 2, "
                    + "compression none, CreateTime, base_sequence -1 and log_append_time -1");
            }
            String name = textField(control, "type", null);
            ControlRecordType controlType = ControlRecordType.valueOf(name);
            if (controlType != ControlRecordType.COMMIT && controlType != ControlRecordType.ABORT) {
                throw new IllegalArgumentException("control type must be COMMIT or ABORT, not " + name);
            }
            EndTransactionMarker marker = new EndTransactionMarker(controlType,
                intField(control, "coordinator_epoch", null));
            MemoryRecords built = MemoryRecords.withEndTransactionMarker(baseOffset, longField(control, "timestamp",
                null), partitionLeaderEpoch, producerId, producerEpoch, marker);
            return bytes(built.buffer());
        }
        ByteBuffer buffer = ByteBuffer.allocate(1024);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, (byte) magic, compression, timestampType,
            baseOffset, logAppendTime, producerId, producerEpoch, baseSequence, transactional, partitionLeaderEpoch);
        if (records != null) {
            for (JsonNode record : records) {
                if (!record.isObject()) {
                    throw new IllegalArgumentException("each record must be an object");
                }
                builder.appendWithOffset(longField(record, "offset", null), longField(record, "timestamp", null),
                    bytesField(record, "key"), bytesField(record, "value"), headers(record.get("headers")));
            }
        }
        return bytes(builder.build().buffer());
    }

    static Compression compression(CompressionType type, JsonNode level) {
        if (level == null || level.isNull()) {
            return Compression.of(type).build();
        }
        if (!level.isIntegralNumber() || !level.canConvertToInt()) {
            throw new IllegalArgumentException("'compression_level' must be an integer");
        }
        switch (type) {
            case GZIP:
                return Compression.gzip().level(level.intValue()).build();
            case LZ4:
                return Compression.lz4().level(level.intValue()).build();
            case ZSTD:
                return Compression.zstd().level(level.intValue()).build();
            default:
                throw new IllegalArgumentException(type.name + " compression has no level");
        }
    }

    static Header[] headers(JsonNode headers) throws Exception {
        if (headers == null || headers.isNull()) {
            return Record.EMPTY_HEADERS;
        }
        if (!headers.isArray()) {
            throw new IllegalArgumentException("'headers' must be an array of [name, base64|null]");
        }
        Header[] out = new Header[headers.size()];
        int i = 0;
        for (JsonNode h : headers) {
            if (!h.isArray() || h.size() != 2 || !h.get(0).isTextual() || !(h.get(1).isNull() || h.get(1).isTextual())) {
                throw new IllegalArgumentException("each header must be [name, base64|null], not " + h);
            }
            out[i++] = new RecordHeader(h.get(0).textValue(), h.get(1).isNull() ? null : h.get(1).binaryValue());
        }
        return out;
    }

    static ArrayNode recordsRead(JsonNode item) throws Exception {
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(unhex(text(item, "hex"))));
        ArrayNode batches = NODES.arrayNode();
        for (MutableRecordBatch batch : records.batches()) {
            ObjectNode b = batches.addObject();
            b.put("base_offset", batch.baseOffset());
            b.put("last_offset", batch.lastOffset());
            b.put("magic", batch.magic());
            b.put("compression", batch.compressionType().name);
            b.put("timestamp_type", batch.timestampType().name);
            b.put("max_timestamp", batch.maxTimestamp());
            b.put("producer_id", batch.producerId());
            b.put("producer_epoch", batch.producerEpoch());
            b.put("base_sequence", batch.baseSequence());
            b.put("transactional", batch.isTransactional());
            b.put("control", batch.isControlBatch());
            b.put("partition_leader_epoch", batch.partitionLeaderEpoch());
            b.put("crc_valid", batch.isValid());
            b.put("crc", batch.checksum());
            Integer count = batch.countOrNull();
            if (count == null) {
                b.putNull("count");
            } else {
                b.put("count", count.intValue());
            }
            b.put("size_in_bytes", batch.sizeInBytes());
            ArrayNode out = b.putArray("records");
            for (Record record : batch) {
                ObjectNode r = out.addObject();
                r.put("offset", record.offset());
                r.put("timestamp", record.timestamp());
                putBytes(r, "key", record.hasKey() ? record.key() : null);
                putBytes(r, "value", record.hasValue() ? record.value() : null);
                ArrayNode headers = r.putArray("headers");
                for (Header h : record.headers()) {
                    ArrayNode pair = headers.addArray().add(h.key());
                    if (h.value() == null) {
                        pair.addNull();
                    } else {
                        pair.add(new BinaryNode(h.value()));
                    }
                }
                if (batch.isControlBatch()) {
                    if (!record.hasKey()) {
                        throw new IllegalArgumentException("control record at offset " + record.offset()
                            + " has no key");
                    }
                    short typeId = ControlRecordType.parseTypeId(record.key());
                    r.put("control_type", typeId);
                    ControlRecordType controlType = ControlRecordType.fromTypeId(typeId);
                    if (controlType == ControlRecordType.COMMIT || controlType == ControlRecordType.ABORT) {
                        r.put("coordinator_epoch", EndTransactionMarker.deserialize(record).coordinatorEpoch());
                    }
                }
            }
        }
        return batches;
    }

    static void putBytes(ObjectNode node, String key, ByteBuffer buffer) {
        if (buffer == null) {
            node.putNull(key);
        } else {
            node.set(key, new BinaryNode(bytes(buffer)));
        }
    }

    /** The remaining bytes of a buffer, without moving it. */
    static byte[] bytes(ByteBuffer buffer) {
        ByteBuffer view = buffer.duplicate();
        byte[] out = new byte[view.remaining()];
        view.get(out);
        return out;
    }

    static JsonNode field(JsonNode item, String key, Object fallback) {
        JsonNode v = item.get(key);
        if ((v == null || v.isNull()) && fallback == null) {
            throw new IllegalArgumentException("'" + key + "' is required");
        }
        return v == null || v.isNull() ? null : v;
    }

    static long longField(JsonNode item, String key, Long fallback) {
        JsonNode v = field(item, key, fallback);
        if (v == null) {
            return fallback;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new IllegalArgumentException("'" + key + "' must be a 64-bit integer, not " + v);
        }
        return v.longValue();
    }

    static int intField(JsonNode item, String key, Integer fallback) {
        long v = longField(item, key, fallback == null ? null : fallback.longValue());
        if (v != (int) v) {
            throw new IllegalArgumentException("'" + key + "' must be a 32-bit integer, not " + v);
        }
        return (int) v;
    }

    static short shortField(JsonNode item, String key, Short fallback) {
        long v = longField(item, key, fallback == null ? null : fallback.longValue());
        if (v != (short) v) {
            throw new IllegalArgumentException("'" + key + "' must be a 16-bit integer, not " + v);
        }
        return (short) v;
    }

    static boolean boolField(JsonNode item, String key, Boolean fallback) {
        JsonNode v = field(item, key, fallback);
        if (v == null) {
            return fallback;
        }
        if (!v.isBoolean()) {
            throw new IllegalArgumentException("'" + key + "' must be true or false, not " + v);
        }
        return v.booleanValue();
    }

    static String textField(JsonNode item, String key, String fallback) {
        JsonNode v = field(item, key, fallback);
        if (v == null) {
            return fallback;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException("'" + key + "' must be a string, not " + v);
        }
        return v.textValue();
    }

    /** A base64 string as bytes; absent or null -> null. */
    static byte[] bytesField(JsonNode item, String key) throws Exception {
        JsonNode v = item.get(key);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException("'" + key + "' must be base64 or null, not " + v);
        }
        return v.binaryValue();
    }

    // ---- small helpers ---------------------------------------------------------------------------------

    static String describe(Throwable t) {
        String message = t.getMessage();
        String text = t.getClass().getName() + (message == null ? "" : ": " + message);
        Throwable cause = t.getCause();
        if (cause != null && cause != t && message != null && !message.contains(cause.getClass().getName())) {
            text += " (caused by " + describe(cause) + ")";
        }
        return text;
    }

    static final char[] HEX = "0123456789abcdef".toCharArray();

    static String hex(byte[] bytes) {
        char[] out = new char[bytes.length * 2];
        for (int i = 0; i < bytes.length; i++) {
            out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[bytes[i] & 0xf];
        }
        return new String(out);
    }

    static byte[] unhex(String text) {
        if (text.length() % 2 != 0) {
            throw new IllegalArgumentException("odd-length hex string");
        }
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(text.charAt(2 * i), 16);
            int lo = Character.digit(text.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                throw new IllegalArgumentException("invalid hex digit near offset " + 2 * i);
            }
            out[i] = (byte) ((hi << 4) | lo);
        }
        return out;
    }
}
