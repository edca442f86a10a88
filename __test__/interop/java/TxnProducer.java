/*
 * Kafka's Java producer in transactional mode (KafkaProducer with transactional.id), run as a
 * single source file (java -cp 'tools/kafka/.jars/*' TxnProducer.java <bootstrap> <mode> <id>
 * [transaction.timeout.ms, default 3000]):
 *
 *   commit-abort  initTransactions; a transaction of 3 records to jtx-0, jtx-1, jtx-0 and the
 *                 offset 42 of jin-0 for group jgroup (sendOffsetsToTransaction), committed;
 *                 then one of 2 records, aborted; prints "committed" and "aborted".
 *   open          initTransactions; a transaction of 1 record to jtx-0, flushed and left open;
 *                 prints "open" and waits to be killed.
 *   fenced        initTransactions, begins a transaction and sends 1 record to jtx-0, then a
 *                 second producer with the same id initTransactions and commits one record;
 *                 the first one's commit must fail with ProducerFencedException (or
 *                 InvalidProducerEpochException); prints "fenced <exception class>".
 *
 * Any other failure fails the program (exit 1, the error on stderr).
 */
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxnProducer {
  static String timeoutMs = "3000";

  static KafkaProducer<String, String> producer(String bootstrap, String id) {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("transactional.id", id);
    props.put("transaction.timeout.ms", timeoutMs);
    props.put("max.block.ms", "30000");
    props.put("key.serializer", StringSerializer.class.getName());
    props.put("value.serializer", StringSerializer.class.getName());
    return new KafkaProducer<>(props);
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    String mode = args[1];
    String id = args[2];
    if (args.length > 3) timeoutMs = args[3];
    switch (mode) {
      case "commit-abort": {
        try (KafkaProducer<String, String> p = producer(bootstrap, id)) {
          p.initTransactions();
          p.beginTransaction();
          p.send(new ProducerRecord<>("jtx", 0, "k", "c1"));
          p.send(new ProducerRecord<>("jtx", 1, "k", "c2"));
          p.send(new ProducerRecord<>("jtx", 0, "k", "c3"));
          p.sendOffsetsToTransaction(Map.of(new TopicPartition("jin", 0), new OffsetAndMetadata(42L)), new ConsumerGroupMetadata("jgroup"));
          p.commitTransaction();
          System.out.println("committed");
          p.beginTransaction();
          p.send(new ProducerRecord<>("jtx", 0, "k", "a1"));
          p.send(new ProducerRecord<>("jtx", 1, "k", "a2"));
          p.flush();
          p.abortTransaction();
          System.out.println("aborted");
        }
        break;
      }
      case "open": {
        KafkaProducer<String, String> p = producer(bootstrap, id);
        p.initTransactions();
        p.beginTransaction();
        p.send(new ProducerRecord<>("jtx", 0, "k", "left-open")).get();
        System.out.println("open");
        System.out.flush();
        Thread.sleep(600_000);
        break;
      }
      case "fenced": {
        KafkaProducer<String, String> first = producer(bootstrap, id);
        first.initTransactions();
        first.beginTransaction();
        first.send(new ProducerRecord<>("jtx", 0, "k", "zombie")).get();
        try (KafkaProducer<String, String> second = producer(bootstrap, id)) {
          second.initTransactions();
          second.beginTransaction();
          second.send(new ProducerRecord<>("jtx", 0, "k", "winner"));
          second.commitTransaction();
        }
        try {
          first.commitTransaction();
          System.out.println("not fenced");
        } catch (KafkaException e) {
          System.out.println("fenced " + e.getClass().getSimpleName());
        } finally {
          first.close(java.time.Duration.ofSeconds(5));
        }
        break;
      }
      default:
        throw new IllegalArgumentException("unknown mode " + mode);
    }
  }
}
