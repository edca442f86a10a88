/*
 * Two of Kafka's Java consumers in one group with the KIP-848 protocol (group.protocol=consumer),
 * each in its own thread, committing synchronously after every poll. Run as a single source file:
 *
 *   java -cp 'tools/kafka/.jars/*' ConsumerGroupProtocol.java <bootstrap> <topic> <partitions> <group> <assignor|-> <records>
 *
 * 1. `records` records are produced; A and B consume until each owns some partitions, together
 *    all of them, and every record was read;
 * 2. B is closed (it leaves the group, epoch -1); `records` more are produced; A consumes until
 *    it owns every partition and every record was read;
 * 3. A is closed.
 * Every assignment change (onPartitionsAssigned / Revoked / Lost, in one log ordered across both
 * threads) is checked: a partition is never assigned to one member while the other still owns it.
 * It prints, one per line: sharedA=<n> sharedB=<n> (partitions each owned in step 1),
 * afterLeaveA=<n>, consumed=<records read>, unique=<distinct records>, duplicates=<n>,
 * overlaps=<partitions owned by two at once>, and error=<exception> when something failed.
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
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ConsumerGroupProtocol {
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

  static synchronized int owned(String member) {
    int n = 0;
    for (String o : owner.values()) if (o.equals(member)) n++;
    return n;
  }

  static synchronized int consumedCount() {
    return consumed.size();
  }

  static final class Member extends Thread {
    final String name;
    final KafkaConsumer<String, String> consumer;
    final AtomicBoolean stop = new AtomicBoolean();
    volatile Exception failure;

    Member(String name, Properties props, String topic) {
      this.name = name;
      consumer = new KafkaConsumer<>(props);
      consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        public void onPartitionsRevoked(Collection<TopicPartition> parts) { released(name, parts); }
        public void onPartitionsAssigned(Collection<TopicPartition> parts) { assigned(name, parts); }
        public void onPartitionsLost(Collection<TopicPartition> parts) { released(name, parts); }
      });
    }

    public void run() {
      try {
        while (!stop.get()) {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
            synchronized (ConsumerGroupProtocol.class) {
              consumed.add(r.value());
            }
          }
          consumer.commitSync();
        }
      } catch (Exception e) {
        failure = e;
      } finally {
        consumer.close(); // leaves the group (epoch -1); its partitions are revoked first
      }
    }
  }

  static void produce(String bootstrap, String topic, int from, int count) throws Exception {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    p.put("acks", "all");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      for (int i = from; i < from + count; i++) producer.send(new ProducerRecord<>(topic, "k" + i, "r" + i));
      producer.flush();
    }
  }

  static void await(String what, java.util.function.BooleanSupplier done, Member... members) throws Exception {
    long deadline = System.currentTimeMillis() + 90_000;
    while (!done.getAsBoolean()) {
      for (Member m : members) if (m.failure != null) throw new IllegalStateException(m.name + " failed: " + m.failure, m.failure);
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out waiting for " + what);
      Thread.sleep(50);
    }
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1], group = args[3], assignor = args[4];
    int partitions = Integer.parseInt(args[2]), records = Integer.parseInt(args[5]);
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", group);
    props.put("group.protocol", "consumer");
    if (!assignor.equals("-")) props.put("group.remote.assignor", assignor);
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    props.put("enable.auto.commit", "false");
    props.put("auto.offset.reset", "earliest");
    Member a = new Member("A", props, topic);
    Member b = new Member("B", props, topic);
    try {
      produce(bootstrap, topic, 0, records);
      a.start();
      b.start();
      await("A and B sharing every partition and every record read",
          () -> owned("A") > 0 && owned("B") > 0 && owned("A") + owned("B") == partitions && consumedCount() >= records, a, b);
      System.out.println("sharedA=" + owned("A"));
      System.out.println("sharedB=" + owned("B"));
      b.stop.set(true);
      b.join(60_000);
      if (b.failure != null) throw b.failure;
      produce(bootstrap, topic, records, records);
      await("A owning every partition and every record read", () -> owned("A") == partitions && consumedCount() >= 2 * records, a);
      System.out.println("afterLeaveA=" + owned("A"));
    } catch (Exception e) {
      System.out.println("error=" + e);
    } finally {
      a.stop.set(true);
      b.stop.set(true);
      a.join(60_000);
      b.join(60_000);
    }
    synchronized (ConsumerGroupProtocol.class) {
      Set<String> unique = new HashSet<>(consumed);
      System.out.println("consumed=" + consumed.size());
      System.out.println("unique=" + unique.size());
      System.out.println("duplicates=" + (consumed.size() - unique.size()));
      System.out.println("overlaps=" + overlaps);
    }
  }
}
