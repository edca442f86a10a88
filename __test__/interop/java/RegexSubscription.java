/*
 * Two of Kafka's Java consumers in one group with the KIP-848 protocol (group.protocol=consumer),
 * subscribed with a broker-side regular expression (SubscriptionPattern: the broker resolves it,
 * RE2 syntax), each in its own thread, committing after every poll. Run as a single source file:
 *
 *   java -cp 'tools/kafka/.jars/*' RegexSubscription.java <bootstrap> <prefix>
 *
 * 1. Topics <prefix>-a (3 partitions) and other-<prefix> (1) are created, `records` records
 *    produced to each; A and B subscribe to `<prefix>-.*`, consume until together they own the
 *    three partitions of <prefix>-a and read its records (other-<prefix> never matches);
 * 2. <prefix>-b (3 partitions) is created and written to while the group runs: A and B consume
 *    until together they own all six partitions and read every record;
 * 3. a third consumer C subscribes to `<prefix>-(` in another group: its poll fails.
 * Every assignment change is checked: a partition is never assigned to one member while the
 * other still owns it. It prints, one per line: before=<owned partitions, sorted>,
 * after=<owned partitions, sorted>, consumed=<records read>, unique=<distinct>, overlaps=<n>,
 * invalid=<C's exception class: message>, and error=<exception> when something failed.
 */
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class RegexSubscription {
  static final int RECORDS = 300;
  static final Map<TopicPartition, String> owner = new HashMap<>();
  static int overlaps = 0;
  static final List<String> consumed = new ArrayList<>();

  static synchronized void assigned(String member, Collection<TopicPartition> parts) {
    for (TopicPartition tp : parts) {
      String o = owner.get(tp);
      if (o != null && !o.equals(member)) {
        overlaps++;
        System.out.println("overlap=" + tp + " owned by " + o + " assigned to " + member);
      }
      owner.put(tp, member);
    }
  }

  static synchronized void released(String member, Collection<TopicPartition> parts) {
    for (TopicPartition tp : parts) if (member.equals(owner.get(tp))) owner.remove(tp);
  }

  static synchronized String ownedPartitions() {
    TreeSet<String> all = new TreeSet<>();
    for (TopicPartition tp : owner.keySet()) all.add(tp.toString());
    return String.join(",", all);
  }

  static synchronized boolean bothOwn() {
    return owner.containsValue("A") && owner.containsValue("B");
  }

  static synchronized int consumedCount() {
    return consumed.size();
  }

  static final class Member extends Thread {
    final String name;
    final KafkaConsumer<String, String> consumer;
    final AtomicBoolean stop = new AtomicBoolean();
    volatile Exception failure;

    Member(String name, Properties props, String regex) {
      this.name = name;
      consumer = new KafkaConsumer<>(props);
      consumer.subscribe(new SubscriptionPattern(regex), new ConsumerRebalanceListener() {
        public void onPartitionsRevoked(Collection<TopicPartition> parts) { released(name, parts); }
        public void onPartitionsAssigned(Collection<TopicPartition> parts) { assigned(name, parts); }
        public void onPartitionsLost(Collection<TopicPartition> parts) { released(name, parts); }
      });
    }

    public void run() {
      try {
        while (!stop.get()) {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
            synchronized (RegexSubscription.class) {
              consumed.add(r.topic() + ":" + r.value());
            }
          }
          consumer.commitSync();
        }
      } catch (Exception e) {
        failure = e;
      } finally {
        consumer.close();
      }
    }
  }

  static void produce(String bootstrap, String topic, int count) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("acks", "all");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      for (int i = 0; i < count; i++) producer.send(new ProducerRecord<>(topic, "k" + i, "r" + i));
      producer.flush();
    }
  }

  static void await(String what, java.util.function.BooleanSupplier done, Member... members) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (!done.getAsBoolean()) {
      for (Member m : members) if (m.failure != null) throw new IllegalStateException(m.name + " failed: " + m.failure, m.failure);
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out waiting for " + what + ", owned: " + ownedPartitions());
      Thread.sleep(50);
    }
  }

  static Properties consumerProps(String bootstrap, String group) {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", group);
    props.put("group.protocol", "consumer");
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    props.put("enable.auto.commit", "false");
    props.put("auto.offset.reset", "earliest");
    return props;
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], prefix = args[1];
    Properties adminProps = new Properties();
    adminProps.put("bootstrap.servers", bootstrap);
    Member a = null, b = null;
    try (Admin admin = Admin.create(adminProps)) {
      admin.createTopics(List.of(new NewTopic(prefix + "-a", 3, (short) 1), new NewTopic("other-" + prefix, 1, (short) 1))).all().get();
      produce(bootstrap, prefix + "-a", RECORDS);
      produce(bootstrap, "other-" + prefix, RECORDS);
      Properties props = consumerProps(bootstrap, prefix + "-group");
      a = new Member("A", props, prefix + "-.*");
      b = new Member("B", props, prefix + "-.*");
      a.start();
      b.start();
      final Member ma = a, mb = b;
      await(prefix + "-a shared by A and B and read", () -> bothOwn() && owner.size() == 3 && consumedCount() >= RECORDS, ma, mb);
      System.out.println("before=" + ownedPartitions());
      admin.createTopics(List.of(new NewTopic(prefix + "-b", 3, (short) 1))).all().get();
      produce(bootstrap, prefix + "-b", RECORDS);
      await("both topics owned and read", () -> bothOwn() && owner.size() == 6 && consumedCount() >= 2 * RECORDS, ma, mb);
      System.out.println("after=" + ownedPartitions());
      // A bad regex: the broker refuses it (INVALID_REGULAR_EXPRESSION), the poll throws.
      try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumerProps(bootstrap, prefix + "-bad"))) {
        c.subscribe(new SubscriptionPattern(prefix + "-("));
        long deadline = System.currentTimeMillis() + 30_000;
        String outcome = "none";
        while (System.currentTimeMillis() < deadline) {
          try {
            c.poll(Duration.ofMillis(200));
          } catch (Exception e) {
            outcome = e.getClass().getSimpleName() + ": " + e.getMessage();
            break;
          }
        }
        System.out.println("invalid=" + outcome);
      }
    } catch (Exception e) {
      System.out.println("error=" + e);
    } finally {
      if (a != null) a.stop.set(true);
      if (b != null) b.stop.set(true);
      if (a != null) a.join(60_000);
      if (b != null) b.join(60_000);
    }
    synchronized (RegexSubscription.class) {
      Set<String> unique = new HashSet<>(consumed);
      System.out.println("consumed=" + consumed.size());
      System.out.println("unique=" + unique.size());
      System.out.println("overlaps=" + overlaps);
    }
  }
}
