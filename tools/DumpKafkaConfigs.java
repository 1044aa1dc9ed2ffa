/*
 * Prints, as JSON on stdout, the facts of Apache Kafka's broker, topic and group configs, read from Kafka's own
 * ConfigDefs on its classpath: name, type, default (as DescribeConfigs writes it), validator (its class, its text and
 * its parameters), internal or not, and for broker configs how they update dynamically and their synonyms.
 * Run by tools/import_kafka_configs.py against the jars of `make kafka`; no documentation text is copied.
 */

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.coordinator.group.GroupConfig;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.ConfigSynonym;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.server.config.ServerTopicConfigSynonyms;
import org.apache.kafka.storage.internals.log.LogConfig;

public class DumpKafkaConfigs {
    static final JsonNodeFactory J = JsonNodeFactory.instance;

    public static void main(String[] args) throws Exception {
        ObjectNode out = J.objectNode();
        out.put("kafka_version", AppInfoParser.getVersion());
        Map<String, String> modes = DynamicBrokerConfig.dynamicConfigUpdateModes();
        ArrayNode broker = out.putArray("broker");
        for (ConfigDef.ConfigKey key : sorted(AbstractKafkaConfig.CONFIG_DEF.configKeys())) {
            ObjectNode node = describe(key);
            node.put("dynamic", modes.getOrDefault(key.name, "read-only"));
            ArrayNode synonyms = node.putArray("synonyms");
            for (String s : DynamicBrokerConfig.brokerConfigSynonyms(key.name, true)) synonyms.add(s);
            broker.add(node);
        }
        ArrayNode topic = out.putArray("topic");
        for (ConfigDef.ConfigKey key : sorted(LogConfig.configKeys())) {
            ObjectNode node = describe(key);
            ArrayNode synonyms = node.putArray("synonyms");
            List<ConfigSynonym> list = ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS.get(key.name);
            if (list != null) for (ConfigSynonym s : list) synonyms.add(s.name());
            topic.add(node);
        }
        ArrayNode group = out.putArray("group");
        for (ConfigDef.ConfigKey key : sorted(GroupConfig.CONFIG_DEF.configKeys())) {
            ObjectNode node = describe(key);
            node.put("broker_synonym", GroupConfig.ALL_GROUP_CONFIG_SYNONYMS.getOrDefault(key.name,
                java.util.Optional.empty()).orElse(null));
            group.add(node);
        }
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(System.out, out);
    }

    static Collection<ConfigDef.ConfigKey> sorted(Map<String, ConfigDef.ConfigKey> keys) {
        return new TreeMap<>(keys).values();
    }

    static ObjectNode describe(ConfigDef.ConfigKey key) throws Exception {
        ObjectNode node = J.objectNode();
        node.put("name", key.name);
        node.put("type", key.type.name());
        boolean hasDefault = key.hasDefault();
        node.put("has_default", hasDefault);
        if (hasDefault && key.defaultValue != null) {
            node.put("default", ConfigDef.convertToString(key.defaultValue, key.type));
        } else {
            node.putNull("default");
        }
        node.put("internal", key.internalConfig);
        node.put("importance", key.importance == null ? null : key.importance.name());
        node.set("validator", validator(key.validator));
        return node;
    }

    static ObjectNode validator(Object v) throws Exception {
        if (v == null) return null;
        ObjectNode node = J.objectNode();
        node.put("class", v.getClass().getSimpleName().isEmpty() ? v.getClass().getName() : v.getClass().getSimpleName());
        node.put("text", String.valueOf(v));
        for (Class<?> c = v.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.isSynthetic()) continue;
                f.setAccessible(true);
                Object value = f.get(v);
                if (value == null) node.putNull(f.getName());
                else if (value instanceof Number || value instanceof Boolean || value instanceof String)
                    node.put(f.getName(), String.valueOf(value));
                else if (value instanceof ConfigDef.Validator) node.set(f.getName(), validator(value));
                else if (value instanceof Collection<?> items) {
                    ArrayNode arr = node.putArray(f.getName());
                    for (Object item : items) {
                        if (item instanceof ConfigDef.Validator) arr.add(validator(item));
                        else arr.add(String.valueOf(item));
                    }
                }
            }
        }
        return node;
    }
}
