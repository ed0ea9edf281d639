package dev.writeonce.core.store;

import java.nio.file.Path;

/**
 * The bytes of an object written in one request: held in memory, or a local file read afresh on
 * each attempt so that the client can retry the request.
 */
public sealed interface ObjectBody {

  /** The object's length in bytes. */
  long length();

  /** Bytes held in memory. */
  record Bytes(byte[] data) implements ObjectBody {
    @Override
    public long length() {
      return data.length;
    }
  }

  /** The whole of a local file, at most 5 GiB. */
  record File(Path path, long length) implements ObjectBody {}

  static ObjectBody of(byte[] data) {
    return new Bytes(data);
  }
}
