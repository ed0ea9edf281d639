package dev.writeonce.alluxio;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;

/**
 * A job's output written through Alluxio by Hadoop's FileOutputCommitter, algorithm 1, with the
 * calls Spark's default commit protocol makes: job setup, per task setup, files created in the
 * task's work path, task commit, then job commit. Alluxio's client writes each file through to the
 * store when it is closed; every rename is Alluxio's.
 */
final class FileOutputCommitterWrite {

  private FileOutputCommitterWrite() {}

  static void run(String uri, int tasks, int filesPerTask, int bytesPerFile) throws IOException {
    Configuration conf = new Configuration(false);
    conf.set("fs.alluxio.impl", "alluxio.hadoop.FileSystem");
    conf.set("fs.AbstractFileSystem.alluxio.impl", "alluxio.hadoop.AlluxioFileSystem");
    conf.set("alluxio.user.file.writetype.default", "THROUGH");
    conf.setInt(FileOutputCommitter.FILEOUTPUTCOMMITTER_ALGORITHM_VERSION, 1);
    conf.setBoolean("fs.alluxio.impl.disable.cache", true);
    Path output = new Path(uri);
    JobID job = new JobID("alluxio", 1);
    JobContext jobContext = new JobContextImpl(conf, job);
    FileOutputCommitter jobCommitter = new FileOutputCommitter(output, jobContext);
    jobCommitter.setupJob(jobContext);
    byte[] data = new byte[bytesPerFile];
    Arrays.fill(data, (byte) 'x');
    for (int t = 0; t < tasks; t++) {
      TaskAttemptID attempt = new TaskAttemptID(new TaskID(job, TaskType.MAP, t), 0);
      TaskAttemptContext task = new TaskAttemptContextImpl(conf, attempt);
      FileOutputCommitter committer = new FileOutputCommitter(output, task);
      committer.setupTask(task);
      Path work = committer.getWorkPath();
      FileSystem fs = work.getFileSystem(conf);
      for (int f = 0; f < filesPerTask; f++) {
        try (OutputStream out =
            fs.create(new Path(work, String.format("part-%05d-%03d.bin", t, f)), false)) {
          out.write(data);
        }
      }
      if (committer.needsTaskCommit(task)) {
        committer.commitTask(task);
      }
    }
    jobCommitter.commitJob(jobContext);
  }
}
