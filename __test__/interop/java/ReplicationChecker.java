/*
 * Kafka's Java clients as the judge of a replicated cluster under faults (issue #14). One source
 * file, four modes; compiled once (javac -cp 'tools/kafka/.jars/*' -d DIR) or run as a source file:
 *
 *   produce BOOTSTRAP TOPIC [--partitions N] [--rate R] [--acks all|1|0] [--no-idempotence]
 *           [--retries N] [--max N] [--prefix S] [--delivery-timeout-ms MS] [--request-timeout-ms MS]
 *       Sends, until standard input ends (with --max: N records, whatever stdin does), R records a second (default 200)
 *       spread over partitions 0..N-1 in turn, each to its partition explicitly, with the values
 *       S + "p<partition>-<n>" (n = 0, 1, 2, ... per partition), so no value is ever sent twice
 *       by the application. Defaults: acks=all, enable.idempotence=true, retries as Kafka's
 *       (unbounded within delivery.timeout.ms, default 120000). Prints one line per record:
 *         ACK <partition> <offset> <value> <epoch ms>
 *         ERR <partition> <value> <epoch ms> <exception class> <retriable|fatal> <message>
 *       then, once every send is answered, DONE sent=.. acked=.. failed=..
 *
 *   group BOOTSTRAP TOPIC GROUP [--members N]
 *       N KafkaConsumers (default 2) in one consumer group, subscribed to TOPIC, committing
 *       synchronously after every poll (auto.offset.reset=earliest). Prints every record as
 *         SEEN <partition> <offset> <value>
 *       and the group's events (ASSIGNED/REVOKED <member> <partitions>, ERR <member> <class>
 *       <message> for a failed poll or commit). When standard input ends it drains: polls until
 *       every partition's committed offset reaches the end offset read then, then DONE.
 *
 *   verify BOOTSTRAP TOPIC [--acks FILE]... [--seen FILE]... [--timeout-ms MS]
 *       Reads every partition of TOPIC from its beginning to its end offset (the high watermark)
 *       with an assigned consumer and checks it against the ACK lines of the --acks files (the
 *       output of produce) and the SEEN lines of the --seen files (the output of group):
 *         lost          an acknowledged record not at its acknowledged offset (absent, or another
 *                       value there), listed with its ack line's time;
 *         duplicates    a value at more than one offset;
 *         offsetsReused an offset served twice or going backwards within a partition;
 *         groupMissed   an acknowledged value the group never consumed (--seen given).
 *       Prints one JSON object; exits 1 if any of the four is not zero.
 *
 *   create BOOTSTRAP TOPIC PARTITIONS REPLICATION [KEY=VALUE]...
 *       Creates TOPIC with Kafka's AdminClient (topic configs as KEY=VALUE).
 *
 * Every mode also takes `--command-config FILE` (as Kafka's tools): client properties (security.protocol,
 * sasl.*, ssl.*) set on each of its clients over the defaults above.
 *
 * The Java client's own retries, idempotence and leader discovery are the point: this is what an
 * application sees. Log4j warnings go to stderr (run with tools/kafka/log4j2-tools.properties).
 */
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class ReplicationChecker {
  /** Lines go out through one lock, flushed every 100 ms and at the end. */
  static final PrintStream OUT = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);

  static synchronized void line(String s) {
    OUT.println(s);
  }

  static synchronized void flush() {
    OUT.flush();
  }

  /** The --command-config file's properties, put over every client's (empty without one). */
  static final Properties COMMAND_CONFIG = new Properties();

  public static void main(String[] args) throws Exception {
    List<String> rest = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--command-config")) {
        try (java.io.Reader r = Files.newBufferedReader(Path.of(args[++i]), StandardCharsets.UTF_8)) {
          COMMAND_CONFIG.load(r);
        }
      } else rest.add(args[i]);
    }
    args = rest.toArray(new String[0]);
    Thread flusher = new Thread(() -> {
      for (;;) {
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        }
        flush();
      }
    });
    flusher.setDaemon(true);
    flusher.start();
    int status;
    switch (args.length > 0 ? args[0] : "") {
      case "produce" -> status = produce(args);
      case "group" -> status = group(args);
      case "verify" -> status = verify(args);
      case "create" -> status = create(args);
      default -> {
        System.err.println("usage: ReplicationChecker produce|group|verify|create ... (see the file's comment)");
        status = 2;
      }
    }
    flush();
    System.exit(status);
  }

  /** --name value options after `skip` positional arguments; repeated ones are kept in order. */
  static Map<String, List<String>> options(String[] args, int skip) {
    Map<String, List<String>> out = new HashMap<>();
    for (int i = skip; i < args.length; i++) {
      String name = args[i];
      if (!name.startsWith("--")) throw new IllegalArgumentException("unexpected argument " + name);
      boolean flag = name.equals("--no-idempotence");
      String value = flag ? "" : args[++i];
      out.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    return out;
  }

  static String opt(Map<String, List<String>> o, String name, String dflt) {
    List<String> v = o.get(name);
    return v == null ? dflt : v.get(v.size() - 1);
  }

  /** Completes when standard input reaches its end (the caller's way of saying stop). */
  static AtomicBoolean stdinClosed() {
    AtomicBoolean closed = new AtomicBoolean(false);
    Thread t = new Thread(() -> {
      try {
        while (System.in.read() >= 0) {}
      } catch (IOException ignored) {
      }
      closed.set(true);
    });
    t.setDaemon(true);
    t.start();
    return closed;
  }

  static String oneLine(String s) {
    return s == null ? "" : s.replace('\n', ' ').replace('\r', ' ');
  }

  // ---------------------------------------------------------------------------------- produce

  static int produce(String[] args) throws Exception {
    String bootstrap = args[1];
    String topic = args[2];
    Map<String, List<String>> o = options(args, 3);
    int partitions = Integer.parseInt(opt(o, "--partitions", "3"));
    double rate = Double.parseDouble(opt(o, "--rate", "200"));
    long max = Long.parseLong(opt(o, "--max", String.valueOf(Long.MAX_VALUE)));
    String prefix = opt(o, "--prefix", "");
    boolean idempotent = !o.containsKey("--no-idempotence");

    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("acks", opt(o, "--acks", "all"));
    props.put("enable.idempotence", String.valueOf(idempotent));
    if (o.containsKey("--retries")) props.put("retries", opt(o, "--retries", "0"));
    props.put("delivery.timeout.ms", opt(o, "--delivery-timeout-ms", "120000"));
    props.put("request.timeout.ms", opt(o, "--request-timeout-ms", "10000"));
    props.put("linger.ms", "5");
    props.put("max.block.ms", "30000");
    props.put("retry.backoff.ms", "100");
    props.put("retry.backoff.max.ms", "1000");
    props.put("reconnect.backoff.max.ms", "1000");
    props.put("metadata.max.age.ms", "5000");
    props.put("key.serializer", StringSerializer.class.getName());
    props.put("value.serializer", StringSerializer.class.getName());

    AtomicBoolean stop = o.containsKey("--max") ? new AtomicBoolean(false) : stdinClosed();
    AtomicLong acked = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    // At most this many sends unanswered: while no leader takes writes the producer waits
    // here instead of filling buffer.memory.
    Semaphore inFlight = new Semaphore(2000);
    long[] next = new long[partitions];
    long sent = 0;
    long start = System.nanoTime();
    props.putAll(COMMAND_CONFIG);
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
      while (!stop.get() && sent < max) {
        long due = start + (long) (sent * 1e9 / rate);
        long wait = due - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
          continue;
        }
        if (!inFlight.tryAcquire(50, TimeUnit.MILLISECONDS)) continue;
        int p = (int) (sent % partitions);
        String value = prefix + "p" + p + "-" + next[p]++;
        sent++;
        producer.send(new ProducerRecord<>(topic, p, null, value), (md, e) -> {
          inFlight.release();
          long now = System.currentTimeMillis();
          if (e == null) {
            acked.incrementAndGet();
            line("ACK " + md.partition() + " " + md.offset() + " " + value + " " + now);
          } else {
            failed.incrementAndGet();
            line("ERR " + p + " " + value + " " + now + " " + e.getClass().getName() + " "
                + (e instanceof RetriableException ? "retriable" : "fatal") + " " + oneLine(e.getMessage()));
          }
        });
      }
      producer.flush();
    }
    line("DONE sent=" + sent + " acked=" + acked.get() + " failed=" + failed.get());
    return 0;
  }

  // ---------------------------------------------------------------------------------- group

  static Properties consumerProps(String bootstrap, String group) {
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    if (group != null) props.put("group.id", group);
    props.put("enable.auto.commit", "false");
    props.put("auto.offset.reset", "earliest");
    props.put("session.timeout.ms", "10000");
    props.put("heartbeat.interval.ms", "1000");
    props.put("max.poll.interval.ms", "60000");
    props.put("request.timeout.ms", "10000");
    props.put("default.api.timeout.ms", "20000");
    props.put("metadata.max.age.ms", "5000");
    props.put("reconnect.backoff.max.ms", "1000");
    props.put("retry.backoff.max.ms", "1000");
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    props.putAll(COMMAND_CONFIG);
    return props;
  }

  static int group(String[] args) throws Exception {
    String bootstrap = args[1];
    String topic = args[2];
    String groupId = args[3];
    Map<String, List<String>> o = options(args, 4);
    int members = Integer.parseInt(opt(o, "--members", "2"));
    AtomicBoolean stop = stdinClosed();
    List<Thread> threads = new ArrayList<>();
    AtomicLong failures = new AtomicLong();
    for (int m = 0; m < members; m++) {
      int member = m;
      Thread t = new Thread(() -> {
        try {
          member(bootstrap, topic, groupId, member, stop);
        } catch (Throwable e) {
          failures.incrementAndGet();
          line("ERR " + member + " " + e.getClass().getName() + " fatal " + oneLine(e.getMessage()));
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) t.join();
    line("DONE members=" + members + " failed=" + failures.get());
    return failures.get() == 0 ? 0 : 1;
  }

  static void member(String bootstrap, String topic, String groupId, int member, AtomicBoolean stop) {
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(bootstrap, groupId))) {
      consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> ps) {
          line("REVOKED " + member + " " + partitionsOf(ps));
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> ps) {
          line("ASSIGNED " + member + " " + partitionsOf(ps));
        }
      });
      Map<TopicPartition, Long> drainTo = null;
      long drainDeadline = Long.MAX_VALUE;
      for (;;) {
        if (drainTo == null && stop.get()) {
          drainTo = endOffsetsOfAll(consumer, topic);
          drainDeadline = System.currentTimeMillis() + 60_000;
        }
        try {
          ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
          for (ConsumerRecord<String, String> r : records) line("SEEN " + r.partition() + " " + r.offset() + " " + r.value());
          if (!records.isEmpty()) consumer.commitSync();
        } catch (RuntimeException e) {
          line("ERR " + member + " " + e.getClass().getName() + " " + (e instanceof RetriableException ? "retriable" : "other") + " " + oneLine(e.getMessage()));
        }
        // Drained once the group's committed offsets (which every member sees) reach the end
        // offsets: then no member has anything left, whoever owns what.
        if (drainTo != null && committedReach(consumer, drainTo)) break;
        if (System.currentTimeMillis() > drainDeadline) throw new IllegalStateException("group did not drain in 60 s");
      }
    }
  }

  static String partitionsOf(Collection<TopicPartition> ps) {
    List<Integer> ids = new ArrayList<>();
    for (TopicPartition tp : ps) ids.add(tp.partition());
    ids.sort(null);
    return ids.toString().replace(" ", "");
  }

  static Map<TopicPartition, Long> endOffsetsOfAll(KafkaConsumer<String, String> consumer, String topic) {
    List<TopicPartition> tps = new ArrayList<>();
    for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofSeconds(30))) tps.add(new TopicPartition(topic, p.partition()));
    return consumer.endOffsets(tps, Duration.ofSeconds(30));
  }

  static boolean committedReach(KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> ends) {
    try {
      Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(ends.keySet(), Duration.ofSeconds(10));
      for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
        if (e.getValue() == 0) continue;
        OffsetAndMetadata c = committed.get(e.getKey());
        if (c == null || c.offset() < e.getValue()) return false;
      }
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  // ---------------------------------------------------------------------------------- verify

  record Ack(int partition, long offset, String value, long time) {}

  static int verify(String[] args) throws Exception {
    String bootstrap = args[1];
    String topic = args[2];
    Map<String, List<String>> o = options(args, 3);
    long timeoutMs = Long.parseLong(opt(o, "--timeout-ms", "120000"));

    List<Ack> acks = new ArrayList<>();
    long ackedFailures = 0;
    for (String file : o.getOrDefault("--acks", List.of())) {
      for (String l : Files.readAllLines(Path.of(file), StandardCharsets.UTF_8)) {
        String[] f = l.split(" ");
        if (f[0].equals("ACK")) acks.add(new Ack(Integer.parseInt(f[1]), Long.parseLong(f[2]), f[3], Long.parseLong(f[4])));
        else if (f[0].equals("ERR")) ackedFailures++;
      }
    }
    Set<String> seen = new java.util.HashSet<>();
    long seenLines = 0;
    boolean groupChecked = o.containsKey("--seen");
    for (String file : o.getOrDefault("--seen", List.of())) {
      for (String l : Files.readAllLines(Path.of(file), StandardCharsets.UTF_8)) {
        if (!l.startsWith("SEEN ")) continue;
        seen.add(l.split(" ", 4)[3]);
        seenLines++;
      }
    }

    // The whole topic: partition -> offset -> value.
    Map<Integer, TreeMap<Long, String>> log = new TreeMap<>();
    Map<String, List<String>> at = new HashMap<>();
    List<String> reused = new ArrayList<>();
    Map<Integer, Long> ends = new TreeMap<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps(bootstrap, null))) {
      List<TopicPartition> tps = new ArrayList<>();
      for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofSeconds(30))) tps.add(new TopicPartition(topic, p.partition()));
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
      for (Map.Entry<TopicPartition, Long> e : end.entrySet()) ends.put(e.getKey().partition(), e.getValue());
      long deadline = System.currentTimeMillis() + timeoutMs;
      Map<Integer, Long> last = new HashMap<>();
      for (;;) {
        boolean done = true;
        for (TopicPartition tp : tps) if (consumer.position(tp) < end.get(tp)) done = false;
        if (done) break;
        if (System.currentTimeMillis() > deadline) throw new IllegalStateException("could not read to the end offsets " + end + " in " + timeoutMs + " ms");
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
          if (r.offset() >= end.get(new TopicPartition(topic, r.partition()))) continue;
          Long prev = last.put(r.partition(), r.offset());
          if (prev != null && r.offset() <= prev) reused.add(r.partition() + ":" + r.offset());
          log.computeIfAbsent(r.partition(), k -> new TreeMap<>()).put(r.offset(), r.value());
          at.computeIfAbsent(r.value(), k -> new ArrayList<>()).add(r.partition() + ":" + r.offset());
        }
      }
    }

    List<String> lost = new ArrayList<>();
    long lostCount = 0;
    Set<String> ackedValues = new java.util.HashSet<>();
    long groupMissed = 0;
    List<String> groupMissedFirst = new ArrayList<>();
    for (Ack a : acks) {
      ackedValues.add(a.value);
      String there = log.getOrDefault(a.partition, new TreeMap<>()).get(a.offset);
      if (!a.value.equals(there)) {
        lostCount++;
        if (lost.size() < 100) {
          List<String> elsewhere = at.get(a.value);
          lost.add(String.format("{\"partition\":%d,\"offset\":%d,\"value\":\"%s\",\"ackedAt\":%d,\"found\":%s,\"foundAt\":\"%s\"}",
              a.partition, a.offset, a.value, a.time, there == null ? "null" : "\"" + there + "\"", elsewhere == null ? "" : String.join(",", elsewhere)));
        }
      }
      if (groupChecked && !seen.contains(a.value)) {
        groupMissed++;
        if (groupMissedFirst.size() < 20) groupMissedFirst.add("\"" + a.value + "\"");
      }
    }
    List<String> duplicates = new ArrayList<>();
    long duplicateCount = 0;
    long unackedPresent = 0;
    long records = 0;
    for (Map.Entry<String, List<String>> e : at.entrySet()) {
      records += e.getValue().size();
      if (e.getValue().size() > 1) {
        duplicateCount++;
        if (duplicates.size() < 100) duplicates.add("{\"value\":\"" + e.getKey() + "\",\"at\":\"" + String.join(",", e.getValue()) + "\"}");
      }
      if (!ackedValues.contains(e.getKey())) unackedPresent++;
    }
    StringBuilder endJson = new StringBuilder("{");
    for (Map.Entry<Integer, Long> e : ends.entrySet()) endJson.append(endJson.length() > 1 ? "," : "").append("\"").append(e.getKey()).append("\":").append(e.getValue());
    endJson.append("}");
    line("{\"records\":" + records + ",\"acked\":" + acks.size() + ",\"failedSends\":" + ackedFailures
        + ",\"lostCount\":" + lostCount + ",\"duplicateCount\":" + duplicateCount + ",\"offsetsReused\":" + reused.size()
        + ",\"unackedPresent\":" + unackedPresent
        + ",\"groupChecked\":" + groupChecked + ",\"groupSeenLines\":" + seenLines + ",\"groupMissed\":" + groupMissed
        + ",\"endOffsets\":" + endJson
        + ",\"lost\":[" + String.join(",", lost) + "],\"duplicates\":[" + String.join(",", duplicates) + "]"
        + ",\"reused\":[" + String.join(",", reused.subList(0, Math.min(100, reused.size())).stream().map(s -> "\"" + s + "\"").toList()) + "]"
        + ",\"groupMissedFirst\":[" + String.join(",", groupMissedFirst) + "]}");
    return lostCount + duplicateCount + reused.size() + groupMissed == 0 ? 0 : 1;
  }

  // ---------------------------------------------------------------------------------- create

  static int create(String[] args) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[1]);
    props.put("default.api.timeout.ms", "60000");
    Map<String, String> configs = new LinkedHashMap<>();
    for (int i = 5; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      configs.put(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    props.putAll(COMMAND_CONFIG);
    try (Admin admin = Admin.create(props)) {
      admin.createTopics(List.of(new NewTopic(args[2], Integer.parseInt(args[3]), Short.parseShort(args[4])).configs(configs))).all().get();
    }
    line("CREATED " + args[2]);
    return 0;
  }
}
