/*
 * Test-only differential oracle: Apache Kafka's own generated message classes (kafka-clients 4.3.0) turn
 * Kafka-JsonConverter JSON into wire bytes and back, so kafkamock's Python codec can be checked byte for byte.
 *
 * One JVM per test session (started by tests/support/oracle.py). Line protocol on stdin/stdout, one JSON object per
 * line, one response line per request line, items batched:
 *
 *   {"op":"encode","items":[{"name":"ShareFetchRequest","version":2,"json":{...}}, ...]}
 *     -> {"results":[{"hex":"..."} | {"error":"..."}, ...]}
 *   {"op":"decode","items":[{"name":"ShareFetchRequest","version":2,"hex":"..."}, ...]}
 *     -> {"results":[{"json":{...}} | {"error":"..."}, ...]}
 *   {"op":"ping"}  -> {"kafka":"4.3.0","java":"17..."}
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
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.apache.kafka.common.record.internal.MemoryRecords;
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

    static ObjectNode handle(String op, JsonNode request) throws Exception {
        switch (op) {
            case "ping":
                return NODES.objectNode().put("kafka", AppInfoParser.getVersion())
                    .put("java", System.getProperty("java.version"));
            case "quit":
                return NODES.objectNode().put("ok", true);
            case "encode":
            case "decode": {
                JsonNode items = request.get("items");
                if (items == null || !items.isArray()) {
                    throw new IllegalArgumentException("'items' must be an array");
                }
                ArrayNode results = NODES.arrayNode(items.size());
                boolean encode = op.equals("encode");
                for (JsonNode item : items) {
                    ObjectNode result = NODES.objectNode();
                    try {
                        if (encode) {
                            result.put("hex", hex(encode(item)));
                        } else {
                            result.set("json", decode(item));
                        }
                    } catch (Throwable t) {
                        result.put("error", describe(t));
                    }
                    results.add(result);
                }
                ObjectNode response = NODES.objectNode();
                response.set("results", results);
                return response;
            }
            default:
                throw new IllegalArgumentException("unknown op '" + op + "' (encode, decode, ping, quit)");
        }
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
