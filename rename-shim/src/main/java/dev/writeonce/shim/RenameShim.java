package dev.writeonce.shim;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.model.LoadPlan;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadOutputStream;
import dev.writeonce.core.work.Tasks;
import dev.writeonce.core.work.WorkerPool;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.impl.OpenFileParameters;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shim's operations, one per file system call, each inside one {@link Operation}: what {@link
 * RenameShimFileSystem} delegates to. It decides what is the shim's (paths under temporary
 * directories the {@link ShimRules} recognise) and what is plain S3A, which it reaches through
 * {@link S3ACallbacks}; it reports to each operation what the call changed, and {@link BucketState}
 * keeps the cache and the barrier from that, in one place.
 */
// A read's operation is never referenced in its body: entering and closing it is the bracket.
@SuppressWarnings("try")
final class RenameShim {

  private static final Logger LOG = LoggerFactory.getLogger(RenameShim.class);

  /**
   * A destination holding at most this many objects is listed whole, in as many LISTs as they fill
   * pages, for a merge into its subdirectories; a larger one directory by directory.
   */
  static final int MERGE_TREE_KEYS = 5_000;

  /**
   * The largest output a partition's merge renews whole (one page of a listing); a larger one has
   * each partition's own listing renewed.
   */
  static final int WHOLE_OUTPUT_RENEWAL_KEYS = 1_000;

  /** Objects under a committed task's directory listed at most; a larger one is not kept. */
  static final int JOB_ATTEMPT_KEYS = 100_000;

  /**
   * Objects in one page of a listing and one bulk delete: a job attempt directory holding at most
   * this many is listed whole.
   */
  static final int PAGE_SIZE = 1_000;

  /** A directory listing holds at most this many children; a larger directory is not kept. */
  static final int MAX_CHILDREN = 1_000;

  /** A destination found larger than {@link #MERGE_TREE_KEYS} is not paged again for this long. */
  private static final int TOO_LARGE_WINDOWS = 10;

  private final S3ACallbacks s3a;
  private final ShimEnvironment env;
  final ShimConfig shim;
  final CommitterConfig config;
  final StoreGateway gateway;
  private final ShimStatistics counters;
  private final BucketState state;
  private final KnownKeys known;
  private final CompletionQueue queue;
  private final WorkerPool threads;
  private final WorkerPool listingThreads;
  private final Optional<HiveStaging> hiveStaging;
  private final PendingRecords records;
  private final Statuses statuses;
  private final Renames renames;
  private final Deletes deletes;
  private final SeenListings seen;
  private final long windowNanos;

  RenameShim(
      S3ACallbacks s3a,
      StoreGateway gateway,
      Configuration conf,
      String endpoint,
      ShimStatistics counters,
      ShimEnvironment env)
      throws IOException {
    String bucket = gateway.bucket();
    try {
      shim = ShimConfig.from(conf, bucket);
    } catch (IllegalArgumentException e) {
      throw new IOException("rename shim for s3a://" + bucket + ": " + e.getMessage(), e);
    }
    this.s3a = s3a;
    this.env = env;
    this.gateway = gateway;
    this.counters = counters;
    this.config = CommitterConfig.from(conf);
    this.windowNanos = TimeUnit.MILLISECONDS.toNanos(shim.listingWindowMillis());
    state =
        env.states()
            .acquire(
                new BucketState.Key(bucket, endpoint),
                shim.listingWindowMillis(),
                env.pageSize(),
                env.nanoClock(),
                () ->
                    env.workers(
                        "rename shim completions for s3a://" + bucket, config.commitThreads()));
    known = state.known;
    queue = state.queue;
    threads = env.workers("rename shim for s3a://" + bucket, config.magicUploadThreads());
    listingThreads =
        env.workers("rename shim listings for s3a://" + bucket, config.commitThreads());
    hiveStaging =
        shim.rules().names().contains(ShimRules.HIVE.name())
            ? Optional.of(new HiveStaging(gateway, bucket))
            : Optional.empty();
    ShimMisses misses = new ShimMisses(gateway, shim.rules(), gateway.storeClock());
    records = new PendingRecords(gateway, known, counters, env.wallClock());
    statuses = new Statuses(s3a, gateway, records, known);
    seen = new SeenListings(s3a, gateway, known, statuses);
    renames =
        new Renames(
            gateway,
            shim,
            this::temporary,
            records,
            known,
            seen,
            queue,
            misses,
            counters,
            threads,
            s3a);
    deletes =
        new Deletes(gateway, records, known, seen, misses, this::temporary, counters, threads, s3a);
  }

  boolean temporary(String key) {
    return shim.enabled() && shim.rules().isTemporary(key);
  }

  private Operation enter(Operation.Kind kind, String... keys) throws IOException {
    long started = System.nanoTime();
    List<String> all = List.of(keys);
    env.entered(kind, all);
    Operation operation = state.enter(kind, all, this::temporary, counters);
    operation.timeInto(counters, started);
    return operation;
  }

