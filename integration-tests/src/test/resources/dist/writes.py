"""Writes through writeonce in a real Spark distribution, started by SparkDistributionIT.

usage: spark-submit ... app.py COMMITTER DEST MODE

  COMMITTER  directory | partitioned | magic  (writeonce protocol: _SUCCESS must be its JSON
             and name the committer), shim (rename shim + Spark's default protocol: _SUCCESS is
             FileOutputCommitter's empty marker), plain (no checks on _SUCCESS)
  DEST       s3a://bucket/prefix  (write, dynamic: the output directory; table: the warehouse)
  MODE       write    partitionBy(p) parquet, read back, then static overwrite, read back
             dynamic  write 4 partitions, dynamic-overwrite 2 of them, check the other 2 kept
             table    in-memory catalog, warehouse=DEST: saveAsTable, append, INSERT OVERWRITE
             all      the three above (DEST/write, DEST/dynamic, DEST/warehouse)

Exits 1 on any mismatch. Committer settings come from --conf; this script only checks.
"""

import json
import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

ROWS = 1000
PARTS = 4


def fail(msg):
    print("APP FAIL: " + msg, flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("  ok: " + msg, flush=True)


def hadoop_fs(spark, uri):
    jvm = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path, path.getFileSystem(spark._jsc.hadoopConfiguration())


def read_text(spark, uri):
    path, fs = hadoop_fs(spark, uri)
    stream = fs.open(path)
    try:
        data = stream.readAllBytes()
    finally:
        stream.close()
    return bytes(data).decode("utf-8")


def list_keys(spark, uri):
    path, fs = hadoop_fs(spark, uri)
    it = fs.listFiles(path, True)
    keys = []
    while it.hasNext():
        keys.append(it.next().getPath().toString()[len(uri):].lstrip("/"))
    return sorted(keys)


def check_output(spark, committer, uri):
    """_SUCCESS format and no temporary leftovers under the output."""
    path, fs = hadoop_fs(spark, uri)
    print("  filesystem: " + fs.getClass().getName(), flush=True)
    keys = list_keys(spark, uri)
    data = [k for k in keys if k.endswith(".parquet")]
    other = [k for k in keys if not k.endswith(".parquet")]
    print("  objects: %d parquet, others: %s" % (len(data), other), flush=True)
    leftovers = [k for k in keys if "_temporary" in k or "__magic" in k or ".spark-staging" in k
                 or "_writeonce" in k]
    check(not leftovers, "no temporary objects left (%s)" % leftovers)
    success = read_text(spark, uri + "/_SUCCESS")
    if committer in ("directory", "partitioned", "magic"):
        try:
            doc = json.loads(success)
        except ValueError:
            fail("_SUCCESS is not JSON (%d bytes): the writeonce protocol did not commit" % len(success))
        print("  _SUCCESS committer=%r files=%s" % (
            doc.get("committer"), {k: v for k, v in doc.get("metrics", {}).items() if "file" in k}),
            flush=True)
        # WriteonceCommitProtocol runs "partitioned" as "directory" (Spark decides partition
        # overwrites itself), so _SUCCESS names directory for both.
        expect = "directory" if committer == "partitioned" else committer
        check(doc.get("committer") == expect, "_SUCCESS names committer %r" % expect)
    elif committer == "shim":
        check(success == "", "_SUCCESS is FileOutputCommitter's empty marker")
        check(fs.getClass().getName() == "dev.writeonce.shim.RenameShimFileSystem",
              "s3a:// is served by the rename shim")


def data(spark, rows, tag):
    return (spark.range(rows)
            .withColumn("p", (F.col("id") % PARTS).cast("int"))
            .withColumn("v", F.lit(tag)))


def case_write(spark, committer, dest):
    print("== write %s" % dest, flush=True)
    t = time.time()
    data(spark, ROWS, "first").write.partitionBy("p").parquet(dest)
    print("  write took %.1fs" % (time.time() - t), flush=True)
    back = spark.read.parquet(dest)
    check(back.count() == ROWS, "read back %d rows" % ROWS)
    per = {r["p"]: r["count"] for r in back.groupBy("p").count().collect()}
    check(per == {p: ROWS // PARTS for p in range(PARTS)}, "rows per partition %s" % per)
    check_output(spark, committer, dest)

    # A format that asks Hadoop's committer factory for its committer (Parquet does not).
    print("== json %s-json" % dest, flush=True)
    data(spark, ROWS, "json").write.json(dest + "-json")
    check(spark.read.json(dest + "-json").count() == ROWS, "json read back %d rows" % ROWS)

    print("== static overwrite %s" % dest, flush=True)
    data(spark, ROWS // 2, "second").write.mode("overwrite").partitionBy("p").parquet(dest)
    back = spark.read.parquet(dest)
    check(back.count() == ROWS // 2, "after overwrite %d rows" % (ROWS // 2))
    check(back.where("v != 'second'").count() == 0, "old rows gone")
    check_output(spark, committer, dest)


def case_dynamic(spark, committer, dest):
    print("== dynamic partition overwrite %s" % dest, flush=True)
    data(spark, ROWS, "first").write.partitionBy("p").parquet(dest)
    spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        new = data(spark, 200, "second").where("p < 2")  # 100 rows, partitions 0 and 1
        new.write.mode("overwrite").partitionBy("p").parquet(dest)
    finally:
        spark.conf.set("spark.sql.sources.partitionOverwriteMode", "static")
    back = spark.read.parquet(dest)
    per = {(r["p"], r["v"]): r["count"] for r in back.groupBy("p", "v").count().collect()}
    expect = {(0, "second"): 50, (1, "second"): 50, (2, "first"): 250, (3, "first"): 250}
    check(per == expect, "partitions 0,1 replaced, 2,3 kept: %s" % sorted(per.items()))
    check_output(spark, committer, dest)


def case_table(spark, committer, warehouse):
    print("== saveAsTable, warehouse %s" % warehouse, flush=True)
    check(spark.conf.get("spark.sql.warehouse.dir").rstrip("/") == warehouse.rstrip("/"),
          "warehouse is %s" % warehouse)
    spark.sql("DROP TABLE IF EXISTS events")
    data(spark, ROWS, "first").write.partitionBy("p").format("parquet").saveAsTable("events")
    check(spark.table("events").count() == ROWS, "saveAsTable: %d rows" % ROWS)
    location = spark.sql("DESCRIBE TABLE EXTENDED events").where("col_name = 'Location'") \
        .collect()[0]["data_type"]
    print("  location: " + location, flush=True)
    check(location.startswith("s3a://"), "table lives in the s3a warehouse")
    check_output(spark, committer, location)
    data(spark, 100, "appended").write.mode("append").partitionBy("p").format("parquet") \
        .saveAsTable("events")
    check(spark.table("events").count() == ROWS + 100, "append: %d rows" % (ROWS + 100))
    data(spark, 40, "inserted").createOrReplaceTempView("src")
    spark.sql("INSERT OVERWRITE TABLE events SELECT id, v, p FROM src")
    per = {(r["p"], r["v"]): r["count"] for r in spark.table("events").groupBy("p", "v").count().collect()}
    check(per == {(p, "inserted"): 10 for p in range(PARTS)},
          "INSERT OVERWRITE (static mode: whole table replaced): %s" % sorted(per.items()))
    check_output(spark, committer, location)
    spark.sql("DROP TABLE events")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(2)
    committer, dest, mode = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]
    builder = SparkSession.builder.appName("writeonce-%s-%s" % (committer, mode))
    if mode in ("table", "all"):
        # Static settings: they must be set before the session exists (spark-submit --conf works too).
        warehouse = dest if mode == "table" else dest + "/warehouse"
        builder = builder.config("spark.sql.warehouse.dir", warehouse) \
                         .config("spark.sql.catalogImplementation", "in-memory")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("APP_LOG_LEVEL", "WARN"))
    conf = spark.sparkContext.getConf()
    print("spark %s, protocol=%s, writeonce.committer=%s, fs.s3a.impl=%s" % (
        spark.version, conf.get("spark.sql.sources.commitProtocolClass", "(default)"),
        conf.get("spark.hadoop.writeonce.committer", "(default)"),
        conf.get("spark.hadoop.fs.s3a.impl", "(default)")), flush=True)
    t = time.time()
    if mode == "write":
        case_write(spark, committer, dest)
    elif mode == "dynamic":
        case_dynamic(spark, committer, dest)
    elif mode == "table":
        case_table(spark, committer, dest)
    elif mode == "all":
        case_write(spark, committer, dest + "/write")
        case_dynamic(spark, committer, dest + "/dynamic")
        case_table(spark, committer, dest + "/warehouse")
    else:
        fail("unknown mode " + mode)
    print("APP OK %s %s %s (%.1fs in the app)" % (committer, mode, dest, time.time() - t), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
