// Runs Kafka's own RangeAssignor and RoundRobinAssignor (kafka-clients) over the cases read from
// stdin and prints their assignments, for __test__/client/assignors.test.ts to compare with
// ferrolog's. One case per line:
//   assignor;topic=partitions,topic=partitions;memberId/instanceId/topic+topic,memberId//topic
// (an empty instanceId is a dynamic member). One output line per case:
//   memberId=topic-p+topic-p,memberId=   (members in input order, partitions in Java's order)
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

public class AssignorCheck {
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    Node node = new Node(0, "localhost", 9092);
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] parts = line.split(";", -1);
      ConsumerPartitionAssignor assignor = parts[0].equals("range") ? new RangeAssignor() : new RoundRobinAssignor();
      List<PartitionInfo> partitions = new ArrayList<>();
      if (!parts[1].isEmpty()) {
        for (String t : parts[1].split(",")) {
          String[] kv = t.split("=");
          for (int p = 0; p < Integer.parseInt(kv[1]); p++)
            partitions.add(new PartitionInfo(kv[0], p, node, new Node[] {node}, new Node[] {node}));
        }
      }
      Cluster cluster = new Cluster("c", List.of(node), partitions, Set.of(), Set.of());
      Map<String, Subscription> subs = new LinkedHashMap<>();
      for (String m : parts[2].split(",")) {
        String[] f = m.split("/", -1);
        Subscription s = new Subscription(f[2].isEmpty() ? List.of() : Arrays.asList(f[2].split("\\+")));
        if (!f[1].isEmpty()) s.setGroupInstanceId(Optional.of(f[1]));
        subs.put(f[0], s);
      }
      Map<String, ConsumerPartitionAssignor.Assignment> result = assignor.assign(cluster, new GroupSubscription(subs)).groupAssignment();
      StringBuilder out = new StringBuilder();
      for (String memberId : subs.keySet()) {
        if (out.length() > 0) out.append(',');
        out.append(memberId).append('=');
        List<String> tps = new ArrayList<>();
        for (TopicPartition tp : result.get(memberId).partitions()) tps.add(tp.topic() + "-" + tp.partition());
        out.append(String.join("+", tps));
      }
      System.out.println(out);
    }
  }
}
