/*
 * bench/broker.py's produce/consume method with Apache Kafka's Java clients (kafka-clients 4.3.1), so that no single
 * client's limits decide a row: the same rounds, values, phases and checks as its confluent-kafka path, driven by
 * bench/broker.py one phase at a time (it samples the broker's CPU around each phase and keeps the gap between
 * phases). One JVM serves the Java turns of a run, so its JIT is warmed once (see below); each turn's broker gets a
 * fresh producer and consumer, made after the broker is up and closed before it stops:
 *
 *   java -cp CLASSPATH BenchClient
 *
 * It prints one JSON line {"ready": true, "kafka_clients", "java", "producer", "consumer"} on stdout, then reads
 * commands on standard input, one a line, and answers each with one JSON line:
 *
 *   connect <bootstrap>     the clients of any previous broker closed, a fresh KafkaProducer  -> {"connected": ...}
 *   topic <name> <size>     a fresh KafkaConsumer, and both clients' metadata for the topic fetched (connections made)
 *                           before any clock starts; values of <size> bytes from now on: a 10-digit index, then
 *                           filler random per topic (bench/broker.py's _value)          -> {"topic": name}
 *   produce <base> <count>  values base..base+count-1 built, then timed: send() each to partition 0 and flush()
 *                           -> {"phase": "produce", "base", "messages", "seconds", "enqueue_seconds", "cpu_seconds",
 *                               "jit_seconds"}
 *   consume <base> <count>  timed: assign() partition 0, seek() to base, poll() until count records are in hand;
 *                           then unassign() and the records checked (after the clock)
 *                           -> {"phase": "consume", "base", "messages", "seconds", "cpu_seconds", "jit_seconds"}
 *   disconnect              close both clients                                          -> {"disconnected": true}
 *   quit                    close both clients and exit 0
 *
 * Any failure answers {"error": "..."} (and the stack trace on stderr) and the JVM goes on reading; a lost or wrong
 * record, a send callback's exception, or a last delivery other than partition 0 at base+count-1 is a failure.
 * "cpu_seconds" is the time the JVM's threads ran on a CPU over the timed part (all of them: the caller, the clients'
 * I/O threads, the JIT compiler, the garbage collector; Linux schedstat, ns); "enqueue_seconds" the part of a produce
 * spent in the send() loop; "jit_seconds" the part of "cpu_seconds" that the JIT's compiler threads ran (null off
 * Linux).
 *
 * The JIT: a fresh JVM took 5-10 times longer for its first 4 MB round of 100 B values than from the fifteenth on, and
 * its compiler threads kept busy for ~15 rounds of 100 KB values, so one warm-up round per turn would leave the JIT's
 * work in the timed rounds. bench/broker.py therefore warms each JVM once, against a broker of its own, before its
 * first turn, and keeps it for the run (a JVM that failed a turn is replaced by a freshly warmed one).
 */

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;

public final class BenchClient {
    static final long PHASE_TIMEOUT_NS = 120_000_000_000L;  // bench/broker.py's PHASE_TIMEOUT_S
    static final int INDEX_DIGITS = 10;

