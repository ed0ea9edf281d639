package dev.writeonce.core.json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.InsertLock;

/** JSON of an insert lock ({@code writeonce.insert-lock}, version 1): see {@link InsertLock}. */
public final class InsertLockFormat {

  public static final String FORMAT = "writeonce.insert-lock";
  public static final int VERSION = 1;

  /** The lock's object name in the directory it locks: hidden from Hive's and Spark's listings. */
  public static final String OBJECT_NAME = "_writeonce-insert-lock";

  private InsertLockFormat() {}

  public static byte[] toJson(InsertLock lock) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("format", FORMAT);
          out.writeNumberField("version", VERSION);
          out.writeStringField("holder", lock.holder());
          out.writeStringField("uuid", lock.uuid());
          out.writeStringField("host", lock.host());
          out.writeStringField("destination", lock.destination());
          out.writeNumberField("claimedAtMillis", lock.claimedAtMillis());
          out.writeNumberField("renewedAtMillis", lock.renewedAtMillis());
          out.writeNumberField("leaseMillis", lock.leaseMillis());
          out.writeEndObject();
        });
  }

  public static InsertLock fromJson(byte[] data, String source) throws FormatException {
    ObjectNode root = Json.readObject(data, source);
    Json.requireFormat(root, FORMAT, VERSION, source);
    long leaseMillis = Json.number(root, "leaseMillis", source);
    if (leaseMillis <= 0) {
      throw new FormatException(source, "has a lease of " + leaseMillis + " ms");
    }
    return new InsertLock(
        Json.text(root, "holder", source),
        Json.text(root, "uuid", source),
        Json.text(root, "host", source),
        Json.text(root, "destination", source),
        Json.number(root, "claimedAtMillis", source),
        Json.number(root, "renewedAtMillis", source),
        leaseMillis);
  }
}
