// Drives a Kafka broker (through tools/kafka/capture-proxy.mjs) with the Java client so that the
// proxy records real requests and responses of the admin, producer and consumer APIs whose codecs
// ferrolog has: CreateTopics, DescribeConfigs, CreatePartitions, InitProducerId, DeleteRecords,
// OffsetForLeaderEpoch, DeleteTopics (by name and by id), plus ApiVersions and Metadata.
//
//   java -cp "tools/kafka/.classes:tools/kafka/.jars/*" ProtocolCapture BOOTSTRAP
//
// Used by tools/kafka/capture-protocol.sh; see __test__/fixtures/protocol/README.md.
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ProtocolCapture {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    Properties adminProps = new Properties();
    adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    adminProps.put(AdminClientConfig.CLIENT_ID_CONFIG, "capture-admin");
    try (Admin admin = Admin.create(adminProps)) {
      NewTopic orders = new NewTopic("orders", 2, (short) 1).configs(Map.of("max.message.bytes", "65536", "retention.ms", "3600000"));
      NewTopic manual = new NewTopic("manual", Map.of(0, List.of(1), 1, List.of(1)));
      // `kept` outlives this program, for capture-protocol.sh's librdkafka (kcat) step.
      admin.createTopics(List.of(orders, manual, new NewTopic("kept", 1, (short) 1))).all().get();
      try {
        admin.createTopics(List.of(new NewTopic("orders", 1, (short) 1)), new CreateTopicsOptions().validateOnly(true)).all().get();
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) throw e;
      }

      ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "orders");
      admin.describeConfigs(List.of(topic), new DescribeConfigsOptions().includeSynonyms(true).includeDocumentation(true)).all().get();

      admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(3))).all().get();

      produce(bootstrap);

      TopicPartition tp = new TopicPartition("orders", 0);
      admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(2))).all().get();

      consume(bootstrap, tp);

      Uuid ordersId = admin.describeTopics(List.of("orders")).allTopicNames().get().get("orders").topicId();
      admin.deleteTopics(TopicCollection.ofTopicNames(List.of("manual"))).all().get();
      admin.deleteTopics(TopicCollection.ofTopicIds(List.of(ordersId))).all().get();
    }
  }

  static void produce(String bootstrap) throws Exception {
    Properties props = new Properties();
    props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ProducerConfig.CLIENT_ID_CONFIG, "capture-producer");
    props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      for (int i = 0; i < 5; i++) producer.send(new ProducerRecord<>("orders", 0, "k" + i, "v" + i)).get();
    }
    props.put(ProducerConfig.CLIENT_ID_CONFIG, "capture-txn");
    props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "capture-txn-1");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new ProducerRecord<>("orders", 0, "t", "in a transaction")).get();
      producer.commitTransaction();
    }
  }

  static void consume(String bootstrap, TopicPartition tp) {
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(ConsumerConfig.CLIENT_ID_CONFIG, "capture-consumer");
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
      consumer.assign(List.of(tp));
      // A position with a leader epoch: the consumer validates it with OffsetForLeaderEpoch.
      consumer.seek(tp, new OffsetAndMetadata(3, Optional.of(0), ""));
      long deadline = System.currentTimeMillis() + 10_000;
      while (consumer.poll(Duration.ofMillis(200)).isEmpty() && System.currentTimeMillis() < deadline) {
        // until the validated position yields records
      }
    }
  }
}
