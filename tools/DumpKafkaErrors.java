/*
 * Prints, as JSON on stdout, Apache Kafka's protocol errors (org.apache.kafka.common.protocol.Errors): each code
 * with its name, the default message its exception carries (what a response says when Kafka has nothing more
 * specific) and whether it is retriable. Run by tools/import_kafka_facts.py against the jars of `make kafka`.
 */

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.AppInfoParser;

public class DumpKafkaErrors {
    public static void main(String[] args) throws Exception {
        JsonNodeFactory j = JsonNodeFactory.instance;
        ObjectNode out = j.objectNode();
        out.put("kafka_version", AppInfoParser.getVersion());
        ArrayNode errors = out.putArray("errors");
        for (Errors error : Errors.values()) {
            ObjectNode node = errors.addObject();
            node.put("code", error.code());
            node.put("name", error.name());
            node.put("message", error.message());
            node.put("retriable", error.exception() instanceof RetriableException);
        }
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(System.out, out);
    }
}
