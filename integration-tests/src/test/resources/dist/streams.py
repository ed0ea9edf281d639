"""A Structured Streaming query through writeonce in a real Spark distribution, started by
SparkDistributionIT.

usage: spark-submit ... streams.py DEST INPUT

  DEST   s3a://bucket/prefix: the query's checkpoint is DEST/checkpoint, its Parquet sink DEST/sink
  INPUT  a local directory this script fills with three JSON files of ten rows

The query reads one file per micro-batch (three batches) with Trigger.AvailableNow, is run a
second time on the same checkpoint with nothing new to read, and the sink must hold each row
once. The checkpoint manager and the sink's commit protocol come from --conf; this script only
checks. Exits 1 on a mismatch.
"""

import os
import sys

from pyspark.sql import SparkSession


def fail(msg):
    print("APP FAIL: " + msg, flush=True)
    sys.exit(1)


def main():
    dest, inp = sys.argv[1], sys.argv[2]
    os.makedirs(inp, exist_ok=True)
    for batch in range(3):
        path = os.path.join(inp, "part-%d.json" % batch)
        with open(path, "w") as f:
            for row in range(10):
                f.write('{"id": %d}\n' % (batch * 10 + row))
        # The file source takes the oldest file first: one batch per file, in this order.
        os.utime(path, (1_700_000_000 + batch, 1_700_000_000 + batch))

    spark = SparkSession.builder.appName("writeonce-streams").getOrCreate()
    for setting in ("spark.sql.streaming.checkpointFileManagerClass",
                    "spark.sql.streaming.commitProtocolClass"):
        value = spark.conf.get(setting, "")
        if not value.startswith("dev.writeonce."):
            fail(setting + " is not set: " + value)

    def run():
        (
            spark.readStream.schema("id LONG")
            .option("maxFilesPerTrigger", "1")
            .json(inp)
            .repartition(2)
            .writeStream.format("parquet")
            .option("checkpointLocation", dest + "/checkpoint")
            .trigger(availableNow=True)
            .start(dest + "/sink")
            .awaitTermination()
        )

    run()
    run()  # a restart with nothing new: no batch runs again
    ids = sorted(r.id for r in spark.read.parquet(dest + "/sink").collect())
    if ids != list(range(30)):
        fail("the sink holds %s" % ids)
    batches = spark.read.text(dest + "/checkpoint/commits").count()
    print("STREAM OK: 30 rows once, %d commit lines" % batches, flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
