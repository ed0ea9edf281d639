package dev.writeonce.core.config;

import dev.writeonce.core.model.ConflictMode;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;

/**
 * Every setting of the committers, parsed from Hadoop's {@link Configuration} in one place and
 * checked against its bounds when built. Each key is a constant with its default beside it; a test
 * pins the defaults and docs/configuration.md lists them.
 *
 * @param commitThreads threads that complete uploads in parallel at job commit
 * @param partSize bytes of each multipart part but the last
 * @param conflictMode what a job does about data already under its destination
 * @param conditionalManifestWrite write the job manifest with {@code If-None-Match: *}, and {@code
 *     _SUCCESS} only over the one the job read
 * @param successFileLimit how many file names {@code _SUCCESS} lists
 * @param taskUploadThreads threads that upload an attempt's files, as they close and at task commit
 * @param stagingDir local directory where staging committers' tasks write
 * @param magicBuffersPerStream part buffers one magic writer may hold, filling or uploading
 * @param magicUploadThreads threads of one filesystem that upload magic writers' parts
 * @param recoverOnSetup whether job setup finishes earlier committed-but-unfinished jobs on its
 *     destination (else it fails, naming them and the recover command)
 * @param unfinishedAfterMillis how long a committed job's newest record must be idle before job
 *     setup treats the job as abandoned rather than being finished by its own driver
 * @param fenceRetentionMillis how long the abort fence of a job aborted by another process stands
 *     before recovery removes it or a new run of the same job id replaces it
 * @param leaseMillis how long a job counts as live after its driver last renewed its lease; the
 *     driver renews it every quarter of this while the job runs
 * @param uploadOnClose whether staging committers upload a file as soon as its writer closes it,
 *     rather than at task commit
 * @param uploadOnCloseMinSize the smallest file, in bytes, that is uploaded when closed; smaller
 *     ones wait for task commit, where one intent covers them all
 * @param manifestChunkUploads the most uploads a job manifest lists inline; a larger job's manifest
 *     names chunks of this many uploads each, so the job commit holds one chunk at a time
 * @param stagingWorkScheme the scheme of staging committers' task work paths: {@code file},
 *     Hadoop's local filesystem, or {@value #STAGING_WORK_SCHEME_ENCODED}, this library's, which
 *     keeps non-ASCII names exact whatever the JVM's locale and reports closed files for upload on
 *     close
 */
