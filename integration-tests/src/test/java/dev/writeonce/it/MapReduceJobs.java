package dev.writeonce.it;

import dev.writeonce.core.committer.WriteonceCommitterFactory;
import dev.writeonce.core.config.CommitterConfig;
import dev.writeonce.magic.MagicCommitter;
import dev.writeonce.magic.MagicS3AFileSystem;
import dev.writeonce.shim.RenameShimFileSystem;
import dev.writeonce.teststore.TestStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.Mapper;
import org.apache.hadoop.mapreduce.RecordWriter;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.TextOutputFormat;

/** Real MapReduce jobs on Hadoop's LocalJobRunner, writing through the committer factory. */
final class MapReduceJobs {

  private MapReduceJobs() {}

  /** LocalJobRunner settings with every local directory under the scratch directory. */
  private static Configuration localRunner(TestStore store, Path scratch) {
    Configuration conf = store.configure(new Configuration());
    conf.set("mapreduce.framework.name", "local");
    conf.set(FileSystem.FS_DEFAULT_NAME_KEY, "file:///");
    conf.set("hadoop.tmp.dir", scratch.resolve("hadoop").toString());
    conf.set("mapreduce.jobtracker.staging.root.dir", scratch.resolve("mr-staging").toString());
    conf.set("mapreduce.cluster.local.dir", scratch.resolve("mr-local").toString());
    return conf;
  }

  /** A job configuration that reaches the store and selects a writeonce committer. */
  static Configuration configuration(TestStore store, String committer, Path scratch) {
    Configuration conf = localRunner(store, scratch);
    conf.set(
        "mapreduce.outputcommitter.factory.scheme.s3a", WriteonceCommitterFactory.class.getName());
    conf.set(WriteonceCommitterFactory.COMMITTER, committer);
    conf.set(CommitterConfig.STAGING_DIR, scratch.resolve("writeonce-staging").toString());
    if (committer.equals(MagicCommitter.NAME)) {
      conf.set("fs.s3a.impl", MagicS3AFileSystem.class.getName());
    }
    return conf;
  }

  /**
   * A job configuration for Hadoop's own FileOutputCommitter (rename-based) with the given
   * algorithm version, on plain S3A or through the rename shim.
   */
  static Configuration classicConfiguration(
      TestStore store, Path scratch, int algorithm, boolean shim) {
    Configuration conf = localRunner(store, scratch);
    conf.setInt("mapreduce.fileoutputcommitter.algorithm.version", algorithm);
    if (shim) {
      conf.set("fs.s3a.impl", RenameShimFileSystem.class.getName());
    }
    return conf;
  }

  /** Writes {@code files} local input files of {@code lines} lines: one map task each. */
  static List<String> writeInput(Path dir, int files, int lines, boolean partitioned)
      throws IOException {
    Files.createDirectories(dir);
    List<String> all = new ArrayList<>();
    for (int f = 0; f < files; f++) {
      StringBuilder text = new StringBuilder();
      for (int l = 0; l < lines; l++) {
        String line =
            (partitioned ? "day=" + (1 + (f + l) % 2) + "," : "") + "file " + f + " line " + l;
        text.append(line).append('\n');
        all.add(line);
      }
      Files.writeString(dir.resolve("input-" + f + ".txt"), text);
    }
    return all;
  }

  /** A map-only job copying lines from local input to the destination as text. */
  static Job copyJob(Configuration conf, Path input, String destination) throws IOException {
    Job job = Job.getInstance(conf, "writeonce-copy");
    job.setJarByClass(MapReduceJobs.class);
    job.setMapperClass(LineMapper.class);
    job.setNumReduceTasks(0);
    job.setOutputKeyClass(NullWritable.class);
    job.setOutputValueClass(Text.class);
    job.setOutputFormatClass(TextOutputFormat.class);
    FileInputFormat.addInputPath(job, new org.apache.hadoop.fs.Path(input.toUri()));
    FileOutputFormat.setOutputPath(job, new org.apache.hadoop.fs.Path(destination));
    return job;
  }

  /** A map-only job writing each "partition,rest" line under its partition directory. */
  static Job partitionedJob(Configuration conf, Path input, String destination) throws IOException {
    Job job = copyJob(conf, input, destination);
    job.setMapperClass(PartitionMapper.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputFormatClass(PartitionedTextOutputFormat.class);
    return job;
  }

  public static final class LineMapper extends Mapper<LongWritable, Text, NullWritable, Text> {
    @Override
    protected void map(LongWritable offset, Text line, Context context)
        throws IOException, InterruptedException {
      context.write(NullWritable.get(), line);
    }
  }

  public static final class PartitionMapper extends Mapper<LongWritable, Text, Text, Text> {
    @Override
    protected void map(LongWritable offset, Text line, Context context)
        throws IOException, InterruptedException {
      String text = line.toString();
      int comma = text.indexOf(',');
      context.write(new Text(text.substring(0, comma)), line);
    }
  }

  /**
   * Writes each record under the directory its key names, inside the committer's work path, as
   * partitioned writers of Spark and Hive do. Any existing destination is accepted: the committer's
   * conflict mode decides.
   */
  public static final class PartitionedTextOutputFormat extends FileOutputFormat<Text, Text> {

    @Override
    public void checkOutputSpecs(JobContext job) throws IOException {
      if (getOutputPath(job) == null) {
        throw new IOException("no output path");
      }
    }

    @Override
    public RecordWriter<Text, Text> getRecordWriter(TaskAttemptContext context) throws IOException {
      org.apache.hadoop.fs.Path work =
          ((PathOutputCommitter) getOutputCommitter(context)).getWorkPath();
      String name = getUniqueFile(context, "part", ".txt");
      Map<String, org.apache.hadoop.fs.FSDataOutputStream> streams = new HashMap<>();
      return new RecordWriter<>() {
        @Override
        public void write(Text partition, Text line) throws IOException {
          var out = streams.get(partition.toString());
          if (out == null) {
            org.apache.hadoop.fs.Path file =
                new org.apache.hadoop.fs.Path(
                    new org.apache.hadoop.fs.Path(work, partition.toString()), name);
            out = file.getFileSystem(context.getConfiguration()).create(file, false);
            streams.put(partition.toString(), out);
          }
          out.write((line + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }

        @Override
        public void close(TaskAttemptContext ignored) throws IOException {
          for (var out : streams.values()) {
            out.close();
          }
        }
      };
    }
  }
}
