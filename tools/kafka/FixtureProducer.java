// Produces the deterministic content of __test__/fixtures/kafka/fixture-0 into a real broker.
// Compiled and run by tools/kafka/make-fixtures.sh against the jars from fetch-jars.sh:
//
//   javac -cp 'tools/kafka/.jars/*' -d tools/kafka/.classes tools/kafka/FixtureProducer.java
//   java -cp 'tools/kafka/.classes:tools/kafka/.jars/*' FixtureProducer BOOTSTRAP TOPIC PLAN_OUT
//
// Every record's key, value, headers and timestamp are a pure function of its sequence number
// `seq` (0, 1, 2, ... in send order; see record() below). One "step" = some records sent with
// one producer and then flush(): with linger.ms at one hour and batch.size at 1 MiB the flush is
// what sends them, so each step becomes exactly one record batch on the broker.
//
// Producers (one per name, all kept open so that idempotent ones keep their producerId and
// sequence numbers across steps):
//   none, gzip, snappy, lz4, zstd   idempotent (Kafka's default), that compression.type
//   plain-none, plain-zstd          enable.idempotence=false, acks=1 (producerId -1 batches)
//   txn-commit, txn-abort           transactional (lz4 / none): one committed and one aborted
//                                   transaction at the end, so the log has control batches
//                                   (COMMIT, ABORT markers) and the segment gets a .txnindex
//
// PLAN_OUT gets one JSON object per line per data record: the offset the broker acknowledged,
// seq, producer, compression, timestamp, key, value, headers (key + value, null allowed),
// and for transactional ones the outcome. fixture-expected.py checks it against
// DumpLogSegments' view of the files and takes the header values from it (DumpLogSegments
// prints header keys only).

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