public record CommitterConfig(
    int commitThreads,
    long partSize,
    ConflictMode conflictMode,
    boolean conditionalManifestWrite,
    int successFileLimit,
    int taskUploadThreads,
    String stagingDir,
    int magicBuffersPerStream,
    int magicUploadThreads,
    boolean recoverOnSetup,
    long unfinishedAfterMillis,
    long fenceRetentionMillis,
    long leaseMillis,
    boolean uploadOnClose,
    long uploadOnCloseMinSize,
    int manifestChunkUploads,
    String stagingWorkScheme) {

  /** Prefix of every key of this library. */
  public static final String PREFIX = "writeonce.";

  /**
   * Threads that complete uploads (and delete replaced objects) in parallel during job commit. Each
   * thread holds one HTTP connection of the S3A connection pool ({@code
   * fs.s3a.connection.maximum}), so keep it below that.
   */
  public static final String COMMIT_THREADS = PREFIX + "commit.threads";

  public static final int COMMIT_THREADS_DEFAULT = 32;
  static final int COMMIT_THREADS_MAX = 1024;

  /**
   * Size of each multipart part but the last. S3, Ceph RGW and MinIO refuse parts under 5 MiB
   * (except the last) and uploads of more than 10,000 parts. At most 2 GiB less one byte: the magic
   * committer and the rename shim hold a part in one buffer in memory. Accepts Hadoop size suffixes
   * (64M).
   */
  public static final String PART_SIZE = PREFIX + "upload.part-size";

  public static final long PART_SIZE_DEFAULT = 64L << 20;
  public static final long PART_SIZE_MIN = 5L << 20;
  public static final long PART_SIZE_MAX = Integer.MAX_VALUE;

  /**
   * What a job does about data already under its destination: {@code fail}, {@code append} or
   * {@code replace}. Append is the default because Spark and Hive decide overwrites themselves
   * before the committer runs.
   */
  public static final String CONFLICT_MODE = PREFIX + "conflict-mode";

  public static final ConflictMode CONFLICT_MODE_DEFAULT = ConflictMode.APPEND;

  /**
   * Write the job manifest with {@code If-None-Match: *}, so that two drivers committing the same
   * job cannot both pass the commit point, and {@code _SUCCESS} only over the one the job read
   * ({@code If-Match}, or {@code If-None-Match: *} where there was none), so that two jobs
   * finishing at once on one destination both stay in its history of finished jobs. Turn off only
   * for a store that rejects the headers: two jobs finishing at once may then drop one's entry from
   * that history.
   */
  public static final String CONDITIONAL_MANIFEST_WRITE = PREFIX + "manifest.conditional-write";

  public static final boolean CONDITIONAL_MANIFEST_WRITE_DEFAULT = true;

  /** How many file names {@code _SUCCESS} lists; the counts always cover every file. */
  public static final String SUCCESS_FILE_LIMIT = PREFIX + "success.file-limit";

  public static final int SUCCESS_FILE_LIMIT_DEFAULT = 100;
  static final int SUCCESS_FILE_LIMIT_MAX = 100_000;

  /**
   * Threads that upload a task attempt's files (staging committers), as they close and at task
   * commit. Each runs one upload at a time; parts of one file go up one after another.
   */
  public static final String TASK_UPLOAD_THREADS = PREFIX + "task.upload.threads";

  public static final int TASK_UPLOAD_THREADS_DEFAULT = 8;
  static final int TASK_UPLOAD_THREADS_MAX = 256;

  /**
   * Local directory where tasks of the staging committers write their output before task commit
   * uploads it. Needs room for the largest task's output.
   */
  public static final String STAGING_DIR = PREFIX + "staging.local-dir";

  public static final String STAGING_DIR_DEFAULT = "${hadoop.tmp.dir}/writeonce-staging";

  /**
   * Staging committers upload a file in the background as soon as its writer closes it, so that a
   * task commit waits only for the files still uploading. Each such upload is named in the
   * attempt's intent before it starts (one PUT, shared by files that close together).
   */
  public static final String UPLOAD_ON_CLOSE = PREFIX + "staging.upload-on-close";

  /**
   * Off: a {@code file:} work path cannot tell when a writer closes a file. Turning it on puts the
   * work path on {@value #STAGING_WORK_SCHEME_ENCODED}{@code :} unless {@link #STAGING_WORK_SCHEME}
   * says {@code file}, which the settings check refuses.
   */
  public static final boolean UPLOAD_ON_CLOSE_DEFAULT = false;

  /**
   * The scheme of the staging committers' task work paths. {@code file} (the default, as Hadoop's
   * staging committers and every engine expect) is Hadoop's local filesystem. {@value
   * #STAGING_WORK_SCHEME_ENCODED} is this library's local filesystem: it stores every name with
   * non-ASCII characters percent-encoded, so names stay exact in a JVM whose locale cannot hold
   * them (LANG=C), and it reports closed files for upload on close. The committer registers it in
   * the task's configuration itself.
   */
  public static final String STAGING_WORK_SCHEME = PREFIX + "staging.work-path.scheme";

  public static final String STAGING_WORK_SCHEME_FILE = "file";
  public static final String STAGING_WORK_SCHEME_ENCODED = "writeonce-staging";

  /**
   * The smallest file uploaded when closed. Smaller files wait for task commit, where one intent
   * names them all: for them an intent PUT of their own would cost more than the early start saves.
   * Hadoop size suffixes work; 0 uploads every file when closed.
   */
  public static final String UPLOAD_ON_CLOSE_MIN_SIZE = PREFIX + "staging.upload-on-close.min-size";

  public static final long UPLOAD_ON_CLOSE_MIN_SIZE_DEFAULT = 8L << 20;

  /**
   * The most uploads the job manifest lists inline. A job with more is committed in chunks of this
   * many: the manifest names chunk objects written before it, and validating, completing and
   * recovering the job hold one chunk at a time, so the driver's memory does not grow with the
   * number of files.
   */
  public static final String MANIFEST_CHUNK_UPLOADS = PREFIX + "manifest.chunk-uploads";

  public static final int MANIFEST_CHUNK_UPLOADS_DEFAULT = 10_000;
  static final int MANIFEST_CHUNK_UPLOADS_MAX = 1_000_000;

  /**
   * Part buffers one magic-committer writer may hold at once, the one being filled included. A
   * writer's memory stays within this many parts ({@code writeonce.upload.part-size} each); when
   * all are busy uploading, the writer waits.
   */
  public static final String MAGIC_BUFFERS_PER_STREAM = PREFIX + "magic.buffers-per-stream";

  public static final int MAGIC_BUFFERS_PER_STREAM_DEFAULT = 2;
  static final int MAGIC_BUFFERS_PER_STREAM_MAX = 64;

  /** Threads of one filesystem instance that upload the parts of magic-committer writers. */
  public static final String MAGIC_UPLOAD_THREADS = PREFIX + "magic.upload.threads";

  public static final int MAGIC_UPLOAD_THREADS_DEFAULT = 8;
  static final int MAGIC_UPLOAD_THREADS_MAX = 256;

  /**
   * What job setup does when its destination holds a job that passed its commit point but did not
   * finish: {@code fail} (naming the job and {@code writeonce recover}) or {@code recover} it
   * first.
   */
  public static final String RECOVERY_ON_SETUP = PREFIX + "recovery.on-setup";

  public static final String RECOVERY_ON_SETUP_DEFAULT = "fail";

  /**
   * How long a committed job's newest record must be idle before job setup treats it as unfinished;
   * younger ones are left to their own driver, so concurrent jobs do not trip over each other.
   */
  public static final String RECOVERY_STALE_AFTER = PREFIX + "recovery.stale-after";

  public static final String RECOVERY_STALE_AFTER_DEFAULT = "10m";

  /**
   * How long the abort fence of a job stands when the job was aborted by another process than its
   * driver (recovery, purge) or after its driver began committing. While it stands, a driver of
   * that job that is still alive (paused, cut off) can never pass its commit point; after it,
   * recovery removes the fence and a new run of the same job id may use the id again. Shorten it
   * only when job ids are never reused.
   */
  public static final String FENCE_RETENTION = PREFIX + "recovery.fence-retention";

  public static final String FENCE_RETENTION_DEFAULT = "7d";

  /**
   * The driver's lease on its job: while the job is set up or committing, the driver renews it
   * every quarter of this (one small PUT, so a job shorter than that sends none). Recover and purge
   * leave a job whose lease is fresh alone, whatever their age arguments; a job whose driver died
   * is free to recover once this has passed. Keep it well above the longest pause a driver may take
   * (garbage collection, a suspended VM) and any clock skew between the driver and the operator's
   * machine.
   */
  public static final String JOB_LEASE = PREFIX + "job.lease";

  public static final String JOB_LEASE_DEFAULT = "10m";
  static final long JOB_LEASE_MIN_MILLIS = 1_000;
  static final long JOB_LEASE_MAX_MILLIS = 7L * 24 * 3600 * 1000;

  public CommitterConfig {
    checkRange(MAGIC_BUFFERS_PER_STREAM, magicBuffersPerStream, 1, MAGIC_BUFFERS_PER_STREAM_MAX);
    checkRange(MAGIC_UPLOAD_THREADS, magicUploadThreads, 1, MAGIC_UPLOAD_THREADS_MAX);
    checkRange(TASK_UPLOAD_THREADS, taskUploadThreads, 1, TASK_UPLOAD_THREADS_MAX);
    if (stagingDir == null || stagingDir.isBlank()) {
      throw new IllegalArgumentException(STAGING_DIR + " is empty: name a local directory");
    }
    checkRange(COMMIT_THREADS, commitThreads, 1, COMMIT_THREADS_MAX);
    if (partSize > PART_SIZE_MAX) {
      throw new IllegalArgumentException(
          PART_SIZE
              + " = "
              + partSize
              + " is above the limit of "
              + PART_SIZE_MAX
              + " bytes (2 GiB less one byte): a part is buffered in memory by the magic committer"
              + " and the rename shim. Set it to 2047M or less; 64M to 512M suits most jobs");
    }
    checkRange(PART_SIZE, partSize, PART_SIZE_MIN, PART_SIZE_MAX);
    checkRange(SUCCESS_FILE_LIMIT, successFileLimit, 0, SUCCESS_FILE_LIMIT_MAX);
    if (unfinishedAfterMillis < 0) {
      throw new IllegalArgumentException(
          RECOVERY_STALE_AFTER + " is negative: give a duration such as 10m");
    }
    if (fenceRetentionMillis < 0) {
      throw new IllegalArgumentException(
          FENCE_RETENTION + " is negative: give a duration such as 7d");
    }
    checkRange(
        JOB_LEASE + " (milliseconds)", leaseMillis, JOB_LEASE_MIN_MILLIS, JOB_LEASE_MAX_MILLIS);
    if (conflictMode == null) {
      throw new IllegalArgumentException(CONFLICT_MODE + " is missing");
    }
    checkRange(UPLOAD_ON_CLOSE_MIN_SIZE, uploadOnCloseMinSize, 0, Long.MAX_VALUE);
    checkRange(MANIFEST_CHUNK_UPLOADS, manifestChunkUploads, 1, MANIFEST_CHUNK_UPLOADS_MAX);
    if (!STAGING_WORK_SCHEME_FILE.equals(stagingWorkScheme)
        && !STAGING_WORK_SCHEME_ENCODED.equals(stagingWorkScheme)) {
      throw new IllegalArgumentException(
          STAGING_WORK_SCHEME
              + " = '"
              + stagingWorkScheme
              + "' is unknown: use '"
              + STAGING_WORK_SCHEME_FILE
              + "' (Hadoop's local filesystem, the default) or '"
              + STAGING_WORK_SCHEME_ENCODED
              + "' (exact non-ASCII names in any locale; needed by upload on close)");
    }
    if (uploadOnClose && STAGING_WORK_SCHEME_FILE.equals(stagingWorkScheme)) {
      throw new IllegalArgumentException(
          UPLOAD_ON_CLOSE
              + " = true needs the work path on "
              + STAGING_WORK_SCHEME_ENCODED
              + ": a file: work path cannot tell when a writer closes a file. Remove "
              + STAGING_WORK_SCHEME
              + " = file, or set "
              + UPLOAD_ON_CLOSE
              + " = false");
    }
  }

  /** Whether staging committers' work paths are on this library's encoding filesystem. */
  public boolean encodedStagingWorkPath() {
    return STAGING_WORK_SCHEME_ENCODED.equals(stagingWorkScheme);
  }

  /** The configuration with every default. */
  public static CommitterConfig defaults() {
    return from(new Configuration(false));
  }

  // Withers: a copy with one setting changed, checked as the constructor checks every setting.

  public CommitterConfig withCommitThreads(int value) {
    return edit(copy -> copy.commitThreads = value);
  }

  public CommitterConfig withPartSize(long value) {
    return edit(copy -> copy.partSize = value);
  }

  public CommitterConfig withConflictMode(ConflictMode value) {
    return edit(copy -> copy.conflictMode = value);
  }

  public CommitterConfig withConditionalManifestWrite(boolean value) {
    return edit(copy -> copy.conditionalManifestWrite = value);
  }

  public CommitterConfig withSuccessFileLimit(int value) {
    return edit(copy -> copy.successFileLimit = value);
  }

  public CommitterConfig withTaskUploadThreads(int value) {
    return edit(copy -> copy.taskUploadThreads = value);
  }

  public CommitterConfig withStagingDir(String value) {
    return edit(copy -> copy.stagingDir = value);
  }

  public CommitterConfig withMagicBuffersPerStream(int value) {
    return edit(copy -> copy.magicBuffersPerStream = value);
  }

  public CommitterConfig withMagicUploadThreads(int value) {
    return edit(copy -> copy.magicUploadThreads = value);
  }

  public CommitterConfig withRecoverOnSetup(boolean value) {
    return edit(copy -> copy.recoverOnSetup = value);
  }

  public CommitterConfig withUnfinishedAfterMillis(long value) {
    return edit(copy -> copy.unfinishedAfterMillis = value);
  }

  public CommitterConfig withFenceRetentionMillis(long value) {
    return edit(copy -> copy.fenceRetentionMillis = value);
  }

  public CommitterConfig withLeaseMillis(long value) {
    return edit(copy -> copy.leaseMillis = value);
  }

  public CommitterConfig withUploadOnClose(boolean value) {
    return edit(copy -> copy.uploadOnClose = value);
  }

  public CommitterConfig withUploadOnCloseMinSize(long value) {
    return edit(copy -> copy.uploadOnCloseMinSize = value);
  }

  public CommitterConfig withManifestChunkUploads(int value) {
    return edit(copy -> copy.manifestChunkUploads = value);
  }

  public CommitterConfig withStagingWorkScheme(String value) {
    return edit(copy -> copy.stagingWorkScheme = value);
  }

  /** A copy of this configuration with some settings changed, checked again. */
  private CommitterConfig edit(java.util.function.Consumer<Copy> change) {
    Copy copy = new Copy(this);
    change.accept(copy);
    return copy.build();
  }

  /** The settings of a configuration being copied with changes. */
  private static final class Copy {
    private int commitThreads;
    private long partSize;
    private ConflictMode conflictMode;
    private boolean conditionalManifestWrite;
    private int successFileLimit;
    private int taskUploadThreads;
    private String stagingDir;
    private int magicBuffersPerStream;
    private int magicUploadThreads;
    private boolean recoverOnSetup;
    private long unfinishedAfterMillis;
    private long fenceRetentionMillis;
    private long leaseMillis;
    private boolean uploadOnClose;
    private long uploadOnCloseMinSize;
    private int manifestChunkUploads;
    private String stagingWorkScheme;

    Copy(CommitterConfig from) {
      commitThreads = from.commitThreads;
      partSize = from.partSize;
      conflictMode = from.conflictMode;
      conditionalManifestWrite = from.conditionalManifestWrite;
      successFileLimit = from.successFileLimit;
      taskUploadThreads = from.taskUploadThreads;
      stagingDir = from.stagingDir;
      magicBuffersPerStream = from.magicBuffersPerStream;
      magicUploadThreads = from.magicUploadThreads;
      recoverOnSetup = from.recoverOnSetup;
      unfinishedAfterMillis = from.unfinishedAfterMillis;
      fenceRetentionMillis = from.fenceRetentionMillis;
      leaseMillis = from.leaseMillis;
      uploadOnClose = from.uploadOnClose;
      uploadOnCloseMinSize = from.uploadOnCloseMinSize;
      manifestChunkUploads = from.manifestChunkUploads;
      stagingWorkScheme = from.stagingWorkScheme;
    }

    CommitterConfig build() {
      return new CommitterConfig(
          commitThreads,
          partSize,
          conflictMode,
          conditionalManifestWrite,
          successFileLimit,
          taskUploadThreads,
          stagingDir,
          magicBuffersPerStream,
          magicUploadThreads,
          recoverOnSetup,
          unfinishedAfterMillis,
          fenceRetentionMillis,
          leaseMillis,
          uploadOnClose,
          uploadOnCloseMinSize,
          manifestChunkUploads,
          stagingWorkScheme);
    }
  }

  /** Reads every setting; an out-of-range value fails with the key and its bounds. */
  public static CommitterConfig from(Configuration conf) {
    String mode = conf.getTrimmed(CONFLICT_MODE, CONFLICT_MODE_DEFAULT.id());
    ConflictMode conflictMode;
    try {
      conflictMode = ConflictMode.parse(mode);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(CONFLICT_MODE + ": " + e.getMessage(), e);
    }
    boolean uploadOnClose = conf.getBoolean(UPLOAD_ON_CLOSE, UPLOAD_ON_CLOSE_DEFAULT);
    return new CommitterConfig(
        conf.getInt(COMMIT_THREADS, COMMIT_THREADS_DEFAULT),
        conf.getLongBytes(PART_SIZE, PART_SIZE_DEFAULT),
        conflictMode,
        conf.getBoolean(CONDITIONAL_MANIFEST_WRITE, CONDITIONAL_MANIFEST_WRITE_DEFAULT),
        conf.getInt(SUCCESS_FILE_LIMIT, SUCCESS_FILE_LIMIT_DEFAULT),
        conf.getInt(TASK_UPLOAD_THREADS, TASK_UPLOAD_THREADS_DEFAULT),
        stagingDir(conf),
        conf.getInt(MAGIC_BUFFERS_PER_STREAM, MAGIC_BUFFERS_PER_STREAM_DEFAULT),
        conf.getInt(MAGIC_UPLOAD_THREADS, MAGIC_UPLOAD_THREADS_DEFAULT),
        recoverOnSetup(conf.getTrimmed(RECOVERY_ON_SETUP, RECOVERY_ON_SETUP_DEFAULT)),
        conf.getTimeDuration(
            RECOVERY_STALE_AFTER, RECOVERY_STALE_AFTER_DEFAULT, TimeUnit.MILLISECONDS),
        conf.getTimeDuration(FENCE_RETENTION, FENCE_RETENTION_DEFAULT, TimeUnit.MILLISECONDS),
        conf.getTimeDuration(JOB_LEASE, JOB_LEASE_DEFAULT, TimeUnit.MILLISECONDS),
        uploadOnClose,
        conf.getLongBytes(UPLOAD_ON_CLOSE_MIN_SIZE, UPLOAD_ON_CLOSE_MIN_SIZE_DEFAULT),
        conf.getInt(MANIFEST_CHUNK_UPLOADS, MANIFEST_CHUNK_UPLOADS_DEFAULT),
        conf.getTrimmed(
            STAGING_WORK_SCHEME,
            uploadOnClose ? STAGING_WORK_SCHEME_ENCODED : STAGING_WORK_SCHEME_FILE));
  }

  private static boolean recoverOnSetup(String value) {
    return switch (value) {
      case "fail" -> false;
      case "recover" -> true;
      default ->
          throw new IllegalArgumentException(
              RECOVERY_ON_SETUP + " = '" + value + "': use 'fail' or 'recover'");
    };
  }

  /** The staging directory with Hadoop variables such as {@code hadoop.tmp.dir} expanded. */
  private static String stagingDir(Configuration conf) {
    String configured = conf.get(STAGING_DIR);
    if (configured != null) {
      return configured.trim();
    }
    String tmp = conf.get("hadoop.tmp.dir", System.getProperty("java.io.tmpdir"));
    return tmp + "/writeonce-staging";
  }

  private static void checkRange(String key, long value, long min, long max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          key + " = " + value + " is out of range: set it between " + min + " and " + max);
    }
  }
}
