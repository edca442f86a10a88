/*
 * The reading half of an exactly-once check, as Kafka's system tests do it after
 * TransactionalMessageCopier: Kafka's Java consumer reads every partition of a topic from the
 * beginning to its end offset under the given isolation level (for read_committed the end is the
 * last stable offset) and prints one line:
 *
 *   records=R distinct=D end=E duplicated=[..] missing=[..]
 *
 * where `missing` lists values of `expected` ("v0".."v<expected-1>") it did not see, and
 * `duplicated` values seen more than once (each at most 10). `end` is the sum of the partitions'
 * end offsets. Run as a single source file:
 *
 *   java -cp 'tools/kafka/.jars/*' ExactlyOnceVerifier.java <bootstrap> <topic> <read_committed|read_uncommitted> <expected>
 *
 * Exits 2 if it cannot reach the end offsets in 60 s.
 */
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class ExactlyOnceVerifier {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    props.put("isolation.level", args[2]);
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    props.put("enable.auto.commit", "false");
    int expected = Integer.parseInt(args[3]);
    Map<String, Integer> seen = new HashMap<>();
    long records = 0;
    long endSum = 0;
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
      List<TopicPartition> tps = new ArrayList<>();
      for (PartitionInfo p : consumer.partitionsFor(args[1], Duration.ofSeconds(30))) tps.add(new TopicPartition(p.topic(), p.partition()));
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
      for (long e : end.values()) endSum += e;
      long deadline = System.currentTimeMillis() + 60_000;
      while (!atEnd(consumer, end)) {
        if (System.currentTimeMillis() > deadline) {
          System.out.println("timed out before the end offsets " + end);
          System.exit(2);
        }
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          records++;
          seen.merge(r.value(), 1, Integer::sum);
        }
      }
    }
    List<String> duplicated = new ArrayList<>();
    for (Map.Entry<String, Integer> e : seen.entrySet()) if (e.getValue() > 1 && duplicated.size() < 10) duplicated.add(e.getKey() + "x" + e.getValue());
    List<String> missing = new ArrayList<>();
    for (int i = 0; i < expected && missing.size() < 10; i++) if (!seen.containsKey("v" + i)) missing.add("v" + i);
    System.out.println("records=" + records + " distinct=" + seen.size() + " end=" + endSum + " duplicated=" + duplicated + " missing=" + missing);
  }

  private static boolean atEnd(KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> end) {
    for (Map.Entry<TopicPartition, Long> e : end.entrySet()) if (consumer.position(e.getKey()) < e.getValue()) return false;
    return true;
  }
}
