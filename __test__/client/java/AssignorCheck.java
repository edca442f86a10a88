// Runs Kafka's own RangeAssignor and RoundRobinAssignor (kafka-clients) over the cases read from
// stdin and prints their assignments, for __test__/client/assignors.test.ts to compare with
// ferrolog's. One case per line:
//   assignor;nodes;topics;members
//   nodes     id:rack,id:rack,...            (an empty rack is a broker without broker.rack)
//   topics    topic=r.r|r|r.r.r,...          (per partition, '|'-separated: its replicas' node ids)
//   members   memberId/instanceId/rack/topic+topic,...   (empty instanceId: dynamic; empty rack: none)
// One output line per case:
//   memberId=topic-p+topic-p,memberId=       (members in input order, partitions in Java's order)
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
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] parts = line.split(";", -1);
      ConsumerPartitionAssignor assignor = parts[0].equals("range") ? new RangeAssignor() : new RoundRobinAssignor();
      Map<Integer, Node> nodes = new LinkedHashMap<>();
      for (String n : parts[1].split(",")) {
        String[] kv = n.split(":", -1);
        int id = Integer.parseInt(kv[0]);
        nodes.put(id, new Node(id, "localhost", 9092 + id, kv[1].isEmpty() ? null : kv[1]));
      }
      List<PartitionInfo> partitions = new ArrayList<>();
      if (!parts[2].isEmpty()) {
        for (String t : parts[2].split(",")) {
          String[] kv = t.split("=");
          String[] perPartition = kv[1].split("\\|");
          for (int p = 0; p < perPartition.length; p++) {
            List<Node> replicas = new ArrayList<>();
            for (String id : perPartition[p].split("\\.")) replicas.add(nodes.get(Integer.parseInt(id)));
            Node[] r = replicas.toArray(new Node[0]);
            partitions.add(new PartitionInfo(kv[0], p, r[0], r, r));
          }
        }
      }
      Cluster cluster = new Cluster("c", nodes.values(), partitions, Set.of(), Set.of());
      Map<String, Subscription> subs = new LinkedHashMap<>();
      for (String m : parts[3].split(",")) {
        String[] f = m.split("/", -1);
        List<String> topics = f[3].isEmpty() ? List.of() : Arrays.asList(f[3].split("\\+"));
        Subscription s = new Subscription(topics, null, List.of(), -1, f[2].isEmpty() ? Optional.empty() : Optional.of(f[2]));
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
