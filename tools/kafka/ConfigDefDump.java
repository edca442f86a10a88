// Prints Apache Kafka's own definition of its topic and broker configs, one JSON object a line,
// for __test__/config/kafka-config-def.test.ts to compare ferrolog's config table with:
//   {"scope":"topic"|"broker","name":...,"type":...,"default":...|null,"validator":...|null,"dynamic":"per-broker"|"cluster-wide"|null}
// from LogConfig.configKeys() (topic), AbstractKafkaConfig.CONFIG_DEF (broker) and
// DynamicBrokerConfig.dynamicConfigUpdateModes(). Run with the jars of tools/kafka/.jars:
//   java -cp 'tools/kafka/.jars/*' tools/kafka/ConfigDefDump.java
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.server.config.AbstractKafkaConfig;
import org.apache.kafka.server.config.DynamicBrokerConfig;
import org.apache.kafka.storage.internals.log.LogConfig;

public class ConfigDefDump {
  static String json(Object o) {
    if (o == null) return "null";
    return "\"" + o.toString().replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
  }

  static void dump(String scope, Map<String, ConfigDef.ConfigKey> keys, Map<String, String> modes) {
    for (ConfigDef.ConfigKey k : new TreeMap<>(keys).values()) {
      String defaultValue = k.hasDefault() && k.defaultValue != null ? ConfigDef.convertToString(k.defaultValue, k.type) : null;
      System.out.println("{\"scope\":" + json(scope) + ",\"name\":" + json(k.name) + ",\"type\":" + json(k.type) + ",\"default\":" + json(defaultValue)
          + ",\"validator\":" + json(k.validator) + ",\"dynamic\":" + json(modes.get(k.name)) + "}");
    }
  }

  public static void main(String[] args) {
    dump("topic", LogConfig.configKeys(), Map.of());
    dump("broker", AbstractKafkaConfig.CONFIG_DEF.configKeys(), DynamicBrokerConfig.dynamicConfigUpdateModes());
  }
}