  // ---- writing ------------------------------------------------------------------------------

  FSDataOutputStream create(
      Path path,
      FsPermission permission,
      EnumSet<CreateFlag> flags,
      boolean recursive,
      int bufferSize,
      short replication,
      long blockSize,
      Progressable progress)
      throws IOException {
    String key = s3a.keyOf(path);
    Operation op = enter(Operation.Kind.CREATE, key);
    try {
      Optional<String> finalKey = temporary(key) ? predictFinalKey(key) : Optional.empty();
      if (finalKey.isEmpty()) {
        FSDataOutputStream out =
            recursive
                ? s3a.create(
                    path,
                    permission,
                    flags.contains(CreateFlag.OVERWRITE),
                    bufferSize,
                    replication,
                    blockSize,
                    progress)
                : s3a.createNonRecursive(
                    path, permission, flags, bufferSize, replication, blockSize, progress);
        op.report().handOver();
        return s3a.stream(new HandedOverOutputStream(out, writeEnd(key, true)));
      }
      // No existence checks: a temporary path belongs to one task attempt.
      UploadOutputStream out = pendingFile(s3a.qualify(path).toString(), key, finalKey.get());
      op.report().handOver();
      counters.filesWritten.incrementAndGet();
      return s3a.stream(out);
    } finally {
      op.close();
    }
  }

  /**
   * What ends a handed-over write: the key ends once, as written when the write succeeded (unless
   * the writer reported its object itself, as a pending file's record does), unknown otherwise.
   */
  private HandedOverOutputStream.WriteEnd writeEnd(String key, boolean reportWrite) {
    AtomicBoolean ended = new AtomicBoolean();
    return succeeded -> {
      if (ended.compareAndSet(false, true)) {
        KnownKeys.Report report = new KnownKeys.Report();
        if (succeeded) {
          if (reportWrite) {
            report.wrote(key, null);
          }
          report.succeeded();
        }
        state.endHandedOver(List.of(key), report);
      }
    };
  }

  /**
   * The builder of a file: under temporary directories one that calls {@code create} with the
   * caller's options; elsewhere S3A's own, which creates the file without calling {@code create}:
   * its key is then unknown to the cache until a listing shows it.
   */
  @SuppressWarnings("rawtypes")
  FSDataOutputStreamBuilder createFile(Path path) throws IOException {
    String key = s3a.keyOf(path);
    if (temporary(key)) {
      return s3a.ownCreateFile(path);
    }
    try (Operation op = enter(Operation.Kind.CREATE, key)) {
      op.report().unsure(key);
      op.report().succeeded();
      return s3a.createFile(path);
    }
  }

  void copyFromLocalFile(boolean delSrc, boolean overwrite, Path src, Path dst) throws IOException {
    String key = s3a.keyOf(dst);
    try (Operation op = enter(Operation.Kind.CREATE, key)) {
      s3a.copyFromLocalFile(delSrc, overwrite, src, dst);
      op.report().unsure(key);
      op.report().succeeded();
    }
  }

