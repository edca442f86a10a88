/*
 * Sends 100 records in one batch with Kafka's Java producer (kafka-clients 4.4) to a topic and
 * prints, per record, how its send completed: "index OK offset" or "index ExceptionClass message".
 * Records 3, 13, ..., 93 have no key (a compacted topic refuses them, KIP-467). Run as a
 * single-file program: java -cp 'tools/kafka/.jars/*' tools/kafka/RecordErrorsProducer.java
 * BOOTSTRAP TOPIC. Used by __test__/interop/produce-validation-vs-kafka.test.ts.
 */
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

public class RecordErrorsProducer {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    // One batch for all 100: nothing is sent before flush().
    props.put(ProducerConfig.LINGER_MS_CONFIG, "60000");
    props.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(1 << 20));
    props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
    props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      List<Future<RecordMetadata>> sent = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        String key = i % 10 == 3 ? null : "k" + i;
        sent.add(producer.send(new ProducerRecord<>(args[1], 0, key, "v" + i)));
      }
      producer.flush();
      for (int i = 0; i < sent.size(); i++) {
        try {
          System.out.println(i + " OK " + sent.get(i).get().offset());
        } catch (ExecutionException e) {
          Throwable c = e.getCause();
          System.out.println(i + " " + c.getClass().getSimpleName() + " " + c.getMessage());
        }
      }
    }
  }
}
