// Kafka's Java transactional producer: writes `transactions` transactions of 10 records each to
// partition 0 of a topic, values "t<n>-<i>", committing the even ones and aborting the odd ones,
// interleaved with a second transactional producer whose transactions all commit ("u<n>-<i>").
// For __test__/client/consumer-kafka.test.ts (READ_COMMITTED). Run as a single source file:
//   java -cp 'tools/kafka/.jars/*' TxProducer.java <bootstrap> <topic> <transactions>
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public class TxProducer {
  static KafkaProducer<String, String> producer(String bootstrap, String id) {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("transactional.id", id);
    props.put("key.serializer", StringSerializer.class.getName());
    props.put("value.serializer", StringSerializer.class.getName());
    KafkaProducer<String, String> p = new KafkaProducer<>(props);
    p.initTransactions();
    return p;
  }

  public static void main(String[] args) throws Exception {
    String topic = args[1];
    int n = Integer.parseInt(args[2]);
    try (KafkaProducer<String, String> a = producer(args[0], "tx-a"); KafkaProducer<String, String> b = producer(args[0], "tx-b")) {
      for (int t = 0; t < n; t++) {
        a.beginTransaction();
        b.beginTransaction();
        for (int i = 0; i < 10; i++) {
          a.send(new ProducerRecord<>(topic, 0, null, "t" + t + "-" + i)).get();
          b.send(new ProducerRecord<>(topic, 0, null, "u" + t + "-" + i)).get();
        }
        if (t % 2 == 0) a.commitTransaction(); else a.abortTransaction();
        b.commitTransaction();
      }
    }
    System.out.println("done");
  }
}
