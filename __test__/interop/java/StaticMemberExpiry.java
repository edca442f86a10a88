/*
 * Kafka's Java consumer as a static member (KIP-345) that goes away without a word: it joins
 * `group` with group.instance.id and the given session.timeout.ms, gets its assignment, and is
 * closed (a static member sends no LeaveGroup). Then Kafka's Admin deletes the group, once at
 * once and then every 100 ms until it is gone (at most 30 s). Run as a single source file:
 *
 *   java -cp 'tools/kafka/.jars/*' StaticMemberExpiry.java <bootstrap> <topic> <group> <sessionTimeoutMs> [key=value]...
 *
 * It prints, one per line (or only `joinError=<exception>` when the broker refuses the join):
 *   assigned=<partitions>      what the member was given before it closed
 *   first=<error or NONE>      DeleteGroups right after the close (the member is still there)
 *   deletedAfterMs=<ms>        from the end of close() to the DeleteGroups that succeeded
 */
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringDeserializer;

public class StaticMemberExpiry {
  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], topic = args[1], group = args[2];
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("group.id", group);
    props.put("group.instance.id", group + "-instance");
    props.put("session.timeout.ms", args[3]);
    props.put("heartbeat.interval.ms", String.valueOf(Math.min(500, Integer.parseInt(args[3]) / 3)));
    props.put("key.deserializer", StringDeserializer.class.getName());
    props.put("value.deserializer", StringDeserializer.class.getName());
    props.put("enable.auto.commit", "false");
    for (int i = 4; i < args.length; i++) props.put(args[i].substring(0, args[i].indexOf('=')), args[i].substring(args[i].indexOf('=') + 1));
    KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props);
    consumer.subscribe(List.of(topic));
    long deadline = System.currentTimeMillis() + 60_000;
    try {
      while (consumer.assignment().isEmpty() && System.currentTimeMillis() < deadline) consumer.poll(Duration.ofMillis(100));
    } catch (KafkaException e) {
      // The broker refused the join (e.g. a session timeout outside its group.min/max.session.timeout.ms).
      System.out.println("joinError=" + e.getClass().getSimpleName());
      consumer.close();
      return;
    }
    System.out.println("assigned=" + consumer.assignment().size());
    consumer.close();
    long closed = System.currentTimeMillis();
    Properties adminProps = new Properties();
    adminProps.put("bootstrap.servers", bootstrap);
    try (Admin admin = Admin.create(adminProps)) {
      String first = delete(admin, group);
      System.out.println("first=" + first);
      String last = first;
      while (!last.equals("NONE") && System.currentTimeMillis() < closed + 30_000) {
        Thread.sleep(100);
        last = delete(admin, group);
      }
      System.out.println(last.equals("NONE") ? "deletedAfterMs=" + (System.currentTimeMillis() - closed) : "notDeleted=" + last);
    }
  }

  /** NONE, or the simple name of the error DeleteGroups answered. */
  static String delete(Admin admin, String group) throws InterruptedException {
    try {
      admin.deleteConsumerGroups(List.of(group)).all().get();
      return "NONE";
    } catch (ExecutionException e) {
      return e.getCause().getClass().getSimpleName();
    }
  }
}
