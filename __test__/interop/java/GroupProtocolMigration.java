/*
 * A live group of Kafka's Java consumers moved from the classic protocol to the consumer protocol
 * (KIP-848) member by member and back, while a producer keeps writing. Run as a single source file:
 *
 *   java -cp 'tools/kafka/.jars/*' GroupProtocolMigration.java <bootstrap> <topic> <partitions> <group> <mode>
 *
 * mode `migrate`:
 * 1. three classic members (group.protocol=classic) share the topic;
 * 2. one by one, a classic member is closed (LeaveGroup) and a member with group.protocol=consumer
 *    started in its place: the first one's ConsumerGroupHeartbeat upgrades the live classic group
 *    to a consumer group, whose classic members go on with JoinGroup/SyncGroup/Heartbeat;
 * 3. two classic members join the consumer group, then the consumer members are closed one by one:
 *    when the last one leaves, the group is downgraded to a classic group.
 * After each step (every partition owned, each member owning some, the group Stable as Admin
 * describes it) it prints `step=<name> type=<described type> listed=<ListGroups type>
 * state=<state> members=<classic>c+<consumer>k`. At the end the producer stops, every record
 * written must be read: produced=<n> missing=<n> overlaps=<partitions assigned to a member while
 * another still owned them>.
 *
 * mode `disabled` (the broker's group.consumer.migration.policy=disabled): one classic member
 * owns the topic; a consumer-protocol member trying to join prints `refused=<exception class>:
 * <message>`. Then the classic member leaves, a consumer-protocol member turns the Empty group
 * into a consumer group (whatever the policy), and a classic member trying to join prints
 * `refused-classic=<exception class>: <message>`.
 *
 * error=<exception> when something failed.
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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class GroupProtocolMigration {
  static final Map<TopicPartition, String> owner = new HashMap<>();
  static int overlaps = 0;
  static final Set<String> consumed = new HashSet<>();

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

  static synchronized int ownedTotal() {
    return owner.size();
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
            synchronized (GroupProtocolMigration.class) {
              consumed.add(r.value());
            }
          }
          try {
            consumer.commitSync();
          } catch (KafkaException e) {
            // A commit refused by a rebalance (CommitFailed, RebalanceInProgress, a stale epoch):
            // the records are read again from the last commit; none is lost.
          }
        }
      } catch (Exception e) {
        failure = e;
      } finally {
        consumer.close(); // leaves the group; its partitions are revoked first
      }
    }
  }

  static final class Producer extends Thread {
    final KafkaProducer<String, String> producer;
    final String topic;
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger sent = new AtomicInteger();
    volatile Exception failure;

    Producer(String bootstrap, String topic) {
      Properties p = new Properties();
      p.put("bootstrap.servers", bootstrap);
      p.put("key.serializer", StringSerializer.class.getName());
      p.put("value.serializer", StringSerializer.class.getName());
      p.put("acks", "all");
      this.producer = new KafkaProducer<>(p);
      this.topic = topic;
    }

    public void run() {
      try {
        for (int i = 0; !stop.get(); i++) {
          producer.send(new ProducerRecord<>(topic, "k" + i, "r" + i)).get();
          sent.incrementAndGet();
          if (i % 20 == 19) Thread.sleep(10);
        }
      } catch (Exception e) {
        failure = e;
      } finally {
        producer.close();
      }
    }
  }

  static final List<Member> live = new ArrayList<>();
  static Producer producer;

  static void await(String what, java.util.function.BooleanSupplier done) throws Exception {
    long deadline = System.currentTimeMillis() + 120_000;
    while (!done.getAsBoolean()) {
      for (Member m : live) if (m.failure != null) throw new IllegalStateException(m.name + " failed: " + m.failure, m.failure);
      if (producer != null && producer.failure != null) throw new IllegalStateException("producer failed: " + producer.failure, producer.failure);
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out waiting for " + what);
      Thread.sleep(50);
    }
  }

  static Properties props(String bootstrap, String group, String protocol) {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", group);
    props.put("group.protocol", protocol);
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    props.put("enable.auto.commit", "false");
    props.put("auto.offset.reset", "earliest");
    if (protocol.equals("classic")) {
      props.put("session.timeout.ms", "10000");
      props.put("heartbeat.interval.ms", "500");
    }
    return props;
  }

  static Member start(String name, String bootstrap, String group, String protocol, String topic) {
    Member m = new Member(name, props(bootstrap, group, protocol), topic);
    live.add(m);
    m.start();
    return m;
  }

  static void close(Member m) throws Exception {
    m.stop.set(true);
    m.join(60_000);
    live.remove(m);
    if (m.failure != null) throw m.failure;
  }

  /** Every partition owned, each live member owning some, and the group Stable as Admin describes it; then prints the step. */
  static void settle(Admin admin, String step, String group, int partitions) throws Exception {
    await(step + ": every partition owned, by every member", () -> {
      if (ownedTotal() != partitions) return false;
      for (Member m : live) if (owned(m.name) == 0) return false;
      return true;
    });
    String[] last = new String[1];
    await(step + ": the group Stable with " + live.size() + " members (last: " + last[0] + ")", () -> {
      try {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        last[0] = d.type() + " " + d.groupState() + " " + d.members().size();
        return d.groupState().toString().equals("Stable") && d.members().size() == live.size() && ownedTotal() == partitions;
      } catch (Exception e) {
        last[0] = e.toString();
        return false;
      }
    });
    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
    String listed = "?";
    for (GroupListing g : admin.listGroups().all().get()) if (g.groupId().equals(group)) listed = g.type().map(Object::toString).orElse("-");
    // KIP-1099's upgraded: whether a member of a consumer group speaks the consumer protocol
    // (absent in a classic group, whose members all speak the classic one).
    int classic = 0, consumer = 0;
    for (MemberDescription m : d.members()) {
      if (m.upgraded().orElse(false)) consumer++;
      else classic++;
    }
    System.out.println("step=" + step + " type=" + d.type() + " listed=" + listed + " state=" + d.groupState() + " members=" + classic + "c+" + consumer + "k");
  }

  /** A consumer of `protocol` polls until the group refuses it; prints `<label>=<exception class>: <message>` (none after a minute). */
  static void refused(String label, String bootstrap, String group, String protocol, String topic) {
    KafkaConsumer<String, String> k = new KafkaConsumer<>(props(bootstrap, group, protocol));
    k.subscribe(List.of(topic));
    try {
      long deadline = System.currentTimeMillis() + 60_000;
      while (System.currentTimeMillis() < deadline) k.poll(Duration.ofMillis(100));
      System.out.println(label + "=none");
    } catch (KafkaException e) {
      System.out.println(label + "=" + e.getClass().getSimpleName() + ": " + e.getMessage());
    } finally {
      k.close(Duration.ZERO);
    }
  }

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1], group = args[3], mode = args[4];
    int partitions = Integer.parseInt(args[2]);
    Properties ap = new Properties();
    ap.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(ap)) {
      producer = new Producer(bootstrap, topic);
      producer.start();
      if (mode.equals("disabled")) {
        start("C1", bootstrap, group, "classic", topic);
        settle(admin, "classic", group, partitions);
        refused("refused", bootstrap, group, "consumer", topic);
        settle(admin, "still-classic", group, partitions);
        // An Empty group converts whatever the policy; a live consumer group refuses classic members.
        close(live.get(0));
        start("K1", bootstrap, group, "consumer", topic);
        settle(admin, "consumer", group, partitions);
        refused("refused-classic", bootstrap, group, "classic", topic);
        settle(admin, "still-consumer", group, partitions);
      } else {
        Member[] classic = {start("C1", bootstrap, group, "classic", topic), start("C2", bootstrap, group, "classic", topic), start("C3", bootstrap, group, "classic", topic)};
        settle(admin, "classic", group, partitions);
        for (int i = 0; i < 3; i++) {
          close(classic[i]);
          settle(admin, "closed-C" + (i + 1), group, partitions);
          start("K" + (i + 1), bootstrap, group, "consumer", topic);
          settle(admin, "started-K" + (i + 1), group, partitions);
        }
        Member[] consumers = live.toArray(new Member[0]);
        start("C4", bootstrap, group, "classic", topic);
        settle(admin, "started-C4", group, partitions);
        start("C5", bootstrap, group, "classic", topic);
        settle(admin, "started-C5", group, partitions);
        for (int i = 0; i < 3; i++) {
          close(consumers[i]);
          settle(admin, "closed-K" + (i + 1), group, partitions);
        }
      }
      producer.stop.set(true);
      producer.join(60_000);
      if (producer.failure != null) throw producer.failure;
      int produced = producer.sent.get();
      await("every record read", () -> {
        synchronized (GroupProtocolMigration.class) {
          for (int i = 0; i < produced; i++) if (!consumed.contains("r" + i)) return false;
        }
        return true;
      });
      for (Member m : new ArrayList<>(live)) close(m);
      System.out.println("produced=" + (produced > 0 ? "some" : "none"));
      System.out.println("missing=0");
      System.out.println("overlaps=" + overlaps);
    } catch (Exception e) {
      for (Member m : live) m.stop.set(true);
      if (producer != null) producer.stop.set(true);
      System.out.println("error=" + e);
      System.out.flush();
      System.exit(0);
    }
  }
}
