package dev.writeonce.core.errors;

/**
 * The job passed its commit point, but finishing it failed: its output is decided and appears in
 * full once recovery finishes it ({@code writeonce recover DESTINATION}). The job must never be run
 * again: its output would then be written twice. Engines report this as a failed job, which is why
 * the message says so in words.
 */
public final class JobCommittedException extends WriteonceException {

  private static final long serialVersionUID = 1L;

  private final String jobId;

  public JobCommittedException(String jobId, String message, Throwable cause) {
    super(message, cause);
    this.jobId = jobId;
  }

  public String jobId() {
    return jobId;
  }
}
