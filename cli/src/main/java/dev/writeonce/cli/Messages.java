package dev.writeonce.cli;

/** One line per failure, with its causes, as an operator reads it. */
public final class Messages {

  private Messages() {}

  public static String of(Throwable e) {
    StringBuilder text = new StringBuilder(String.valueOf(e.getMessage()));
    for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
      String message = cause.getMessage();
      if (message != null && !text.toString().contains(message)) {
        text.append(" (").append(message).append(')');
      }
    }
    return text.toString();
  }
}
