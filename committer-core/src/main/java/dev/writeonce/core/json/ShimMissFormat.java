package dev.writeonce.core.json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.ShimMiss;
import java.util.Optional;

/** JSON format of the rename shim's miss records ({@link ShimMiss}). */
public final class ShimMissFormat {

  public static final String FORMAT = "writeonce.shim-miss";
  public static final int VERSION = 1;

  private ShimMissFormat() {}

  public static byte[] toJson(ShimMiss miss) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", FORMAT);
          out.writeNumberField("version", VERSION);
          out.writeStringField("bucket", miss.bucket());
          out.writeStringField("sourceKey", miss.sourceKey());
          out.writeStringField("predictedKey", miss.predictedKey());
          out.writeStringField("targetKey", miss.targetKey());
          out.writeStringField("uploadId", miss.uploadId());
          out.writeNumberField("length", miss.length());
          if (miss.etag().isPresent()) {
            out.writeStringField("etag", miss.etag().get());
          }
          out.writeNumberField("parts", miss.parts());
          out.writeNumberField("createdAtMillis", miss.createdAtMillis());
          out.writeEndObject();
        });
  }

  public static ShimMiss fromJson(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, FORMAT, VERSION, source);
    try {
      return new ShimMiss(
          Json.text(root, "bucket", source),
          Json.text(root, "sourceKey", source),
          Json.text(root, "predictedKey", source),
          Json.text(root, "targetKey", source),
          Json.text(root, "uploadId", source),
          Json.number(root, "length", source),
          Optional.ofNullable(Json.optionalText(root, "etag", null)),
          // Absent from notes written before the count was kept: 0, unknown.
          root.has("parts") ? (int) Json.number(root, "parts", source) : 0,
          Json.number(root, "createdAtMillis", source));
    } catch (IllegalArgumentException e) {
      throw new FormatException(source, e.getMessage(), e);
    }
  }
}
