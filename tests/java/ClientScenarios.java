/*
 * Test-only driver: Apache Kafka's real clients (kafka-clients 4.3.1: KafkaProducer, KafkaConsumer, Admin) against
 * a kafkamock broker over real sockets. One JVM per scenario, started by tests/support/java_clients.py:
 *
 *   java -cp CLASSPATH ClientScenarios <scenario> <bootstrap> [SPEC]
 *
 * SPEC is a JSON object, given inline or as "-" (read from standard input, which is what the Python side does, so
 * big specs never meet the argv size limit), or as "-line" (the first line of standard input is the SPEC; the rest
 * stays open for commands, such as the `group` scenario's "stop"). On success the program prints exactly one JSON
 * line on stdout and exits 0. On failure it prints one JSON line {"error": {...}, ...partial results} on stdout, a
 * clear message and the stack trace on stderr, and exits 1 (2 for a usage error). An error is {"class", "message",
 * "chain": [...]} plus "kafka_error" (the Errors name, e.g. "UNKNOWN_MEMBER_ID") for a Kafka ApiException. Keys and
 * values are UTF-8 strings (null allowed).
 *
 * Scenarios and their SPEC (every key optional unless marked required; defaults in brackets):
 *
 *   produce  {"topic": required, "records": [REC...] | "batches": [[REC...], ...], "idempotent": [true],
 *             "acks": ["all"], "compression": "none"|"gzip"|"snappy"|"lz4"|"zstd" [client default],
 *             "linger_ms": [5000], "config": {extra producer configs}}
 *            REC = {"key": s|null, "value": s|null, "headers": [[name, s|null], ...], "timestamp": long|null,
 *                   "partition": int|null}
 *            Each group ("records" is one group) is sent asynchronously then flush()ed, so a group normally
 *            becomes one batch per partition (linger.ms is long; flush sends at once).
 *            -> {"metadata": [{"partition", "offset", "timestamp", "key_size", "value_size"}, ...],
 *                "offsets": [...], "client": {...}}
 *   stream   {"topic": required, "count": required, "value_size": [16], "partitions": n (round-robin over
 *             partitions 0..n-1) | null (the client's partitioner, keys "k<i>"), "idempotent": [true], "acks": ["all"],
 *             "pace_ms": [0] (sleep between sends), "progress_every": [50], "linger_ms": [5],
 *             "delivery_timeout_ms": [120000], "config": {...}}
 *            Sends record i = key "k<i>", value "v<i>:" padded with '.' to value_size, each with a callback, while the
 *            test does things to the broker (kill it, move leaders). Prints "PROGRESS acked=N failed=M" on stderr
 *            every progress_every acknowledgements, so the test can act at a known point, then flushes.
 *            -> {"acked": [[i, partition, offset], ...] (in acknowledgement order), "failed": [[i, error], ...]}
 *   consume  {"topic": required, "partitions": [[0]], "seek": "beginning" | "end" | offset | {"<partition>": offset}
 *             ["beginning"], "count": [1], "timeout_ms": [10000], "extra_poll_ms": [0] (one more poll after
 *             count is reached, to catch records that should not be there), "isolation_level", "config": {...}}
 *            -> {"records": [{"partition", "offset", "key", "value", "headers", "timestamp", "timestamp_type",
 *                             "leader_epoch"}, ...], "positions": {"<partition>": offset}, "timed_out": bool}
 *   admin    {"ops": [OP, ...], "config": {...}}: each OP runs in order; a failed OP is reported and the
 *            following ones still run (exit 1 at the end if any failed).
 *            {"op": "createTopics", "topics": [{"name", "partitions" [1], "replication_factor" [1],
 *                                                "configs": {}}], "validate_only": [false]}
 *              -> {"<name>": {"topic_id", "partitions", "replication_factor", "configs": {name: value}}
 *                            | {"error": {...}}}
 *            {"op": "describeTopics", "names": [...], "by_id": [true] (describe again by the returned ids)}
 *              -> {"by_name": {"<name>": TOPIC | {"error"}}, "by_id": {"<id>": TOPIC | {"error"}}}
 *                 TOPIC = {"name", "topic_id", "internal", "partitions": [{"partition", "leader", "replicas", "isr"}]}
 *            {"op": "listOffsets", "topic", "partitions": [[0]], "specs": ["earliest", "latest", "max_timestamp",
 *             <timestamp>...], "isolation_level"}
 *              -> {"<spec>": {"<partition>": {"offset", "timestamp", "leader_epoch"} | {"error"}}}
 *            {"op": "deleteRecords", "topic", "offsets": {"<partition>": offset}}
 *              -> {"<partition>": {"low_watermark"} | {"error"}}
 *            {"op": "describeConfigs", "resources": [{"type": "topic"|"broker", "name"}], "synonyms": [false]}
 *              -> {"<type>:<name>": {"<config>": {"value", "source", "read_only", "sensitive", "default", "type",
 *                                                 "synonyms": [...]}} | {"error"}}
 *            {"op": "describeCluster"} -> {"cluster_id", "controller": NODE, "nodes": [NODE...]}
 *            ACLs (BINDING = {"resource_type": "TOPIC", "name", "pattern_type": "LITERAL", "principal", "host": "*",
 *            "operation": "READ", "permission": "ALLOW"}, enum names as in Kafka; a FILTER is the same with any
 *            field left out meaning ANY / null):
 *            {"op": "createAcls", "bindings": [BINDING...]} -> {"results": ["ok" | {"error"}, ...]}
 *            {"op": "describeAcls", "filter": FILTER} -> {"bindings": [BINDING...] (sorted)} | {"error"}
 *            {"op": "deleteAcls", "filters": [FILTER...]} -> {"results": [{"deleted": [BINDING...]} | {"error"}]}
 *            {"op": "listTopics"} -> {"names": [...]}
 *            Consumer groups (TP = "topic:partition"; TOPIC_OFFSETS = {"<topic>": {"<partition>": offset}}; a
 *            per-group or per-partition failure is reported in place as {"error"}, not as a failed OP):
 *            {"op": "listConsumerGroups", "states": ["Empty", "Stable", ...] (ListConsumerGroupsOptions.inGroupStates),
 *             "types": ["classic", "consumer"] (withTypes)}
 *              -> {"groups": [{"group_id", "state", "type", "simple"}, ...] (sorted by group_id)}
 *            {"op": "listGroups", "states", "types", "protocol_types": ["consumer", ...]} (Admin.listGroups, 4.x)
 *              -> {"groups": [{"group_id", "state", "type", "protocol"}, ...]}
 *            {"op": "describeConsumerGroups", "groups": [...], "until_state": "Stable" (describe again, 100 ms
 *             apart, until every group is in that state), "timeout_ms": [15000] (for until_state)}
 *              -> {"<group>": {"group_id", "simple", "state", "type", "assignor", "coordinator": NODE, "group_epoch",
 *                              "target_assignment_epoch", "members": [{"member_id", "instance_id", "client_id",
 *                              "host", "assignment": [TP...], "target_assignment": [TP...] | null, "member_epoch",
 *                              "upgraded"}, ...] (sorted by client_id, member_id)} | {"error"}}
 *            {"op": "listConsumerGroupOffsets", "group": required, "partitions": {"<topic>": [p...]} [all committed]}
 *              -> {"<topic>": {"<partition>": {"offset", "metadata", "leader_epoch"} | null}} | {"error"}
 *            {"op": "alterConsumerGroupOffsets", "group": required, "offsets": TOPIC_OFFSETS}
 *              -> {"partitions": {"<topic>": {"<partition>": "ok" | {"error"}}}, "all": "ok" | {"error"}}
 *            {"op": "deleteConsumerGroupOffsets", "group": required, "partitions": {"<topic>": [p...]}}
 *              -> {"partitions": {"<topic>": {"<partition>": "ok" | {"error"}}}, "all": "ok" | {"error"}}
 *            {"op": "deleteConsumerGroups", "groups": [...]} -> {"<group>": "ok" | {"error"}}
 *            Transactions (KIP-664; TXN = {"state": "Ongoing" | "CompleteCommit" | ..., "producer_id",
 *            "producer_epoch", "timeout_ms", "start_time_ms" | null, "coordinator", "partitions": [TP...]}):
 *            {"op": "describeTransactions", "ids": [...]} -> {"<transactional id>": TXN | {"error"}}
 *            {"op": "listTransactions", "states": [...], "producer_ids": [...], "producer_ids_of": [transactional
 *             ids: their current producer ids, looked up first], "duration_ms", "pattern" (ListTransactions v2)}
 *              -> {"transactions": [{"transactional_id", "producer_id", "state"}, ...] (sorted by id)}
 *            {"op": "describeProducers", "topic", "partitions": [[0]]}
 *              -> {"<partition>": {"producers": [{"producer_id", "producer_epoch", "last_sequence", "last_timestamp",
 *                                                 "coordinator_epoch" | null, "txn_start_offset" | null}, ...]}
 *                                | {"error"}}
 *            {"op": "fenceProducers", "ids": [...]} -> {"<transactional id>": {"producer_id", "producer_epoch"}
 *                                                        | {"error"}}
 *            SCRAM credentials (KIP-554):
 *            {"op": "alterUserScramCredentials", "upsert": [{"user", "mechanism": "SCRAM-SHA-256"|"SCRAM-SHA-512",
 *             "iterations": [4096], "password"}], "delete": [{"user", "mechanism"}]} -> {"<user>": "ok" | {"error"}}
 *            {"op": "describeUserScramCredentials", "users": [...] (absent: every user)}
 *              -> {"<user>": [{"mechanism", "iterations"}, ...] | {"error"}}
 *            Cluster operations (TP = "topic:partition"; "ok" or {"error"} per item):
 *            {"op": "describeLogDirs", "brokers": [ids]}
 *              -> {"<broker>": [{"error" | null, "replicas": {"<TP>": {"size", "offset_lag", "future"}},
 *                                "total_known", "usable_known", "cordoned"}, ...]} (one entry per directory)
 *            {"op": "alterReplicaLogDirs", "replicas": [{"tp", "broker", "dir" (absent: the broker's first
 *             directory, looked up first)}]} -> {"<TP>@<broker>": "ok" | {"error"}}
 *            {"op": "electLeaders", "type": "PREFERRED" | "UNCLEAN", "partitions": [TP...] | absent (all)}
 *              -> {"<TP>": "ok" | {"error"}}
 *            {"op": "alterPartitionReassignments", "reassignments": {"<TP>": [replicas] | null (cancel)}}
 *              -> {"<TP>": "ok" | {"error"}}
 *            {"op": "listPartitionReassignments", "partitions": [TP...] | absent (all)}
 *              -> {"<TP>": {"replicas", "adding", "removing"}}
 *            {"op": "describeMetadataQuorum"} -> {"leader_id", "leader_epoch", "high_watermark", "voters":
 *              [{"id", "directory_id", "log_end_offset", "last_fetch_ms" | null, "last_caught_up_ms" | null}],
 *              "observers": [...], "nodes": {"<id>": [{"listener", "host", "port"}]}}
 *            {"op": "describeFeatures"} -> {"finalized": {"<name>": [min, max]}, "supported": {"<name>": [min, max]},
 *              "epoch_known"}
 *            {"op": "updateFeatures", "updates": {"<name>": {"level", "type": "UPGRADE" | "SAFE_DOWNGRADE" |
 *             "UNSAFE_DOWNGRADE"}}, "validate_only": [false]} -> {"<name>": "ok" | {"error"}, "all": "ok" | {"error"}}
 *            {"op": "unregisterBroker", "broker"} -> "ok" | {"error"}
 *            {"op": "listConfigResources", "types": ["TOPIC", "BROKER", ...] (absent: all)}
 *              -> {"resources": [["<name>", "<TYPE>"], ...] (sorted)} | {"error"}
 *            {"op": "addRaftVoter", "voter", "directory_id" [random], "endpoints": [{"listener", "host", "port"}]}
 *              -> "ok" | {"error"}
 *            {"op": "removeRaftVoter", "voter", "directory_id" [random]} -> "ok" | {"error"}
 *            -> {"results": [{"op", "result"} | {"op", "error"}, ...], "failed": n}
 *   group    {"group": required, "topics": [...] | "pattern": java regex (client-side) | "subscription_pattern": RE2J
 *             regex (broker-side, KIP-848 only), "protocol": ["classic"] | "consumer" (group.protocol),
 *             "assignor": classic: "range" | "roundrobin" | "sticky" | "cooperative-sticky" | a class name
 *             [client default: range, cooperative-sticky]; consumer: the group.remote.assignor ("uniform", "range")
 *             [broker's choice], "instance_id": group.instance.id, "client_id": ["scenario-group"],
 *             "commit": ["sync"] (commitSync() after every poll that returned records, and in onPartitionsRevoked)
 *             | "async" (commitAsync after such polls) | "auto" (enable.auto.commit) | "none",
 *             "count": [1] (stop after that many records), "until_stopped": [false] (ignore count: run until the
 *             command "stop" on standard input (needs SPEC "-line"; end of input stops too) or until "stop_file"
 *             exists), "timeout_ms": [30000] (the whole run; then "timed_out": true), "poll_ms": [200],
 *             "progress_every": [0] (also print a PROGRESS line every that many records), "config": {...}}
 *            Classic members get heartbeat.interval.ms 500 and session.timeout.ms 10000 (so rebalances are quick);
 *            "config" overrides them. Prints on stderr, one line per event (assignment callbacks in the order the
 *            consumer ran them, a generation / member epoch change seen after a poll, a failed commit, progress):
 *              PROGRESS event=E records=N assigned=TP,TP,... generation=G member=M [partitions=TP,...] [detail=D]
 *            (E: subscribed, assigned, revoked, lost, generation, commit_failed, records, stopping; partitions = the
 *            callback's argument; assigned = consumer.assignment() then, which in onPartitionsRevoked still holds the
 *            revoked partitions; generation = groupMetadata().generationId(), the member epoch under KIP-848, -1
 *            before joining; TP lists are sorted, comma-separated, empty when none; detail: a failed commit's
 *            error, blanks as '_'). At the end: a last commitSync
 *            ("sync"), committed(), then close(): "close": ["default"] | "leave" | "remain" (CloseOptions'
 *            GroupMembershipOperation; the default leaves the group unless "instance_id" makes the member static).
 *            -> {"records": [{"topic", "partition", "offset", "key", "value"}, ...] (poll order),
 *                "events": [{"event", "partitions": [TP...], "assigned": [TP...], "generation", "member_id",
 *                            "records", "detail"}, ...] (the PROGRESS lines), "assignment": [TP...] (at the end),
 *                "positions": TOPIC_OFFSETS (assigned partitions at the end), "committed": {"<topic>":
 *                {"<partition>": offset | null}} (every partition of "topics", and every partition ever assigned;
 *                {} when the member never joined), "joined": bool (it saw a generation / member epoch >= 0),
 *                "group_metadata": {"group_id", "generation_id", "member_id", "group_instance_id"} (just before
 *                close), "commits": n, "commit_errors": [...], "stopped_by": "count" | "stop" | "timeout",
 *                "timed_out": bool}
 *   txn      {"transactional_id": the producers' default, "config": {producer configs for every producer},
 *             "admin_config": {...}, "steps": [STEP, ...]}: transactional producers, group consumers and one Admin,
 *            each named in the steps (producer ["p"], consumer ["c"]), run STEPs in order. A failed STEP is reported
 *            (its exception is the answer the test wants, often) and the following ones still run; the JVM exits 0.
 *            {"op": "init", "producer", "transactional_id", "config": {...}}: create the producer (first time:
 *              acks all, idempotent, linger.ms 5) and initTransactions(); a second producer with the same
 *              transactional id fences the first
 *            {"op": "begin" | "commit" | "abort" | "flush" | "close", "producer"}: beginTransaction()...
 *            {"op": "send", "producer", "topic", "records": [REC...], "flush": [true]}: send each, flush, wait
 *              -> [{"partition", "offset"} | {"error"}, ...]
 *            {"op": "offsets", "producer", "offsets": TOPIC_OFFSETS, "metadata": [""], and the group: "consumer"
 *              (that consumer's groupMetadata(), or the last it had before "leave") | "group" (a group id alone:
 *              generation -1, no member) | "group_metadata": {"group_id", "generation_id", "member_id",
 *              "instance_id"} (or, with "consumer", fields that override its metadata: a stale generation)}:
 *              sendOffsetsToTransaction -> the group metadata sent
 *            {"op": "join", "consumer", "group", "topics", "count": [0], "timeout_ms": [15000], "config"}: a
 *              KafkaConsumer (read_committed, no auto commit, classic protocol) subscribes and polls until it has
 *              an assignment and `count` records, then settles its positions (its committed-offset fetch answered)
 *              -> {"records", "assignment", "group_metadata"}
 *            {"op": "poll", "consumer", "count", "timeout_ms"} -> {"records": [...]}
 *            {"op": "committed", "consumer", "partitions": {"<topic>": [p...]}, "timeout_ms": [10000]}: committed()
 *              (read_committed asks for stable offsets: a TimeoutException while a transaction holds them)
 *              -> {"<topic>": {"<partition>": offset | null}}
 *            {"op": "leave", "consumer"}: close it -> its last group metadata
 *            {"op": "consume", ...the consume scenario's SPEC...}: a fresh assign-and-seek consumer -> its result
 *            {"op": "admin", "ops": [OP...]}: admin ops as above -> [{"op", "result"} | {"op", "error"}, ...]
 *            {"op": "await_txn", "transactional_id", "states": [...], "timeout_ms": [15000]}: describeTransactions
 *              every 50 ms until the id is in one of the states -> TXN
 *            {"op": "await_offsets", "group", "offsets": TOPIC_OFFSETS, "timeout_ms": [15000]}:
 *              listConsumerGroupOffsets every 50 ms until the group has committed those -> the listing
 *            Any STEP may carry a "label" (echoed). Prints "PROGRESS step=N op=OP ok=BOOL" on stderr per STEP.
 *            -> {"steps": [{"index", "op", "label", "producer", "consumer", "ok", "result", "error"}, ...],
 *                "failed": n}
 *
 * Every client gets configs that make failures fast (request.timeout.ms 10 s, default.api.timeout.ms and
 * max.block.ms 15 s) and a "config" map can override any of them.
 */

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.AlterConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.DeleteConsumerGroupOffsetsResult;
import org.apache.kafka.clients.admin.DeleteConsumerGroupsResult;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListConsumerGroupsOptions;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.MemberAssignment;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DeleteRecordsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.DescribeTransactionsResult;
import org.apache.kafka.clients.admin.FenceProducersResult;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ShareMemberDescription;
import org.apache.kafka.clients.admin.DescribeUserScramCredentialsResult;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class ClientScenarios {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final long FUTURE_TIMEOUT_MS = 30_000;  // a last resort: the clients' own timeouts come first

    /** A scenario that ran to the end but wants a non-zero exit (the partial result is still printed). */
    private static final class ScenarioFailed extends Exception {
        private static final long serialVersionUID = 1L;
        final ObjectNode result;

        ScenarioFailed(String message, ObjectNode result) {
            super(message);
            this.result = result;
        }
    }

    public static void main(String[] args) {
        // UTF-8 whatever the locale; nothing but our JSON line may reach stdout (library prints go to stderr)
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (args.length < 2 || args.length > 3) {
            System.err.println("usage: ClientScenarios produce|stream|consume|group|txn|share|admin BOOTSTRAP"
                    + " [SPEC-JSON | - | -line]");
            System.exit(2);
        }
        String scenario = args[0];
        String bootstrap = args[1];
        int status = 0;
        ObjectNode result;
        try {
            JsonNode spec = readSpec(args.length > 2 ? args[2] : "{}");
            result = switch (scenario) {
                case "produce" -> produce(bootstrap, spec);
                case "consume" -> consume(bootstrap, spec);
                case "stream" -> stream(bootstrap, spec);
                case "admin" -> admin(bootstrap, spec);
                case "group" -> group(bootstrap, spec);
                case "txn" -> txn(bootstrap, spec);
                case "share" -> share(bootstrap, spec);
                default -> throw new IllegalArgumentException("unknown scenario '" + scenario
                        + "' (expected produce, stream, consume, group, txn or admin)");
            };
        } catch (ScenarioFailed e) {
            result = e.result;
            result.set("error", error(e));
            System.err.println("ClientScenarios " + scenario + " against " + bootstrap + " failed: " + e.getMessage());
            status = 1;
        } catch (Throwable t) {
            result = JSON.objectNode();
            result.set("error", error(t));
            System.err.println("ClientScenarios " + scenario + " against " + bootstrap + " failed: " + describe(t));
            t.printStackTrace(System.err);
            status = 1;
        }
        try {
            out.println(MAPPER.writeValueAsString(result));
        } catch (Exception e) {
            System.err.println("ClientScenarios: cannot write the result: " + e);
            status = 1;
        }
        out.flush();
        System.err.flush();
        System.exit(status);  // client threads must not keep the JVM alive
    }

    /** Standard input when the SPEC came as "-line": the commands after the SPEC line (null otherwise). */
    private static BufferedReader commands;

    private static JsonNode readSpec(String arg) throws Exception {
        String text;
        if (arg.equals("-")) {
            text = new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        } else if (arg.equals("-line")) {
            commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            text = commands.readLine();
            text = text == null ? "" : text;
        } else {
            text = arg;
        }
        JsonNode spec = MAPPER.readTree(text.isBlank() ? "{}" : text);
        if (spec == null || !spec.isObject()) {
            throw new IllegalArgumentException("SPEC must be a JSON object, got: " + text);
        }
        return spec;
    }

    // -- common -----------------------------------------------------------------------------------------------------

    private static Properties baseConfig(String bootstrap, String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", clientId);
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", "15000");
        p.put("reconnect.backoff.ms", "50");
        p.put("reconnect.backoff.max.ms", "1000");
        p.put("retry.backoff.ms", "50");
        p.put("retry.backoff.max.ms", "1000");
        p.put("socket.connection.setup.timeout.ms", "5000");
        p.put("socket.connection.setup.timeout.max.ms", "10000");
        return p;
    }

    private static void overrides(Properties p, JsonNode spec) {
        JsonNode config = spec.path("config");
        for (Map.Entry<String, JsonNode> e : config.properties()) {
            if (e.getValue().isNull()) {
                p.remove(e.getKey());
            } else {
                p.put(e.getKey(), e.getValue().asText());
            }
        }
    }

    private static ObjectNode error(Throwable t) {
        ObjectNode e = JSON.objectNode();
        Throwable root = unwrap(t);
        e.put("class", root.getClass().getName());
        e.put("message", root.getMessage());
        if (root instanceof ApiException) {
            e.put("kafka_error", Errors.forException(root).name());  // e.g. UNKNOWN_MEMBER_ID
        }
        ArrayNode chain = e.putArray("chain");
        for (Throwable c = t; c != null; c = c.getCause()) {
            chain.add(c.getClass().getName() + ": " + c.getMessage());
            if (c.getCause() == c) {
                break;
            }
        }
        return e;
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof ExecutionException || t instanceof java.util.concurrent.CompletionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String describe(Throwable t) {
        Throwable root = unwrap(t);
        return root.getClass().getName() + ": " + root.getMessage();
    }

    private static byte[] bytes(JsonNode node) {
        return node == null || node.isNull() || node.isMissingNode() ? null
                : node.asText().getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] data) {
        return data == null ? null : new String(data, StandardCharsets.UTF_8);
    }

    private static <T> T await(Future<T> future) throws Exception {
        return future.get(FUTURE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
    }

    private static List<Integer> partitions(JsonNode spec) {
        List<Integer> out = new ArrayList<>();
        JsonNode ps = spec.path("partitions");
        if (ps.isArray() && ps.size() > 0) {
            ps.forEach(p -> out.add(p.asInt()));
        } else if (spec.has("partition")) {
            out.add(spec.get("partition").asInt());
        } else {
            out.add(0);
        }
        return out;
    }

    private static String required(JsonNode spec, String key) {
        JsonNode v = spec.get(key);
        if (v == null || v.isNull()) {
            throw new IllegalArgumentException("SPEC needs \"" + key + "\"");
        }
        return v.asText();
    }

    // -- produce ----------------------------------------------------------------------------------------------------

    private static ObjectNode produce(String bootstrap, JsonNode spec) throws Exception {
        String topic = required(spec, "topic");
        Properties p = baseConfig(bootstrap, "scenario-producer");
        p.put(ProducerConfig.ACKS_CONFIG, spec.path("acks").asText("all"));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(spec.path("idempotent").asBoolean(true)));
        p.put(ProducerConfig.LINGER_MS_CONFIG, String.valueOf(spec.path("linger_ms").asLong(5000)));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, "1048576");
        if (spec.hasNonNull("compression")) {
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, spec.get("compression").asText());
        }
        overrides(p, spec);

        List<JsonNode> groups = new ArrayList<>();
        if (spec.has("batches")) {
            spec.get("batches").forEach(groups::add);
        } else {
            groups.add(spec.path("records"));
        }

        ObjectNode result = JSON.objectNode();
        ArrayNode metadata = result.putArray("metadata");
        ArrayNode offsets = result.putArray("offsets");
        List<String> failures = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            int index = 0;
            for (JsonNode group : groups) {
                List<Future<RecordMetadata>> futures = new ArrayList<>();
                for (JsonNode rec : group) {
                    List<Header> headers = new ArrayList<>();
                    rec.path("headers").forEach(h -> headers.add(new RecordHeader(h.get(0).asText(), bytes(h.get(1)))));
                    Integer partition = rec.hasNonNull("partition") ? rec.get("partition").asInt() : null;
                    Long timestamp = rec.hasNonNull("timestamp") ? rec.get("timestamp").asLong() : null;
                    futures.add(producer.send(new ProducerRecord<>(topic, partition, timestamp, bytes(rec.get("key")),
                            bytes(rec.get("value")), headers)));
                }
                producer.flush();
                for (Future<RecordMetadata> f : futures) {
                    ObjectNode m = metadata.addObject();
                    try {
                        RecordMetadata md = await(f);
                        m.put("partition", md.partition());
                        m.put("offset", md.offset());
                        m.put("timestamp", md.timestamp());
                        m.put("key_size", md.serializedKeySize());
                        m.put("value_size", md.serializedValueSize());
                        offsets.add(md.offset());
                    } catch (ExecutionException e) {
                        m.set("error", error(e));
                        offsets.addNull();
                        failures.add("record " + index + ": " + describe(e));
                    }
                    index++;
                }
            }
            producer.close(Duration.ofSeconds(10));
        }
        if (!failures.isEmpty()) {
            throw new ScenarioFailed(failures.size() + " record(s) not acknowledged; first: " + failures.get(0),
                    result);
        }
        return result;
    }

    // -- stream -----------------------------------------------------------------------------------------------------

    private static ObjectNode stream(String bootstrap, JsonNode spec) throws Exception {
        String topic = required(spec, "topic");
        int count = Integer.parseInt(required(spec, "count"));
        int valueSize = spec.path("value_size").asInt(16);
        Integer partitions = spec.hasNonNull("partitions") ? spec.get("partitions").asInt() : null;
        long paceMs = spec.path("pace_ms").asLong(0);
        int progressEvery = Math.max(1, spec.path("progress_every").asInt(50));
        Properties p = baseConfig(bootstrap, "scenario-stream");
        p.put(ProducerConfig.ACKS_CONFIG, spec.path("acks").asText("all"));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(spec.path("idempotent").asBoolean(true)));
        p.put(ProducerConfig.LINGER_MS_CONFIG, String.valueOf(spec.path("linger_ms").asLong(5)));
        long deliveryTimeout = spec.path("delivery_timeout_ms").asLong(120_000);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(deliveryTimeout));
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(deliveryTimeout));
        overrides(p, spec);

        ObjectNode result = JSON.objectNode();
        ArrayNode acked = result.putArray("acked");
        ArrayNode failed = result.putArray("failed");
        int[] done = {0, 0};
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                new ByteArraySerializer())) {
            for (int i = 0; i < count; i++) {
                final int index = i;
                StringBuilder value = new StringBuilder("v" + i + ":");
                while (value.length() < valueSize) {
                    value.append('.');
                }
                Integer partition = partitions == null ? null : i % partitions;
                producer.send(new ProducerRecord<>(topic, partition, ("k" + i).getBytes(StandardCharsets.UTF_8),
                        value.toString().getBytes(StandardCharsets.UTF_8)), (md, e) -> {
                    synchronized (done) {
                        if (e == null) {
                            ArrayNode a = acked.addArray();
                            a.add(index);
                            a.add(md.partition());
                            a.add(md.offset());
                            done[0]++;
                        } else {
                            ArrayNode f = failed.addArray();
                            f.add(index);
                            f.add(describe(e));
                            done[1]++;
                        }
                        if ((done[0] + done[1]) % progressEvery == 0 || done[0] + done[1] == count) {
                            System.err.println("PROGRESS acked=" + done[0] + " failed=" + done[1]);
                            System.err.flush();
                        }
                    }
                });
                if (paceMs > 0) {
                    Thread.sleep(paceMs);
                }
            }
            producer.flush();
            producer.close(Duration.ofSeconds(30));
        }
        synchronized (done) {
            if (done[1] > 0) {
                throw new ScenarioFailed(done[1] + " record(s) not acknowledged; first: " + failed.get(0), result);
            }
        }
        return result;
    }

    // -- consume ----------------------------------------------------------------------------------------------------

    private static ObjectNode consume(String bootstrap, JsonNode spec) throws Exception {
        String topic = required(spec, "topic");
        Properties p = baseConfig(bootstrap, "scenario-consumer");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200");
        if (spec.hasNonNull("isolation_level")) {
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, spec.get("isolation_level").asText());
        }
        overrides(p, spec);
        int count = spec.path("count").asInt(1);
        long timeoutMs = spec.path("timeout_ms").asLong(10_000);
        long extraPollMs = spec.path("extra_poll_ms").asLong(0);

        List<TopicPartition> tps = new ArrayList<>();
        for (int partition : partitions(spec)) {
            tps.add(new TopicPartition(topic, partition));
        }
        ObjectNode result = JSON.objectNode();
        ArrayNode records = result.putArray("records");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(tps);
            JsonNode seek = spec.path("seek");
            if (seek.isMissingNode() || seek.isNull() || seek.asText().equals("beginning")) {
                consumer.seekToBeginning(tps);
            } else if (seek.isTextual() && seek.asText().equals("end")) {
                consumer.seekToEnd(tps);
            } else if (seek.isNumber()) {
                for (TopicPartition tp : tps) {
                    consumer.seek(tp, seek.asLong());
                }
            } else if (seek.isObject()) {
                for (TopicPartition tp : tps) {
                    JsonNode offset = seek.get(String.valueOf(tp.partition()));
                    if (offset == null) {
                        consumer.seekToBeginning(List.of(tp));
                    } else {
                        consumer.seek(tp, offset.asLong());
                    }
                }
            } else {
                throw new IllegalArgumentException("bad \"seek\": " + seek);
            }
            long deadline = System.currentTimeMillis() + timeoutMs;
            int got = 0;
            while (got < count) {
                long remaining = deadline - System.currentTimeMillis();
                if (remaining <= 0) {
                    break;
                }
                got += addRecords(records, consumer.poll(Duration.ofMillis(Math.min(remaining, 500))));
            }
            result.put("timed_out", got < count);
            if (got >= count && extraPollMs > 0) {
                long extraDeadline = System.currentTimeMillis() + extraPollMs;
                long remaining;
                while ((remaining = extraDeadline - System.currentTimeMillis()) > 0) {
                    addRecords(records, consumer.poll(Duration.ofMillis(remaining)));
                }
            }
            ObjectNode positions = result.putObject("positions");
            for (TopicPartition tp : tps) {
                positions.put(String.valueOf(tp.partition()), consumer.position(tp, Duration.ofSeconds(10)));
            }
        }
        return result;
    }

    private static int addRecords(ArrayNode out, Iterable<ConsumerRecord<byte[], byte[]>> polled) {
        int n = 0;
        for (ConsumerRecord<byte[], byte[]> r : polled) {
            ObjectNode o = out.addObject();
            o.put("partition", r.partition());
            o.put("offset", r.offset());
            o.put("key", text(r.key()));
            o.put("value", text(r.value()));
            ArrayNode headers = o.putArray("headers");
            for (Header h : r.headers()) {
                ArrayNode pair = headers.addArray();
                pair.add(h.key());
                pair.add(text(h.value()));
            }
            o.put("timestamp", r.timestamp());
            o.put("timestamp_type", r.timestampType().name);
            Optional<Integer> epoch = r.leaderEpoch();
            if (epoch.isPresent()) {
                o.put("leader_epoch", epoch.get());
            } else {
                o.putNull("leader_epoch");
            }
            n++;
        }
        return n;
    }

    // -- group ------------------------------------------------------------------------------------------------------

    private static String tp(TopicPartition tp) {
        return tp.topic() + ":" + tp.partition();
    }

    private static ArrayNode tps(Collection<TopicPartition> partitions) {
        ArrayNode a = JSON.arrayNode();
        partitions.stream().map(ClientScenarios::tp).sorted().forEach(a::add);
        return a;
    }

    private static String tpList(Collection<TopicPartition> partitions) {
        return String.join(",", partitions.stream().map(ClientScenarios::tp).sorted().toList());
    }

    private static final Comparator<TopicPartition> TP_ORDER =
            Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    /** The state of one `group` run that the rebalance listener and the poll loop both write. */
    private static final class GroupRun {
        final KafkaConsumer<byte[], byte[]> consumer;
        final ObjectNode result = JSON.objectNode();
        final ArrayNode records = result.putArray("records");
        final ArrayNode events = result.putArray("events");
        final ArrayNode commitErrors = JSON.arrayNode();
        final Set<TopicPartition> everAssigned = new TreeSet<>(TP_ORDER);
        final boolean commitInRevoke;
        int consumed;
        int commits;
        int lastGeneration = Integer.MIN_VALUE;
        String lastMember;

        GroupRun(KafkaConsumer<byte[], byte[]> consumer, boolean commitInRevoke) {
            this.consumer = consumer;
            this.commitInRevoke = commitInRevoke;
        }

        void event(String name, Collection<TopicPartition> partitions, String detail) {
            ConsumerGroupMetadata md = consumer.groupMetadata();
            Set<TopicPartition> assigned = consumer.assignment();
            everAssigned.addAll(assigned);
            lastGeneration = md.generationId();
            lastMember = md.memberId();
            ObjectNode e = events.addObject();
            e.put("event", name);
            if (partitions != null) {
                e.set("partitions", tps(partitions));
            }
            e.set("assigned", tps(assigned));
            e.put("generation", md.generationId());
            e.put("member_id", md.memberId());
            e.put("records", consumed);
            if (detail != null) {
                e.put("detail", detail);
            }
            StringBuilder line = new StringBuilder("PROGRESS event=").append(name).append(" records=").append(consumed)
                    .append(" assigned=").append(tpList(assigned)).append(" generation=").append(md.generationId())
                    .append(" member=").append(md.memberId().isEmpty() ? "-" : md.memberId());
            if (partitions != null) {
                line.append(" partitions=").append(tpList(partitions));
            }
            if (detail != null) {
                line.append(" detail=").append(detail.replaceAll("\\s+", "_"));
            }
            System.err.println(line);
            System.err.flush();
        }

        void commitSync(String when) {
            try {
                consumer.commitSync();
                commits++;
            } catch (RuntimeException e) {
                ObjectNode err = error(e);
                err.put("when", when);
                commitErrors.add(err);
                event("commit_failed", null, describe(e));
            }
        }

        ConsumerRebalanceListener listener() {
            return new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    if (commitInRevoke && !partitions.isEmpty()) {
                        commitSync("revoked");
                    }
                    event("revoked", partitions, null);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    event("assigned", partitions, null);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    event("lost", partitions, null);
                }
            };
        }
    }

    private static String classicAssignor(String name) {
        return switch (name) {
            case "range" -> "org.apache.kafka.clients.consumer.RangeAssignor";
            case "roundrobin" -> "org.apache.kafka.clients.consumer.RoundRobinAssignor";
            case "sticky" -> "org.apache.kafka.clients.consumer.StickyAssignor";
            case "cooperative-sticky" -> "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
            default -> name;
        };
    }

    private static ObjectNode group(String bootstrap, JsonNode spec) throws Exception {
        String groupId = required(spec, "group");
        String protocol = spec.path("protocol").asText("classic");
        String commit = spec.path("commit").asText("sync");
        if (!List.of("sync", "async", "auto", "none").contains(commit)) {
            throw new IllegalArgumentException("bad \"commit\": " + commit + " (sync, async, auto or none)");
        }
        int count = spec.path("count").asInt(1);
        boolean untilStopped = spec.path("until_stopped").asBoolean(false);
        long timeoutMs = spec.path("timeout_ms").asLong(30_000);
        long pollMs = spec.path("poll_ms").asLong(200);
        int progressEvery = spec.path("progress_every").asInt(0);
        CloseOptions.GroupMembershipOperation onClose = switch (spec.path("close").asText("default")) {
            case "leave" -> CloseOptions.GroupMembershipOperation.LEAVE_GROUP;
            case "remain" -> CloseOptions.GroupMembershipOperation.REMAIN_IN_GROUP;
            case "default" -> CloseOptions.GroupMembershipOperation.DEFAULT;
            default -> throw new IllegalArgumentException("bad \"close\": " + spec.get("close"));
        };
        CloseOptions closeOptions = CloseOptions.groupMembershipOperation(onClose);
        java.nio.file.Path stopFile = spec.hasNonNull("stop_file")
                ? java.nio.file.Path.of(spec.get("stop_file").asText()) : null;

        Properties p = baseConfig(bootstrap, spec.path("client_id").asText("scenario-group"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, String.valueOf(commit.equals("auto")));
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200");
        if (protocol.equals("classic")) {
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
            if (spec.hasNonNull("assignor")) {
                p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                        classicAssignor(spec.get("assignor").asText()));
            }
        } else if (spec.hasNonNull("assignor")) {
            p.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, spec.get("assignor").asText());
        }
        if (spec.hasNonNull("instance_id")) {
            p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, spec.get("instance_id").asText());
        }
        overrides(p, spec);

        List<String> topics = new ArrayList<>();
        spec.path("topics").forEach(t -> topics.add(t.asText()));
        AtomicBoolean stop = new AtomicBoolean(false);
        if (untilStopped && commands != null) {
            Thread reader = new Thread(() -> {
                try {
                    String line;
                    while ((line = commands.readLine()) != null) {
                        if (line.trim().equals("stop")) {
                            break;
                        }
                    }
                } catch (Exception e) {
                    System.err.println("group: reading commands failed: " + e);
                }
                stop.set(true);  // "stop", or the end of input (the test is gone)
            }, "commands");
            reader.setDaemon(true);
            reader.start();
        }

        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                new ByteArrayDeserializer());
        GroupRun run = new GroupRun(consumer, commit.equals("sync"));
        ObjectNode result = run.result;
        try {
            if (spec.hasNonNull("subscription_pattern")) {
                consumer.subscribe(new SubscriptionPattern(spec.get("subscription_pattern").asText()), run.listener());
            } else if (spec.hasNonNull("pattern")) {
                consumer.subscribe(Pattern.compile(spec.get("pattern").asText()), run.listener());
            } else if (!topics.isEmpty()) {
                consumer.subscribe(topics, run.listener());
            } else {
                throw new IllegalArgumentException("SPEC needs \"topics\", \"pattern\" or \"subscription_pattern\"");
            }
            run.event("subscribed", null, null);
            long deadline = System.currentTimeMillis() + timeoutMs;
            String stoppedBy;
            while (true) {
                if (stop.get() || (stopFile != null && java.nio.file.Files.exists(stopFile))) {
                    stoppedBy = "stop";
                    break;
                }
                if (!untilStopped && run.consumed >= count) {
                    stoppedBy = "count";
                    break;
                }
                long remaining = deadline - System.currentTimeMillis();
                if (remaining <= 0) {
                    stoppedBy = "timeout";
                    break;
                }
                ConsumerRecords<byte[], byte[]> polled = consumer.poll(Duration.ofMillis(Math.min(remaining, pollMs)));
                int before = run.consumed;
                for (ConsumerRecord<byte[], byte[]> r : polled) {
                    ObjectNode o = run.records.addObject();
                    o.put("topic", r.topic());
                    o.put("partition", r.partition());
                    o.put("offset", r.offset());
                    o.put("key", text(r.key()));
                    o.put("value", text(r.value()));
                    run.consumed++;
                }
                if (run.consumed > before) {
                    if (commit.equals("sync")) {
                        run.commitSync("poll");
                    } else if (commit.equals("async")) {
                        consumer.commitAsync((offsets, e) -> {
                            if (e != null) {
                                ObjectNode err = error(e);
                                err.put("when", "async");
                                run.commitErrors.add(err);
                            }
                        });
                        run.commits++;
                    }
                }
                ConsumerGroupMetadata md = consumer.groupMetadata();
                if (md.generationId() != run.lastGeneration || !md.memberId().equals(run.lastMember)) {
                    run.event("generation", null, null);
                }
                if (run.consumed > before && (progressEvery > 0 && run.consumed / progressEvery
                        != before / progressEvery)) {
                    run.event("records", null, null);
                }
            }
            result.put("stopped_by", stoppedBy);
            result.put("timed_out", stoppedBy.equals("timeout"));
            run.event("stopping", null, null);
            if (commit.equals("sync")) {
                run.commitSync("end");
            }
            Set<TopicPartition> assigned = new TreeSet<>(TP_ORDER);
            assigned.addAll(consumer.assignment());
            result.set("assignment", tps(assigned));
            ObjectNode positions = result.putObject("positions");
            for (TopicPartition tp : assigned) {
                positions.withObjectProperty(tp.topic()).put(String.valueOf(tp.partition()),
                        consumer.position(tp, Duration.ofSeconds(10)));
            }
            Set<TopicPartition> all = new TreeSet<>(TP_ORDER);
            all.addAll(run.everAssigned);
            all.addAll(assigned);
            for (String topic : topics) {
                consumer.partitionsFor(topic, Duration.ofSeconds(10))
                        .forEach(info -> all.add(new TopicPartition(info.topic(), info.partition())));
            }
            boolean joined = run.lastGeneration >= 0 || !run.everAssigned.isEmpty();
            result.put("joined", joined);
            // A member that never joined (no coordinator, no group support) would only time out asking again.
            ObjectNode committed = result.putObject("committed");
            Map<TopicPartition, OffsetAndMetadata> offsets = joined
                    ? consumer.committed(all, Duration.ofSeconds(10)) : Map.of();
            for (TopicPartition tp : joined ? all : Set.<TopicPartition>of()) {
                OffsetAndMetadata om = offsets.get(tp);
                if (om == null) {
                    committed.withObjectProperty(tp.topic()).putNull(String.valueOf(tp.partition()));
                } else {
                    committed.withObjectProperty(tp.topic()).put(String.valueOf(tp.partition()), om.offset());
                }
            }
            ConsumerGroupMetadata md = consumer.groupMetadata();
            ObjectNode gm = result.putObject("group_metadata");
            gm.put("group_id", md.groupId());
            gm.put("generation_id", md.generationId());
            gm.put("member_id", md.memberId());
            gm.put("group_instance_id", md.groupInstanceId().orElse(null));
        } catch (Exception e) {
            result.put("commits", run.commits);
            result.set("commit_errors", run.commitErrors);
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
            throw new ScenarioFailed(describe(e), withError(result, e));
        }
        long closing = System.currentTimeMillis();
        // A member that never joined has nothing to leave: do not wait long for a group that never answered.
        consumer.close(closeOptions.withTimeout(Duration.ofSeconds(result.path("joined").asBoolean(true) ? 10 : 2)));
        result.put("close_ms", System.currentTimeMillis() - closing);
        result.put("commits", run.commits);
        result.set("commit_errors", run.commitErrors);
        return result;
    }

    private static ObjectNode withError(ObjectNode result, Throwable t) {
        System.err.println("group: " + describe(t));
        t.printStackTrace(System.err);
        return result;
    }

    // -- txn --------------------------------------------------------------------------------------------------------

    /** A step that failed after part of its work: what it did is still reported, with the error. */
    private static final class StepFailed extends Exception {
        private static final long serialVersionUID = 1L;
        final transient JsonNode partial;

        StepFailed(JsonNode partial, Throwable cause) {
            super(cause.getMessage(), cause);
            this.partial = partial;
        }
    }

    /** The named producers and consumers (and one Admin) of a `txn` run, and its steps. */
    private static final class TxnRun {
        final String bootstrap;
        final JsonNode spec;
        final Map<String, KafkaProducer<byte[], byte[]>> producers = new LinkedHashMap<>();
        final Map<String, KafkaConsumer<byte[], byte[]>> consumers = new LinkedHashMap<>();
        final Map<String, ConsumerGroupMetadata> left = new HashMap<>();
        Admin admin;

        TxnRun(String bootstrap, JsonNode spec) {
            this.bootstrap = bootstrap;
            this.spec = spec;
        }

        String transactionalId(JsonNode step) {
            return step.hasNonNull("transactional_id") ? step.get("transactional_id").asText()
                    : required(spec, "transactional_id");
        }

        KafkaProducer<byte[], byte[]> producer(JsonNode step) {
            String name = step.path("producer").asText("p");
            KafkaProducer<byte[], byte[]> producer = producers.get(name);
            if (producer == null) {
                throw new IllegalArgumentException("no producer '" + name + "' (an \"init\" step creates it)");
            }
            return producer;
        }

        /** The group metadata of a consumer: its current one, or the last it had before a "leave" step. */
        ConsumerGroupMetadata groupMetadataOf(String name) {
            KafkaConsumer<byte[], byte[]> consumer = consumers.get(name);
            if (consumer != null) {
                return consumer.groupMetadata();
            }
            ConsumerGroupMetadata md = left.get(name);
            if (md == null) {
                throw new IllegalArgumentException("no consumer '" + name + "' (a \"join\" step creates it)");
            }
            return md;
        }

        KafkaConsumer<byte[], byte[]> consumer(JsonNode step) {
            String name = step.path("consumer").asText("c");
            KafkaConsumer<byte[], byte[]> consumer = consumers.get(name);
            if (consumer == null) {
                throw new IllegalArgumentException("no consumer '" + name + "' (a \"join\" step creates it)");
            }
            return consumer;
        }

        Admin admin() {
            if (admin == null) {
                Properties p = baseConfig(bootstrap, "scenario-txn-admin");
                JsonNode config = spec.path("admin_config");
                config.properties().forEach(e -> p.put(e.getKey(), e.getValue().asText()));
                admin = Admin.create(p);
            }
            return admin;
        }

        JsonNode step(JsonNode step) throws Exception {
            String op = step.path("op").asText();
            switch (op) {
                case "init": {
                    String name = step.path("producer").asText("p");
                    KafkaProducer<byte[], byte[]> producer = producers.get(name);
                    if (producer == null) {
                        Properties p = baseConfig(bootstrap, "scenario-txn-" + name);
                        p.put(ProducerConfig.ACKS_CONFIG, "all");
                        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
                        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
                        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "15000");
                        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
                        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId(step));
                        overrides(p, spec);
                        overrides(p, step);
                        producer = new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
                        producers.put(name, producer);
                    }
                    producer.initTransactions();
                    return null;
                }
                case "begin":
                    producer(step).beginTransaction();
                    return null;
                case "send":
                    return send(producer(step), step);
                case "flush":
                    producer(step).flush();
                    return null;
                case "offsets": {
                    KafkaProducer<byte[], byte[]> producer = producer(step);
                    Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
                    topicOffsets(step.path("offsets")).forEach((tp, o) -> offsets.put(tp,
                            new OffsetAndMetadata(o, step.path("metadata").asText(""))));
                    ConsumerGroupMetadata md;
                    if (step.hasNonNull("consumer")) {
                        md = groupMetadataOf(step.get("consumer").asText());
                    } else if (step.hasNonNull("group")) {
                        md = new ConsumerGroupMetadata(step.get("group").asText());
                    } else {
                        md = new ConsumerGroupMetadata(required(step.path("group_metadata"), "group_id"));
                    }
                    JsonNode g = step.path("group_metadata");   // overrides, e.g. a stale generation
                    if (g.isObject()) {
                        md = new ConsumerGroupMetadata(g.path("group_id").asText(md.groupId()),
                                g.path("generation_id").asInt(md.generationId()),
                                g.path("member_id").asText(md.memberId()),
                                g.has("instance_id") ? Optional.ofNullable(g.get("instance_id").isNull() ? null
                                        : g.get("instance_id").asText()) : md.groupInstanceId());
                    }
                    ObjectNode r = groupMetadata(md);
                    try {
                        producer.sendOffsetsToTransaction(offsets, md);
                    } catch (Exception e) {
                        throw new StepFailed(r, e);
                    }
                    return r;
                }
                case "commit":
                    producer(step).commitTransaction();
                    return null;
                case "abort":
                    producer(step).abortTransaction();
                    return null;
                case "close": {
                    String name = step.path("producer").asText("p");
                    KafkaProducer<byte[], byte[]> producer = producer(step);
                    producers.remove(name);
                    producer.close(Duration.ofMillis(step.path("timeout_ms").asLong(5000)));
                    return null;
                }
                case "consume":
                    return consume(bootstrap, step);
                case "join":
                    return join(step);
                case "poll": {
                    KafkaConsumer<byte[], byte[]> consumer = consumer(step);
                    ObjectNode r = JSON.objectNode();
                    ArrayNode records = r.putArray("records");
                    pollUntil(consumer, records, step.path("count").asInt(1), step.path("timeout_ms").asLong(10_000),
                            false);
                    return r;
                }
                case "committed": {
                    KafkaConsumer<byte[], byte[]> consumer = consumer(step);
                    Set<TopicPartition> tps = new TreeSet<>(TP_ORDER);
                    tps.addAll(topicPartitions(step.path("partitions")));
                    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(tps,
                            Duration.ofMillis(step.path("timeout_ms").asLong(10_000)));
                    ObjectNode r = JSON.objectNode();
                    for (TopicPartition tp : tps) {
                        OffsetAndMetadata om = committed.get(tp);
                        if (om == null) {
                            r.withObjectProperty(tp.topic()).putNull(String.valueOf(tp.partition()));
                        } else {
                            r.withObjectProperty(tp.topic()).put(String.valueOf(tp.partition()), om.offset());
                        }
                    }
                    return r;
                }
                case "leave": {
                    String name = step.path("consumer").asText("c");
                    KafkaConsumer<byte[], byte[]> consumer = consumer(step);
                    consumers.remove(name);
                    ObjectNode r = groupMetadata(consumer.groupMetadata());
                    left.put(name, consumer.groupMetadata());
                    consumer.close(CloseOptions.timeout(Duration.ofMillis(step.path("timeout_ms").asLong(5000))));
                    return r;
                }
                case "admin": {
                    ArrayNode results = JSON.arrayNode();
                    List<String> failures = runAdminOps(admin(), step.path("ops"), results);
                    if (!failures.isEmpty()) {
                        throw new StepFailed(results, new IllegalStateException(String.join("; ", failures)));
                    }
                    return results;
                }
                case "await_txn":
                    return awaitTxn(step);
                case "await_offsets":
                    return awaitOffsets(step);
                default:
                    throw new IllegalArgumentException("unknown txn step '" + op + "' (init, begin, send, flush, "
                            + "offsets, commit, abort, close, consume, join, poll, committed, leave, admin, await_txn, "
                            + "await_offsets)");
            }
        }

        private JsonNode send(KafkaProducer<byte[], byte[]> producer, JsonNode step) throws Exception {
            String topic = required(step, "topic");
            ArrayNode metadata = JSON.arrayNode();
            List<Future<RecordMetadata>> futures = new ArrayList<>();
            try {
                for (JsonNode rec : step.path("records")) {
                    List<Header> headers = new ArrayList<>();
                    rec.path("headers").forEach(h -> headers.add(new RecordHeader(h.get(0).asText(), bytes(h.get(1)))));
                    Integer partition = rec.hasNonNull("partition") ? rec.get("partition").asInt() : null;
                    futures.add(producer.send(new ProducerRecord<>(topic, partition, null, bytes(rec.get("key")),
                            bytes(rec.get("value")), headers)));
                }
            } catch (Exception e) {
                throw new StepFailed(metadata, e);   // send() itself refused (an error state, a fenced producer)
            }
            if (!step.path("flush").asBoolean(true)) {
                return metadata;
            }
            producer.flush();
            Throwable first = null;
            for (Future<RecordMetadata> f : futures) {
                ObjectNode m = metadata.addObject();
                try {
                    RecordMetadata md = await(f);
                    m.put("partition", md.partition());
                    m.put("offset", md.offset());
                } catch (ExecutionException e) {
                    m.set("error", error(e));
                    first = first == null ? e : first;
                }
            }
            if (first != null) {
                throw new StepFailed(metadata, first);
            }
            return metadata;
        }

        private JsonNode join(JsonNode step) throws Exception {
            String name = step.path("consumer").asText("c");
            if (consumers.containsKey(name)) {
                throw new IllegalArgumentException("consumer '" + name + "' exists already");
            }
            Properties p = baseConfig(bootstrap, "scenario-txn-" + name);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, required(step, "group"));
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "200");
            p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
            overrides(p, step);
            KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
                    new ByteArrayDeserializer());
            consumers.put(name, consumer);
            List<String> topics = new ArrayList<>();
            step.path("topics").forEach(t -> topics.add(t.asText()));
            consumer.subscribe(topics);
            ObjectNode r = JSON.objectNode();
            ArrayNode records = r.putArray("records");
            pollUntil(consumer, records, step.path("count").asInt(0), step.path("timeout_ms").asLong(15_000), true);
            // The poll that brings the assignment can return while its fetch of the group's committed offsets (where
            // the positions start) is still unanswered, and the consumer keeps that fetch pending: a later
            // committed() for the same partitions takes its (old) answer instead of asking again. So the join
            // settles every position before it returns.
            for (TopicPartition tp : consumer.assignment()) {
                consumer.position(tp, Duration.ofMillis(step.path("timeout_ms").asLong(15_000)));
            }
            r.set("assignment", tps(consumer.assignment()));
            r.set("group_metadata", groupMetadata(consumer.groupMetadata()));
            return r;
        }

        /** Poll until `count` records (and, with `assigned`, an assignment); an error at the deadline. */
        private static void pollUntil(KafkaConsumer<byte[], byte[]> consumer, ArrayNode records, int count,
                long timeoutMs, boolean assigned) {
            long deadline = System.currentTimeMillis() + timeoutMs;
            int got = 0;
            while (got < count || (assigned && consumer.assignment().isEmpty())) {
                long remaining = deadline - System.currentTimeMillis();
                if (remaining <= 0) {
                    throw new IllegalStateException("after " + timeoutMs + " ms: " + got + " of " + count
                            + " record(s), assignment " + tps(consumer.assignment()));
                }
                for (ConsumerRecord<byte[], byte[]> rec : consumer.poll(Duration.ofMillis(Math.min(remaining, 200)))) {
                    ObjectNode o = records.addObject();
                    o.put("topic", rec.topic());
                    o.put("partition", rec.partition());
                    o.put("offset", rec.offset());
                    o.put("key", text(rec.key()));
                    o.put("value", text(rec.value()));
                    got++;
                }
            }
        }

        /** describeTransactions every 50 ms until the id is in one of `states`; its description. */
        private JsonNode awaitTxn(JsonNode step) throws Exception {
            String id = transactionalId(step);
            Set<String> states = new java.util.HashSet<>();
            step.path("states").forEach(st -> states.add(st.asText()));
            long timeoutMs = step.path("timeout_ms").asLong(15_000);
            long deadline = System.currentTimeMillis() + timeoutMs;
            JsonNode last;
            while (true) {
                try {
                    TransactionDescription d = await(admin().describeTransactions(List.of(id)).description(id));
                    last = transactionDescription(d);
                    if (states.contains(d.state().toString())) {
                        return last;
                    }
                } catch (ExecutionException e) {
                    last = error(e);
                }
                if (System.currentTimeMillis() >= deadline) {
                    throw new StepFailed(last, new IllegalStateException("transactional id " + id + " not in "
                            + states + " after " + timeoutMs + " ms; last: " + last));
                }
                Thread.sleep(50);  // the retry interval of a deadline loop
            }
        }

        /** listConsumerGroupOffsets every 50 ms until the group's committed offsets include `offsets`; the listing. */
        private JsonNode awaitOffsets(JsonNode step) throws Exception {
            ObjectNode op = JSON.objectNode();
            op.put("group", required(step, "group"));
            Map<TopicPartition, Long> expected = topicOffsets(step.path("offsets"));
            long timeoutMs = step.path("timeout_ms").asLong(15_000);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (true) {
                JsonNode listed = listConsumerGroupOffsets(admin(), op);
                boolean all = true;
                for (Map.Entry<TopicPartition, Long> e : expected.entrySet()) {
                    JsonNode got = listed.path(e.getKey().topic()).path(String.valueOf(e.getKey().partition()));
                    all &= got.path("offset").asLong(-1) == e.getValue();
                }
                if (all) {
                    return listed;
                }
                if (System.currentTimeMillis() >= deadline) {
                    throw new StepFailed(listed, new IllegalStateException("group " + op.get("group").asText()
                            + " did not commit " + step.path("offsets") + " in " + timeoutMs + " ms; last: " + listed));
                }
                Thread.sleep(50);  // the retry interval of a deadline loop
            }
        }

        void close() {
            for (KafkaProducer<byte[], byte[]> producer : producers.values()) {
                try {
                    producer.close(Duration.ofSeconds(5));
                } catch (Exception e) {
                    System.err.println("txn: closing a producer: " + describe(e));
                }
            }
            for (KafkaConsumer<byte[], byte[]> consumer : consumers.values()) {
                try {
                    consumer.close(CloseOptions.timeout(Duration.ofSeconds(5)));
                } catch (Exception e) {
                    System.err.println("txn: closing a consumer: " + describe(e));
                }
            }
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
            }
        }
    }

    private static ObjectNode groupMetadata(ConsumerGroupMetadata md) {
        ObjectNode gm = JSON.objectNode();
        gm.put("group_id", md.groupId());
        gm.put("generation_id", md.generationId());
        gm.put("member_id", md.memberId());
        gm.put("group_instance_id", md.groupInstanceId().orElse(null));
        return gm;
    }

    private static ObjectNode txn(String bootstrap, JsonNode spec) throws Exception {
        TxnRun run = new TxnRun(bootstrap, spec);
        ObjectNode result = JSON.objectNode();
        ArrayNode steps = result.putArray("steps");
        int failed = 0;
        try {
            int index = 0;
            for (JsonNode step : spec.path("steps")) {
                ObjectNode entry = steps.addObject();
                entry.put("index", index++);
                entry.put("op", step.path("op").asText());
                for (String who : List.of("producer", "consumer")) {
                    if (step.hasNonNull(who)) {
                        entry.put(who, step.get(who).asText());
                    }
                }
                if (step.hasNonNull("label")) {
                    entry.put("label", step.get("label").asText());
                }
                try {
                    JsonNode r = run.step(step);
                    entry.put("ok", true);
                    if (r != null) {
                        entry.set("result", r);
                    }
                } catch (StepFailed e) {
                    entry.put("ok", false);
                    entry.set("result", e.partial);
                    entry.set("error", error(e.getCause()));
                    failed++;
                } catch (Exception e) {
                    entry.put("ok", false);
                    entry.set("error", error(e));
                    failed++;
                }
                System.err.println("PROGRESS step=" + (index - 1) + " op=" + entry.path("op").asText() + " ok="
                        + entry.path("ok").asBoolean());
                System.err.flush();
            }
        } finally {
            run.close();
        }
        result.put("failed", failed);
        return result;
    }

    // -- share groups (KIP-932, KIP-1222) -----------------------------------------------------------------------------

    /**
     * The `share` scenario: named KafkaShareConsumers (and one Admin) of one share group run STEPS in order, one report
     * per step as in `txn`. Steps: {"op": "consumer", "consumer", "mode": implicit|explicit, "config"} subscribes a new
     * consumer to "topic"; {"op": "poll", "consumer", "count", "timeout_ms", "ack": accept|release|reject|renew}
     * polls until COUNT records came (acknowledging each with ACK in explicit mode) and reports them with their
     * delivery counts and acquisitionLockTimeoutMs, in poll() calls of at most SLICE_MS (500) each: a poll() called
     * after the consumer's records came but before it took them sets the client fetching again, in the
     * background, until more records come; {"op": "ack", "consumer", "type", "offsets"} acknowledges records
     * of the consumer's last poll; {"op": "commit"} commitSync()s and reports each partition's outcome;
     * {"op": "process_ms", "ms"} stands for slow record processing; {"op": "close"}; {"op": "admin", "ops"}.
     */
    private static ObjectNode share(String bootstrap, JsonNode spec) throws Exception {
        ShareRun run = new ShareRun(bootstrap, spec);
        ObjectNode result = JSON.objectNode();
        ArrayNode steps = result.putArray("steps");
        int failed = 0;
        try {
            int index = 0;
            for (JsonNode step : spec.path("steps")) {
                ObjectNode entry = steps.addObject();
                entry.put("index", index++);
                entry.put("op", step.path("op").asText());
                if (step.hasNonNull("label")) {
                    entry.put("label", step.get("label").asText());
                }
                try {
                    JsonNode r = run.step(step);
                    entry.put("ok", true);
                    if (r != null) {
                        entry.set("result", r);
                    }
                } catch (Exception e) {
                    entry.put("ok", false);
                    entry.set("error", error(e));
                    failed++;
                }
                System.err.println("PROGRESS step=" + (index - 1) + " op=" + entry.path("op").asText() + " ok="
                        + entry.path("ok").asBoolean());
            }
        } finally {
            run.close();
        }
        result.put("failed", failed);
        return result;
    }

    private static final class ShareRun {
        final String bootstrap;
        final JsonNode spec;
        final Map<String, KafkaShareConsumer<byte[], byte[]>> consumers = new LinkedHashMap<>();
        final Map<String, List<ConsumerRecord<byte[], byte[]>>> lastPoll = new HashMap<>();
        Admin admin;

        ShareRun(String bootstrap, JsonNode spec) {
            this.bootstrap = bootstrap;
            this.spec = spec;
        }

        KafkaShareConsumer<byte[], byte[]> consumer(JsonNode step) {
            String name = step.path("consumer").asText("c");
            KafkaShareConsumer<byte[], byte[]> consumer = consumers.get(name);
            if (consumer == null) {
                throw new IllegalArgumentException("no share consumer '" + name + "' (a \"consumer\" step creates it)");
            }
            return consumer;
        }

        static AcknowledgeType ackType(String name) {
            return AcknowledgeType.valueOf(name.toUpperCase(java.util.Locale.ROOT));
        }

        JsonNode step(JsonNode step) throws Exception {
            String op = step.path("op").asText();
            switch (op) {
                case "consumer": {
                    String name = step.path("consumer").asText("c");
                    Properties p = baseConfig(bootstrap, "scenario-share-" + name);
                    p.put(ConsumerConfig.GROUP_ID_CONFIG, required(spec, "group"));
                    p.put("share.acknowledgement.mode", step.path("mode").asText("implicit"));
                    overrides(p, spec);
                    overrides(p, step);
                    KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(p,
                            new ByteArrayDeserializer(), new ByteArrayDeserializer());
                    consumer.subscribe(List.of(step.path("topic").asText(required(spec, "topic"))));
                    consumers.put(name, consumer);
                    return null;
                }
                case "poll": {
                    KafkaShareConsumer<byte[], byte[]> consumer = consumer(step);
                    String name = step.path("consumer").asText("c");
                    int count = step.path("count").asInt(1);
                    long deadline = System.currentTimeMillis() + step.path("timeout_ms").asLong(15_000);
                    String ack = step.hasNonNull("ack") ? step.get("ack").asText() : null;
                    long slice = step.path("slice_ms").asLong(500);
                    ObjectNode r = JSON.objectNode();
                    ArrayNode records = r.putArray("records");
                    List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
                    int polls = 0;
                    while (got.size() < count || polls == 0) {
                        long left = deadline - System.currentTimeMillis();
                        if (left <= 0) {
                            break;
                        }
                        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(Math.min(left, slice)));
                        polls++;
                        for (ConsumerRecord<byte[], byte[]> rec : batch) {
                            got.add(rec);
                            ObjectNode o = records.addObject();
                            o.put("partition", rec.partition());
                            o.put("offset", rec.offset());
                            o.put("key", rec.key() == null ? null : new String(rec.key(), StandardCharsets.UTF_8));
                            o.put("value", rec.value() == null ? null
                                    : new String(rec.value(), StandardCharsets.UTF_8));
                            o.put("delivery_count", rec.deliveryCount().map(Short::intValue).orElse(-1));
                            if (ack != null) {
                                consumer.acknowledge(rec, ackType(ack));
                            }
                        }
                    }
                    lastPoll.put(name, got);
                    consumer.acquisitionLockTimeoutMs().ifPresent(ms -> r.put("lock_timeout_ms", ms));
                    return r;
                }
                case "produce": {
                    // COUNT records "k<i>"/"v<i>" (from FIRST) to "topic", flushed every BATCH records (one batch each).
                    Properties p = baseConfig(bootstrap, "scenario-share-producer");
                    p.put(ProducerConfig.LINGER_MS_CONFIG, "1000");
                    int first = step.path("first").asInt(0);
                    int count = step.path("count").asInt(1);
                    int batch = step.path("batch").asInt(count);
                    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
                            new ByteArraySerializer())) {
                        for (int i = first; i < first + count; i++) {
                            producer.send(new ProducerRecord<>(step.path("topic").asText(required(spec, "topic")),
                                    step.has("partition") ? step.get("partition").asInt() : null,
                                    ("k" + i).getBytes(StandardCharsets.UTF_8),
                                    ("v" + i).getBytes(StandardCharsets.UTF_8)));
                            if ((i - first + 1) % batch == 0) {
                                producer.flush();
                            }
                        }
                        producer.flush();
                    }
                    return null;
                }
                case "drain": {
                    // Round-robin polls of every named consumer until COUNT records came in all (implicit mode
                    // acknowledges each poll's records at the next), then a commitSync each for the last ones.
                    List<String> names = new ArrayList<>();
                    step.path("consumers").forEach(n -> names.add(n.asText()));
                    int count = step.path("count").asInt();
                    long deadline = System.currentTimeMillis() + step.path("timeout_ms").asLong(30_000);
                    ObjectNode r = JSON.objectNode();
                    int total = 0;
                    while (total < count && System.currentTimeMillis() < deadline) {
                        for (String name : names) {
                            ArrayNode records = r.withArrayProperty(name);
                            for (ConsumerRecord<byte[], byte[]> rec : consumers.get(name).poll(Duration.ofMillis(200))) {
                                ObjectNode o = records.addObject();
                                o.put("partition", rec.partition());
                                o.put("offset", rec.offset());
                                o.put("delivery_count", rec.deliveryCount().map(Short::intValue).orElse(-1));
                                total++;
                            }
                        }
                    }
                    for (String name : names) {
                        consumers.get(name).commitSync(Duration.ofSeconds(10));
                    }
                    return r;
                }
                case "ack": {
                    KafkaShareConsumer<byte[], byte[]> consumer = consumer(step);
                    Set<Long> offsets = new HashSet<>();
                    step.path("offsets").forEach(o -> offsets.add(o.asLong()));
                    AcknowledgeType type = ackType(required(step, "type"));
                    for (ConsumerRecord<byte[], byte[]> rec : lastPoll.getOrDefault(step.path("consumer").asText("c"),
                            List.of())) {
                        if (offsets.isEmpty() || offsets.contains(rec.offset())) {
                            consumer.acknowledge(rec, type);
                        }
                    }
                    return null;
                }
                case "commit": {
                    ObjectNode r = JSON.objectNode();
                    consumer(step).commitSync(Duration.ofMillis(step.path("timeout_ms").asLong(10_000)))
                            .forEach((tip, error) -> r.put(tip.topic() + "-" + tip.partition(),
                                    error.map(e -> e.getClass().getName()).orElse("ok")));
                    return r;
                }
                case "process_ms":
                    Thread.sleep(step.path("ms").asLong());    // slow record processing, the point of RENEW
                    return null;
                case "close": {
                    String name = step.path("consumer").asText("c");
                    KafkaShareConsumer<byte[], byte[]> consumer = consumer(step);
                    consumers.remove(name);
                    consumer.close(Duration.ofMillis(step.path("timeout_ms").asLong(5000)));
                    return null;
                }
                case "admin": {
                    if (admin == null) {
                        admin = Admin.create(baseConfig(bootstrap, "scenario-share-admin"));
                    }
                    ArrayNode results = JSON.arrayNode();
                    List<String> failures = runAdminOps(admin, step.path("ops"), results);
                    if (!failures.isEmpty()) {
                        throw new IllegalStateException(String.join("; ", failures) + " " + results);
                    }
                    return results;
                }
                default:
                    throw new IllegalArgumentException("unknown share step '" + op + "' (consumer, poll, ack, commit, "
                            + "process_ms, close, admin)");
            }
        }

        void close() {
            for (KafkaShareConsumer<byte[], byte[]> consumer : consumers.values()) {
                try {
                    consumer.close(Duration.ofSeconds(5));
                } catch (Exception e) {
                    System.err.println("closing a share consumer: " + describe(e));
                }
            }
            if (admin != null) {
                admin.close(Duration.ofSeconds(5));
            }
        }
    }

    private static JsonNode describeShareGroups(Admin admin, JsonNode op) throws Exception {
        List<String> ids = new ArrayList<>();
        op.path("groups").forEach(g -> ids.add(g.asText()));
        ObjectNode r = JSON.objectNode();
        admin.describeShareGroups(ids).describedGroups().forEach((id, future) -> {
            ObjectNode o = r.putObject(id);
            try {
                ShareGroupDescription d = await(future);
                o.put("state", d.groupState().toString());
                o.put("group_epoch", d.groupEpoch());
                o.put("coordinator", d.coordinator() == null ? -1 : d.coordinator().id());
                ArrayNode members = o.putArray("members");
                for (ShareMemberDescription m : d.members()) {
                    ObjectNode mo = members.addObject();
                    mo.put("member_id", m.consumerId());
                    mo.put("client_id", m.clientId());
                    mo.put("member_epoch", m.memberEpoch());
                    ArrayNode assigned = mo.putArray("assignment");
                    m.assignment().topicPartitions().stream().sorted(TP_ORDER)
                            .forEach(tp -> assigned.add(tp.topic() + "-" + tp.partition()));
                }
            } catch (Exception e) {
                o.set("error", error(e));
            }
        });
        return r;
    }

    private static JsonNode listShareGroupOffsets(Admin admin, JsonNode op) throws Exception {
        String group = required(op, "group");
        Map<TopicPartition, SharePartitionOffsetInfo> offsets = await(admin.listShareGroupOffsets(
                Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group));
        ObjectNode r = JSON.objectNode();
        offsets.entrySet().stream().sorted((a, b) -> TP_ORDER.compare(a.getKey(), b.getKey())).forEach(e -> {
            ObjectNode o = r.putObject(e.getKey().topic() + "-" + e.getKey().partition());
            if (e.getValue() == null) {
                o.putNull("start_offset");
            } else {
                o.put("start_offset", e.getValue().startOffset());
                e.getValue().lag().ifPresent(lag -> o.put("lag", lag));
            }
        });
        return r;
    }

    private static JsonNode alterShareGroupOffsets(Admin admin, JsonNode op) throws Exception {
        Map<TopicPartition, Long> offsets = new LinkedHashMap<>();
        topicOffsets(op.path("offsets")).forEach((tp, o) -> offsets.put(tp, o));
        await(admin.alterShareGroupOffsets(required(op, "group"), offsets).all());
        return JSON.objectNode();
    }

    private static JsonNode deleteShareGroupOffsets(Admin admin, JsonNode op) throws Exception {
        Set<String> topics = new TreeSet<>();
        op.path("topics").forEach(t -> topics.add(t.asText()));
        await(admin.deleteShareGroupOffsets(required(op, "group"), topics).all());
        return JSON.objectNode();
    }

    private static JsonNode deleteShareGroups(Admin admin, JsonNode op) throws Exception {
        List<String> ids = new ArrayList<>();
        op.path("groups").forEach(g -> ids.add(g.asText()));
        await(admin.deleteShareGroups(ids).all());
        return JSON.objectNode();
    }

    private static JsonNode alterGroupConfigs(Admin admin, JsonNode op) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, required(op, "group"));
        List<AlterConfigOp> ops = new ArrayList<>();
        op.path("set").properties().forEach(e -> ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(),
                e.getValue().asText()), AlterConfigOp.OpType.SET)));
        op.path("delete").forEach(n -> ops.add(new AlterConfigOp(new ConfigEntry(n.asText(), null),
                AlterConfigOp.OpType.DELETE)));
        await(admin.incrementalAlterConfigs(Map.of(resource, ops)).all());
        return JSON.objectNode();
    }

    // -- admin ------------------------------------------------------------------------------------------------------

    private interface AdminOp {
        JsonNode run(Admin admin, JsonNode op) throws Exception;
    }

    private static ObjectNode admin(String bootstrap, JsonNode spec) throws Exception {
        Properties p = baseConfig(bootstrap, "scenario-admin");
        overrides(p, spec);
        ObjectNode result = JSON.objectNode();
        List<String> failures;
        try (Admin admin = Admin.create(p)) {
            failures = runAdminOps(admin, spec.path("ops"), result.putArray("results"));
            admin.close(Duration.ofSeconds(10));
        }
        result.put("failed", failures.size());
        if (!failures.isEmpty()) {
            throw new ScenarioFailed(String.join("; ", failures), result);
        }
        return result;
    }

    /** Every admin OP by name (the `admin` scenario's and the `txn` scenario's "admin" step). */
    private static Map<String, AdminOp> adminOps() {
        Map<String, AdminOp> ops = new HashMap<>();
        ops.put("createTopics", ClientScenarios::createTopics);
        ops.put("describeTopics", ClientScenarios::describeTopics);
        ops.put("listOffsets", ClientScenarios::listOffsets);
        ops.put("deleteRecords", ClientScenarios::deleteRecords);
        ops.put("describeConfigs", ClientScenarios::describeConfigs);
        ops.put("describeCluster", ClientScenarios::describeCluster);
        ops.put("createAcls", ClientScenarios::createAcls);
        ops.put("describeAcls", ClientScenarios::describeAcls);
        ops.put("deleteAcls", ClientScenarios::deleteAcls);
        ops.put("listConsumerGroups", ClientScenarios::listConsumerGroups);
        ops.put("listGroups", ClientScenarios::listGroups);
        ops.put("describeConsumerGroups", ClientScenarios::describeConsumerGroups);
        ops.put("listConsumerGroupOffsets", ClientScenarios::listConsumerGroupOffsets);
        ops.put("alterConsumerGroupOffsets", ClientScenarios::alterConsumerGroupOffsets);
        ops.put("deleteConsumerGroupOffsets", ClientScenarios::deleteConsumerGroupOffsets);
        ops.put("deleteConsumerGroups", ClientScenarios::deleteConsumerGroups);
        ops.put("listTopics", (admin, op) -> {
            ObjectNode r = JSON.objectNode();
            ArrayNode names = r.putArray("names");
            await(admin.listTopics().names()).stream().sorted().forEach(names::add);
            return r;
        });
        ops.put("describeTransactions", ClientScenarios::describeTransactions);
        ops.put("listTransactions", ClientScenarios::listTransactions);
        ops.put("describeProducers", ClientScenarios::describeProducers);
        ops.put("fenceProducers", ClientScenarios::fenceProducers);
        ops.put("describeShareGroups", ClientScenarios::describeShareGroups);
        ops.put("listShareGroupOffsets", ClientScenarios::listShareGroupOffsets);
        ops.put("alterShareGroupOffsets", ClientScenarios::alterShareGroupOffsets);
        ops.put("deleteShareGroupOffsets", ClientScenarios::deleteShareGroupOffsets);
        ops.put("deleteShareGroups", ClientScenarios::deleteShareGroups);
        ops.put("alterGroupConfigs", ClientScenarios::alterGroupConfigs);
        ops.put("alterClientQuotas", ClientScenarios::alterClientQuotas);
        ops.put("describeClientQuotas", ClientScenarios::describeClientQuotas);
        ops.put("alterUserScramCredentials", ClientScenarios::alterUserScramCredentials);
        ops.put("describeUserScramCredentials", ClientScenarios::describeUserScramCredentials);
        ops.put("describeLogDirs", ClientScenarios::describeLogDirs);
        ops.put("alterReplicaLogDirs", ClientScenarios::alterReplicaLogDirs);
        ops.put("electLeaders", ClientScenarios::electLeaders);
        ops.put("alterPartitionReassignments", ClientScenarios::alterPartitionReassignments);
        ops.put("listPartitionReassignments", ClientScenarios::listPartitionReassignments);
        ops.put("describeMetadataQuorum", ClientScenarios::describeMetadataQuorum);
        ops.put("describeFeatures", ClientScenarios::describeFeatures);
        ops.put("updateFeatures", ClientScenarios::updateFeatures);
        ops.put("unregisterBroker", (admin, op) -> outcome(admin.unregisterBroker(op.path("broker").asInt()).all()));
        ops.put("listConfigResources", ClientScenarios::listConfigResources);
        ops.put("addRaftVoter", ClientScenarios::addRaftVoter);
        ops.put("removeRaftVoter", (admin, op) -> outcome(admin.removeRaftVoter(op.path("voter").asInt(),
                op.hasNonNull("directory_id") ? Uuid.fromString(op.get("directory_id").asText()) : Uuid.randomUuid())
                .all()));
        return ops;
    }

    /** A quota entity as JSON {"user": "alice", "client-id": null (the default)} -> ClientQuotaEntity. */
    private static org.apache.kafka.common.quota.ClientQuotaEntity quotaEntity(JsonNode entity) {
        Map<String, String> entries = new HashMap<>();
        entity.properties().forEach(e -> entries.put(e.getKey(), e.getValue().isNull() ? null : e.getValue().asText()));
        return new org.apache.kafka.common.quota.ClientQuotaEntity(entries);
    }

    private static String quotaEntityName(org.apache.kafka.common.quota.ClientQuotaEntity entity) {
        return new TreeMap<>(entity.entries()).toString();
    }

    /** {"op": "alterClientQuotas", "entries": [{"entity": {...}, "ops": {"key": value or null}}], "validate_only"}
     *  -> {"<entity>": "ok" or an error}. */
    private static JsonNode alterClientQuotas(Admin admin, JsonNode op) throws Exception {
        List<org.apache.kafka.common.quota.ClientQuotaAlteration> alterations = new ArrayList<>();
        for (JsonNode e : op.path("entries")) {
            List<org.apache.kafka.common.quota.ClientQuotaAlteration.Op> ops = new ArrayList<>();
            e.path("ops").properties().forEach(kv -> ops.add(new org.apache.kafka.common.quota.ClientQuotaAlteration.Op(
                    kv.getKey(), kv.getValue().isNull() ? null : kv.getValue().asDouble())));
            alterations.add(new org.apache.kafka.common.quota.ClientQuotaAlteration(quotaEntity(e.path("entity")), ops));
        }
        var result = admin.alterClientQuotas(alterations,
                new org.apache.kafka.clients.admin.AlterClientQuotasOptions().validateOnly(op.path("validate_only").asBoolean(false)));
        ObjectNode r = JSON.objectNode();
        for (var entry : result.values().entrySet()) {
            try {
                await(entry.getValue());
                r.put(quotaEntityName(entry.getKey()), "ok");
            } catch (Exception ex) {
                r.set(quotaEntityName(entry.getKey()), error(ex));
            }
        }
        return r;
    }

    /** {"op": "describeClientQuotas", "components": [{"type", "name"} | {"type", "default": true} | {"type"}],
     *  "strict"} -> {"<entity>": {"key": value}}. */
    private static JsonNode describeClientQuotas(Admin admin, JsonNode op) throws Exception {
        List<org.apache.kafka.common.quota.ClientQuotaFilterComponent> components = new ArrayList<>();
        for (JsonNode c : op.path("components")) {
            String type = c.get("type").asText();
            components.add(c.has("name") ? org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntity(type, c.get("name").asText())
                    : c.path("default").asBoolean(false) ? org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofDefaultEntity(type)
                    : org.apache.kafka.common.quota.ClientQuotaFilterComponent.ofEntityType(type));
        }
        var filter = op.path("strict").asBoolean(false) ? org.apache.kafka.common.quota.ClientQuotaFilter.containsOnly(components)
                : org.apache.kafka.common.quota.ClientQuotaFilter.contains(components);
        ObjectNode r = JSON.objectNode();
        for (var entry : await(admin.describeClientQuotas(filter).entities()).entrySet()) {
            ObjectNode values = r.putObject(quotaEntityName(entry.getKey()));
            new TreeMap<>(entry.getValue()).forEach(values::put);
        }
        return r;
    }

    /** Run OPs in order into `results` ({"op", "result"} or {"op", "error"} each); the failures, described. */
    private static List<String> runAdminOps(Admin admin, JsonNode opList, ArrayNode results) {
        Map<String, AdminOp> ops = adminOps();
        List<String> failures = new ArrayList<>();
        for (JsonNode op : opList) {
            String name = op.path("op").asText();
            ObjectNode entry = results.addObject();
            entry.put("op", name);
            AdminOp fn = ops.get(name);
            try {
                if (fn == null) {
                    throw new IllegalArgumentException("unknown admin op '" + name + "' (known: "
                            + new TreeSet<>(ops.keySet()) + ")");
                }
                entry.set("result", fn.run(admin, op));
            } catch (Exception e) {
                entry.set("error", error(e));
                failures.add(name + ": " + describe(e));
            }
        }
        return failures;
    }

    private static JsonNode alterUserScramCredentials(Admin admin, JsonNode op) throws Exception {
        List<UserScramCredentialAlteration> alterations = new ArrayList<>();
        for (JsonNode u : op.path("upsert")) {
            alterations.add(new UserScramCredentialUpsertion(u.get("user").asText(), new ScramCredentialInfo(
                    ScramMechanism.fromMechanismName(u.get("mechanism").asText()), u.path("iterations").asInt(4096)),
                    u.get("password").asText()));
        }
        for (JsonNode d : op.path("delete")) {
            alterations.add(new UserScramCredentialDeletion(d.get("user").asText(),
                    ScramMechanism.fromMechanismName(d.get("mechanism").asText())));
        }
        ObjectNode r = JSON.objectNode();
        for (Map.Entry<String, KafkaFuture<Void>> e
                : new TreeMap<>(admin.alterUserScramCredentials(alterations).values()).entrySet()) {
            try {
                await(e.getValue());
                r.put(e.getKey(), "ok");
            } catch (Exception ex) {
                r.set(e.getKey(), error(ex));
            }
        }
        return r;
    }

    private static JsonNode describeUserScramCredentials(Admin admin, JsonNode op) throws Exception {
        List<String> wanted = new ArrayList<>();
        op.path("users").forEach(u -> wanted.add(u.asText()));
        DescribeUserScramCredentialsResult res = op.has("users")
                ? admin.describeUserScramCredentials(wanted) : admin.describeUserScramCredentials();
        List<String> users = op.has("users") ? wanted : new ArrayList<>(new TreeSet<>(await(res.users())));
        ObjectNode r = JSON.objectNode();
        for (String user : users) {
            try {
                UserScramCredentialsDescription d = await(res.description(user));
                ArrayNode infos = r.putArray(user);
                for (ScramCredentialInfo info : d.credentialInfos()) {
                    ObjectNode o = infos.addObject();
                    o.put("mechanism", info.mechanism().mechanismName());
                    o.put("iterations", info.iterations());
                }
            } catch (Exception ex) {
                r.set(user, error(ex));
            }
        }
        return r;
    }

    private static JsonNode createTopics(Admin admin, JsonNode op) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (JsonNode t : op.path("topics")) {
            Map<String, String> configs = new LinkedHashMap<>();
            t.path("configs").properties().forEach(e -> configs.put(e.getKey(), e.getValue().asText()));
            topics.add(new NewTopic(t.get("name").asText(), Optional.of(t.path("partitions").asInt(1)),
                    Optional.of((short) t.path("replication_factor").asInt(1))).configs(configs));
        }
        CreateTopicsResult created = admin.createTopics(topics,
                new CreateTopicsOptions().validateOnly(op.path("validate_only").asBoolean(false)));
        ObjectNode r = JSON.objectNode();
        for (NewTopic t : topics) {
            ObjectNode o = r.putObject(t.name());
            try {
                await(created.values().get(t.name()));
                o.put("topic_id", String.valueOf(await(created.topicId(t.name()))));
                o.put("partitions", await(created.numPartitions(t.name())));
                o.put("replication_factor", await(created.replicationFactor(t.name())));
                ObjectNode configs = o.putObject("configs");
                for (ConfigEntry e : await(created.config(t.name())).entries()) {
                    configs.put(e.name(), e.value());
                }
            } catch (ExecutionException e) {
                o.set("error", error(e));
            }
        }
        return r;
    }

    private static ObjectNode topic(TopicDescription d) {
        ObjectNode o = JSON.objectNode();
        o.put("name", d.name());
        o.put("topic_id", String.valueOf(d.topicId()));
        o.put("internal", d.isInternal());
        ArrayNode ps = o.putArray("partitions");
        for (TopicPartitionInfo info : d.partitions()) {
            ObjectNode p = ps.addObject();
            p.put("partition", info.partition());
            p.put("leader", info.leader() == null ? -1 : info.leader().id());
            ArrayNode replicas = p.putArray("replicas");
            info.replicas().forEach(n -> replicas.add(n.id()));
            ArrayNode isr = p.putArray("isr");
            info.isr().forEach(n -> isr.add(n.id()));
        }
        return o;
    }

    private static JsonNode describeTopics(Admin admin, JsonNode op) throws Exception {
        List<String> names = new ArrayList<>();
        op.path("names").forEach(n -> names.add(n.asText()));
        ObjectNode r = JSON.objectNode();
        ObjectNode byName = r.putObject("by_name");
        DescribeTopicsResult described = admin.describeTopics(TopicCollection.ofTopicNames(names));
        List<Uuid> ids = new ArrayList<>();
        for (Map.Entry<String, KafkaFuture<TopicDescription>> e : described.topicNameValues().entrySet()) {
            try {
                TopicDescription d = await(e.getValue());
                byName.set(e.getKey(), topic(d));
                ids.add(d.topicId());
            } catch (ExecutionException ex) {
                byName.putObject(e.getKey()).set("error", error(ex));
            }
        }
        if (op.path("by_id").asBoolean(true) && !ids.isEmpty()) {
            ObjectNode byId = r.putObject("by_id");
            DescribeTopicsResult again = admin.describeTopics(TopicCollection.ofTopicIds(ids));
            for (Map.Entry<Uuid, KafkaFuture<TopicDescription>> e : again.topicIdValues().entrySet()) {
                try {
                    byId.set(e.getKey().toString(), topic(await(e.getValue())));
                } catch (ExecutionException ex) {
                    byId.putObject(e.getKey().toString()).set("error", error(ex));
                }
            }
        }
        return r;
    }

    private static OffsetSpec offsetSpec(JsonNode s) {
        if (s.isNumber()) {
            return OffsetSpec.forTimestamp(s.asLong());
        }
        return switch (s.asText()) {
            case "earliest" -> OffsetSpec.earliest();
            case "latest" -> OffsetSpec.latest();
            case "max_timestamp" -> OffsetSpec.maxTimestamp();
            case "earliest_local" -> OffsetSpec.earliestLocal();
            case "latest_tiered" -> OffsetSpec.latestTiered();
            default -> throw new IllegalArgumentException("unknown offset spec " + s);
        };
    }

    private static JsonNode listOffsets(Admin admin, JsonNode op) throws Exception {
        String topic = required(op, "topic");
        ListOffsetsOptions options = op.hasNonNull("isolation_level")
                ? new ListOffsetsOptions(IsolationLevel.valueOf(op.get("isolation_level").asText().toUpperCase()))
                : new ListOffsetsOptions();
        ObjectNode r = JSON.objectNode();
        JsonNode specs = op.has("specs") ? op.get("specs") : MAPPER.readTree("[\"earliest\",\"latest\"]");
        for (JsonNode s : specs) {
            Map<TopicPartition, OffsetSpec> request = new LinkedHashMap<>();
            for (int partition : partitions(op)) {
                request.put(new TopicPartition(topic, partition), offsetSpec(s));
            }
            ListOffsetsResult listed = admin.listOffsets(request, options);
            ObjectNode perSpec = r.putObject(s.asText());
            for (TopicPartition tp : request.keySet()) {
                ObjectNode o = perSpec.putObject(String.valueOf(tp.partition()));
                try {
                    ListOffsetsResult.ListOffsetsResultInfo info = await(listed.partitionResult(tp));
                    o.put("offset", info.offset());
                    o.put("timestamp", info.timestamp());
                    if (info.leaderEpoch().isPresent()) {
                        o.put("leader_epoch", info.leaderEpoch().get());
                    } else {
                        o.putNull("leader_epoch");
                    }
                } catch (ExecutionException e) {
                    o.set("error", error(e));
                }
            }
        }
        return r;
    }

    private static JsonNode deleteRecords(Admin admin, JsonNode op) throws Exception {
        String topic = required(op, "topic");
        Map<TopicPartition, RecordsToDelete> request = new LinkedHashMap<>();
        op.path("offsets").properties().forEach(e -> request.put(
                new TopicPartition(topic, Integer.parseInt(e.getKey())),
                RecordsToDelete.beforeOffset(e.getValue().asLong())));
        DeleteRecordsResult deleted = admin.deleteRecords(request);
        ObjectNode r = JSON.objectNode();
        for (Map.Entry<TopicPartition, KafkaFuture<org.apache.kafka.clients.admin.DeletedRecords>> e
                : deleted.lowWatermarks().entrySet()) {
            ObjectNode o = r.putObject(String.valueOf(e.getKey().partition()));
            try {
                o.put("low_watermark", await(e.getValue()).lowWatermark());
            } catch (ExecutionException ex) {
                o.set("error", error(ex));
            }
        }
        return r;
    }

    private static JsonNode describeConfigs(Admin admin, JsonNode op) throws Exception {
        List<ConfigResource> resources = new ArrayList<>();
        for (JsonNode res : op.path("resources")) {
            ConfigResource.Type type = switch (res.path("type").asText()) {
                case "topic" -> ConfigResource.Type.TOPIC;
                case "broker" -> ConfigResource.Type.BROKER;
                case "broker_logger" -> ConfigResource.Type.BROKER_LOGGER;
                case "group" -> ConfigResource.Type.GROUP;
                default -> throw new IllegalArgumentException("unknown config resource type " + res.path("type"));
            };
            resources.add(new ConfigResource(type, res.path("name").asText()));
        }
        boolean synonyms = op.path("synonyms").asBoolean(false);
        Map<ConfigResource, KafkaFuture<Config>> described = admin.describeConfigs(resources,
                new DescribeConfigsOptions().includeSynonyms(synonyms)).values();
        ObjectNode r = JSON.objectNode();
        for (ConfigResource res : resources) {
            ObjectNode o = r.putObject(res.type().name().toLowerCase() + ":" + res.name());
            try {
                Collection<ConfigEntry> entries = await(described.get(res)).entries();
                entries.stream().sorted((a, b) -> a.name().compareTo(b.name())).forEach(e -> {
                    ObjectNode c = o.putObject(e.name());
                    c.put("value", e.value());
                    c.put("source", e.source().name());
                    c.put("read_only", e.isReadOnly());
                    c.put("sensitive", e.isSensitive());
                    c.put("default", e.isDefault());
                    c.put("type", e.type().name());
                    ArrayNode syn = c.putArray("synonyms");
                    for (ConfigEntry.ConfigSynonym s : e.synonyms()) {
                        ObjectNode so = syn.addObject();
                        so.put("name", s.name());
                        so.put("value", s.value());
                        so.put("source", s.source().name());
                    }
                });
            } catch (ExecutionException ex) {
                o.removeAll();
                o.set("error", error(ex));
            }
        }
        return r;
    }

    private static ObjectNode node(Node n) {
        ObjectNode o = JSON.objectNode();
        if (n == null) {
            return o;
        }
        o.put("id", n.id());
        o.put("host", n.host());
        o.put("port", n.port());
        o.put("rack", n.rack());
        return o;
    }

    private static JsonNode describeCluster(Admin admin, JsonNode op) throws Exception {
        DescribeClusterResult d = admin.describeCluster();
        ObjectNode r = JSON.objectNode();
        r.put("cluster_id", await(d.clusterId()));
        r.set("controller", node(await(d.controller())));
        ArrayNode nodes = r.putArray("nodes");
        await(d.nodes()).stream().sorted((a, b) -> Integer.compare(a.id(), b.id())).forEach(n -> nodes.add(node(n)));
        return r;
    }

    // -- admin: cluster operations -----------------------------------------------------------------------------------

    /** "topic:partition" -> TopicPartition (the topic may itself hold colons). */
    private static TopicPartition topicPartition(String tp) {
        int colon = tp.lastIndexOf(':');
        return new TopicPartition(tp.substring(0, colon), Integer.parseInt(tp.substring(colon + 1)));
    }

    private static String tpName(TopicPartition tp) {
        return tp.topic() + ":" + tp.partition();
    }

    /** "ok" when the future completes, else the error. */
    private static JsonNode outcome(KafkaFuture<?> future) {
        try {
            await(future);
            return JSON.textNode("ok");
        } catch (Exception ex) {
            return error(ex);
        }
    }

    private static JsonNode describeLogDirs(Admin admin, JsonNode op) throws Exception {
        List<Integer> brokers = new ArrayList<>();
        op.path("brokers").forEach(b -> brokers.add(b.asInt()));
        ObjectNode r = JSON.objectNode();
        for (var broker : await(admin.describeLogDirs(brokers).allDescriptions()).entrySet()) {
            ArrayNode dirs = r.putArray(String.valueOf(broker.getKey()));
            for (var dir : new TreeMap<>(broker.getValue()).entrySet()) {
                logDirView(dirs.addObject(), dir.getKey(), dir.getValue());
            }
        }
        return r;
    }

    private static void logDirView(ObjectNode d, String path, org.apache.kafka.clients.admin.LogDirDescription desc) {
        d.put("path", path);
        if (desc.error() == null) {
            d.putNull("error");
        } else {
            d.set("error", error(desc.error()));
        }
        ObjectNode replicas = d.putObject("replicas");
        new TreeMap<String, org.apache.kafka.clients.admin.ReplicaInfo>(desc.replicaInfos().entrySet().stream()
                .collect(java.util.stream.Collectors.toMap(e -> tpName(e.getKey()), Map.Entry::getValue)))
            .forEach((tp, info) -> {
                ObjectNode i = replicas.putObject(tp);
                i.put("size", info.size());
                i.put("offset_lag", info.offsetLag());
                i.put("future", info.isFuture());
            });
        d.put("total_known", desc.totalBytes().isPresent() && desc.totalBytes().getAsLong() > 0);
        d.put("usable_known", desc.usableBytes().isPresent() && desc.usableBytes().getAsLong() >= 0);
        d.put("cordoned", desc.isCordoned());
    }

    private static JsonNode alterReplicaLogDirs(Admin admin, JsonNode op) throws Exception {
        Map<org.apache.kafka.common.TopicPartitionReplica, String> moves = new java.util.LinkedHashMap<>();
        for (JsonNode m : op.path("replicas")) {
            TopicPartition tp = topicPartition(m.path("tp").asText());
            int broker = m.path("broker").asInt();
            String dir = m.hasNonNull("dir") ? m.get("dir").asText()
                : await(admin.describeLogDirs(List.of(broker)).allDescriptions()).get(broker).keySet().iterator().next();
            moves.put(new org.apache.kafka.common.TopicPartitionReplica(tp.topic(), tp.partition(), broker), dir);
        }
        ObjectNode r = JSON.objectNode();
        admin.alterReplicaLogDirs(moves).values().forEach((replica, future) ->
            r.set(replica.topic() + ":" + replica.partition() + "@" + replica.brokerId(), outcome(future)));
        return r;
    }

    private static JsonNode electLeaders(Admin admin, JsonNode op) throws Exception {
        Set<TopicPartition> partitions = null;
        if (op.has("partitions")) {
            partitions = new java.util.LinkedHashSet<>();
            for (JsonNode tp : op.get("partitions")) {
                partitions.add(topicPartition(tp.asText()));
            }
        }
        var result = admin.electLeaders(org.apache.kafka.common.ElectionType.valueOf(op.path("type").asText("PREFERRED")),
                partitions);
        ObjectNode r = JSON.objectNode();
        for (var e : new TreeMap<String, Optional<Throwable>>(await(result.partitions()).entrySet().stream()
                .collect(java.util.stream.Collectors.toMap(e -> tpName(e.getKey()), Map.Entry::getValue))).entrySet()) {
            r.set(e.getKey(), e.getValue().isPresent() ? error(e.getValue().get()) : JSON.textNode("ok"));
        }
        return r;
    }

    private static JsonNode alterPartitionReassignments(Admin admin, JsonNode op) throws Exception {
        Map<TopicPartition, Optional<org.apache.kafka.clients.admin.NewPartitionReassignment>> wanted =
            new java.util.LinkedHashMap<>();
        op.path("reassignments").properties().forEach(e -> {
            Optional<org.apache.kafka.clients.admin.NewPartitionReassignment> target = Optional.empty();
            if (!e.getValue().isNull()) {
                List<Integer> replicas = new ArrayList<>();
                e.getValue().forEach(b -> replicas.add(b.asInt()));
                target = Optional.of(new org.apache.kafka.clients.admin.NewPartitionReassignment(replicas));
            }
            wanted.put(topicPartition(e.getKey()), target);
        });
        ObjectNode r = JSON.objectNode();
        admin.alterPartitionReassignments(wanted).values().forEach((tp, future) -> r.set(tpName(tp), outcome(future)));
        return r;
    }

    private static JsonNode listPartitionReassignments(Admin admin, JsonNode op) throws Exception {
        var result = op.has("partitions")
            ? admin.listPartitionReassignments(java.util.stream.StreamSupport.stream(op.get("partitions").spliterator(), false)
                .map(tp -> topicPartition(tp.asText())).collect(java.util.stream.Collectors.toSet()))
            : admin.listPartitionReassignments();
        ObjectNode r = JSON.objectNode();
        for (var e : await(result.reassignments()).entrySet()) {
            ObjectNode p = r.putObject(tpName(e.getKey()));
            e.getValue().replicas().forEach(p.putArray("replicas")::add);
            e.getValue().addingReplicas().forEach(p.putArray("adding")::add);
            e.getValue().removingReplicas().forEach(p.putArray("removing")::add);
        }
        return r;
    }

    private static ObjectNode replicaState(org.apache.kafka.clients.admin.QuorumInfo.ReplicaState s) {
        ObjectNode o = JSON.objectNode();
        o.put("id", s.replicaId());
        o.put("directory_id", s.replicaDirectoryId().toString());
        o.put("log_end_offset", s.logEndOffset());
        if (s.lastFetchTimestamp().isPresent()) {
            o.put("last_fetch_ms", s.lastFetchTimestamp().getAsLong());
        } else {
            o.putNull("last_fetch_ms");
        }
        if (s.lastCaughtUpTimestamp().isPresent()) {
            o.put("last_caught_up_ms", s.lastCaughtUpTimestamp().getAsLong());
        } else {
            o.putNull("last_caught_up_ms");
        }
        return o;
    }

    private static JsonNode describeMetadataQuorum(Admin admin, JsonNode op) throws Exception {
        var quorum = await(admin.describeMetadataQuorum().quorumInfo());
        ObjectNode r = JSON.objectNode();
        r.put("leader_id", quorum.leaderId());
        r.put("leader_epoch", quorum.leaderEpoch());
        r.put("high_watermark", quorum.highWatermark());
        ArrayNode voters = r.putArray("voters");
        quorum.voters().forEach(v -> voters.add(replicaState(v)));
        ArrayNode observers = r.putArray("observers");
        quorum.observers().forEach(v -> observers.add(replicaState(v)));
        ObjectNode nodes = r.putObject("nodes");
        new TreeMap<>(quorum.nodes()).forEach((id, n) -> {
            ArrayNode endpoints = nodes.putArray(String.valueOf(id));
            n.endpoints().forEach(e -> endpoints.addObject().put("listener", e.listener()).put("host", e.host())
                .put("port", e.port()));
        });
        return r;
    }

    private static JsonNode describeFeatures(Admin admin, JsonNode op) throws Exception {
        var features = await(admin.describeFeatures().featureMetadata());
        ObjectNode r = JSON.objectNode();
        ObjectNode finalized = r.putObject("finalized");
        new TreeMap<>(features.finalizedFeatures()).forEach((name, range) ->
            finalized.putArray(name).add(range.minVersionLevel()).add(range.maxVersionLevel()));
        ObjectNode supported = r.putObject("supported");
        new TreeMap<>(features.supportedFeatures()).forEach((name, range) ->
            supported.putArray(name).add(range.minVersion()).add(range.maxVersion()));
        r.put("epoch_known", features.finalizedFeaturesEpoch().isPresent());
        return r;
    }

    private static JsonNode updateFeatures(Admin admin, JsonNode op) throws Exception {
        Map<String, org.apache.kafka.clients.admin.FeatureUpdate> updates = new java.util.LinkedHashMap<>();
        op.path("updates").properties().forEach(e -> updates.put(e.getKey(),
            new org.apache.kafka.clients.admin.FeatureUpdate((short) e.getValue().path("level").asInt(),
                org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType.valueOf(e.getValue().path("type").asText("UPGRADE")))));
        var result = admin.updateFeatures(updates,
            new org.apache.kafka.clients.admin.UpdateFeaturesOptions().validateOnly(op.path("validate_only").asBoolean(false)));
        ObjectNode r = JSON.objectNode();
        new TreeMap<>(result.values()).forEach((name, future) -> r.set(name, outcome(future)));
        r.set("all", outcome(result.all()));
        return r;
    }

    private static JsonNode listConfigResources(Admin admin, JsonNode op) throws Exception {
        Set<ConfigResource.Type> types = new java.util.HashSet<>();
        op.path("types").forEach(t -> types.add(ConfigResource.Type.valueOf(t.asText())));
        ObjectNode r = JSON.objectNode();
        ArrayNode resources = r.putArray("resources");
        await(admin.listConfigResources(types, new org.apache.kafka.clients.admin.ListConfigResourcesOptions()).all())
            .stream().map(c -> List.of(c.name(), c.type().name()))
            .sorted(Comparator.comparing((List<String> c) -> c.get(1)).thenComparing(c -> c.get(0)))
            .forEach(c -> resources.addArray().add(c.get(0)).add(c.get(1)));
        return r;
    }

    private static JsonNode addRaftVoter(Admin admin, JsonNode op) throws Exception {
        Set<org.apache.kafka.clients.admin.RaftVoterEndpoint> endpoints = new java.util.LinkedHashSet<>();
        for (JsonNode e : op.path("endpoints")) {
            endpoints.add(new org.apache.kafka.clients.admin.RaftVoterEndpoint(e.path("listener").asText(),
                e.path("host").asText(), e.path("port").asInt()));
        }
        Uuid directory = op.hasNonNull("directory_id") ? Uuid.fromString(op.get("directory_id").asText()) : Uuid.randomUuid();
        return outcome(admin.addRaftVoter(op.path("voter").asInt(), directory, endpoints).all());
    }

    // -- admin: ACLs -------------------------------------------------------------------------------------------------

    private static org.apache.kafka.common.acl.AclBindingFilter aclFilter(JsonNode f) {
        return new org.apache.kafka.common.acl.AclBindingFilter(
            new org.apache.kafka.common.resource.ResourcePatternFilter(
                org.apache.kafka.common.resource.ResourceType.valueOf(f.path("resource_type").asText("ANY")),
                f.hasNonNull("name") ? f.get("name").asText() : null,
                org.apache.kafka.common.resource.PatternType.valueOf(f.path("pattern_type").asText("ANY"))),
            new org.apache.kafka.common.acl.AccessControlEntryFilter(
                f.hasNonNull("principal") ? f.get("principal").asText() : null,
                f.hasNonNull("host") ? f.get("host").asText() : null,
                org.apache.kafka.common.acl.AclOperation.valueOf(f.path("operation").asText("ANY")),
                org.apache.kafka.common.acl.AclPermissionType.valueOf(f.path("permission").asText("ANY"))));
    }

    private static org.apache.kafka.common.acl.AclBinding aclBinding(JsonNode b) {
        return new org.apache.kafka.common.acl.AclBinding(
            new org.apache.kafka.common.resource.ResourcePattern(
                org.apache.kafka.common.resource.ResourceType.valueOf(b.path("resource_type").asText("TOPIC")),
                b.path("name").asText(),
                org.apache.kafka.common.resource.PatternType.valueOf(b.path("pattern_type").asText("LITERAL"))),
            new org.apache.kafka.common.acl.AccessControlEntry(b.path("principal").asText(), b.path("host").asText("*"),
                org.apache.kafka.common.acl.AclOperation.valueOf(b.path("operation").asText()),
                org.apache.kafka.common.acl.AclPermissionType.valueOf(b.path("permission").asText("ALLOW"))));
    }

    private static ObjectNode aclJson(org.apache.kafka.common.acl.AclBinding b) {
        ObjectNode o = JSON.objectNode();
        o.put("resource_type", b.pattern().resourceType().name());
        o.put("name", b.pattern().name());
        o.put("pattern_type", b.pattern().patternType().name());
        o.put("principal", b.entry().principal());
        o.put("host", b.entry().host());
        o.put("operation", b.entry().operation().name());
        o.put("permission", b.entry().permissionType().name());
        return o;
    }

    private static ArrayNode aclArray(java.util.Collection<org.apache.kafka.common.acl.AclBinding> bindings) {
        ArrayNode a = JSON.arrayNode();
        bindings.stream().map(ClientScenarios::aclJson).sorted((x, y) -> x.toString().compareTo(y.toString()))
            .forEach(a::add);
        return a;
    }

    private static JsonNode createAcls(Admin admin, JsonNode op) throws Exception {
        List<org.apache.kafka.common.acl.AclBinding> bindings = new ArrayList<>();
        op.path("bindings").forEach(b -> bindings.add(aclBinding(b)));
        Map<org.apache.kafka.common.acl.AclBinding, org.apache.kafka.common.KafkaFuture<Void>> results =
            admin.createAcls(bindings).values();
        ObjectNode r = JSON.objectNode();
        ArrayNode out = r.putArray("results");
        for (org.apache.kafka.common.acl.AclBinding b : bindings) {
            try {
                await(results.get(b));
                out.add("ok");
            } catch (ExecutionException e) {
                out.addObject().set("error", error(e));
            }
        }
        return r;
    }

    private static JsonNode describeAcls(Admin admin, JsonNode op) throws Exception {
        ObjectNode r = JSON.objectNode();
        try {
            r.set("bindings", aclArray(await(admin.describeAcls(aclFilter(op.path("filter"))).values())));
        } catch (ExecutionException e) {
            r.set("error", error(e));
        }
        return r;
    }

    private static JsonNode deleteAcls(Admin admin, JsonNode op) throws Exception {
        List<org.apache.kafka.common.acl.AclBindingFilter> filters = new ArrayList<>();
        op.path("filters").forEach(f -> filters.add(aclFilter(f)));
        var values = admin.deleteAcls(filters).values();
        ObjectNode r = JSON.objectNode();
        ArrayNode out = r.putArray("results");
        for (org.apache.kafka.common.acl.AclBindingFilter f : filters) {
            try {
                List<org.apache.kafka.common.acl.AclBinding> deleted = new ArrayList<>();
                for (var d : await(values.get(f)).values()) {
                    deleted.add(d.binding());
                }
                out.addObject().set("deleted", aclArray(deleted));
            } catch (ExecutionException e) {
                out.addObject().set("error", error(e));
            }
        }
        return r;
    }

    // -- admin: consumer groups -------------------------------------------------------------------------------------

    private static Set<GroupState> groupStates(JsonNode op) {
        Set<GroupState> states = new java.util.HashSet<>();
        op.path("states").forEach(s -> states.add(GroupState.parse(s.asText())));
        return states;
    }

    private static Set<GroupType> groupTypes(JsonNode op) {
        Set<GroupType> types = new java.util.HashSet<>();
        op.path("types").forEach(t -> types.add(GroupType.parse(t.asText())));
        return types;
    }

    @SuppressWarnings({"deprecation", "removal"})  // listConsumerGroups: asked for by name; listGroups is its successor
    private static JsonNode listConsumerGroups(Admin admin, JsonNode op) throws Exception {
        ListConsumerGroupsOptions options = new ListConsumerGroupsOptions();
        if (op.has("states")) {
            options.inGroupStates(groupStates(op));
        }
        if (op.has("types")) {
            options.withTypes(groupTypes(op));
        }
        ObjectNode r = JSON.objectNode();
        ArrayNode groups = r.putArray("groups");
        Collection<ConsumerGroupListing> listed = await(admin.listConsumerGroups(options).all());
        listed.stream().sorted(Comparator.comparing(ConsumerGroupListing::groupId)).forEach(g -> {
            ObjectNode o = groups.addObject();
            o.put("group_id", g.groupId());
            o.put("state", g.groupState().map(GroupState::toString).orElse(null));
            o.put("type", g.type().map(GroupType::toString).orElse(null));
            o.put("simple", g.isSimpleConsumerGroup());
        });
        return r;
    }

    private static JsonNode listGroups(Admin admin, JsonNode op) throws Exception {
        ListGroupsOptions options = new ListGroupsOptions();
        if (op.has("states")) {
            options.inGroupStates(groupStates(op));
        }
        if (op.has("types")) {
            options.withTypes(groupTypes(op));
        }
        if (op.has("protocol_types")) {
            Set<String> protocolTypes = new java.util.HashSet<>();
            op.get("protocol_types").forEach(t -> protocolTypes.add(t.asText()));
            options.withProtocolTypes(protocolTypes);
        }
        ObjectNode r = JSON.objectNode();
        ArrayNode groups = r.putArray("groups");
        await(admin.listGroups(options).all()).stream().sorted(Comparator.comparing(GroupListing::groupId))
                .forEach(g -> {
                    ObjectNode o = groups.addObject();
                    o.put("group_id", g.groupId());
                    o.put("state", g.groupState().map(GroupState::toString).orElse(null));
                    o.put("type", g.type().map(GroupType::toString).orElse(null));
                    o.put("protocol", g.protocol());
                });
        return r;
    }

    private static ObjectNode groupDescription(ConsumerGroupDescription d) {
        ObjectNode o = JSON.objectNode();
        o.put("group_id", d.groupId());
        o.put("simple", d.isSimpleConsumerGroup());
        o.put("state", d.groupState() == null ? null : d.groupState().toString());
        o.put("type", d.type() == null ? null : d.type().toString());
        o.put("assignor", d.partitionAssignor());
        o.set("coordinator", node(d.coordinator()));
        if (d.groupEpoch().isPresent()) {
            o.put("group_epoch", d.groupEpoch().get());
        } else {
            o.putNull("group_epoch");
        }
        if (d.targetAssignmentEpoch().isPresent()) {
            o.put("target_assignment_epoch", d.targetAssignmentEpoch().get());
        } else {
            o.putNull("target_assignment_epoch");
        }
        ArrayNode members = o.putArray("members");
        d.members().stream()
                .sorted(Comparator.comparing(MemberDescription::clientId).thenComparing(MemberDescription::consumerId))
                .forEach(m -> {
                    ObjectNode mo = members.addObject();
                    mo.put("member_id", m.consumerId());
                    mo.put("instance_id", m.groupInstanceId().orElse(null));
                    mo.put("client_id", m.clientId());
                    mo.put("host", m.host());
                    mo.set("assignment", tps(m.assignment().topicPartitions()));
                    Optional<MemberAssignment> target = m.targetAssignment();
                    if (target.isPresent()) {
                        mo.set("target_assignment", tps(target.get().topicPartitions()));
                    } else {
                        mo.putNull("target_assignment");
                    }
                    if (m.memberEpoch().isPresent()) {
                        mo.put("member_epoch", m.memberEpoch().get());
                    } else {
                        mo.putNull("member_epoch");
                    }
                    if (m.upgraded().isPresent()) {
                        mo.put("upgraded", m.upgraded().get());
                    } else {
                        mo.putNull("upgraded");
                    }
                });
        return o;
    }

    private static JsonNode describeConsumerGroups(Admin admin, JsonNode op) throws Exception {
        List<String> names = new ArrayList<>();
        op.path("groups").forEach(g -> names.add(g.asText()));
        String untilState = op.hasNonNull("until_state") ? op.get("until_state").asText() : null;
        long deadline = System.currentTimeMillis() + op.path("timeout_ms").asLong(15_000);
        while (true) {
            ObjectNode r = JSON.objectNode();
            boolean settled = true;
            Map<String, KafkaFuture<ConsumerGroupDescription>> described =
                    admin.describeConsumerGroups(names).describedGroups();
            for (String name : names) {
                try {
                    ObjectNode d = groupDescription(await(described.get(name)));
                    r.set(name, d);
                    settled &= untilState == null || untilState.equalsIgnoreCase(d.path("state").asText());
                } catch (ExecutionException e) {
                    r.putObject(name).set("error", error(e));
                    settled = untilState == null;
                }
            }
            if (settled) {
                return r;
            }
            if (System.currentTimeMillis() >= deadline) {
                throw new IllegalStateException("not every group reached state " + untilState + " in "
                        + op.path("timeout_ms").asLong(15_000) + " ms; last: " + r);
            }
            Thread.sleep(100);  // the retry interval of a deadline loop
        }
    }

    private static Map<TopicPartition, Long> topicOffsets(JsonNode node) {
        Map<TopicPartition, Long> out = new LinkedHashMap<>();
        node.properties().forEach(t -> t.getValue().properties().forEach(p -> out.put(
                new TopicPartition(t.getKey(), Integer.parseInt(p.getKey())), p.getValue().asLong())));
        return out;
    }

    private static List<TopicPartition> topicPartitions(JsonNode node) {
        List<TopicPartition> out = new ArrayList<>();
        node.properties().forEach(t -> t.getValue().forEach(p -> out.add(new TopicPartition(t.getKey(), p.asInt()))));
        return out;
    }

    private static JsonNode listConsumerGroupOffsets(Admin admin, JsonNode op) throws Exception {
        String group = required(op, "group");
        ListConsumerGroupOffsetsSpec spec = new ListConsumerGroupOffsetsSpec();
        if (op.hasNonNull("partitions")) {
            spec.topicPartitions(topicPartitions(op.get("partitions")));
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = await(admin.listConsumerGroupOffsets(Map.of(group, spec))
                .partitionsToOffsetAndMetadata(group));
        ObjectNode r = JSON.objectNode();
        Map<TopicPartition, OffsetAndMetadata> sorted = new TreeMap<>(TP_ORDER);
        sorted.putAll(offsets);
        sorted.forEach((tp, om) -> {
            ObjectNode topic = r.withObjectProperty(tp.topic());
            if (om == null) {
                topic.putNull(String.valueOf(tp.partition()));
            } else {
                ObjectNode o = topic.putObject(String.valueOf(tp.partition()));
                o.put("offset", om.offset());
                o.put("metadata", om.metadata());
                if (om.leaderEpoch().isPresent()) {
                    o.put("leader_epoch", om.leaderEpoch().get());
                } else {
                    o.putNull("leader_epoch");
                }
            }
        });
        return r;
    }

    private static ObjectNode partitionResults(Collection<TopicPartition> partitions,
            java.util.function.Function<TopicPartition, KafkaFuture<Void>> result, KafkaFuture<Void> all)
            throws Exception {
        ObjectNode r = JSON.objectNode();
        ObjectNode per = r.putObject("partitions");
        for (TopicPartition tp : partitions) {
            try {
                await(result.apply(tp));
                per.withObjectProperty(tp.topic()).put(String.valueOf(tp.partition()), "ok");
            } catch (ExecutionException e) {
                per.withObjectProperty(tp.topic()).putObject(String.valueOf(tp.partition())).set("error", error(e));
            }
        }
        try {
            await(all);
            r.put("all", "ok");
        } catch (ExecutionException e) {
            r.putObject("all").set("error", error(e));
        }
        return r;
    }

    private static JsonNode alterConsumerGroupOffsets(Admin admin, JsonNode op) throws Exception {
        String group = required(op, "group");
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        topicOffsets(op.path("offsets")).forEach((tp, o) -> offsets.put(tp, new OffsetAndMetadata(o)));
        AlterConsumerGroupOffsetsResult altered = admin.alterConsumerGroupOffsets(group, offsets);
        return partitionResults(offsets.keySet(), altered::partitionResult, altered.all());
    }

    private static JsonNode deleteConsumerGroupOffsets(Admin admin, JsonNode op) throws Exception {
        String group = required(op, "group");
        Set<TopicPartition> partitions = new java.util.LinkedHashSet<>(topicPartitions(op.path("partitions")));
        DeleteConsumerGroupOffsetsResult deleted = admin.deleteConsumerGroupOffsets(group, partitions);
        return partitionResults(partitions, deleted::partitionResult, deleted.all());
    }

    private static JsonNode deleteConsumerGroups(Admin admin, JsonNode op) throws Exception {
        List<String> names = new ArrayList<>();
        op.path("groups").forEach(g -> names.add(g.asText()));
        DeleteConsumerGroupsResult deleted = admin.deleteConsumerGroups(names);
        ObjectNode r = JSON.objectNode();
        for (String name : names) {
            try {
                await(deleted.deletedGroups().get(name));
                r.put(name, "ok");
            } catch (ExecutionException e) {
                r.putObject(name).set("error", error(e));
            }
        }
        return r;
    }

    // -- admin: transactions ----------------------------------------------------------------------------------------

    private static ObjectNode transactionDescription(TransactionDescription d) {
        ObjectNode o = JSON.objectNode();
        o.put("state", d.state().toString());
        o.put("producer_id", d.producerId());
        o.put("producer_epoch", d.producerEpoch());
        o.put("timeout_ms", d.transactionTimeoutMs());
        if (d.transactionStartTimeMs().isPresent()) {
            o.put("start_time_ms", d.transactionStartTimeMs().getAsLong());
        } else {
            o.putNull("start_time_ms");
        }
        o.put("coordinator", d.coordinatorId());
        o.set("partitions", tps(d.topicPartitions()));
        return o;
    }

    private static JsonNode describeTransactions(Admin admin, JsonNode op) throws Exception {
        List<String> ids = new ArrayList<>();
        op.path("ids").forEach(id -> ids.add(id.asText()));
        DescribeTransactionsResult described = admin.describeTransactions(ids);
        ObjectNode r = JSON.objectNode();
        for (String id : ids) {
            try {
                r.set(id, transactionDescription(await(described.description(id))));
            } catch (ExecutionException e) {
                r.putObject(id).set("error", error(e));
            }
        }
        return r;
    }

    private static JsonNode listTransactions(Admin admin, JsonNode op) throws Exception {
        ListTransactionsOptions options = new ListTransactionsOptions();
        if (op.has("states")) {
            Set<TransactionState> states = new java.util.HashSet<>();
            op.get("states").forEach(s -> states.add(TransactionState.parse(s.asText())));
            options.filterStates(states);
        }
        if (op.has("producer_ids") || op.has("producer_ids_of")) {
            Set<Long> ids = new java.util.HashSet<>();
            op.path("producer_ids").forEach(id -> ids.add(id.asLong()));
            List<String> of = new ArrayList<>();
            op.path("producer_ids_of").forEach(id -> of.add(id.asText()));
            if (!of.isEmpty()) {   // the producer ids these transactional ids have now
                for (TransactionDescription d : await(admin.describeTransactions(of).all()).values()) {
                    ids.add(d.producerId());
                }
            }
            options.filterProducerIds(ids);
        }
        if (op.hasNonNull("duration_ms")) {
            options.filterOnDuration(op.get("duration_ms").asLong());
        }
        if (op.hasNonNull("pattern")) {
            options.filterOnTransactionalIdPattern(op.get("pattern").asText());
        }
        ObjectNode r = JSON.objectNode();
        ArrayNode listed = r.putArray("transactions");
        await(admin.listTransactions(options).all()).stream()
                .sorted(Comparator.comparing(TransactionListing::transactionalId)).forEach(t -> {
                    ObjectNode o = listed.addObject();
                    o.put("transactional_id", t.transactionalId());
                    o.put("producer_id", t.producerId());
                    o.put("state", t.state().toString());
                });
        return r;
    }

    private static JsonNode describeProducers(Admin admin, JsonNode op) throws Exception {
        String topic = required(op, "topic");
        List<TopicPartition> tps = new ArrayList<>();
        for (int partition : partitions(op)) {
            tps.add(new TopicPartition(topic, partition));
        }
        DescribeProducersResult described = admin.describeProducers(tps);
        ObjectNode r = JSON.objectNode();
        for (TopicPartition tp : tps) {
            ObjectNode o = r.putObject(String.valueOf(tp.partition()));
            try {
                ArrayNode producers = o.putArray("producers");
                await(described.partitionResult(tp)).activeProducers().stream()
                        .sorted(Comparator.comparingLong(ProducerState::producerId)).forEach(ps -> {
                            ObjectNode po = producers.addObject();
                            po.put("producer_id", ps.producerId());
                            po.put("producer_epoch", ps.producerEpoch());
                            po.put("last_sequence", ps.lastSequence());
                            po.put("last_timestamp", ps.lastTimestamp());
                            if (ps.coordinatorEpoch().isPresent()) {
                                po.put("coordinator_epoch", ps.coordinatorEpoch().getAsInt());
                            } else {
                                po.putNull("coordinator_epoch");
                            }
                            if (ps.currentTransactionStartOffset().isPresent()) {
                                po.put("txn_start_offset", ps.currentTransactionStartOffset().getAsLong());
                            } else {
                                po.putNull("txn_start_offset");
                            }
                        });
            } catch (ExecutionException e) {
                o.removeAll();
                o.set("error", error(e));
            }
        }
        return r;
    }

    private static JsonNode fenceProducers(Admin admin, JsonNode op) throws Exception {
        List<String> ids = new ArrayList<>();
        op.path("ids").forEach(id -> ids.add(id.asText()));
        FenceProducersResult fenced = admin.fenceProducers(ids);
        ObjectNode r = JSON.objectNode();
        for (String id : ids) {
            ObjectNode o = r.putObject(id);
            try {
                await(fenced.fencedProducers().get(id));
                o.put("producer_id", await(fenced.producerId(id)));
                o.put("producer_epoch", await(fenced.epochId(id)));
            } catch (ExecutionException e) {
                o.removeAll();
                o.set("error", error(e));
            }
        }
        return r;
    }
}
