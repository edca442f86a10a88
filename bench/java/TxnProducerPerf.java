/*
 * Transactional produce throughput with Kafka's Java producer: `records` records of `size` bytes
 * to partition 0 of `topic`, in transactions of `perTxn` records (beginTransaction, sends,
 * commitTransaction), acks=all, idempotent; the topic is created first (1 partition) if it does
 * not exist. Prints one line:
 *
 *   records=N transactions=T seconds=S records_per_sec=R
 *
 *   java -cp 'tools/kafka/.jars/*' bench/java/TxnProducerPerf.java <bootstrap> <topic> <records> <size> <perTxn> <transactionalId>
 */
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class TxnProducerPerf {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    props.put("transactional.id", args[5]);
    props.put("key.serializer", ByteArraySerializer.class.getName());
    props.put("value.serializer", ByteArraySerializer.class.getName());
    String topic = args[1];
    int records = Integer.parseInt(args[2]);
    byte[] value = new byte[Integer.parseInt(args[3])];
    for (int i = 0; i < value.length; i++) value[i] = (byte) ('a' + i % 26);
    int perTxn = Integer.parseInt(args[4]);
    int transactions = 0;
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", args[0]))) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) throw e;
    }
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
      producer.initTransactions();
      long start = System.nanoTime();
      for (int sent = 0; sent < records; ) {
        producer.beginTransaction();
        for (int i = 0; i < perTxn && sent < records; i++, sent++) producer.send(new ProducerRecord<>(topic, 0, null, value));
        producer.commitTransaction();
        transactions++;
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      System.out.printf("records=%d transactions=%d seconds=%.3f records_per_sec=%.0f%n", records, transactions, seconds, records / seconds);
    }
  }
}
