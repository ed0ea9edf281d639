package dev.writeonce.core.store.check;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Store verdicts kept on this host's disk, one file per endpoint, so that the processes of one user
 * on one host (drivers of successive applications, executors, the command) check a store once per
 * {@link #TTL} instead of once each.
 *
 * <p>A verdict decides whether guarantees are given, so a file is taken only from a directory and a
 * file that belong to the user running this process and that nobody else may write: a verdict
 * planted by another local user is ignored, never trusted. Where the file system has no POSIX
 * owners and permissions, nothing is kept.
 */
final class HostVerdicts {

  private static final Logger LOG = LoggerFactory.getLogger(HostVerdicts.class);

  /** Where the verdicts are kept. */
  static final String DIRECTORY = "writeonce.store.check.cache.dir";

  /** How long a kept verdict is taken; {@code 0} keeps none. */
  static final String TTL = "writeonce.store.check.cache.ttl";

  static final long TTL_DEFAULT_MILLIS = TimeUnit.DAYS.toMillis(1);

  /** A verdict recorded further ahead of the local clock than this was not recorded here. */
  private static final long CLOCK_SLACK_MILLIS = TimeUnit.MINUTES.toMillis(5);

  private static final Set<PosixFilePermission> FOREIGN_WRITE =
      Set.of(PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);

  private final Path directory;
  private final long ttlMillis;

  HostVerdicts(Path directory, long ttlMillis) {
    this.directory = directory;
    this.ttlMillis = ttlMillis;
  }

  /**
   * The host's verdicts as a configuration sets them; where it does not, a JVM system property of
   * the same name gives the default (one setting for every process a host starts).
   */
  static HostVerdicts of(Configuration conf) {
    String configured = conf.getTrimmed(DIRECTORY, System.getProperty(DIRECTORY, "").trim());
    Path directory =
        configured.isEmpty()
            ? Path.of(
                System.getProperty("java.io.tmpdir"),
                "writeonce-store-checks-" + System.getProperty("user.name", "unknown"))
            : Path.of(configured);
    Configuration ttlFrom = conf;
    String fallback = System.getProperty(TTL, "").trim();
    if (conf.get(TTL) == null && !fallback.isEmpty()) {
      ttlFrom = new Configuration(false);
      ttlFrom.set(TTL, fallback);
    }
    long ttl = ttlFrom.getTimeDuration(TTL, TTL_DEFAULT_MILLIS, TimeUnit.MILLISECONDS);
    return new HostVerdicts(directory, Math.max(0, ttl));
  }

  Path directory() {
    return directory;
  }

  boolean enabled() {
    return ttlMillis > 0;
  }

  /** How long after its check a verdict is taken, wherever it travelled. */
  long maxAgeMillis() {
    return enabled() ? ttlMillis : TTL_DEFAULT_MILLIS;
  }

  /**
   * Whether a verdict recorded then is still taken now: younger than the TTL, or than its default
   * where none is kept on the host (a job's own verdict is taken all the same).
   */
  boolean fresh(long recordedAtMillis, long nowMillis) {
    long maxAge = maxAgeMillis();
    return recordedAtMillis <= nowMillis + CLOCK_SLACK_MILLIS
        && nowMillis - recordedAtMillis <= maxAge;
  }

  /** The verdict kept for a bucket of an endpoint, if one is fresh and safe to take. */
  Optional<VerdictFormat.Recorded> read(String endpoint, String bucket, long nowMillis) {
    if (!enabled()) {
      return Optional.empty();
    }
    Path file = fileOf(directory, endpoint, bucket);
    try {
      if (!ownedAndPrivate(directory) || !ownedAndPrivate(file)) {
        return Optional.empty();
      }
      Optional<VerdictFormat.Recorded> recorded =
          VerdictFormat.read(Files.readString(file, StandardCharsets.UTF_8));
      if (recorded.isEmpty()
          || !recorded.get().report().endpoint().equals(endpoint)
          || !recorded.get().report().bucket().equals(bucket)
          || !fresh(recorded.get().recordedAtMillis(), nowMillis)) {
        return Optional.empty();
      }
      return recorded;
    } catch (NoSuchFileException absent) {
      return Optional.empty();
    } catch (IOException | RuntimeException unreadable) {
      LOG.debug("The store verdict in {} could not be read: {}", file, unreadable.toString());
      return Optional.empty();
    }
  }

  /**
   * Keeps a verdict for its bucket and endpoint, replacing the one kept before in one atomic move.
   *
   * @param checkedAtMillis when its check ran, on the local clock: it ages from then
   */
  void write(StoreReport report, long checkedAtMillis) {
    if (!enabled()) {
      return;
    }
    Path file = fileOf(directory, report.endpoint(), report.bucket());
    Path written = null;
    try {
      Files.createDirectories(
          directory,
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      if (!ownedAndPrivate(directory)) {
        LOG.debug("Not keeping store verdicts in {}: others may write there", directory);
        return;
      }
      written =
          Files.createTempFile(
              directory,
              ".verdict-",
              ".tmp",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.writeString(
          written, VerdictFormat.write(report, checkedAtMillis, true), StandardCharsets.UTF_8);
      try {
        Files.move(
            written, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(written, file, StandardCopyOption.REPLACE_EXISTING);
      }
      written = null;
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      LOG.debug("The store verdict could not be kept in {}: {}", directory, e.toString());
    } finally {
      if (written != null) {
        try {
          Files.deleteIfExists(written);
        } catch (IOException ignored) {
          // a temporary file of our own; the next write replaces the verdict anyway
        }
      }
    }
  }

  /** Removes the verdict kept in a directory for a bucket of an endpoint. */
  static void discard(Path directory, String endpoint, String bucket) {
    try {
      Files.deleteIfExists(fileOf(directory, endpoint, bucket));
    } catch (IOException e) {
      LOG.debug("The store verdict of {} could not be removed: {}", endpoint, e.toString());
    }
  }

  /** Removes every verdict kept in a directory for an endpoint, whatever its bucket. */
  static void discardAll(Path directory, String endpoint) {
    if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (java.util.stream.Stream<Path> files = Files.list(directory)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".json")).toList()) {
        Optional<VerdictFormat.Recorded> recorded =
            VerdictFormat.read(Files.readString(file, StandardCharsets.UTF_8));
        if (recorded.isEmpty() || recorded.get().report().endpoint().equals(endpoint)) {
          Files.deleteIfExists(file);
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("The store verdicts in {} could not be removed: {}", directory, e.toString());
    }
  }

  private static Path fileOf(Path directory, String endpoint, String bucket) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256")
              .digest((endpoint + "\n" + bucket).getBytes(StandardCharsets.UTF_8));
      return directory.resolve(HexFormat.of().formatHex(digest, 0, 16) + ".json");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java runtime has SHA-256", e);
    }
  }

  /** Whether a path belongs to this process's user and no one else may write it. */
  private static boolean ownedAndPrivate(Path path) throws IOException {
    PosixFileAttributes attributes;
    try {
      attributes = Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (UnsupportedOperationException noPosix) {
      return false;
    }
    String user = System.getProperty("user.name", "");
    return !attributes.isSymbolicLink()
        && attributes.owner().getName().equals(user)
        && attributes.permissions().stream().noneMatch(FOREIGN_WRITE::contains);
  }
}
