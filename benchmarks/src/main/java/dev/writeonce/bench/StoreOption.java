package dev.writeonce.bench;

import picocli.CommandLine.Option;

/** The {@code --store} option of the commands that start a test store themselves. */
final class StoreOption {

  @Option(
      names = "--store",
      defaultValue = "minio",
      description =
          "store to run on: minio or ceph-rgw (started locally), or external (the endpoint in"
              + " WRITEONCE_S3_*) (minio)")
  String name;
}
