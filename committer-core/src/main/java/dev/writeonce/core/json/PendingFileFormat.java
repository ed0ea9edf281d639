package dev.writeonce.core.json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.PendingFile;
import java.nio.charset.StandardCharsets;

/**
 * JSON format of the rename shim's pending-file records. A record is recognised by its first bytes,
 * so a listing of a temporary directory can tell records from ordinary files by reading no more
 * than {@link #HEAD_BYTES} of each.
 */
public final class PendingFileFormat {

  public static final String FORMAT = "writeonce.pending-file";
  public static final int VERSION = 1;

  /** How many leading bytes of an object decide whether it is a record. */
  public static final int HEAD_BYTES = 64;

  private static final String STATE_CLOSED = "closed";
  private static final String STATE_WRITING = "writing";

  private PendingFileFormat() {}

  public static byte[] toJson(PendingFile file) {
    return Json.write(
        out -> {
          // "format" first: recognition reads only the head of the object.
          out.writeStartObject();
          out.writeStringField("format", FORMAT);
          out.writeNumberField("version", VERSION);
          out.writeStringField("state", file.closed() ? STATE_CLOSED : STATE_WRITING);
          out.writeStringField("bucket", file.bucket());
          out.writeStringField("key", file.key());
          out.writeStringField("uploadId", file.uploadId());
          out.writeStringField("taskAttempt", file.taskAttempt());
          out.writeNumberField("createdAtMillis", file.createdAtMillis());
          out.writeNumberField("length", file.length());
          ManifestFormats.writeParts(out, file.parts());
          out.writeEndObject();
        });
  }

  /** Whether an object starting with these bytes is a pending-file record. */
  public static boolean isRecord(byte[] head) {
    String text = new String(head, 0, Math.min(head.length, HEAD_BYTES), StandardCharsets.UTF_8);
    return text.startsWith("{") && text.contains('"' + FORMAT + '"');
  }

  public static PendingFile fromJson(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, FORMAT, VERSION, source);
    String state = Json.text(root, "state", source);
    if (!state.equals(STATE_CLOSED) && !state.equals(STATE_WRITING)) {
      throw new FormatException(source, "unknown state '" + state + "'");
    }
    PendingFile file;
    try {
      file =
          new PendingFile(
              Json.text(root, "bucket", source),
              Json.text(root, "key", source),
              Json.text(root, "uploadId", source),
              ManifestFormats.readParts(root, source),
              Json.text(root, "taskAttempt", source),
              state.equals(STATE_CLOSED),
              Json.number(root, "createdAtMillis", source));
    } catch (IllegalArgumentException e) {
      throw new FormatException(source, e.getMessage(), e);
    }
    long length = Json.number(root, "length", source);
    if (length != file.length()) {
      throw new FormatException(
          source,
          "declares length " + length + " but its parts add up to " + file.length() + " bytes");
    }
    return file;
  }
}
