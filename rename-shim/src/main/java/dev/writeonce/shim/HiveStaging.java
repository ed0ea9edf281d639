package dev.writeonce.shim;

import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.json.LoadPlanFormat;
import dev.writeonce.core.model.LoadPlan;
import dev.writeonce.core.store.ObjectInfo;
import dev.writeonce.core.store.StoreGateway;
import java.io.IOException;
import java.net.URI;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The final key of a file Hive writes under its staging directory, as Hive's MoveTask will name it:
 * in the destination the staging path names, or the one its {@link LoadPlan} names (CTAS); with the
 * file's own name when the statement replaces the destination's files, or the first free name of
 * {@code <name>}, {@code <name>_copy_1}, {@code <name>_copy_2}... when it keeps them (one LIST).
 */
final class HiveStaging {

  private static final String COPY_KEYWORD = "_copy_";
  private static final int MAX_PLANS = 1_000;

  private static final Logger LOG = LoggerFactory.getLogger(HiveStaging.class);

  private final StoreGateway gateway;
  private final String bucket;
  private final AtomicBoolean missingPlanReported = new AtomicBoolean();
  private final Map<String, LoadPlan> plans =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, LoadPlan> eldest) {
          return size() > MAX_PLANS;
        }
      };

  HiveStaging(StoreGateway gateway, String bucket) {
    this.gateway = gateway;
    this.bucket = bucket;
  }

  /** Stores a statement's load plan in its staging directory: one PUT. */
  static void putLoadPlan(StoreGateway gateway, String stagingKey, LoadPlan plan)
      throws IOException {
    gateway.putObject(stagingKey + "/" + LoadPlan.FILE_NAME, LoadPlanFormat.toJson(plan), false);
  }

  /**
   * The final key of a staged file; empty when the key is not one, or its destination lies in
   * another bucket (then the file is written as an ordinary object and Hive copies it).
   */
  Optional<String> predictFinalKey(String key) throws IOException {
    Matcher staged = Layouts.HIVE_STAGED_FILE.matcher(key);
    if (!staged.matches()) {
      return Optional.empty();
    }
    String root = staged.group(1) + staged.group(2);
    Optional<LoadPlan.Load> load = planOf(root).load(staged.group(3));
    String directory = staged.group(1);
    if (load.isPresent() && load.get().target().isPresent()) {
      Optional<String> target = keyInThisBucket(load.get().target().get());
      if (target.isEmpty()) {
        return Optional.empty();
      }
      directory = target.get().isEmpty() ? "" : target.get() + "/";
    }
    // FileOutputCommitter writing into the staging directory (Spark's insert into a Hive table)
    // adds its own layout below it, which its job commit removes before Hive moves the file.
    String destination = directory + Layouts.withoutCommitterLayout(staged.group(4));
    String name = staged.group(5);
    boolean replace = load.isPresent() && load.get().mode() == LoadPlan.Mode.REPLACE;
    return Optional.of(destination + (replace ? name : firstFreeName(destination, name)));
  }

  /** Hive's choice for a file joining a directory: its name, or the first free copy name. */
  private String firstFreeName(String directory, String name) throws IOException {
    int dot = name.lastIndexOf('.');
    String base = dot > 0 ? name.substring(0, dot) : name;
    String extension = dot > 0 ? name.substring(dot) : "";
    Set<String> taken = new HashSet<>();
    for (ObjectInfo object : gateway.listObjects(directory + base)) {
      taken.add(object.key().substring(directory.length()));
    }
    if (!taken.contains(name)) {
      return name;
    }
    for (int copy = 1; ; copy++) {
      String candidate = base + COPY_KEYWORD + copy + extension;
      if (!taken.contains(candidate)) {
        return candidate;
      }
    }
  }

  private LoadPlan planOf(String root) throws IOException {
    synchronized (plans) {
      LoadPlan known = plans.get(root);
      if (known != null) {
        return known;
      }
    }
    String key = root + "/" + LoadPlan.FILE_NAME;
    Optional<byte[]> body = gateway.getObject(key);
    LoadPlan plan =
        body.isEmpty() ? LoadPlan.NONE : parse(body.get(), "s3a://" + bucket + "/" + key);
    if (body.isEmpty() && missingPlanReported.compareAndSet(false, true)) {
      LOG.warn(
          "no load plan at s3a://{}/{}: Hive runs without dev.writeonce.hive.LoadPlanHook in"
              + " hive.exec.pre.hooks, so the shim assumes every statement adds files to its"
              + " destination. INSERT OVERWRITE into a non-empty destination then copies each file"
              + " once, and CTAS copies every file (docs/hive.md). Logged once per file system.",
          bucket,
          key);
    }
    synchronized (plans) {
      plans.put(root, plan);
    }
    return plan;
  }

  private static LoadPlan parse(byte[] body, String where) throws IOException {
    try {
      return LoadPlanFormat.fromBytes(body, where);
    } catch (FormatException e) {
      throw new IOException(
          e.getMessage()
              + ": the statement's load plan is damaged; run the statement again, or remove"
              + " dev.writeonce.hive.LoadPlanHook from the hooks to let the shim assume every"
              + " statement adds files",
          e);
    }
  }

  private Optional<String> keyInThisBucket(String target) {
    URI uri = URI.create(target);
    if (!bucket.equals(uri.getHost())) {
      return Optional.empty();
    }
    String path = uri.getPath() == null ? "" : uri.getPath();
    while (path.startsWith("/")) {
      path = path.substring(1);
    }
    while (path.endsWith("/")) {
      path = path.substring(0, path.length() - 1);
    }
    return Optional.of(path);
  }
}