  /**
   * A temporary directory is one marker object, written without S3A's checks of every parent: a
   * temporary path lies under the job's output, which the job has already checked.
   */
  boolean mkdirs(Path path, FsPermission permission) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.MKDIRS, key)) {
      if (!temporary(key)) {
        boolean made = s3a.mkdirs(path, permission);
        op.report().madeDirectory(key);
        op.report().succeeded();
        return made;
      }
      if (known.record(key).isPresent()) {
        throw new org.apache.hadoop.fs.FileAlreadyExistsException(
            "cannot create directory " + s3a.qualify(path) + ": it is a pending file");
      }
      gateway.putObject(key + "/", new byte[0], false);
      op.report().madeDirectory(key);
      op.report().succeeded();
      return true;
    }
  }

  /** Stores a Hive statement's load plan in its staging directory: one PUT. */
  void putLoadPlan(String stagingKey, LoadPlan plan) throws IOException {
    String key = stagingKey + "/" + LoadPlan.FILE_NAME;
    try (Operation op = enter(Operation.Kind.CREATE, key)) {
      HiveStaging.putLoadPlan(gateway, stagingKey, plan);
      op.report().wrote(key, null);
      op.report().succeeded();
    }
  }

  // ---- status and listings ------------------------------------------------------------------

  FileStatus getFileStatus(Path path) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.STATUS, key)) {
      return status(path, key);
    }
  }

  boolean exists(Path path) throws IOException {
    return statusIfAny(path).isPresent();
  }

  boolean isFile(Path path) throws IOException {
    return statusIfAny(path).map(FileStatus::isFile).orElse(false);
  }

  boolean isDirectory(Path path) throws IOException {
    return statusIfAny(path).map(FileStatus::isDirectory).orElse(false);
  }

  private Optional<FileStatus> statusIfAny(Path path) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.STATUS, key)) {
      return Optional.of(status(path, key));
    } catch (FileNotFoundException e) {
      return Optional.empty();
    }
  }

  /**
   * A path's status: under temporary directories a pending file is a file of its real length;
   * elsewhere what the cache knows answers "absent" and "directory" without a request, and S3A
   * answers the rest. An absence S3A finds is remembered for the window: commit code checks a
   * destination just before it renames onto it.
   */
  private FileStatus status(Path path, String key) throws IOException {
    if (!shim.enabled()) {
      return s3a.getFileStatus(path);
    }
    if (temporary(key)) {
      try (KnownKeys.Ticket ticket = known.onTheWire()) {
        try {
          return statuses.statusOf(path, key);
        } catch (FileNotFoundException e) {
          ticket.reportAbsent(key); // FileOutputCommitter's task commit renames there
          throw e;
        }
      }
    }
    Known what = known.answer(key);
    if (what.isAbsent()) {
      counters.destinationChecksFromListing.incrementAndGet();
      throw new FileNotFoundException("No such file or directory: " + s3a.qualify(path));
    }
    if (what.isDirectory()) {
      counters.destinationDirectoriesFromListing.incrementAndGet();
      return statuses.directory(path);
    }
    try (KnownKeys.Ticket ticket = known.onTheWire()) {
      try {
        return s3a.getFileStatus(path);
      } catch (FileNotFoundException e) {
        ticket.reportAbsent(key);
        throw e;
      }
    }
  }

  FileStatus[] listStatus(Path path) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.READ, key)) {
      if (!temporary(key)) {
        return s3a.listStatus(path);
      }
      Optional<KnownKeys.Children> children = Optional.empty();
      Optional<String> jobAttempt = Layouts.jobAttemptOf(key);
      if (jobAttempt.isPresent()) {
        listJobAttempt(jobAttempt.get(), key);
        children = known.children(key);
        if (children.isPresent() && Layouts.isJobAttemptDirectory(key)) {
          startRound(key);
        }
      } else {
        children = known.children(key); // a task attempt's own directory, known without a LIST
      }
      FileStatus[] listed =
          children.isPresent() ? statuses.listed(children.get()) : seen.children(path, key);
      if (listed.length > 0) {
        List<String> names = new ArrayList<>(listed.length);
        for (FileStatus status : listed) {
          names.add(status.getPath().getName());
        }
        prepareMerge(
            key, children.map(KnownKeys.Children::directories).orElse(List.<String>of()), names);
      }
      return statuses.resolveAll(listed, this::temporary, threads, "listing " + path);
    }
  }

  RemoteIterator<FileStatus> listStatusIterator(Path path) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.READ, key)) {
      if (seen.differ(key, this::temporary)) {
        return SeenListings.iterator(
            List.of(
                statuses.resolveAll(
                    seen.children(path, key), this::temporary, threads, "listing " + path)));
      }
      RemoteIterator<FileStatus> listed = s3a.listStatusIterator(path);
      return shim.enabled()
          ? Statuses.mapped(listed, status -> statuses.resolve(status, this::temporary))
          : listed;
    }
  }

  RemoteIterator<LocatedFileStatus> listFiles(Path path, boolean recursive) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.READ, key)) {
      return filesAsSeen(path, key, recursive);
    }
  }

  private RemoteIterator<LocatedFileStatus> filesAsSeen(Path path, String key, boolean recursive)
      throws IOException {
    if (!seen.differ(key, this::temporary)) {
      return located(s3a.listFiles(path, recursive));
    }
    return locatedAsSeen(seen.files(path, key, recursive), "listing files under " + path);
  }

  RemoteIterator<LocatedFileStatus> listLocatedStatus(Path path) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.READ, key)) {
      if (seen.differ(key, this::temporary)) {
        return locatedAsSeen(List.of(seen.children(path, key)), "listing " + path);
      }
      return located(s3a.listLocatedStatus(path));
    }
  }

  private RemoteIterator<LocatedFileStatus> locatedAsSeen(List<FileStatus> listed, String what)
      throws IOException {
    FileStatus[] resolved =
        statuses.resolveAll(listed.toArray(new FileStatus[0]), this::temporary, threads, what);
    List<LocatedFileStatus> located = new ArrayList<>(resolved.length);
    for (FileStatus status : resolved) {
      located.add(seen.located(status));
    }
    return SeenListings.iterator(located);
  }

  private RemoteIterator<LocatedFileStatus> located(RemoteIterator<LocatedFileStatus> listed) {
    return shim.enabled()
        ? Statuses.mapped(listed, status -> statuses.resolveLocated(status, this::temporary))
        : listed;
  }

  ContentSummary getContentSummary(Path path) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.READ, key)) {
      if (!temporary(key)) {
        return s3a.getContentSummary(path);
      }
      return statuses.summaryOf(status(path, key), filesAsSeen(path, key, true));
    }
  }

  /**
   * FileOutputCommitter's job commit lists its job attempt directory, then merges each committed
   * task's tree, and every listing inside it is answered from what this lists, for the window. A
   * job attempt that fits in one page is listed whole, in one LIST. A larger one is listed as its
   * children (one delimited LIST per 1,000 tasks), then its committed tasks' trees in groups of
   * tasks, in parallel ({@link #listTaskByTask}): each listing answers for the window from its own
   * first request, so that the job attempt's size does not make its listing outlast the window (a
   * listing of 20,000 objects in 20 pages did, and then answered nothing). Once a listing has aged,
   * a read inside a committed task renews that task's group, or the whole job attempt while it fits
   * in one page. A listing of the job attempt directory itself is always sent: tasks committed in
   * other processes since an earlier listing (a reader's) are visible only in the store, and a job
   * commit that missed them would leave their files behind.
   */
  private void listJobAttempt(String jobAttemptKey, String readKey) throws IOException {
    if (!known.caching()) {
      return;
    }
    if (readKey.equals(jobAttemptKey)) {
      if (!listWholeInOnePage(jobAttemptKey)) {
        listTaskByTask(jobAttemptKey);
      }
      return;
    }
    if (known.listedWithin(readKey, windowNanos)) {
      return;
    }
    int lastWhole = known.lastTreeSize(jobAttemptKey);
    if (lastWhole >= 0 && lastWhole <= env.pageSize() && listWholeInOnePage(jobAttemptKey)) {
      return;
    }
    Optional<String> task = Layouts.committedTaskOf(readKey);
    if (task.isPresent()) {
      TaskGroup group = taskGroups.get(task.get());
      if (group == null || !listGroups(List.of(group))) {
        known.listTree(gateway, task.get(), JOB_ATTEMPT_KEYS, null, List.of(), counters);
      }
    }
  }

  private boolean listWholeInOnePage(String jobAttemptKey) throws IOException {
    return known.listTree(gateway, jobAttemptKey, env.pageSize(), null, List.of(), counters);
  }

  /**
   * Committed tasks whose keys share {@code prefix}, listed together in one flat listing of it: a
   * job of many small tasks costs one LIST per 1,000 objects, not one per task.
   */
  private record TaskGroup(String prefix, List<String> tasks) {

    /** The groups the tasks (sorted keys) fall into by the character after {@code prefix}. */
    static List<TaskGroup> split(String prefix, List<String> tasks) {
      List<TaskGroup> groups = new ArrayList<>();
      int at = prefix.length();
      int i = 0;
      while (i < tasks.size()) {
        String first = tasks.get(i);
        if (first.length() <= at) {
          groups.add(new TaskGroup(Keys.prefixOf(first), List.of(first))); // a prefix of others
          i++;
          continue;
        }
        String sub = first.substring(0, at + 1);
        int j = i;
        while (j < tasks.size() && tasks.get(j).startsWith(sub)) {
          j++;
        }
        List<String> members = List.copyOf(tasks.subList(i, j));
        groups.add(
            members.size() == 1
                ? new TaskGroup(Keys.prefixOf(first), members)
                : new TaskGroup(sub, members));
        i = j;
      }
      return groups;
    }

    boolean single() {
      return tasks.size() == 1 && prefix.equals(Keys.prefixOf(tasks.get(0)));
    }
  }

  /** The group each committed task was last listed in, by the task's key. */
  private final Map<String, TaskGroup> taskGroups = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Lists the job attempt's children, then its committed tasks' trees in groups of tasks whose
   * names share a prefix, in parallel: first by the first character where the names differ, and a
   * group that holds more than two pages is split by the next character and listed again, down to
   * single tasks, each listed whole whatever its size. Each group's listing answers for its tasks
   * from its own first request, and a task's aged listing is renewed with its group.
   */
  private void listTaskByTask(String jobAttemptKey) throws IOException {
    if (!known.listDirectory(gateway, jobAttemptKey, JOB_ATTEMPT_KEYS, counters)) {
      return;
    }
    List<String> tasks =
        committedTasksIn(jobAttemptKey).orElse(List.<String>of()).stream().sorted().toList();
    taskGroups.keySet().removeIf(task -> Keys.isUnder(task, jobAttemptKey));
    if (tasks.isEmpty()) {
      return;
    }
    String common = tasks.get(0);
    for (String task : tasks) {
      int n = 0;
      while (n < common.length() && n < task.length() && common.charAt(n) == task.charAt(n)) {
        n++;
      }
      common = common.substring(0, n);
    }
    listGroups(TaskGroup.split(common, tasks));
    if (!known.listedWithin(jobAttemptKey, windowNanos)) {
      // The tasks' listings outlasted the job attempt's own: listed again, so that the job
      // commit's listing and its round are answered from it rather than from the store.
      known.listDirectory(gateway, jobAttemptKey, JOB_ATTEMPT_KEYS, counters);
    }
  }

  /**
   * Lists the groups in parallel, splitting those too large for two pages until every task is
   * listed or a request failed; whether every group's listing was kept.
   */
  private boolean listGroups(List<TaskGroup> groups) throws IOException {
    List<TaskGroup> pending = groups;
    java.util.concurrent.atomic.AtomicBoolean allKept =
        new java.util.concurrent.atomic.AtomicBoolean(true);
    while (!pending.isEmpty()) {
      List<TaskGroup> tooLarge = java.util.Collections.synchronizedList(new ArrayList<>());
      Tasks.runAll(
          listingThreads,
          "listing committed tasks",
          pending,
          group -> {
            int most = group.single() ? JOB_ATTEMPT_KEYS : 2 * env.pageSize();
            KnownKeys.Listed listed =
                known.listTrees(gateway, group.prefix(), group.tasks(), most, counters);
            if (listed == KnownKeys.Listed.TOO_LARGE && !group.single()) {
              tooLarge.add(group);
              return;
            }
            if (listed == KnownKeys.Listed.KEPT) {
              group.tasks().forEach(task -> taskGroups.put(task, group));
            } else {
              allKept.set(false);
            }
          });
      List<TaskGroup> next = new ArrayList<>();
      for (TaskGroup group : tooLarge) {
        next.addAll(TaskGroup.split(group.prefix(), group.tasks()));
      }
      pending = next;
    }
    return allKept.get();
  }

  /** The committed tasks' directories a listing of the job attempt directory shows now. */
  private Optional<List<String>> committedTasksIn(String jobAttemptKey) {
    return known
        .children(jobAttemptKey)
        .map(
            children ->
                children.directories().stream().filter(Layouts::isCommittedTaskDirectory).toList());
  }

  /**
   * The job commit listed its job attempt directory: the round of files it will move, every file of
   * every committed task the listing shows; none when a task's listing is not known.
   */
  private void startRound(String jobAttemptKey) {
    Optional<List<String>> tasks = committedTasksIn(jobAttemptKey);
    if (tasks.isEmpty()) {
      return;
    }
    if (!tasks.get().isEmpty()) {
      Layouts.mergeRootOf(tasks.get().get(0)).ifPresent(paces::remove); // a new merge's pace
    }
    List<String> files = new ArrayList<>();
    for (String task : tasks.get()) {
      Optional<List<ObjectInfo>> objects = known.objectsUnder(task, List.of());
      if (objects.isEmpty()) {
        return;
      }
      for (ObjectInfo object : objects.get()) {
        if (!object.key().endsWith("/") && Layouts.isCommittedTaskFile(object.key())) {
          files.add(object.key());
        }
      }
    }
    queue.startRound(jobAttemptKey, files, env.nanoClock().getAsLong());
  }

  /**
   * Commit code lists a temporary directory before it moves its children into place, each after an
   * existence check of its destination: listings of the destination answer those checks. A merge
   * into several directories (a committed task's partitions) lists the destination whole, when it
   * is small enough, else the destination and each of those directories that exist, in parallel.
   * Nothing is listed while listings younger than half the window answer for all of them.
   *
   * <p>In a job commit's round, every destination listing sent is held for the round, and the
   * temporary directory's {@code names} are the ones the round moves into its destination: the
   * round's later merges into the same directories (the next tasks' files in the same partitions)
   * are answered from those listings, however long the round takes ({@link Listings#hold}).
   */
  private void prepareMerge(String temporaryKey, List<String> subdirectories, List<String> names)
      throws IOException {
    if (!known.caching()) {
      return;
    }
    Optional<String> destination = destinationDirectoryOf(temporaryKey);
    if (destination.isEmpty()) {
      return;
    }
    List<String> mergeInto = new ArrayList<>();
    for (String subdirectory : subdirectories) {
      destinationDirectoryOf(subdirectory).ifPresent(mergeInto::add);
    }
    MergeRound round =
        Layouts.committedTaskOf(temporaryKey).isPresent()
            ? queue.roundAround(temporaryKey).orElse(null)
            : null;
    listDestinations(temporaryKey, destination.get(), subdirectories, mergeInto, round);
    if (round != null) {
      known.hold(round, destination.get(), names);
      for (String below : mergeInto) {
        known.hold(round, below, List.of());
      }
    }
  }

  /** The listings {@link #prepareMerge} sends, none for directories the round holds. */
  private void listDestinations(
      String temporaryKey,
      String destinationKey,
      List<String> subdirectories,
      List<String> mergeInto,
      MergeRound round)
      throws IOException {
    long halfWindow = windowNanos / 2;
    boolean partition =
        subdirectories.isEmpty()
            && Layouts.committedTaskOf(temporaryKey)
                .filter(t -> !t.equals(temporaryKey))
                .isPresent();
    int ahead = partition ? partitionsAhead(temporaryKey, halfWindow) : 0;
    if (answers(destinationKey, halfWindow, round)
        && mergeInto.stream()
            .allMatch(
                directory ->
                    answersInside(directory, halfWindow)
                        || (round != null && known.heldBy(round, directory)))) {
      return;
    }
    // A directory deep in a committed task (a partition) renews the listing of the whole output,
    // as its task's directory did, rather than its own destination alone, while the output fits
    // in one page: the merge of the next partitions is then answered from it, not one LIST each.
    // A larger output would cost more pages at each renewal than the partitions' own listings.
    Optional<String> root = Layouts.mergeRootOf(temporaryKey);
    if (subdirectories.isEmpty()
        && root.isPresent()
        && !root.get().equals(destinationKey)
        && known.lastTreeSize(root.get()) >= 0
        && known.lastTreeSize(root.get()) <= WHOLE_OUTPUT_RENEWAL_KEYS
        && !known.foundTooLarge(root.get(), TOO_LARGE_WINDOWS * windowNanos)) {
      if (known.listTree(
          gateway,
          root.get(),
          MERGE_TREE_KEYS,
          temporaryNameUnder(root.get(), temporaryKey),
          List.of(destinationKey),
          counters)) {
        return;
      }
      known.foundTooLarge(root.get());
    }
    if (!subdirectories.isEmpty()
        && !known.foundTooLarge(destinationKey, TOO_LARGE_WINDOWS * windowNanos)) {
      if (known.listTree(
          gateway,
          destinationKey,
          MERGE_TREE_KEYS,
          temporaryNameUnder(destinationKey, temporaryKey),
          mergeInto,
          counters)) {
        return;
      }
      known.foundTooLarge(destinationKey);
    }
    if (!answers(destinationKey, halfWindow, round)) {
      List<String> batch = new ArrayList<>();
      if (!tooManyChildren(destinationKey)) {
        batch.add(destinationKey);
      }
      if (ahead > 0) {
        batch.addAll(nextDestinations(temporaryKey, destinationKey, ahead, halfWindow));
      }
      Tasks.runAll(
          listingThreads,
          "listing destination directories",
          batch,
          directory -> known.listDirectory(gateway, directory, MAX_CHILDREN, counters));
      if (round != null) {
        batch.forEach(directory -> known.hold(round, directory, List.of()));
      }
    }
    List<String> existing = new ArrayList<>();
    for (String below : mergeInto) {
      // One the destination's listing shows absent is moved whole: nothing checks inside it.
      if (!known.answer(below).isAbsent()
          && !answers(below, halfWindow, round)
          && !tooManyChildren(below)) {
        existing.add(below);
      }
    }
    Tasks.runAll(
        listingThreads,
        "listing destination directories",
        existing,
        directory -> known.listDirectory(gateway, directory, MAX_CHILDREN, counters));
  }

  /** Whether a listing of the directory answers: younger than the age, or held by the round. */
  private boolean answers(String directory, long ageNanos, MergeRound round) {
    return known.listedWithin(directory, ageNanos)
        || (round != null && known.heldBy(round, directory));
  }

  /**
   * When a merge last entered a partition, and the mean time between two (0: not yet), by the
   * merge's output: merges of several outputs through one instance keep their own pace.
   */
  private final Map<String, long[]> paces = new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * How many partitions the merge will enter after this one within {@code ageNanos}, at the pace it
   * kept so far in this output, counting half: their destinations are listed ahead with this one's.
   * A slow merge lists none ahead, so that no listing ages unused; a fast one at most two rounds of
   * the listing threads. A pause longer than the window, or a new round, starts the pace afresh.
   */
  private int partitionsAhead(String temporaryKey, long ageNanos) {
    Optional<String> root = Layouts.mergeRootOf(temporaryKey);
    if (root.isEmpty()) {
      return 0;
    }
    if (paces.size() > Listings.MAX_TOO_LARGE) {
      paces.clear();
    }
    long[] pace = paces.computeIfAbsent(root.get(), r -> new long[2]);
    synchronized (pace) {
      long now = env.nanoClock().getAsLong();
      long gap = pace[0] == 0 ? 0 : Math.max(1, now - pace[0]);
      pace[0] = now;
      if (gap == 0 || gap > windowNanos) {
        pace[1] = 0;
        return 0;
      }
      pace[1] = pace[1] == 0 ? gap : (3 * pace[1] + gap) / 4;
      return (int) Math.min(2L * listingThreads.parallelism(), ageNanos / (2 * pace[1]));
    }
  }

  /**
   * The destinations of the directories the merge moves next, after this one, among those its
   * parent's listing shows (a committed task's partitions, merged in the listing's order), that no
   * listing younger than {@code ageNanos} answers for: listed in parallel with this one's, so that
   * a merge of many partitions does not wait for one LIST per partition.
   */
  private List<String> nextDestinations(
      String temporaryKey, String destination, int most, long ageNanos) {
    Optional<KnownKeys.Children> siblings = known.children(Keys.parentOf(temporaryKey));
    if (siblings.isEmpty()) {
      return List.of();
    }
    java.util.Set<String> next = new java.util.LinkedHashSet<>();
    for (String sibling : new java.util.TreeSet<>(siblings.get().directories())) {
      if (next.size() >= most) {
        break;
      }
      if (sibling.compareTo(temporaryKey) > 0) {
        destinationDirectoryOf(sibling)
            .filter(
                d -> !d.equals(destination) && !answersInside(d, ageNanos) && !tooManyChildren(d))
            .ifPresent(next::add);
      }
    }
    return new ArrayList<>(next);
  }

  /**
   * Whether a listing of the directory was found longer than one kept ({@link #MAX_CHILDREN})
   * within the last windows: listing it again would send its pages for nothing.
   */
  private boolean tooManyChildren(String directory) {
    return known.foundTooManyChildren(directory, TOO_LARGE_WINDOWS * windowNanos);
  }

  private boolean answersInside(String directory, long ageNanos) {
    return known.answer(directory).isAbsent() || known.listedWithin(directory, ageNanos);
  }

  /** The name of the directory directly under the destination that holds the temporary key. */
  private static String temporaryNameUnder(String destinationKey, String temporaryKey) {
    String prefix = Keys.prefixOf(destinationKey);
    if (!temporaryKey.startsWith(prefix) || temporaryKey.length() == prefix.length()) {
      return null;
    }
    String rest = temporaryKey.substring(prefix.length());
    int slash = rest.indexOf('/');
    return slash < 0 ? rest : rest.substring(0, slash);
  }

  /**
   * The directory commit code moves a temporary directory's files into: for a committed task's
   * directory, where FileOutputCommitter's job commit merges it (below the committer's output,
   * which may itself be temporary: Spark's staging directory of a dynamic partition overwrite);
   * otherwise where the rules predict the files go, when they keep the files' names; empty when
   * neither.
   */
  private Optional<String> destinationDirectoryOf(String temporaryKey) {
    Optional<String> merged = Layouts.mergeDestinationOf(temporaryKey);
    if (merged.isPresent()) {
      return merged;
    }
    return shim.rules().predictFinalDirectory(temporaryKey);
  }

  // ---- reading ------------------------------------------------------------------------------

  /** A read S3A answers itself (a checksum, attributes, a listing with a filter). */
  @FunctionalInterface
  interface Read<T> {
    T read() throws IOException;
  }

  /** Runs a read of S3A's inside an operation: it waits for what it could observe first. */
  <T> T read(Path path, Read<T> read) throws IOException {
    try (Operation op = enter(Operation.Kind.READ, s3a.keyOf(path))) {
      return read.read();
    }
  }

  /**
   * S3A's bulk delete, through the shim: each call one operation on the keys it deletes. Paths
   * under temporary directories are refused: their objects are records of pending uploads, which a
   * delete of the path aborts and a bulk delete would orphan.
   */
  org.apache.hadoop.fs.BulkDelete bulkDelete(org.apache.hadoop.fs.BulkDelete s3aBulkDelete) {
    return new org.apache.hadoop.fs.BulkDelete() {
      @Override
      public int pageSize() {
        return s3aBulkDelete.pageSize();
      }

      @Override
      public Path basePath() {
        return s3aBulkDelete.basePath();
      }

      @Override
      public List<Map.Entry<Path, String>> bulkDelete(java.util.Collection<Path> paths)
          throws IOException {
        List<String> keys = new ArrayList<>();
        for (Path path : paths) {
          String key = s3a.keyOf(path);
          if (temporary(key)) {
            throw new IOException(
                "the rename shim does not bulk-delete "
                    + s3a.qualify(path)
                    + ": it lies under a temporary directory, where objects are records of"
                    + " pending uploads that only a delete of the path aborts. Delete the path"
                    + " (or its directory) instead");
          }
          keys.add(key);
        }
        try (Operation op = enter(Operation.Kind.DELETE, keys.toArray(new String[0]))) {
          List<Map.Entry<Path, String>> failed = s3aBulkDelete.bulkDelete(paths);
          java.util.Set<Path> refused = new java.util.HashSet<>();
          failed.forEach(entry -> refused.add(entry.getKey()));
          for (Path path : paths) {
            String key = s3a.keyOf(path);
            if (refused.contains(path)) {
              op.report().unsure(key);
            } else {
              op.report().removed(key);
            }
          }
          op.report().succeeded();
          return failed;
        }
      }

      @Override
      public org.apache.hadoop.fs.statistics.IOStatistics getIOStatistics() {
        return s3aBulkDelete.getIOStatistics();
      }

      @Override
      public void close() throws IOException {
        s3aBulkDelete.close();
      }
    };
  }

  /**
   * Hadoop's multipart uploader writes objects that appear when it completes, outside the shim: it
   * is refused under temporary directories, where every file is a pending upload of the shim's.
   */
  void refuseUploaderUnder(Path path) throws IOException {
    if (temporary(s3a.keyOf(path))) {
      throw new IOException(
          "the rename shim does not give a multipart uploader for "
              + s3a.qualify(path)
              + ": files under temporary directories are the shim's pending uploads");
    }
  }

  FSDataInputStream open(Path path, int bufferSize) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.READ, key)) {
      refusePendingRead(path, key);
      return s3a.open(path, bufferSize);
    }
  }

  CompletableFuture<FSDataInputStream> openFileWithOptions(Path path, OpenFileParameters parameters)
      throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.READ, key)) {
      refusePendingRead(path, key);
      return s3a.openFileWithOptions(path, parameters);
    }
  }

  private void refusePendingRead(Path path, String key) throws IOException {
    if (!temporary(key)) {
      return;
    }
    Optional<PendingRecords.Found> found = records.find(key);
    if (found.isPresent() && found.get().isRecord()) {
      counters.pendingReadsRefused.incrementAndGet();
      throw PendingFileNotReadableException.of(
          s3a.qualify(path), "s3a://" + gateway.bucket() + "/" + found.get().record().key());
    }
  }

  // ---- renaming and deleting ----------------------------------------------------------------

  boolean rename(Path src, Path dst) throws IOException {
    String srcKey = s3a.keyOf(src);
    String dstKey = s3a.keyOf(dst);
    try (Operation op = enter(Operation.Kind.RENAME, srcKey, dstKey)) {
      if (temporary(srcKey)) {
        return renames.rename(op, src, srcKey, dstKey);
      }
      boolean renamed = s3a.rename(src, dst);
      if (renamed) {
        op.report().removed(srcKey);
        op.report().unsure(dstKey); // onto the key, or into it when it is a directory
      }
      op.report().succeeded();
      return renamed;
    }
  }

  boolean delete(Path path, boolean recursive) throws IOException {
    String key = s3a.keyOf(path);
    try (Operation op = enter(Operation.Kind.DELETE, key)) {
      boolean deleted =
          shim.enabled() ? deletes.delete(path, key, recursive) : s3a.delete(path, recursive);
      if (deleted) {
        op.report().removed(key);
      }
      op.report().succeeded();
      return deleted;
    }
  }

  /** Waits for the completions queued under a directory; fails with one that failed. */
  void awaitCompletions(Path directory) throws IOException {
    try (Operation op = enter(Operation.Kind.AWAIT, s3a.keyOf(directory))) {
      // the barrier is the operation
    }
  }

  // ---- parts --------------------------------------------------------------------------------

  /**
   * Where a file created under a temporary directory will end up: Hive's staged files as Hive will
   * name them (which may take a LIST, see {@link HiveStaging}), others by the rules alone.
   */
  private Optional<String> predictFinalKey(String key) throws IOException {
    if (hiveStaging.isPresent()
        && Layouts.isHiveStagedFile(key)
        && !shim.rules().isPlainFile(key)) {
      return hiveStaging.get().predictFinalKey(key);
    }
    return shim.rules().predictFinalKey(key);
  }

  /** The writer of a pending file: a multipart upload to its final key, its record at its path. */
  private UploadOutputStream pendingFile(String uri, String key, String finalKey) {
    HandedOverOutputStream.WriteEnd writeEnd = writeEnd(key, false);
    return new UploadOutputStream(
        gateway,
        uri,
        finalKey,
        key,
        ShimRules.attemptOf(key),
        config.partSize(),
        config.magicBuffersPerStream(),
        threads.pool(),
        records.keeperOf(key, writeEnd));
  }

  /** Whether the shim serves this bucket. */
  boolean enabled() {
    return shim.enabled();
  }

  /**
   * Waits for the completions this instance queued, then lets go of the bucket's state and stops
   * the threads; a failure of those completions never reported to a job commit is reported here.
   */
  void close() throws IOException {
    try (Operation op = enter(Operation.Kind.CLOSE, "")) {
      queue.awaitOwnedBy(renames, counters);
    } finally {
      try {
        if (counters.misses() > 0 || counters.missesRefused() > 0) {
          LOG.warn("rename shim for s3a://{}: {}", gateway.bucket(), counters);
        } else if (counters.filesWritten() > 0) {
          LOG.info("rename shim for s3a://{}: {}", gateway.bucket(), counters);
        }
      } finally {
        env.states().release(state, shim.listingWindowMillis());
        threads.pool().shutdownNow();
        listingThreads.pool().shutdownNow();
      }
    }
  }
}
