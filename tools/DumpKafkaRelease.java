/*
 * Prints, as JSON on stdout, what a broker of the Apache Kafka release on the classpath (its kafka-clients jar, and
 * for KRaft releases its kafka-server-common jar) advertises in ApiVersions:
 * - "apis": for each API its listener type serves (args[0]: BROKER for a KRaft broker, ZK_BROKER for a ZooKeeper
 *   one), its oldest version and its latest stable one (ApiKeys, as the release's ApiVersionsResponse builds it);
 * - "features" (KRaft only): each production feature's supported range and the level a freshly formatted cluster
 *   finalizes (Feature.defaultLevel / Features.defaultValue at MetadataVersion.LATEST_PRODUCTION), and
 *   metadata.version's range and that latest production level.
 * Reflection keeps one program working across the releases' APIs. Run by tools/import_kafka_releases.py.
 */

import java.lang.reflect.Method;
import java.util.List;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ApiKeys;
import java.util.Properties;

public class DumpKafkaRelease {
    public static void main(String[] args) throws Exception {
        ApiMessageType.ListenerType listener = ApiMessageType.ListenerType.valueOf(args[0]);
        Properties release = new Properties();     // what AppInfoParser reads, without its logging dependency
        release.load(ApiKeys.class.getResourceAsStream("/kafka/kafka-version.properties"));
        StringBuilder out = new StringBuilder("{\"kafka_version\": \"" + release.getProperty("version") + "\",\n \"listener\": \""
            + listener + "\",\n \"apis\": {");
        String sep = "";
        for (ApiKeys key : ApiKeys.values()) {
            if (!key.messageType.listeners().contains(listener)) continue;
            short oldest = key.oldestVersion();
            short latest;
            try {
                Method stable = ApiKeys.class.getMethod("latestVersion", boolean.class);
                latest = (short) stable.invoke(key, false);
            } catch (NoSuchMethodException e) {
                latest = key.latestVersion();
            }
            if (latest < oldest) continue;     // only unstable versions: not advertised
            out.append(sep).append("\"").append(key.id).append("\": [").append(oldest).append(", ").append(latest).append("]");
            sep = ", ";
        }
        out.append("},\n \"features\": {");
        if (listener == ApiMessageType.ListenerType.BROKER) {
            Class<?> mv = Class.forName("org.apache.kafka.server.common.MetadataVersion");
            Object latest = mv.getField("LATEST_PRODUCTION").get(null);
            Object minimum;
            try {
                minimum = mv.getField("MINIMUM_VERSION").get(null);
            } catch (NoSuchFieldException e) {
                minimum = mv.getField("MINIMUM_KRAFT_VERSION").get(null);
            }
            Method level = mv.getMethod("featureLevel");
            out.append("\"metadata.version\": {\"supported\": [").append(level.invoke(minimum)).append(", ")
                .append(level.invoke(latest)).append("], \"finalized\": ").append(level.invoke(latest)).append("}");
            Class<?> feature;
            try {
                feature = Class.forName("org.apache.kafka.server.common.Feature");
            } catch (ClassNotFoundException e) {
                feature = Class.forName("org.apache.kafka.server.common.Features");
            }
            for (Object f : (List<?>) feature.getField("PRODUCTION_FEATURES").get(null)) {
                short initial;
                try {
                    initial = (short) feature.getMethod("defaultLevel", mv).invoke(f, latest);
                } catch (NoSuchMethodException e) {
                    initial = (short) feature.getMethod("defaultValue", mv).invoke(f, latest);
                }
                short max = (short) feature.getMethod("latestProduction").invoke(f);
                out.append(", \"").append(feature.getMethod("featureName").invoke(f)).append("\": {\"supported\": [0, ")
                    .append(max).append("], \"finalized\": ").append(initial).append("}");
            }
        }
        System.out.println(out.append("}}"));
    }
}
