/*
 * Kafka's Java consumer with a client.rack (KIP-392): assigned partition 0 of a topic, it reads
 * from the beginning until it has `count` records (at most 60 s) and prints the count, then the
 * values' sum check "first..last". Run as a single source file:
 *
 *   java -cp 'tools/kafka/.jars/*' RackConsumer.java <bootstrap> <topic> <rack> <count>
 *
 * The consumer follows the leader's preferredReadReplica by itself (Kafka's Fetcher); which
 * broker served the bytes is the brokers' to say (ferrolog_bytes_out_total).
 */
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

public class RackConsumer {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    props.put("client.rack", args[2]);
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    props.put("enable.auto.commit", "false");
    props.put("metadata.max.age.ms", "1000");
    int want = Integer.parseInt(args[3]);
    TopicPartition tp = new TopicPartition(args[1], 0);
    long deadline = System.currentTimeMillis() + 60_000;
    int got = 0;
    String first = null, last = null;
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      while (got < want && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          if (first == null) first = r.value();
          last = r.value();
          got++;
        }
      }
    }
    System.out.println(got);
    System.out.println(first + ".." + last);
    System.exit(got == want ? 0 : 1);
  }
}
