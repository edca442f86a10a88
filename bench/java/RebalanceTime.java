/*
 * Rebalance time (issue 27): a member joins a group of MEMBERS consumers over one topic of
 * PARTITIONS partitions while a producer writes to every partition; how long until every partition
 * is consumed again.
 *
 *   java -cp 'tools/kafka/.jars/*' bench/java/RebalanceTime.java BOOTSTRAP TOPIC PARTITIONS MEMBERS PROTOCOL JOINS
 *
 * PROTOCOL is classic (the Java client's default assignors: range, then cooperative-sticky; range
 * is chosen, an eager rebalance) or consumer (KIP-848, the broker's default assignor). The producer
 * sends one record to each partition every 20 ms, its value the send time. Once all MEMBERS
 * consumers have consumed records from every partition (the group settled), a new member
 * subscribes at T0; "every partition consumed again" is the first instant at which, for every
 * partition, some member has consumed a record sent after T0, and the new member owns partitions.
 * The new member then closes (leaves), the group settles again, and the next join is timed: JOINS
 * rounds. Prints `join=I seconds=S newMemberPartitions=N` per round and
 * `median_seconds=S` at the end; exits 1 on a round that did not finish in 120 s.
 */
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.LongSerializer;

public class RebalanceTime {
  static String bootstrap;
  static String topic;
  static int partitions;
  static String protocol;
  static final String GROUP = "rebalance-bench";
  /** Per partition: the newest send time (ms) of a record some member consumed. */
  static AtomicLongArray consumedSentAt;
  static final AtomicBoolean stopping = new AtomicBoolean();

  /** A member polling in its own thread until stopped; how many partitions it owns. */
  static final class Member implements Runnable {
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger owned = new AtomicInteger();
    final Thread thread = new Thread(this);
    volatile Throwable failure;

    public void run() {
      Properties p = new Properties();
      p.put("bootstrap.servers", bootstrap);
      p.put("group.id", GROUP);
      p.put("group.protocol", protocol);
      p.put("key.deserializer", LongDeserializer.class.getName());
      p.put("value.deserializer", LongDeserializer.class.getName());
      p.put("auto.offset.reset", "latest");
      p.put("enable.auto.commit", "true");
      p.put("fetch.max.wait.ms", "100");
      if (protocol.equals("classic")) p.put("heartbeat.interval.ms", "1000");
      try (KafkaConsumer<Long, Long> c = new KafkaConsumer<>(p)) {
        c.subscribe(Collections.singletonList(topic));
        while (!stop.get()) {
          for (ConsumerRecord<Long, Long> r : c.poll(Duration.ofMillis(50))) consumedSentAt.accumulateAndGet(r.partition(), r.value(), Math::max);
          owned.set(c.assignment().size());
        }
      } catch (Throwable t) {
        failure = t;
      }
    }
  }

  /** Waits until every partition has a consumed record sent at or after `since`; false after 120 s. */
  static boolean everyPartitionSince(long since, Member mustOwn) throws InterruptedException {
    long deadline = System.currentTimeMillis() + 120_000;
    while (System.currentTimeMillis() < deadline) {
      boolean all = mustOwn == null || mustOwn.owned.get() > 0;
      for (int i = 0; all && i < partitions; i++) all = consumedSentAt.get(i) >= since;
      if (all) return true;
      Thread.sleep(5);
    }
    return false;
  }

  public static void main(String[] args) throws Exception {
    bootstrap = args[0];
    topic = args[1];
    partitions = Integer.parseInt(args[2]);
    int members = Integer.parseInt(args[3]);
    protocol = args[4];
    int joins = Integer.parseInt(args[5]);
    consumedSentAt = new AtomicLongArray(partitions);

    Properties pp = new Properties();
    pp.put("bootstrap.servers", bootstrap);
    pp.put("key.serializer", LongSerializer.class.getName());
    pp.put("value.serializer", LongSerializer.class.getName());
    pp.put("linger.ms", "5");
    Thread producer = new Thread(() -> {
      try (KafkaProducer<Long, Long> prod = new KafkaProducer<>(pp)) {
        while (!stopping.get()) {
          long now = System.currentTimeMillis();
          for (int i = 0; i < partitions; i++) prod.send(new ProducerRecord<>(topic, i, null, now));
          Thread.sleep(20);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    producer.start();

    List<Member> group = new ArrayList<>();
    for (int i = 0; i < members; i++) {
      Member m = new Member();
      group.add(m);
      m.thread.start();
    }
    int code = 0;
    List<Double> seconds = new ArrayList<>();
    try {
      if (!everyPartitionSince(System.currentTimeMillis(), null)) throw new IllegalStateException("the first " + members + " members never consumed every partition");
      for (int j = 1; j <= joins; j++) {
        Thread.sleep(2_000); // settled: every member polling at its steady pace
        Member joiner = new Member();
        long t0 = System.currentTimeMillis();
        joiner.thread.start();
        boolean done = everyPartitionSince(t0, joiner);
        double s = (System.currentTimeMillis() - t0) / 1000.0;
        if (!done) {
          System.out.println("join=" + j + " timeout after 120 s; newMemberPartitions=" + joiner.owned.get());
          code = 1;
          break;
        }
        seconds.add(s);
        System.out.println("join=" + j + " seconds=" + s + " newMemberPartitions=" + joiner.owned.get());
        joiner.stop.set(true);
        joiner.thread.join();
        if (joiner.failure != null) throw new IllegalStateException("the joining member failed", joiner.failure);
        // Settled again without it: every partition consumed since its leave.
        if (!everyPartitionSince(System.currentTimeMillis(), null)) throw new IllegalStateException("the group did not settle after a leave");
      }
      for (Member m : group) if (m.failure != null) throw new IllegalStateException("a member failed", m.failure);
    } finally {
      stopping.set(true);
      for (Member m : group) m.stop.set(true);
      for (Member m : group) m.thread.join();
      producer.join();
    }
    Collections.sort(seconds);
    if (!seconds.isEmpty()) System.out.println("median_seconds=" + seconds.get(seconds.size() / 2));
    System.exit(code);
  }
}
