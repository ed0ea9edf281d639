package dev.writeonce.staging;

import dev.writeonce.core.committer.ConflictPolicy;
import dev.writeonce.core.committer.MultipartOutputCommitter;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.engine.JobCommitContext;
import dev.writeonce.core.model.Etags;
import dev.writeonce.core.model.PendingUpload;
import dev.writeonce.core.work.Tasks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.stream.Stream;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A staging committer: tasks write to local disk; a file is uploaded as multipart parts as soon as
 * its writer closes it ({@link UploadsOnClose}), or at task commit, which waits for those uploads
 * and completes nothing; the job commit completes them all through the job manifest. The {@link
 * ConflictPolicy} makes it a directory or a partitioned committer.
 */
public final class StagingCommitter extends MultipartOutputCommitter {

  private static final Logger LOG = LoggerFactory.getLogger(StagingCommitter.class);

  /** The charset this JVM stores file names in: it follows LANG and LC_ALL, not file.encoding. */
  private static final String FILE_NAME_CHARSET = System.getProperty("sun.jnu.encoding", "UTF-8");

  private final String stagingRoot;
  private final boolean encodedNames;
  private final org.apache.hadoop.fs.Path workPath;

  public StagingCommitter(
      String name,
      org.apache.hadoop.fs.Path outputPath,
      JobContext context,
      ConflictPolicy conflicts,
      StoreOpener opener)
      throws IOException {
    super(name, outputPath, context, conflicts, opener);
    this.stagingRoot = Paths.get(config().stagingDir()).toAbsolutePath().toString();
    this.encodedNames = config().encodedStagingWorkPath();
    String attempt =
        context instanceof TaskAttemptContext task ? attemptId(task) : "job-" + jobId(context);
    String workDir = jobDirName(context) + "/" + attempt;
    if (encodedNames) {
      registerEncodingFileSystem(context.getConfiguration());
      this.workPath = StagingLocalFileSystem.pathOf(workDir);
    } else {
      this.workPath = new org.apache.hadoop.fs.Path("file", null, workDir);
    }
  }

  /**
   * Names the encoding filesystem's class in the configuration the engine opens the work path with.
   * Hadoop's service loader would find it only where the jar is on Hadoop's own class path, not
   * where an engine adds it at run time (Spark's {@code --jars} and {@code --packages}).
   */
  private static void registerEncodingFileSystem(org.apache.hadoop.conf.Configuration conf) {
    String key = "fs." + StagingLocalFileSystem.SCHEME + ".impl";
    if (conf.get(key) == null) {
      conf.set(key, StagingLocalFileSystem.class.getName());
    }
  }

  /**
   * The local directory of a job's run. Hadoop job and attempt ids are not unique (Spark makes them
   * from the second and the stage id), so the name carries what is: the id the job's records go
   * under, which holds Spark's write id or a run id given before setup, and the destination. Two
   * writes on one host never share an attempt's files; two runs of one job id without such ids
   * never run at once (the second is refused at setup). A run id that setup makes up is left out,
   * so that a committer built before setup and one built after name the same directory.
   */
  private String jobDirName(JobContext context) {
    return stagingRoot
        + "/"
        + recordsJobId(context)
        + "-"
        + Etags.md5Hex(destination().toString()).substring(0, 12);
  }

  private Path localJobDir(JobContext context) {
    String name = jobDirName(context);
    return Paths.get(encodedNames ? StagingLocalFileSystem.localPath(name) : name).normalize();
  }

  /** The local directory of the attempt a call names: not necessarily this committer's own. */
  private Path localAttemptDir(TaskAttemptContext context) {
    return localJobDir(context).resolve(attemptId(context));
  }

  /** The local directory where the attempt's output goes; relative paths become keys. */
  @Override
  public org.apache.hadoop.fs.Path getWorkPath() {
    return workPath;
  }

  @Override
  protected void prepareTask(TaskAttemptContext context) throws IOException {
    Path localAttemptDir = localAttemptDir(context);
    Files.createDirectories(localAttemptDir);
    if (config().uploadOnClose()) {
      UploadsOnClose.register(
          localAttemptDir,
          attemptId(context),
          store(),
          file -> keyOf(localAttemptDir, file),
          keys -> recordIntent(context, keys),
          config().partSize(),
          config().uploadOnCloseMinSize(),
          config().taskUploadThreads());
    }
  }

  @Override
  protected boolean hasTaskOutput(TaskAttemptContext context) throws IOException {
    return !outputFiles(localAttemptDir(context)).isEmpty();
  }

