/*
 * Kafka's KafkaShareConsumer (KIP-932), several in one share group over one partition, each in
 * its own thread. Run as a single source file:
 *
 *   java -cp 'tools/kafka/.jars/*' ShareConsumers.java <bootstrap> <prefix> <records>
 *
 * The broker must allow a record lock of 4 s (group.share.min.record.lock.duration.ms <= 4000).
 * Three scenarios, each with its own topic (1 partition, <records> records) and share group
 * (share.auto.offset.reset=earliest):
 *
 * 1. accept: three consumers, implicit acknowledgement, until every record was delivered: each
 *    record delivered once, with delivery count 1, and accepted.
 * 2. ack: three consumers, explicit acknowledgement (one commits with commitSync after each poll,
 *    the others let the next poll carry the acknowledgements): offsets ending in 3 are released
 *    on their first delivery (redelivered with count 2, then accepted), ending in 5 always
 *    released (delivered share.delivery.count.limit = 3 times, then archived), ending in 7
 *    rejected (archived), the rest accepted. Then a fresh consumer of the group polls until three
 *    polls in a row answer nothing: it gets nothing (all archived or accepted).
 * 3. stall: share.record.lock.duration.ms=4000. One consumer (explicit) polls until it holds
 *    records, then stops polling (its connection and heartbeats go on) and never acknowledges;
 *    two others (implicit) consume: the held records come back to them after the lock expired,
 *    with delivery count 2; every record is accepted.
 *
 * Prints one line per fact, key=value, and error=<exception> when something failed.
 */
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ShareConsumers {
  static final long DEADLINE_MS = 90_000;
  static String bootstrap;
  static int records;

  /** One delivery: offset, delivery count, which consumer. */
  record Delivery(long offset, int count, int consumer) {}

  public static void main(String[] args) throws Exception {
    bootstrap = args[0];
    String prefix = args[1];
    records = Integer.parseInt(args[2]);
    try (Admin admin = Admin.create(Map.of("bootstrap.servers", bootstrap))) {
      List<NewTopic> topics = new ArrayList<>();
      for (String s : List.of("accept", "ack", "stall")) topics.add(new NewTopic(prefix + "-" + s, 1, (short) 1));
      admin.createTopics(topics).all().get();
      groupConfigs(admin, prefix + "-accept", Map.of());
      groupConfigs(admin, prefix + "-ack", Map.of("share.delivery.count.limit", "3"));
      groupConfigs(admin, prefix + "-stall", Map.of("share.record.lock.duration.ms", "4000"));
    }
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap, "linger.ms", "5"), new StringSerializer(), new StringSerializer())) {
      for (String s : List.of("accept", "ack", "stall")) {
        for (int i = 0; i < records; i++) producer.send(new ProducerRecord<>(prefix + "-" + s, "k" + i, "v" + i));
      }
      producer.flush();
    }
    try {
      accept(prefix + "-accept");
      ack(prefix + "-ack");
      stall(prefix + "-stall");
    } catch (Throwable t) {
      System.out.println("error=" + t);
      t.printStackTrace();
    }
    System.out.flush();
    System.exit(0);
  }

  static void groupConfigs(Admin admin, String group, Map<String, String> extra) throws Exception {
    List<AlterConfigOp> ops = new ArrayList<>();
    ops.add(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET));
    for (Map.Entry<String, String> e : extra.entrySet()) ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET));
    admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.GROUP, group), ops)).all().get();
  }

  static KafkaShareConsumer<String, String> consumer(String group, boolean explicit) {
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("group.id", group);
    p.put("share.acknowledgement.mode", explicit ? "explicit" : "implicit");
    p.put("max.poll.records", "50");
    KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer());
    c.subscribe(List.of(group));
    return c;
  }

  static int count(ConsumerRecord<String, String> r) {
    return r.deliveryCount().map(Short::intValue).orElse(-1);
  }

  static void check(boolean ok, String what) {
    if (!ok) throw new IllegalStateException("not reached in time: " + what);
  }

  interface Poller {
    /** Handles one poll's records; true when the consumer should stop. */
    boolean handle(KafkaShareConsumer<String, String> c, ConsumerRecords<String, String> rs) throws Exception;
  }

  /** Runs consumers in threads until each handler says stop (or the deadline); closes them. */
  static void run(List<KafkaShareConsumer<String, String>> consumers, List<Poller> pollers, AtomicBoolean done) throws Exception {
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    long deadline = System.currentTimeMillis() + DEADLINE_MS;
    for (int i = 0; i < consumers.size(); i++) {
      KafkaShareConsumer<String, String> c = consumers.get(i);
      Poller poller = pollers.get(i);
      Thread t = new Thread(() -> {
        try {
          while (!done.get() && System.currentTimeMillis() < deadline) {
            if (poller.handle(c, c.poll(Duration.ofMillis(200)))) break;
          }
          // Kafka 4.4's close does not acknowledge the last poll's records (implicit mode
          // included): they would be released to the others. Commit them first.
          c.commitSync();
        } catch (Throwable e) {
          failures.add(e);
        } finally {
          c.close();
        }
      });
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) t.join();
    if (!failures.isEmpty()) throw new RuntimeException(failures.get(0));
    check(done.get(), "all records handled");
  }

  static void accept(String name) throws Exception {
    Map<Long, List<Delivery>> deliveries = new ConcurrentHashMap<>();
    AtomicBoolean done = new AtomicBoolean();
    List<KafkaShareConsumer<String, String>> cs = new ArrayList<>();
    List<Poller> ps = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      final int id = i;
      cs.add(consumer(name, false));
      ps.add((c, rs) -> {
        for (ConsumerRecord<String, String> r : rs) deliveries.computeIfAbsent(r.offset(), k -> new CopyOnWriteArrayList<>()).add(new Delivery(r.offset(), count(r), id));
        if (deliveries.size() == records) done.set(true);
        return false;
      });
    }
    run(cs, ps, done);
    long total = deliveries.values().stream().mapToLong(List::size).sum();
    long firstDeliveries = deliveries.values().stream().flatMap(List::stream).filter(d -> d.count() == 1).count();
    System.out.println("accept.distinct=" + deliveries.size());
    System.out.println("accept.deliveries=" + total);
    System.out.println("accept.deliveryCount1=" + firstDeliveries);
  }

  static void ack(String name) throws Exception {
    Map<Long, List<Delivery>> deliveries = new ConcurrentHashMap<>();
    Set<Long> accepted = ConcurrentHashMap.newKeySet();
    Set<Long> rejected = ConcurrentHashMap.newKeySet();
    Map<Long, Integer> acceptedTimes = new ConcurrentHashMap<>();
    AtomicBoolean done = new AtomicBoolean();
    long alwaysReleased = java.util.stream.LongStream.range(0, records).filter(o -> o % 10 == 5).count();
    long toReject = java.util.stream.LongStream.range(0, records).filter(o -> o % 10 == 7).count();
    long toAccept = records - alwaysReleased - toReject;
    List<KafkaShareConsumer<String, String>> cs = new ArrayList<>();
    List<Poller> ps = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      final int id = i;
      cs.add(consumer(name, true));
      ps.add((c, rs) -> {
        for (ConsumerRecord<String, String> r : rs) {
          long o = r.offset();
          int n = count(r);
          deliveries.computeIfAbsent(o, k -> new CopyOnWriteArrayList<>()).add(new Delivery(o, n, id));
          if (o % 10 == 5 || (o % 10 == 3 && n == 1)) c.acknowledge(r, AcknowledgeType.RELEASE);
          else if (o % 10 == 7) {
            c.acknowledge(r, AcknowledgeType.REJECT);
            rejected.add(o);
          } else {
            c.acknowledge(r, AcknowledgeType.ACCEPT);
            accepted.add(o);
            acceptedTimes.merge(o, 1, Integer::sum);
          }
        }
        if (id == 0 && !rs.isEmpty()) c.commitSync();
        long limitDeliveries = deliveries.entrySet().stream().filter(e -> e.getKey() % 10 == 5).mapToLong(e -> e.getValue().size()).sum();
        if (accepted.size() == toAccept && rejected.size() == toReject && limitDeliveries == 3 * alwaysReleased) done.set(true);
        return false;
      });
    }
    run(cs, ps, done);
    TreeMap<String, Long> byKind = new TreeMap<>();
    for (List<Delivery> ds : deliveries.values()) {
      long o = ds.get(0).offset();
      String kind = o % 10 == 3 ? "released-once" : o % 10 == 5 ? "always-released" : o % 10 == 7 ? "rejected" : "accepted";
      List<Integer> counts = ds.stream().map(Delivery::count).sorted().toList();
      byKind.merge(kind + ":" + counts, 1L, Long::sum);
    }
    System.out.println("ack.deliveries=" + byKind);
    System.out.println("ack.acceptedMoreThanOnce=" + acceptedTimes.values().stream().filter(n -> n > 1).count());
    // Nothing is left to deliver: a fresh member gets nothing in three empty polls in a row.
    try (KafkaShareConsumer<String, String> c = consumer(name, false)) {
      int empty = 0;
      int after = 0;
      long deadline = System.currentTimeMillis() + DEADLINE_MS;
      while (empty < 3 && System.currentTimeMillis() < deadline) {
        ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(1000));
        after += rs.count();
        empty = rs.isEmpty() ? empty + 1 : 0;
      }
      System.out.println("ack.deliveredAfterwards=" + after);
    }
  }

  static void stall(String name) throws Exception {
    Set<Long> held = ConcurrentHashMap.newKeySet();
    Map<Long, List<Delivery>> others = new ConcurrentHashMap<>();
    // The staller: polls until it holds records, then holds them without acknowledging.
    KafkaShareConsumer<String, String> staller = consumer(name, true);
    long deadline = System.currentTimeMillis() + DEADLINE_MS;
    while (held.isEmpty() && System.currentTimeMillis() < deadline) {
      for (ConsumerRecord<String, String> r : staller.poll(Duration.ofMillis(200))) held.add(r.offset());
    }
    check(!held.isEmpty(), "the staller holds records");
    AtomicBoolean done = new AtomicBoolean();
    List<KafkaShareConsumer<String, String>> cs = new ArrayList<>();
    List<Poller> ps = new ArrayList<>();
    for (int i = 1; i <= 2; i++) {
      final int id = i;
      cs.add(consumer(name, false));
      ps.add((c, rs) -> {
        for (ConsumerRecord<String, String> r : rs) others.computeIfAbsent(r.offset(), k -> new CopyOnWriteArrayList<>()).add(new Delivery(r.offset(), count(r), id));
        if (others.size() == records) done.set(true);
        return false;
      });
    }
    run(cs, ps, done);
    staller.close();
    boolean heldRedelivered = held.stream().allMatch(o -> others.containsKey(o) && others.get(o).stream().allMatch(d -> d.count() >= 2));
    System.out.println("stall.held=" + !held.isEmpty());
    System.out.println("stall.heldRedeliveredWithCountUp=" + heldRedelivered);
    System.out.println("stall.distinct=" + others.size());
  }
}
