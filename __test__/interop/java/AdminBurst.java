/*
 * Kafka's Java AdminClient making topic changes all at once: each createTopics/deleteTopics call
 * is its own request, spread over 10 AdminClients (an AdminClient has one request in flight per
 * connection), so the broker gets them on 10 connections at once. Run as a single source file
 * (java -cp 'tools/kafka/.jars/*' AdminBurst.java <bootstrap> <n>):
 *
 *   1. n topics burst-<i> of 2 partitions, n CreateTopics at once;
 *   2. burst-0 .. burst-<n/2 - 1> deleted while n topics second-<i> of 1 partition are created,
 *      all at once;
 *   3. prints the topics the broker lists, one a line, sorted.
 *
 * Any request that fails fails the program (exit 1, the error on stderr).
 */
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.KafkaFuture;

public class AdminBurst {
  static final int CLIENTS = 10;

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0];
    int n = Integer.parseInt(args[1]);
    Properties props = new Properties();
    props.put("bootstrap.servers", bootstrap);
    props.put("request.timeout.ms", "30000");
    props.put("default.api.timeout.ms", "60000");
    List<Admin> admins = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) admins.add(Admin.create(props));
    try {
      List<KafkaFuture<Void>> first = new ArrayList<>();
      for (int i = 0; i < n; i++) first.add(admins.get(i % CLIENTS).createTopics(List.of(new NewTopic("burst-" + i, 2, (short) 1))).all());
      for (KafkaFuture<Void> f : first) f.get();

      List<KafkaFuture<Void>> mixed = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        if (i < n / 2) mixed.add(admins.get(i % CLIENTS).deleteTopics(List.of("burst-" + i)).all());
        mixed.add(admins.get((i + 1) % CLIENTS).createTopics(List.of(new NewTopic("second-" + i, 1, (short) 1))).all());
      }
      for (KafkaFuture<Void> f : mixed) f.get();

      for (String name : new TreeSet<>(admins.get(0).listTopics().names().get())) System.out.println(name);
    } finally {
      for (Admin admin : admins) admin.close();
    }
  }
}
