package dev.writeonce.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.writeonce.core.model.ConflictMode;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class CommitterConfigTest {

  @Test
  void defaultsArePinned() {
    assertThat(CommitterConfig.defaults())
        .isEqualTo(
            new CommitterConfig(
                32,
                64L << 20,
                ConflictMode.APPEND,
                true,
                100,
                8,
                System.getProperty("java.io.tmpdir") + "/writeonce-staging",
                2,
                8,
                false,
                600_000L,
                7L * 24 * 3600 * 1000,
                600_000L,
                false,
                8L << 20,
                10_000,
                "file"));
  }

  @Test
  void everyKeyIsRead() {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.COMMIT_THREADS, "8");
    conf.set(CommitterConfig.PART_SIZE, "16M");
    conf.set(CommitterConfig.CONFLICT_MODE, " Replace ");
    conf.set(CommitterConfig.CONDITIONAL_MANIFEST_WRITE, "false");
    conf.set(CommitterConfig.SUCCESS_FILE_LIMIT, "0");
    conf.set(CommitterConfig.TASK_UPLOAD_THREADS, "2");
    conf.set("hadoop.tmp.dir", "/data/tmp");
    conf.set(CommitterConfig.MAGIC_BUFFERS_PER_STREAM, "3");
    conf.set(CommitterConfig.MAGIC_UPLOAD_THREADS, "4");
    conf.set(CommitterConfig.FENCE_RETENTION, "2d");
    conf.set(CommitterConfig.JOB_LEASE, "3m");
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE, "false");
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE_MIN_SIZE, "1m");
    conf.set(CommitterConfig.MANIFEST_CHUNK_UPLOADS, "500");

    assertThat(CommitterConfig.from(conf))
        .isEqualTo(
            new CommitterConfig(
                8,
                16L << 20,
                ConflictMode.REPLACE,
                false,
                0,
                2,
                "/data/tmp/writeonce-staging",
                3,
                4,
                false,
                600_000L,
                2L * 24 * 3600 * 1000,
                180_000L,
                false,
                1L << 20,
                500,
                "file"));
    conf.set(CommitterConfig.STAGING_DIR, " /ssd/staging ");
    assertThat(CommitterConfig.from(conf).stagingDir()).isEqualTo("/ssd/staging");
  }

  @Test
  void aPartSizeBelowTheStoresMinimumNamesTheKeyAndBounds() {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.PART_SIZE, "1M");
    assertThatThrownBy(() -> CommitterConfig.from(conf))
        .hasMessageContaining("writeonce.upload.part-size = 1048576")
        .hasMessageContaining("between 5242880 and 2147483647");
  }

  @Test
  void aPartSizeOfTwoGibibytesIsRefusedNamingTheLimit() {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.PART_SIZE, "3g");
    assertThatThrownBy(() -> CommitterConfig.from(conf))
        .hasMessageContaining("writeonce.upload.part-size = 3221225472")
        .hasMessageContaining("2147483647 bytes")
        .hasMessageContaining("2047M");
  }

  @Test
  void anUnknownConflictModeNamesTheKeyAndTheValidModes() {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.CONFLICT_MODE, "overwrite");
    assertThatThrownBy(() -> CommitterConfig.from(conf))
        .hasMessageContaining("writeonce.conflict-mode")
        .hasMessageContaining("fail, append or replace");
  }

  @Test
  void zeroThreadsIsRefused() {
    Configuration conf = new Configuration(false);
    conf.setInt(CommitterConfig.COMMIT_THREADS, 0);
    assertThatThrownBy(() -> CommitterConfig.from(conf))
        .hasMessageContaining("writeonce.commit.threads");
  }

  @Test
  void aWitherChangesOneSettingAndChecksItAsReadingDoes() {
    CommitterConfig four = CommitterConfig.defaults().withCommitThreads(4);

    assertThat(four.commitThreads()).isEqualTo(4);
    assertThat(four.withCommitThreads(CommitterConfig.COMMIT_THREADS_DEFAULT))
        .isEqualTo(CommitterConfig.defaults());
    assertThatThrownBy(() -> CommitterConfig.defaults().withCommitThreads(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(CommitterConfig.COMMIT_THREADS);
  }

  @Test
  void uploadOnClosePutsTheWorkPathOnTheEncodingSchemeAndAFileWorkPathRefusesIt() {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.UPLOAD_ON_CLOSE, "true");
    assertThat(CommitterConfig.from(conf).stagingWorkScheme()).isEqualTo("writeonce-staging");

    conf.set(CommitterConfig.STAGING_WORK_SCHEME, "file");
    assertThatThrownBy(() -> CommitterConfig.from(conf))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(CommitterConfig.UPLOAD_ON_CLOSE)
        .hasMessageContaining(CommitterConfig.STAGING_WORK_SCHEME + " = file");
  }

  @Test
  void anUnknownWorkPathSchemeNamesTheKeyAndBothSchemes() {
    Configuration conf = new Configuration(false);
    conf.set(CommitterConfig.STAGING_WORK_SCHEME, "hdfs");
    assertThatThrownBy(() -> CommitterConfig.from(conf))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(CommitterConfig.STAGING_WORK_SCHEME + " = 'hdfs'")
        .hasMessageContaining("'file'")
        .hasMessageContaining("'writeonce-staging'");
  }
}
