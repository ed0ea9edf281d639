package dev.writeonce.core.errors;

/** A persisted record that cannot be read: the message names the file and the problem. */
public final class FormatException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  private final String source;

  public FormatException(String source, String problem) {
    super(source + ": " + problem);
    this.source = source;
  }

  public FormatException(String source, String problem, Throwable cause) {
    super(source + ": " + problem, cause);
    this.source = source;
  }

  /** The file or object the record came from. */
  public String source() {
    return source;
  }
}
