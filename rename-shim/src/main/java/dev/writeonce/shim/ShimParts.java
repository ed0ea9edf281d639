package dev.writeonce.shim;

import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.core.store.S3StoreGateway;
import dev.writeonce.core.store.StoreGateway;
import dev.writeonce.core.upload.UploadOutputStream;
import dev.writeonce.core.upload.UploadPool;
import java.io.IOException;
import java.util.Optional;
import org.apache.hadoop.conf.Configuration;

/** The parts of one shim instance, built once its S3A file system is initialised. */
final class ShimParts {

  final ShimConfig shim;
  final CommitterConfig config;
  final StoreGateway gateway;
  final UploadPool threads;
  final UploadPool completionThreads;
  final UploadPool listingThreads;
  final Optional<HiveStaging> hiveStaging;
  final ShimRecords records;
  final QueuedCompletions completions;
  final ShimRenames renames;
  final ShimDeletes deletes;
  final ShimStatuses statuses;
  final DestinationChecks checks;
  final CommittedTaskTrees trees;

  ShimParts(
      RenameShimFileSystem fs,
      Configuration conf,
      ShimStatistics counters,
      ShimRenames.Plain plain,
      String user)
      throws IOException {
    String bucket = fs.getBucket();
    try {
      shim = ShimConfig.from(conf, bucket);
    } catch (IllegalArgumentException e) {
      throw new IOException("rename shim for s3a://" + bucket + ": " + e.getMessage(), e);
    }
    config = CommitterConfig.from(conf);
    gateway = S3StoreGateway.forFileSystem(fs);
    threads = new UploadPool("rename shim for s3a://" + bucket, config.magicUploadThreads());
    // Queued completions are the job commit's: as many threads as the committers' job commit.
    completionThreads =
        new UploadPool("rename shim completions for s3a://" + bucket, config.commitThreads());
    listingThreads =
        new UploadPool("rename shim listings for s3a://" + bucket, config.commitThreads());
    hiveStaging =
        shim.rules().names().contains(ShimRules.HIVE.name())
            ? Optional.of(new HiveStaging(gateway, bucket))
            : Optional.empty();
    ShimMisses misses = new ShimMisses(gateway, shim.rules(), gateway.storeClock());
    records = new ShimRecords(gateway, counters);
    checks =
        new DestinationChecks(
            shim,
            new DestinationListings(
                gateway, shim.listingWindowMillis(), System::nanoTime, counters),
            listingThreads);
    trees = new CommittedTaskTrees(gateway, shim.listingWindowMillis(), System::nanoTime);
    // The records of completed files go in bulk, from the store and from the tree listings.
    completions =
        new QueuedCompletions(
            completionThreads,
            keys -> {
              records.delete(keys);
              keys.forEach(trees::removed);
            },
            checks::wrote,
            counters,
            bucket);
    renames =
        new ShimRenames(
            gateway,
            shim,
            fs::temporary,
            records,
            misses,
            counters,
            threads,
            completions,
            trees,
            plain);
    statuses = new ShimStatuses(fs, gateway, records, user);
    deletes = new ShimDeletes(gateway, records, misses, fs::temporary, counters, threads);
  }

  /**
   * Where a file created under a temporary directory will end up: Hive's staged files as Hive will
   * name them (which may take a LIST, see {@link HiveStaging}), others by the rules alone.
   */
  Optional<String> predictFinalKey(String key) throws IOException {
    if (hiveStaging.isPresent() && HiveStaging.isStaged(key) && !shim.rules().isPlainFile(key)) {
      return hiveStaging.get().predictFinalKey(key);
    }
    return shim.rules().predictFinalKey(key);
  }

  /** The writer of a pending file: a multipart upload to its final key, its record at its path. */
  UploadOutputStream pendingFile(String uri, String key, String finalKey) {
    return new UploadOutputStream(
        gateway,
        uri,
        finalKey,
        key,
        ShimRules.attemptOf(key),
        config.partSize(),
        config.magicBuffersPerStream(),
        threads.pool(),
        records.keeperOf(key));
  }

  /** Stops the threads; what they still run is abandoned. */
  void close() {
    completions.close();
    threads.close();
    completionThreads.close();
    listingThreads.close();
  }
}