  @Override
  protected List<PendingUpload> uploadTaskOutput(TaskAttemptContext context) throws IOException {
    Path localAttemptDir = localAttemptDir(context);
    String attempt = attemptId(context);
    Optional<UploadsOnClose> onClose = UploadsOnClose.remove(localAttemptDir);
    Map<Path, PendingUpload> early = new HashMap<>();
    Set<String> named = Set.of();
    if (onClose.isPresent()) {
      UploadsOnClose.Closed outcome = onClose.get().finish();
      early.putAll(outcome.uploads());
      named = outcome.intentKeys();
    }
    ConcurrentLinkedQueue<PendingUpload> uploaded = new ConcurrentLinkedQueue<>(early.values());
    try {
      List<Path> files = outputFiles(localAttemptDir);
      if (!encodedNames) {
        checkNamesKeptByTheLocale(attempt, localAttemptDir, files, FILE_NAME_CHARSET);
      }
      Set<Path> present = new HashSet<>(files);
      // A file uploaded on close that is no longer there was renamed or deleted since.
      for (Path gone : early.keySet().stream().filter(f -> !present.contains(f)).toList()) {
        PendingUpload upload = early.remove(gone);
        uploaded.remove(upload);
        store().abortUpload(upload.key(), upload.uploadId());
      }
      List<Path> remaining = files.stream().filter(f -> !early.containsKey(f)).toList();
      Set<String> keys = new LinkedHashSet<>(named);
      remaining.forEach(f -> keys.add(keyOf(localAttemptDir, f)));
      if (!remaining.isEmpty() && !named.containsAll(keys)) {
        recordIntent(context, List.copyOf(keys));
      }
      try (JobCommitContext pool = new JobCommitContext(attempt, config().taskUploadThreads())) {
        Tasks.runStoppingOnFailure(
            pool,
            "uploading task output",
            remaining,
            file -> {
              uploaded.add(
                  LocalFileUploader.upload(
                      store(),
                      keyOf(localAttemptDir, file),
                      file,
                      Files.size(file),
                      config().partSize(),
                      attempt));
            });
      }
    } catch (IOException | RuntimeException e) {
      abortAll(uploaded, e);
      throw e;
    }
    if (!early.isEmpty()) {
      LOG.info(
          "Task {}: {} of {} files were uploaded as they closed",
          attempt,
          early.size(),
          uploaded.size());
    }
    List<PendingUpload> uploads = new ArrayList<>(uploaded);
    uploads.sort(Comparator.comparing(PendingUpload::key));
    return uploads;
  }

  /** The key of a local file: its path below the attempt's directory, names decoded. */
  private String keyOf(Path localAttemptDir, Path file) {
    StringBuilder relative = new StringBuilder();
    for (Path segment : localAttemptDir.relativize(file)) {
      if (relative.length() > 0) {
        relative.append('/');
      }
      relative.append(
          encodedNames ? StagingLocalFileSystem.decode(segment.toString()) : segment.toString());
    }
    return destination().keyOf(relative.toString());
  }

  @Override
  protected void discardTaskOutput(TaskAttemptContext context) throws IOException {
    UploadsOnClose.remove(localAttemptDir(context)).ifPresent(UploadsOnClose::abort);
    deleteLocalOutput(localAttemptDir(context));
  }

  @Override
  protected void releaseTask(TaskAttemptContext context) throws IOException {
    UploadsOnClose.remove(localAttemptDir(context)).ifPresent(UploadsOnClose::abort);
    deleteLocalOutput(localAttemptDir(context));
  }

  /**
   * Removes what the job's attempts left on this machine: attempts that were never committed or
   * aborted (a lost task) keep their local files otherwise.
   */
  @Override
  protected void cleanupJobLocally(JobContext context) throws IOException {
    Path localJobDir = localJobDir(context);
    UploadsOnClose.abortUnder(localJobDir);
    if (Files.exists(localJobDir)) {
      deleteTree(localJobDir);
      LOG.debug("Deleted local job directory {}", localJobDir);
    }
  }

  /**
   * Refuses a task's files when their names may have lost characters. A JVM whose file-name charset
   * is not Unicode (LANG unset or C, as in many containers) writes '?' for every character it
   * cannot encode, so {@code p=日本} and {@code p=中国} became one directory before the committer saw
   * them. Spark and Hive escape a real '?' in partition values, so under such a charset a '?' in a
   * name marks the loss. Nothing is uploaded: the task fails, naming the fix.
   */
  static void checkNamesKeptByTheLocale(
      String attempt, Path localAttemptDir, List<Path> files, String fileNameCharset)
      throws IOException {
    if (fileNameCharset.toUpperCase(java.util.Locale.ROOT).startsWith("UTF")) {
      return;
    }
    for (Path file : files) {
      String relative = localAttemptDir.relativize(file).toString();
      if (relative.indexOf('?') >= 0) {
        throw new IOException(
            "Task attempt "
                + attempt
                + " wrote "
                + file
                + ": this JVM stores file names in "
                + fileNameCharset
                + " (from LANG/LC_ALL), which turns characters it cannot hold into '?', so files"
                + " of different names may have become one. Nothing of this attempt was uploaded."
                + " Run the tasks with a UTF-8 locale (LANG=C.UTF-8; in Spark"
                + " spark.executorEnv.LANG), or set "
                + CommitterConfig.STAGING_WORK_SCHEME
                + "="
                + CommitterConfig.STAGING_WORK_SCHEME_ENCODED
                + ", whose work path keeps every name exact in any locale");
      }
    }
  }

  /** The attempt's output files, without the checksum files Hadoop's local filesystem adds. */
  private static List<Path> outputFiles(Path localAttemptDir) throws IOException {
    if (!Files.isDirectory(localAttemptDir)) {
      return List.of();
    }
    try (Stream<Path> paths = Files.walk(localAttemptDir)) {
      return paths.filter(Files::isRegularFile).filter(p -> !isChecksumFile(p)).sorted().toList();
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  private static boolean isChecksumFile(Path file) {
    return UploadsOnClose.isChecksumFile(file);
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  private static void deleteLocalOutput(Path localAttemptDir) throws IOException {
    if (!Files.exists(localAttemptDir)) {
      return;
    }
    deleteTree(localAttemptDir);
    LOG.debug("Deleted local output {}", localAttemptDir);
    try {
      Files.deleteIfExists(localAttemptDir.getParent());
    } catch (DirectoryNotEmptyException othersStillWriting) {
      // other attempts of the job on this node still use it
    }
  }
}