    /* As close to bench/broker.py's confluent-kafka settings as kafka-clients allows (librdkafka's defaults named). */
    static Map<String, Object> producerConfig(String bootstrap) {
        Map<String, Object> c = new TreeMap<>();
        c.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ProducerConfig.CLIENT_ID_CONFIG, "bench-java-producer");
        c.put(ProducerConfig.ACKS_CONFIG, "all");
        c.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        c.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);          // librdkafka: enable.idempotence=false
        c.put(ProducerConfig.BATCH_SIZE_CONFIG, 1_000_000);              // librdkafka: batch.size=1000000
        c.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 1_048_576);        // Java's default; a 100 KB value fits
        c.put(ProducerConfig.BUFFER_MEMORY_CONFIG, 64L * 1024 * 1024);   // a 4 MB round never waits for buffer
        c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return c;
    }

    static Map<String, Object> consumerConfig(String bootstrap) {
        Map<String, Object> c = new TreeMap<>();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "bench-java-consumer");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);          // no group.id: assign() only, no commits
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");          // librdkafka: auto.offset.reset=error
        c.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 50);              // librdkafka: fetch.wait.max.ms=50
        c.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 1_048_576);
        c.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 52_428_800);
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 1_000_000);        // consume(num_messages) takes all in hand
        c.put(ConsumerConfig.CHECK_CRCS_CONFIG, false);                  // librdkafka: check.crcs=false
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return c;
    }

    static final ObjectMapper MAPPER = new ObjectMapper();
    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    static final Path TASKS = Path.of("/proc/self/task");

    String bootstrap;
    KafkaProducer<byte[], byte[]> producer;
    KafkaConsumer<byte[], byte[]> consumer;
    String topic;
    int size;
    byte[] filler;
    byte[][] produced;          // the values of the latest produce, checked against what the consume reads
    long producedBase = -1;

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        System.setOut(System.err);  // nothing but our JSON lines may reach stdout
        if (args.length != 0) {
            out.println(error("usage: BenchClient (then commands on standard input)"));
            System.exit(2);
        }
        BenchClient client = new BenchClient();
        ObjectNode ready = MAPPER.createObjectNode();
        ready.put("ready", true);
        ready.put("kafka_clients", AppInfoParser.getVersion());
        ready.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        ready.put("producer", describe(producerConfig("")));
        ready.put("consumer", describe(consumerConfig("")));
        out.println(ready);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] cmd = line.trim().split("\\s+");
            if (cmd[0].equals("quit")) {
                break;
            }
            try {
                out.println(client.run(cmd));
            } catch (Exception e) {
                e.printStackTrace();
                out.println(error(e.toString()));
            }
        }
        client.close();
    }

    ObjectNode run(String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "connect":
                return connect(cmd[1]);
            case "disconnect":
                close();
                return MAPPER.createObjectNode().put("disconnected", true);
            case "topic":
                return topic(cmd[1], Integer.parseInt(cmd[2]));
            case "produce":
                return produce(Long.parseLong(cmd[1]), Integer.parseInt(cmd[2]));
            case "consume":
                return consume(Long.parseLong(cmd[1]), Integer.parseInt(cmd[2]));
            default:
                throw new IllegalArgumentException("unknown command: " + String.join(" ", cmd));
        }
    }

    /* A fresh KafkaProducer for the broker at bootstrap (the clients of a previous broker closed first). */
    ObjectNode connect(String servers) {
        close();
        bootstrap = servers;
        producer = new KafkaProducer<>(producerConfig(bootstrap));
        return MAPPER.createObjectNode().put("connected", servers);
    }

    ObjectNode topic(String name, int valueSize) {
        if (producer == null) {
            throw new IllegalStateException("topic before connect");
        }
        if (consumer != null) {
            consumer.close();
        }
        consumer = new KafkaConsumer<>(consumerConfig(bootstrap));
        producer.partitionsFor(name);
        consumer.partitionsFor(name, Duration.ofSeconds(10));
        topic = name;
        size = valueSize;
        filler = new byte[valueSize - INDEX_DIGITS];
        new Random().nextBytes(filler);
        produced = null;
        ObjectNode r = MAPPER.createObjectNode();
        r.put("topic", name);
        return r;
    }

    ObjectNode produce(long base, int count) throws Exception {
        byte[][] values = new byte[count][];
        for (int k = 0; k < count; k++) {
            values[k] = value(base + k);
        }
        AtomicInteger acked = new AtomicInteger();
        AtomicReference<Exception> failure = new AtomicReference<>();
        AtomicReference<RecordMetadata> last = new AtomicReference<>();
        Callback each = (metadata, exception) -> {
            if (exception != null) {
                failure.compareAndSet(null, exception);
            } else {
                acked.incrementAndGet();
            }
        };
        Callback onLast = (metadata, exception) -> {
            each.onCompletion(metadata, exception);
            last.set(metadata);
        };
        long[] cpu = cpuNanos();
        long start = System.nanoTime();
        for (int k = 0; k < count - 1; k++) {
            producer.send(new ProducerRecord<>(topic, 0, null, values[k]), each);
        }
        producer.send(new ProducerRecord<>(topic, 0, null, values[count - 1]), onLast);
        long enqueued = System.nanoTime();
        producer.flush();
        long end = System.nanoTime();
        long[] cpuAfter = cpuNanos();
        long expected = base + count - 1;
        RecordMetadata m = last.get();
        if (failure.get() != null || acked.get() != count || m == null || m.partition() != 0
                || m.offset() != expected) {
            throw new IllegalStateException(topic + ": produce round at " + base + ": " + acked.get() + " of "
                    + count + " acknowledged, first error " + failure.get() + ", last message "
                    + (m == null ? "none" : "partition " + m.partition() + " offset " + m.offset())
                    + " (expected partition 0 offset " + expected + ")");
        }
        produced = values;
        producedBase = base;
        ObjectNode r = phase("produce", base, count, end - start, cpu, cpuAfter);
        r.put("enqueue_seconds", (enqueued - start) / 1e9);
        return r;
    }

    ObjectNode consume(long base, int count) {
        TopicPartition tp = new TopicPartition(topic, 0);
        List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>(count);
        long[] cpu = cpuNanos();
        long start = System.nanoTime();
        consumer.assign(List.of(tp));
        consumer.seek(tp, base);
        long deadline = start + PHASE_TIMEOUT_NS;
        while (got.size() < count) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofNanos(left));
            for (ConsumerRecord<byte[], byte[]> record : records) {
                got.add(record);
            }
        }
        long end = System.nanoTime();
        long[] cpuAfter = cpuNanos();
        consumer.unsubscribe();  // drops the assignment (librdkafka: unassign())
        check(got, base, count);
        return phase("consume", base, count, end - start, cpu, cpuAfter);
    }

    /* Every offset, partition, value size and index prefix; three values byte for byte (those just produced). */
    void check(List<ConsumerRecord<byte[], byte[]>> got, long base, int count) {
        String where = topic + ": consume round at " + base;
        if (got.size() != count) {
            throw new IllegalStateException(where + ": got " + got.size() + " of " + count + " messages in "
                    + PHASE_TIMEOUT_NS / 1_000_000_000L + " s");
        }
        for (int k = 0; k < count; k++) {
            ConsumerRecord<byte[], byte[]> m = got.get(k);
            byte[] v = m.value();
            long i = base + k;
            if (m.offset() != i || m.partition() != 0 || v == null || v.length != size || !hasIndex(v, i)) {
                throw new IllegalStateException(where + ": message " + k + " is partition " + m.partition()
                        + " offset " + m.offset() + " (" + (v == null ? "null" : v.length + " B, starts "
                        + new String(v, 0, Math.min(INDEX_DIGITS, v.length), StandardCharsets.ISO_8859_1)) + ")");
            }
        }
        if (produced == null || producedBase != base || produced.length != count) {
            throw new IllegalStateException(where + ": not the round just produced (at " + producedBase + ")");
        }
        for (int k : new int[] {0, count / 2, count - 1}) {
            if (!Arrays.equals(got.get(k).value(), produced[k])) {
                throw new IllegalStateException(where + ": the value at offset " + (base + k)
                        + " differs from the one produced");
            }
        }
    }

    byte[] value(long i) {
        byte[] v = new byte[size];
        for (int d = INDEX_DIGITS - 1; d >= 0; d--, i /= 10) {
            v[d] = (byte) ('0' + i % 10);
        }
        System.arraycopy(filler, 0, v, INDEX_DIGITS, filler.length);
        return v;
    }

    static boolean hasIndex(byte[] v, long i) {
        for (int d = INDEX_DIGITS - 1; d >= 0; d--, i /= 10) {
            if (v[d] != (byte) ('0' + i % 10)) {
                return false;
            }
        }
        return true;
    }

    /* Nanoseconds this JVM's threads have run on a CPU: all of them, and the JIT's compiler threads ("C1/C2
     * CompilerThre..." in /proc); Linux's per-thread schedstat (ns, as bench/broker.py reads the brokers'), since
     * getProcessCpuTime() counts in clock ticks (10 ms) there; elsewhere getProcessCpuTime() and no JIT share (-1). */
    static long[] cpuNanos() {
        if (Files.isDirectory(TASKS)) {
            long total = 0;
            long jit = 0;
            try (DirectoryStream<Path> tasks = Files.newDirectoryStream(TASKS)) {
                for (Path task : tasks) {
                    try {
                        String stat = Files.readString(task.resolve("schedstat"));
                        long ran = Long.parseLong(stat.substring(0, stat.indexOf(' ')));
                        total += ran;
                        if (Files.readString(task.resolve("comm")).contains("CompilerThre")) {
                            jit += ran;
                        }
                    } catch (IOException | RuntimeException gone) {
                        // a thread that ended meanwhile
                    }
                }
                return new long[] {total, jit};
            } catch (IOException e) {
                // fall through
            }
        }
        return new long[] {OS.getProcessCpuTime(), -1};
    }

    /* The phase's answer; a compiler thread that ended during it takes its CPU time along, hence the floor at 0. */
    static ObjectNode phase(String name, long base, int count, long nanos, long[] cpuBefore, long[] cpuAfter) {
        ObjectNode r = MAPPER.createObjectNode();
        r.put("phase", name);
        r.put("base", base);
        r.put("messages", count);
        r.put("seconds", nanos / 1e9);
        r.put("cpu_seconds", (cpuAfter[0] - cpuBefore[0]) / 1e9);
        if (cpuBefore[1] < 0) {
            r.putNull("jit_seconds");
        } else {
            r.put("jit_seconds", Math.max(0, cpuAfter[1] - cpuBefore[1]) / 1e9);
        }
        return r;
    }
    static String describe(Map<String, Object> config) {
        StringBuilder s = new StringBuilder();
        for (Map.Entry<String, Object> e : config.entrySet()) {
            String key = e.getKey();
            if (key.equals("bootstrap.servers") || key.equals("client.id") || key.endsWith("serializer")) {
                continue;
            }
            s.append(s.length() == 0 ? "" : ", ").append(key).append('=').append(e.getValue());
        }
        return s.toString();
    }

    static ObjectNode error(String message) {
        ObjectNode r = MAPPER.createObjectNode();
        r.put("error", message);
        return r;
    }

    /* Both clients closed (a close that fails is the command's error); none is left open. */
    void close() {
        KafkaConsumer<byte[], byte[]> c = consumer;
        KafkaProducer<byte[], byte[]> p = producer;
        consumer = null;
        producer = null;
        topic = null;
        try {
            if (c != null) {
                c.close(CloseOptions.timeout(Duration.ofSeconds(10)));
            }
        } finally {
            if (p != null) {
                p.close(Duration.ofSeconds(10));
            }
        }
    }
}
