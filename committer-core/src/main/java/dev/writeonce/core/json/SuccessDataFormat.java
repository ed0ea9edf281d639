package dev.writeonce.core.json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.SuccessData;
import java.util.Map;
import java.util.TreeMap;

/**
 * JSON of {@code _SUCCESS}: the field names and the {@code name} value of Hadoop's S3A SuccessData
 * version 1, so Hadoop's loader and tools built on it accept the file. This library's own format
 * version goes into {@code diagnostics}, which Hadoop passes through untouched.
 */
public final class SuccessDataFormat {

  /** The {@code name} Hadoop's loader requires. */
  public static final String HADOOP_NAME = "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1";

  /** Diagnostics key carrying this library's format version. */
  public static final String FORMAT_KEY = "writeonce.success.version";

  public static final int VERSION = 1;

  private SuccessDataFormat() {}

  public static byte[] toJson(SuccessData data) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("name", HADOOP_NAME);
          out.writeNumberField("timestamp", data.timestamp());
          out.writeStringField("date", data.date());
          out.writeStringField("hostname", data.hostname());
          out.writeStringField("committer", data.committer());
          out.writeStringField("description", data.description());
          out.writeStringField("jobId", data.jobId());
          out.writeStringField("jobIdSource", data.jobIdSource());
          Json.writeLongMap(out, "metrics", new TreeMap<>(data.metrics()));
          Map<String, String> diagnostics = new TreeMap<>(data.diagnostics());
          diagnostics.put(FORMAT_KEY, Integer.toString(VERSION));
          Json.writeTextMap(out, "diagnostics", diagnostics);
          out.writeArrayFieldStart("filenames");
          for (String name : data.filenames()) {
            out.writeString(name);
          }
          out.writeEndArray();
          out.writeObjectFieldStart("iostatistics");
          Json.writeLongMap(out, "counters", new TreeMap<>(data.counters()));
          for (String empty : new String[] {"gauges", "minimums", "maximums", "meanstatistics"}) {
            out.writeObjectFieldStart(empty);
            out.writeEndObject();
          }
          out.writeEndObject();
          out.writeEndObject();
        });
  }

  /**
   * False for a {@code _SUCCESS} that is certainly not a JSON marker: empty (FileOutputCommitter,
   * Spark's default protocol, the rename shim) or not starting with '{'. Such a file belongs to
   * another writer and is never an error.
   */
  public static boolean mayBeOurs(byte[] bytes) {
    for (byte b : bytes) {
      if (!Character.isWhitespace(b)) {
        return b == '{';
      }
    }
    return false;
  }

  /** Reads a {@code _SUCCESS} written by this library or by Hadoop's S3A committers. */
  public static SuccessData fromJson(byte[] bytes, String source) throws FormatException {
    ObjectNode root = Json.readObject(bytes, source);
    String name = Json.text(root, "name", source);
    if (!HADOOP_NAME.equals(name)) {
      throw new FormatException(
          source, "name is '" + name + "', expected '" + HADOOP_NAME + "': not a _SUCCESS marker");
    }
    Map<String, String> diagnostics = Json.textMap(root, "diagnostics", source, false);
    String version = diagnostics.get(FORMAT_KEY);
    if (version != null && !version.equals(Integer.toString(VERSION))) {
      throw new FormatException(
          source, "unsupported _SUCCESS version " + version + ": this library reads " + VERSION);
    }
    Map<String, Long> counters = Map.of();
    if (root.get("iostatistics") instanceof ObjectNode stats) {
      counters = Json.longMap(stats, "counters", source, false);
    }
    return new SuccessData(
        Json.number(root, "timestamp", source),
        Json.optionalText(root, "date", ""),
        Json.optionalText(root, "hostname", ""),
        Json.optionalText(root, "committer", ""),
        Json.optionalText(root, "description", ""),
        Json.optionalText(root, "jobId", ""),
        Json.optionalText(root, "jobIdSource", ""),
        Json.longMap(root, "metrics", source, false),
        diagnostics,
        root.has("filenames") ? Json.texts(root, "filenames", source) : java.util.List.of(),
        counters);
  }
}
