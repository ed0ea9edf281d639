package dev.writeonce.core.json;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.writeonce.core.errors.FormatException;
import dev.writeonce.core.model.CommitStatistics;
import dev.writeonce.core.model.FinishedJob;
import dev.writeonce.core.model.SuccessData;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * JSON of {@code _SUCCESS}: the field names and the {@code name} value of Hadoop's S3A SuccessData
 * version 1, so Hadoop's loader and tools built on it accept the file. This library's own format
 * version goes into {@code diagnostics}, which Hadoop passes through untouched, and so does the
 * history of the jobs that finished before ({@value CommitStatistics#FINISHED_JOBS}, a string of
 * entries {@code JOB/RUN/MILLIS} separated by single spaces, newest first, RUN empty where unknown;
 * left out when there is none, so that a marker without one is written as before).
 */
public final class SuccessDataFormat {

  /** The {@code name} Hadoop's loader requires. */
  public static final String HADOOP_NAME = "org.apache.hadoop.fs.s3a.commit.files.SuccessData/1";

  /** Diagnostics key carrying this library's format version. */
  public static final String FORMAT_KEY = "writeonce.success.version";

  public static final int VERSION = 1;

  private SuccessDataFormat() {}

  public static byte[] toJson(SuccessData data) {
    return Json.write(
        out -> {
          out.writeStartObject();
          out.writeStringField("name", HADOOP_NAME);
          out.writeNumberField("timestamp", data.timestamp());
          out.writeStringField("date", data.date());
          out.writeStringField("hostname", data.hostname());
          out.writeStringField("committer", data.committer());
          out.writeStringField("description", data.description());
          out.writeStringField("jobId", data.jobId());
          out.writeStringField("jobIdSource", data.jobIdSource());
          Json.writeLongMap(out, "metrics", new TreeMap<>(data.metrics()));
          Map<String, String> diagnostics = new TreeMap<>(data.diagnostics());
          diagnostics.put(FORMAT_KEY, Integer.toString(VERSION));
          if (!data.finishedJobs().isEmpty()) {
            diagnostics.put(CommitStatistics.FINISHED_JOBS, historyText(data.finishedJobs()));
          }
          Json.writeTextMap(out, "diagnostics", diagnostics);
          out.writeArrayFieldStart("filenames");
          for (String name : data.filenames()) {
            out.writeString(name);
          }
          out.writeEndArray();
          out.writeObjectFieldStart("iostatistics");
          Json.writeLongMap(out, "counters", new TreeMap<>(data.counters()));
          for (String empty : new String[] {"gauges", "minimums", "maximums", "meanstatistics"}) {
            out.writeObjectFieldStart(empty);
            out.writeEndObject();
          }
          out.writeEndObject();
          out.writeEndObject();
        });
  }

  /**
   * False for a {@code _SUCCESS} that is certainly not a JSON marker: empty (FileOutputCommitter,
   * Spark's default protocol, the rename shim) or not starting with '{'. Such a file belongs to
   * another writer and is never an error.
   */
  public static boolean mayBeOurs(byte[] bytes) {
    for (byte b : bytes) {
      if (!Character.isWhitespace(b)) {
        return b == '{';
      }
    }
    return false;
  }

  /** Reads a {@code _SUCCESS} written by this library or by Hadoop's S3A committers. */
  public static SuccessData fromJson(byte[] bytes, String source) throws FormatException {
    ObjectNode root = Json.readObject(bytes, source);
    String name = Json.text(root, "name", source);
    if (!HADOOP_NAME.equals(name)) {
      throw new FormatException(
          source, "name is '" + name + "', expected '" + HADOOP_NAME + "': not a _SUCCESS marker");
    }
    Map<String, String> diagnostics =
        new TreeMap<>(Json.textMap(root, "diagnostics", source, false));
    String version = diagnostics.get(FORMAT_KEY);
    if (version != null && !version.equals(Integer.toString(VERSION))) {
      throw new FormatException(
          source, "unsupported _SUCCESS version " + version + ": this library reads " + VERSION);
    }
    String history = diagnostics.remove(CommitStatistics.FINISHED_JOBS);
    Map<String, Long> counters = Map.of();
    if (root.get("iostatistics") instanceof ObjectNode stats) {
      counters = Json.longMap(stats, "counters", source, false);
    }
    try {
      return new SuccessData(
          Json.number(root, "timestamp", source),
          Json.optionalText(root, "date", ""),
          Json.optionalText(root, "hostname", ""),
          Json.optionalText(root, "committer", ""),
          Json.optionalText(root, "description", ""),
          Json.optionalText(root, "jobId", ""),
          Json.optionalText(root, "jobIdSource", ""),
          Json.longMap(root, "metrics", source, false),
          diagnostics,
          root.has("filenames") ? Json.texts(root, "filenames", source) : List.of(),
          counters,
          history == null ? List.of() : history(history, source));
    } catch (IllegalArgumentException e) {
      throw new FormatException(source, e.getMessage(), e);
    }
  }

  /**
   * Whether a marker read back was written by this library (it carries this library's format
   * version), rather than by Hadoop's S3A committers, whose markers share the shape.
   */
  public static boolean writtenByThisLibrary(SuccessData success) {
    return success.diagnostics().containsKey(FORMAT_KEY);
  }

  private static String historyText(List<FinishedJob> jobs) {
    StringBuilder text = new StringBuilder();
    for (FinishedJob job : jobs) {
      if (text.length() > 0) {
        text.append(' ');
      }
      text.append(job.jobId())
          .append('/')
          .append(job.runUuid())
          .append('/')
          .append(job.finishedAtMillis());
    }
    return text.toString();
  }

  private static List<FinishedJob> history(String text, String source) throws FormatException {
    List<FinishedJob> jobs = new ArrayList<>();
    if (text.isEmpty()) {
      return jobs;
    }
    for (String entry : text.split(" ", -1)) {
      String[] fields = entry.split("/", -1);
      if (fields.length != 3) {
        throw new FormatException(
            source,
            CommitStatistics.FINISHED_JOBS
                + " holds '"
                + entry
                + "', expected JOB/RUN/MILLIS (RUN may be empty)");
      }
      long millis;
      try {
        millis = Long.parseLong(fields[2]);
      } catch (NumberFormatException e) {
        throw new FormatException(
            source,
            CommitStatistics.FINISHED_JOBS + " holds '" + entry + "', whose time is not a number",
            e);
      }
      try {
        jobs.add(new FinishedJob(fields[0], fields[1], millis));
      } catch (IllegalArgumentException e) {
        throw new FormatException(
            source, CommitStatistics.FINISHED_JOBS + " holds '" + entry + "': " + e.getMessage());
      }
    }
    return jobs;
  }
}
