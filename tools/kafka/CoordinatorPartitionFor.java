// Kafka's placement of group ids and transactional ids in their coordinator topics, computed by
// Kafka's own code: Utils.abs(key.hashCode()) % numPartitions (GroupCoordinatorService.partitionFor,
// TransactionStateManager.partitionFor). Reads base64 keys (UTF-8), one a line, on stdin; prints,
// per key, the partition for each count given as arguments, tab separated.
//
//   java -cp 'tools/kafka/.jars/*' tools/kafka/CoordinatorPartitionFor.java 50 7 1 < keys
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.kafka.common.utils.Utils;

public class CoordinatorPartitionFor {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String key = new String(Base64.getDecoder().decode(line), StandardCharsets.UTF_8);
            for (int i = 0; i < args.length; i++) {
                if (i > 0) out.append('\t');
                out.append(Utils.abs(key.hashCode()) % Integer.parseInt(args[i]));
            }
            out.append('\n');
        }
        System.out.print(out);
    }
}
