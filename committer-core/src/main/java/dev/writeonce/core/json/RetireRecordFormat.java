package dev.writeonce.core.json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.RetireRecord;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * JSON of a retire record ({@code writeonce.retire-record}, version 1): see {@link RetireRecord}.
 * The records of the mode's first version were text, one superseded location per line (the first
 * line a comment when pending): {@link #legacyLocations} reads those, so that a table published
 * before keeps being cleaned up, without ever deleting by location.
 */
public final class RetireRecordFormat {

  public static final String FORMAT = "writeonce.retire-record";
  public static final int VERSION = 1;

  private RetireRecordFormat() {}

  public static byte[] toJson(RetireRecord record) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", FORMAT);
          out.writeNumberField("version", VERSION);
          out.writeStringField("run", record.run());
          out.writeStringField("table", record.table());
          out.writeStringField("state", record.state().name().toLowerCase(Locale.ROOT));
          if (record.state() == RetireRecord.State.CLAIMED) {
            out.writeNumberField("leaseMillis", record.leaseMillis());
            out.writeNumberField("renewal", record.renewal());
          }
          out.writeNumberField("graceMillis", record.graceMillis());
          writeObjects(out, "own", record.own());
          writeObjects(out, "superseded", record.superseded());
          out.writeEndObject();
        });
  }

  private static void writeObjects(
      com.fasterxml.jackson.core.JsonGenerator out,
      String name,
      List<RetireRecord.RetiredObject> objects)
      throws java.io.IOException {
    out.writeArrayFieldStart(name);
    for (RetireRecord.RetiredObject object : objects) {
      out.writeStartObject();
      out.writeStringField("key", object.key());
      out.writeStringField("etag", object.etag());
      out.writeEndObject();
    }
    out.writeEndArray();
  }

  /** True when the bytes are a record of this format's family rather than a first-version text. */
  public static boolean isJson(byte[] data) {
    return new String(data, StandardCharsets.UTF_8).strip().startsWith("{");
  }

  public static RetireRecord fromJson(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, FORMAT, VERSION, source);
    String state = Json.text(root, "state", source);
    RetireRecord.State parsed;
    try {
      parsed = RetireRecord.State.valueOf(state.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new FormatException(source, "has an unknown state '" + state + "'");
    }
    return new RetireRecord(
        Json.text(root, "run", source),
        Json.text(root, "table", source),
        parsed,
        objects(root, "own", source),
        objects(root, "superseded", source),
        parsed == RetireRecord.State.CLAIMED ? Json.number(root, "leaseMillis", source) : 0,
        parsed == RetireRecord.State.CLAIMED ? Json.number(root, "renewal", source) : 0,
        Json.number(root, "graceMillis", source));
  }

  private static List<RetireRecord.RetiredObject> objects(
      ObjectNode root, String name, String source) throws FormatException {
    return Json.list(
        root,
        name,
        source,
        (node, where) ->
            new RetireRecord.RetiredObject(
                Json.text(node, "key", where), Json.text(node, "etag", where)));
  }

  /** The locations a first-version text record names: key prefixes, comment lines left out. */
  public static List<String> legacyLocations(byte[] data) {
    List<String> locations = new ArrayList<>();
    for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
      if (!line.isBlank() && !line.startsWith("#")) {
        locations.add(line.strip());
      }
    }
    return locations;
  }
}
