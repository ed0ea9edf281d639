package dev.writeonce.shim;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.lib.output.FileOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitterFactory;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShimCommitterFactoryTest {

  /** A local path stands in for s3a://: FileOutputCommitter opens its output's filesystem. */
  @Test
  void theSchemeSettingGivesHadoopsFileOutputCommitterForEveryTask(@TempDir java.nio.file.Path dir)
      throws Exception {
    Configuration conf = new Configuration(false);
    conf.set("mapreduce.outputcommitter.factory.scheme.file", ShimCommitterFactory.class.getName());
    Path out = new Path(dir.toUri());

    PathOutputCommitterFactory factory = PathOutputCommitterFactory.getCommitterFactory(out, conf);
    assertThat(factory).isInstanceOf(ShimCommitterFactory.class);
    for (int task = 0; task < 3; task++) {
      PathOutputCommitter committer =
          factory.createOutputCommitter(
              out,
              new TaskAttemptContextImpl(
                  conf, new TaskAttemptID("20261125", 1, TaskType.MAP, task, 0)));
      assertThat(committer).isInstanceOf(FileOutputCommitter.class);
      assertThat(committer.getOutputPath().toUri().getPath()).isEqualTo(out.toUri().getPath());
    }
    assertThat(ShimCommitterFactory.told()).isTrue();
  }
}
