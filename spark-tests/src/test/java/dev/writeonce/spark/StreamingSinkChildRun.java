package dev.writeonce.spark;

import java.io.FileInputStream;
import java.io.InputStream;
import java.util.Properties;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;

/**
 * A second driver JVM for {@link StreamingSinkReviewIT}: runs the review's streaming query (or
 * reads its sink) with the settings of a properties file, and ends as a killed driver would.
 *
 * <p>Arguments: the properties file. Keys {@code mode} ({@code query} or {@code read}), {@code
 * input}, {@code checkpoint}, {@code sink}; every other key is a Spark setting.
 */
public final class StreamingSinkChildRun {

  private StreamingSinkChildRun() {}

  public static void main(String[] args) throws Exception {
    Properties settings = new Properties();
    try (InputStream in = new FileInputStream(args[0])) {
      settings.load(in);
    }
    SparkSession.Builder builder = SparkSession.builder();
    for (String key : settings.stringPropertyNames()) {
      if (key.startsWith("spark.")) {
        builder.config(key, settings.getProperty(key));
      }
    }
    SparkSession spark = builder.getOrCreate();
    String mode = settings.getProperty("mode");
    try {
      if (mode.equals("read")) {
        long count = spark.read().parquet(settings.getProperty("sink")).count();
        System.out.println("CHILD-COUNT=" + count);
        System.out.flush();
        Runtime.getRuntime().halt(0);
      }
      StreamingQuery query =
          spark
              .readStream()
              .schema("id LONG, ts TIMESTAMP")
              .option("maxFilesPerTrigger", "1")
              .json(settings.getProperty("input"))
              .repartition(2)
              .select("id")
              .writeStream()
              .format("parquet")
              .outputMode("append")
              .option("checkpointLocation", settings.getProperty("checkpoint"))
              .trigger(Trigger.AvailableNow())
              .start(settings.getProperty("sink"));
      query.awaitTermination();
      System.out.println("CHILD-QUERY-ENDED");
      System.out.flush();
      Runtime.getRuntime().halt(0);
    } catch (Throwable failure) {
      System.out.println("CHILD-FAILED " + failure);
      failure.printStackTrace(System.out);
      System.out.flush();
      // The driver dies here, as a killed one would: nothing more is sent.
      Runtime.getRuntime().halt(3);
    }
  }
}