public final class FixtureProducer {
    static final long BASE_TS = 1_700_000_000_000L; // 2023-11-14T22:13:20Z
    static final String[] WORDS = {
        "log", "segment", "offset", "index", "batch", "record", "header", "epoch",
        "leader", "follower", "fetch", "produce", "commit", "abort", "marker", "kafka",
        "ferrolog", "zero-copy", "slice", "purgatory", "session", "replica", "watermark", "stable",
        "crc32c", "varint", "zigzag", "magic", "timestamp", "compaction", "retention", "roll",
    };
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};

    record Rec(int seq, long ts, byte[] key, byte[] value, List<Header> headers) { }

    static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** The record with sequence number seq. All special cases are listed here. */
    static Rec record(int seq) {
        long ts = BASE_TS + seq * 1000L;
        if (seq % 13 == 5) ts -= 5500; // older than the record before it (non-monotonic)

        String key = String.format("key-%05d", seq);
        if (seq % 5 == 3) key = null;     // null key
        if (seq == 17) key = "";          // empty, non-null key

        StringBuilder v = new StringBuilder("value " + seq + ":");
        long x = 0x9E3779B97F4A7C15L * (seq + 1); // deterministic word choice
        int words = 4 + (seq * 7) % 57;
        for (int i = 0; i < words; i++) {
            x ^= x << 13; x ^= x >>> 7; x ^= x << 17;
            v.append(' ').append(WORDS[(int) ((x >>> 33) % WORDS.length)]);
        }
        String value = v.toString();
        if (seq == 7) value = "unicode: h\u00e9llo w\u00f6rld \u2713 \u65e5\u672c\u8a9e";
        if (seq == 42) value = null;      // tombstone
        if (seq == 43) value = "";        // empty value

        List<Header> headers = new ArrayList<>();
        if (seq % 3 >= 1) headers.add(new RecordHeader("seq", utf8(Integer.toString(seq))));
        if (seq % 3 == 2) headers.add(new RecordHeader("trace", utf8(String.format("t-%08x", seq * 2654435761L & 0xffffffffL))));
        if (seq == 11) headers.add(new RecordHeader("nullhdr", null));
        if (seq == 12) {
            headers.add(new RecordHeader("dup", utf8("a")));
            headers.add(new RecordHeader("dup", utf8("b")));
        }
        return new Rec(seq, ts, utf8(key), utf8(value), headers);
    }

    static KafkaProducer<byte[], byte[]> producer(String bootstrap, String name, String codec,
                                                  boolean idempotent, String txnId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "fixture-" + name);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "3600000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "3700000");
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(1 << 20));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, Boolean.toString(idempotent));
        p.put(ProducerConfig.ACKS_CONFIG, idempotent ? "all" : "1");
        if (txnId != null) p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
        return new KafkaProducer<>(p);
    }

    static String json(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }

    static String str(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: FixtureProducer BOOTSTRAP TOPIC PLAN_OUT");
            System.exit(2);
        }
        String bootstrap = args[0], topic = args[1];
        Path planOut = Path.of(args[2]);

        // Producers are created at their first step, one after the other, so that the broker hands
        // out producer ids in a fixed order (a fresh cluster starts at 0): none=0, gzip=1,
        // snappy=2, lz4=3, zstd=4, then the transactional one, then the tail one.
        Map<String, KafkaProducer<byte[], byte[]>> producers = new LinkedHashMap<>();
        Map<String, String> codecOf = new LinkedHashMap<>();
        for (String c : CODECS) codecOf.put(c, c);
        codecOf.put("plain-none", "none");
        codecOf.put("plain-zstd", "zstd");

        // The steps: (producer, record count). Six rounds over the five codecs with varying
        // batch sizes, two non-idempotent batches in between.
        List<Object[]> steps = new ArrayList<>();
        int[] counts = {1, 5, 12, 20, 3, 9};
        for (int round = 0; round < counts.length; round++) {
            for (int i = 0; i < CODECS.length; i++) {
                steps.add(new Object[]{CODECS[i], counts[(round + i) % counts.length]});
            }
            if (round == 1) steps.add(new Object[]{"plain-none", 4});
            if (round == 3) steps.add(new Object[]{"plain-zstd", 6});
        }

        int seq = 0;
        try (PrintWriter plan = new PrintWriter(Files.newBufferedWriter(planOut, StandardCharsets.UTF_8))) {
            for (Object[] step : steps) {
                String name = (String) step[0];
                KafkaProducer<byte[], byte[]> p = producers.computeIfAbsent(name,
                    n -> producer(bootstrap, n, codecOf.get(n), !n.startsWith("plain-"), null));
                seq = sendBatch(p, name, codecOf.get(name), topic, seq, (Integer) step[1], plan, null);
            }
            for (KafkaProducer<byte[], byte[]> p : producers.values()) p.close();

            // Transactions: one committed (lz4), one aborted (none).
            try (KafkaProducer<byte[], byte[]> tp = producer(bootstrap, "txn", "lz4", true, "fixture-txn")) {
                tp.initTransactions();
                tp.beginTransaction();
                seq = sendBatch(tp, "txn-commit", "lz4", topic, seq, 4, plan, "committed");
                tp.commitTransaction();
            }
            try (KafkaProducer<byte[], byte[]> tp = producer(bootstrap, "txn", "none", true, "fixture-txn")) {
                tp.initTransactions();
                tp.beginTransaction();
                seq = sendBatch(tp, "txn-abort", "none", topic, seq, 3, plan, "aborted");
                tp.abortTransaction();
            }
            // One last plain batch after the transactions, so the end of the log is data again.
            try (KafkaProducer<byte[], byte[]> p = producer(bootstrap, "tail", "gzip", true, null)) {
                seq = sendBatch(p, "tail-gzip", "gzip", topic, seq, 5, plan, null);
            }
        }
        System.out.println("produced " + seq + " data records in " + (steps.size() + 3) + " data batches");
    }

    static int sendBatch(KafkaProducer<byte[], byte[]> p, String name, String codec, String topic,
                         int seq, int count, PrintWriter plan, String txn) throws Exception {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        List<Rec> recs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Rec r = record(seq + i);
            recs.add(r);
            futures.add(p.send(new ProducerRecord<>(topic, 0, r.ts(), r.key(), r.value(), r.headers())));
        }
        p.flush();
        for (int i = 0; i < count; i++) {
            RecordMetadata md = futures.get(i).get();
            Rec r = recs.get(i);
            StringBuilder h = new StringBuilder("[");
            for (Header hd : r.headers()) {
                if (h.length() > 1) h.append(',');
                h.append("{\"key\":").append(json(hd.key())).append(",\"value\":").append(json(str(hd.value()))).append('}');
            }
            h.append(']');
            plan.println("{\"offset\":" + md.offset() + ",\"seq\":" + r.seq() + ",\"producer\":" + json(name)
                + ",\"compression\":" + json(codec) + ",\"timestamp\":" + r.ts()
                + ",\"key\":" + json(str(r.key())) + ",\"value\":" + json(str(r.value()))
                + ",\"headers\":" + h + ",\"transaction\":" + json(txn) + "}");
        }
        return seq + count;
    }
}
