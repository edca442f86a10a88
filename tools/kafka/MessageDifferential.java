// Kafka's own serializer for ferrolog's differential test of its generated codecs
// (__test__/protocol/messages/differential.test.ts, scripts/protocol-differential.mjs).
// One long-lived JVM: one JSON request per line on stdin, one JSON answer per line on stdout.
//
//   request  {"id": 1, "class": "org.apache.kafka.common.message.FetchRequestData", "version": 12,
//             "json": {...}}      the message in the form of Kafka's <Class>JsonConverter
//         or "bytes": "<base64>"  the message serialized (without any header)
//            optional "writeVersion": 9  serializes at another version than it reads (Kafka's rule
//                                            that a version lacking a non-default field refuses it)
//   answer   {"id": 1, "bytes": "<base64>", "json": {...}}  or  {"id": 1, "error": "..."}
//
// A JSON request is read with the generated <Class>JsonConverter; bytes with the generated
// Message.read over a ByteBufferAccessor (all of them must be read). Either way the answer holds the
// message serialized again (Message.size with an ObjectSerializationCache, then Message.write) and
// its JsonConverter form, in which every int64 (and uint32, a Java long) is a decimal string, so
// that JavaScript can read it without losing digits.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;

public class MessageDifferential {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private record Codec(Class<?> data, Method read, Method write) {}

  private static final Map<String, Codec> CODECS = new HashMap<>();

  private static Codec codec(String className) throws Exception {
    Codec c = CODECS.get(className);
    if (c == null) {
      Class<?> data = Class.forName(className);
      Class<?> converter = Class.forName(className + "JsonConverter");
      c = new Codec(data, converter.getMethod("read", JsonNode.class, short.class), converter.getMethod("write", data, short.class));
      CODECS.put(className, c);
    }
    return c;
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    BufferedWriter out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    String line;
    while ((line = in.readLine()) != null) {
      JsonNode request = MAPPER.readTree(line);
      ObjectNode answer = MAPPER.createObjectNode();
      answer.set("id", request.get("id"));
      try {
        answer(request, answer);
      } catch (Throwable t) {
        Throwable cause = t instanceof InvocationTargetException && t.getCause() != null ? t.getCause() : t;
        answer.remove("bytes");
        answer.put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
      }
      out.write(MAPPER.writeValueAsString(answer));
      out.write('\n');
      // Answers are flushed when no request is waiting, so a batch costs one write.
      if (!in.ready()) out.flush();
    }
    out.flush();
  }

  private static void answer(JsonNode request, ObjectNode answer) throws Exception {
    Codec codec = codec(request.get("class").asText());
    short version = (short) request.get("version").asInt();
    Message message;
    JsonNode writeVersionNode = request.get("writeVersion");
    if (request.has("json")) {
      message = (Message) codec.read.invoke(null, request.get("json"), version);
    } else {
      ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(request.get("bytes").asText()));
      message = (Message) codec.data.getConstructor().newInstance();
      message.read(new ByteBufferAccessor(bytes), version);
      if (bytes.hasRemaining()) throw new IllegalStateException(bytes.remaining() + " bytes left unread");
    }
    if (writeVersionNode != null) version = (short) writeVersionNode.asInt();
    // Kafka's JsonConverter writes a records field as empty bytes (KIP-673): records are compared
    // through the serialized bytes only.
    JsonNode json = longsAsText((JsonNode) codec.write.invoke(null, message, version));
    ObjectSerializationCache cache = new ObjectSerializationCache();
    int size = message.size(cache, version);
    ByteBuffer buffer = ByteBuffer.allocate(size);
    message.write(new ByteBufferAccessor(buffer), cache, version);
    if (buffer.hasRemaining()) throw new IllegalStateException("size " + size + " but wrote " + buffer.position());
    answer.put("bytes", Base64.getEncoder().encodeToString(buffer.array()));
    answer.set("json", json);
  }

  private static JsonNode longsAsText(JsonNode node) {
    if (node instanceof LongNode || node.isBigInteger()) return new TextNode(node.asText());
    if (node instanceof ObjectNode object) {
      for (Map.Entry<String, JsonNode> e : object.properties()) e.setValue(longsAsText(e.getValue()));
    } else if (node instanceof ArrayNode array) {
      for (int i = 0; i < array.size(); i++) array.set(i, longsAsText(array.get(i)));
    }
    return node;
  }
}
